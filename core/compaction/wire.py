"""Request-side helpers of compaction: transforms applied before a request, never stored.

* :func:`hide_tool_output` — the ``tail`` strategy: tool results older than the
  last ``keep_turns`` turns become a short stub
  (``[tool output hidden to save context: N tokens]``).
* :func:`stub_for_overflow` — after a context overflow: every tool result and
  attached file before the last user turn becomes a stub.
* :func:`context_tokens` — the input tokens of a request: the provider's own
  count (``count_tokens``) near the trigger, else ``parley.core.context.tokens.estimate_tokens``
  over the wire turns, system prompt and tools.
* :func:`note_params` / :func:`stream_params` — the cache-friendly summary
  request: the exact parameters of an earlier request (same system, messages
  and cache breakpoints) with a note appended after its last message.

The transforms return new turns (same ids, so compaction ranges still apply)
and never touch the stored ones.
"""

from __future__ import annotations

import copy
from collections.abc import AsyncIterator, Sequence
from typing import TYPE_CHECKING, Any

from parley.core.content import (
    Block,
    CompactSummaryBlock,
    DocumentBlock,
    ImageBlock,
    TextBlock,
    ToolResultBlock,
    Turn,
    apply_compactions,
)
from parley.core.context.tokens import estimate_tokens
from parley.core.providers.base import ChatRequest, Event
from parley.core.providers.errors import ProviderError
from parley.core.providers.retry import stream_with_retries

if TYPE_CHECKING:
    from parley.core.providers.base import Provider

HIDDEN_OUTPUT = "[tool output hidden to save context: {tokens:,} tokens]"
HIDDEN_FILE = "[{what} hidden to save context: {tokens:,} tokens]"
#: Tool results estimated at fewer tokens than this stay: a stub would save nothing.
MIN_HIDDEN_TOKENS = 40
#: Ask the provider to count only when the local estimate reaches this share of the trigger.
COUNT_FROM_SHARE = 0.5


def _tokens(block: Block) -> int:
    return estimate_tokens([Turn("user", [block])])


def _hide_result(block: ToolResultBlock) -> ToolResultBlock:
    tokens = _tokens(block)
    if tokens < MIN_HIDDEN_TOKENS:
        return block
    stub = TextBlock(HIDDEN_OUTPUT.format(tokens=tokens))
    return ToolResultBlock(block.tool_use_id, (stub,), block.is_error)


def _hide_file(block: ImageBlock | DocumentBlock) -> TextBlock:
    what = "image" if isinstance(block, ImageBlock) else f"document {block.name or ''}".strip()
    return TextBlock(HIDDEN_FILE.format(what=what, tokens=_tokens(block)))


def _rewrite(turn: Turn, files: bool) -> Turn:
    blocks: list[Block] = []
    changed = False
    for b in turn.blocks:
        new: Block = b
        if isinstance(b, ToolResultBlock):
            new = _hide_result(b)
        elif files and turn.role == "user" and isinstance(b, ImageBlock | DocumentBlock):
            new = _hide_file(b)
        changed = changed or new is not b
        blocks.append(new)
    return turn.with_blocks(blocks) if changed else turn


def _live_cut(turns: Sequence[Turn], keep_turns: int) -> int:
    """Index in ``turns`` of the first of the last ``keep_turns`` turns the model sees."""
    if keep_turns <= 0:
        return len(turns)
    pos = {t.id: i for i, t in enumerate(turns)}
    counted = sorted(
        pos[t.id]
        for t in apply_compactions(turns)
        if not t.aborted and not any(isinstance(b, CompactSummaryBlock) for b in t.blocks)
    )
    if len(counted) <= keep_turns:
        return 0
    return counted[len(counted) - keep_turns]


def hide_tool_output(turns: Sequence[Turn], keep_turns: int) -> list[Turn]:
    """The ``tail`` strategy: stub tool results older than the last ``keep_turns`` turns.

    Args:
        turns: the stored turns about to be sent (raw, as for ``ChatRequest.turns``).
        keep_turns: recent turns (of the model's view, aborted ones not
            counted) whose tool results stay whole.

    Returns:
        New list; changed turns are copies with the same ids. Tool results of
        fewer than :data:`MIN_HIDDEN_TOKENS` tokens are kept; ``is_error`` is kept.
    """
    cut = _live_cut(turns, keep_turns)
    return [_rewrite(t, files=False) if i < cut else t for i, t in enumerate(turns)]


def stub_for_overflow(turns: Sequence[Turn]) -> list[Turn]:
    """After a context overflow: stub tool output and files before the last user turn.

    Tool results (above :data:`MIN_HIDDEN_TOKENS`) and the images and
    documents of user turns (restored files of a summary turn included) before
    the last non-aborted user turn become short stubs; that turn is sent whole.
    """
    last_user = max(
        (i for i, t in enumerate(turns) if t.role == "user" and not t.aborted), default=-1
    )
    return [_rewrite(t, files=True) if i < last_user else t for i, t in enumerate(turns)]


def _tool_dicts(request: ChatRequest) -> list[dict[str, Any]]:
    return [
        {"name": t.name, "description": t.description, "input_schema": t.input_schema}
        for t in request.tools
    ]


def estimate_request(provider: Provider, request: ChatRequest) -> int:
    """Local estimate of a request's input tokens (wire turns, system prompt, tools)."""
    turns = request.messages(provider.caps)
    return estimate_tokens(turns, system=request.system, tools=_tool_dicts(request))


async def context_tokens(provider: Provider, request: ChatRequest, trigger: int) -> int:
    """Return the input tokens of ``request``, precise where it matters.

    The local estimate is returned when it is below ``COUNT_FROM_SHARE`` of
    ``trigger`` or the provider has no count endpoint; otherwise the
    provider's ``count_tokens`` (a failed count falls back to the estimate).

    Args:
        provider: the adapter the request goes to.
        request: the request as it would be sent.
        trigger: the token count that triggers compaction.
    """
    estimate = estimate_request(provider, request)
    if estimate < trigger * COUNT_FROM_SHARE or not provider.caps.has_count_tokens:
        return estimate
    try:
        counted = await provider.count_tokens(request)
    except ProviderError:
        return estimate
    return estimate if counted is None else int(counted)


def note_params(provider: Any, request: ChatRequest, note: str) -> dict[str, Any]:
    """Return the API parameters of ``request`` with ``note`` appended after its last message.

    Everything before the note is exactly what ``request`` sends (system,
    tools, messages, cache breakpoints), so the provider reads it from the
    prompt cache. Anthropic: the note is one more text block at the end of a
    final user message (roles must alternate), else a new user message;
    OpenAI-style APIs: a new user message.
    """
    params = provider.request_params(request)
    messages = [copy.deepcopy(m) for m in params["messages"]]
    if provider.caps.kind == "anthropic":
        block = {"type": "text", "text": note}
        last = messages[-1] if messages else None
        if last is not None and last.get("role") == "user":
            content = last["content"]
            if isinstance(content, str):
                content = [{"type": "text", "text": content}]
            last["content"] = [*content, block]
        else:
            messages.append({"role": "user", "content": [block]})
    else:
        messages.append({"role": "user", "content": note})
    return {**params, "messages": messages}


async def stream_params(provider: Any, params: dict[str, Any]) -> AsyncIterator[Event]:
    """Send ready-made API parameters through an adapter and yield its events.

    Uses the adapter's ``stream_params`` when it has one; the adapters of
    ``parley.core.providers`` do not offer it yet, so their per-attempt sender is
    used with their retry policy (the same path ``stream`` takes).

    Raises:
        ProviderError: as ``Provider.stream``.
    """
    public = getattr(provider, "stream_params", None)
    if public is not None:
        async for event in public(params):
            yield event
        return
    info = provider.model_info(params["model"])
    attempt = provider._attempt  # noqa: SLF001 - see the docstring
    async for event in stream_with_retries(
        lambda: attempt(params, info), provider.retry, provider._sleep  # noqa: SLF001
    ):
        yield event

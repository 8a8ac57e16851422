"""How many input tokens a request holds, from the provider's own numbers where it gave them.

Every reply's usage says exactly how many input tokens its request held
(uncached + cache read + cache write: system prompt, tools and every message,
as the provider's tokenizer counts them). The next request is that request
plus what was added since (the reply itself, tool results, the new message),
so its size is the reported figure plus a local estimate of the difference
(:func:`parley.core.context.tokens.estimate_tokens`, which may be far off for code, numbers
or other scripts, but only over the few turns added).

The reported figure stands for the history only while that history is still
the prefix: the anchor is the last complete assistant turn with usage, written
by the same model, with no compaction summary saved after it. The difference
is taken against the request exactly as it was sent when the run loop still
has it (``SentRequest``: stubbed tool output and all), else against the stored
turns before the anchor.

A compaction saves its summary after the last reply: that reply's figure measured a
history that is no longer sent, so there is no anchor until the next reply, and the
size would rest on the local estimate alone (which can be far from the provider's
count: its guess of the tools' and system prompt's share, of each turn's framing),
the next reply's figure then jumping away from it. A :class:`Counted` request — the
provider's count (``count_tokens``) of the request built from the stored turns up to
one turn — anchors the size the same way a reply does, when it is newer than the last
reply with usage.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from parley.core.content import CompactSummaryBlock, Turn
from parley.core.context.tokens import estimate_tokens
from parley.core.providers.base import ChatRequest

__all__ = ["Anchor", "Counted", "Measure", "find_anchor", "measure", "measured_tokens",
           "request_estimate"]


@dataclass(frozen=True)
class Anchor:
    """The last reply whose usage gives its request's exact size.

    Attributes:
        index: its position in the stored turns.
        input_tokens: all input tokens its request held, as the provider counted.
    """

    index: int
    input_tokens: int


@dataclass(frozen=True)
class Counted:
    """The provider's count of a request built from a session's stored turns up to one.

    Attributes:
        turn_id: the last stored turn the counted request held.
        model_ref: ``provider:model`` whose tokenizer counted it.
        tokens: all input tokens of that request (system prompt, tools, every message).
    """

    turn_id: str
    model_ref: str
    tokens: int


def _is_summary(turn: Turn) -> bool:
    return any(isinstance(b, CompactSummaryBlock) for b in turn.blocks)


def find_anchor(stored: Sequence[Turn], model_ref: str | None,
                counted: Counted | None = None) -> Anchor | None:
    """Return the last reply whose reported input still measures the history, or None.

    Args:
        stored: the session's stored turns in order (summary turns included).
        model_ref: ``provider:model`` the next request goes to; a reply by another
            model (another tokenizer) does not count. None accepts any model.
        counted: the provider's count of the request up to one of ``stored`` (by the
            same model), or None: when its turn comes after the last such reply, it is
            the anchor (``index`` the position after that turn).

    Returns:
        None when no complete reply reported input tokens, when a summary was
        saved after the last one that did (the history changed before it), or
        when it was written by another model; and ``counted`` does not stand for it.
    """
    use = counted is not None and counted.tokens > 0 and (
        model_ref is None or counted.model_ref == model_ref)
    for i in range(len(stored) - 1, -1, -1):
        turn = stored[i]
        if use and counted is not None and turn.id == counted.turn_id:
            return Anchor(i + 1, counted.tokens)  # that request held stored[: i + 1]
        if _is_summary(turn):
            return None
        if turn.role != "assistant" or turn.aborted or turn.usage is None:
            continue
        total = turn.usage.total_input_tokens
        if total <= 0:
            continue  # a server that reports no usage
        if model_ref is not None and turn.model is not None and turn.model != model_ref:
            return None
        return Anchor(i, total)
    return None


def _tool_dicts(request: ChatRequest) -> list[dict[str, Any]]:
    return [
        {"name": t.name, "description": t.description, "input_schema": t.input_schema}
        for t in request.tools
    ]


def request_estimate(caps: Any, request: ChatRequest) -> int:
    """Local estimate of a request's input tokens: wire turns, system prompt and tools.

    Args:
        caps: the provider's ``ProviderCaps`` (the wire rules depend on it).
        request: the request (``turns`` as stored, or transformed).
    """
    turns = request.messages(caps)
    return estimate_tokens(turns, system=request.system, tools=_tool_dicts(request))


@dataclass(frozen=True)
class Measure:
    """A request's size from the last reply's usage, in the provider's tokens.

    Attributes:
        tokens: the anchor's reported input plus what was added since, the added part
            estimated and multiplied by ``scale``.
        scale: provider tokens per estimated token over the anchor's request (its
            reported input against the local estimate of it; at least 1).
    """

    tokens: int
    scale: float


def _parts(
    caps: Any, request: ChatRequest, model_ref: str | None, sent: Any, counted: Counted | None
) -> tuple[Anchor, int, int] | None:
    """(anchor, estimate of the anchor's request, estimate of ``request``), or None."""
    turns = request.turns
    anchor = find_anchor(turns, model_ref, counted)
    if anchor is None:
        return None
    prefix = turns[: anchor.index]
    if sent is not None and _answered(sent, prefix, model_ref):
        before = request_estimate(caps, sent.request)
    else:
        before = request_estimate(caps, replace(request, turns=list(prefix)))
    return anchor, before, request_estimate(caps, request)


def measured_tokens(
    caps: Any, request: ChatRequest, model_ref: str | None, sent: Any = None,
    counted: Counted | None = None,
) -> int | None:
    """Return the request's input tokens from the last reply's usage, or None when unknown.

    Args:
        caps: the provider's ``ProviderCaps``.
        request: the request about to be sent; its ``turns`` are the stored
            turns (possibly transformed, same ids).
        model_ref: ``provider:model`` it goes to.
        sent: the session's last accepted request (``parley.core.compaction.compact.SentRequest``)
            or None; used when it is the one the anchor answered.
        counted: the provider's count of the request up to one of its turns, or None
            (:func:`find_anchor`).

    Returns:
        The anchor's reported input tokens plus the estimated tokens added (or
        removed) since; None without an anchor (:func:`find_anchor`). (:func:`measure`
        scales the added part too.)
    """
    parts = _parts(caps, request, model_ref, sent, counted)
    if parts is None:
        return None
    anchor, before, now = parts
    return max(0, anchor.input_tokens + now - before)


def measure(
    caps: Any, request: ChatRequest, model_ref: str | None, sent: Any = None,
    counted: Counted | None = None,
) -> Measure | None:
    """:func:`measured_tokens` with everything in the provider's tokens: what was added
    since the anchor counts as its estimate times the ratio the anchor's usage showed
    (a tokenizer that counts 4× the estimate counts 4× the new message too). None
    without an anchor."""
    parts = _parts(caps, request, model_ref, sent, counted)
    if parts is None:
        return None
    anchor, before, now = parts
    scale = max(1.0, anchor.input_tokens / before) if before > 0 else 1.0
    return Measure(max(0, int(anchor.input_tokens + (now - before) * scale)), scale)


def _answered(sent: Any, prefix: Sequence[Turn], model_ref: str | None) -> bool:
    """True when ``sent`` was built from exactly ``prefix`` (the anchor answers it)."""
    stored = getattr(sent, "stored_turns", ())
    if model_ref is not None and getattr(sent, "model_ref", model_ref) != model_ref:
        return False
    return len(stored) == len(prefix) and all(
        a.id == b.id for a, b in zip(stored, prefix, strict=True)
    )

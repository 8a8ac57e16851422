"""What is actually sent to a provider: the wire rules.

Code that builds a provider request calls :func:`to_messages` and converts its
result with ``parley.core.convert`` (``to_anthropic`` / ``to_openai``); it never sends
the stored turns. :func:`to_messages` is pure: the stored turns are read, never
changed, and every turn it returns is a new object, so nothing done to the
result can reach the store.

The rules, in the order they apply, with the choices made here:

1. Aborted turns are left out, except a stopped (partial) reply that the
   user answered: an aborted assistant turn directly followed by a user turn
   is sent as what it was (its text, tool calls and signed thinking; the
   usual fitting and pairing rules below apply to it, so empty text goes, a
   tool_use gets a synthetic result) and the user turn after it starts with
   :data:`STOPPED_NOTE`, so the model knows its reply was cut and the user
   saw only that part. A trailing aborted reply is still left out (a
   regeneration or a resend replaces it), and so is a reply another Parley is still
   writing (``Turn.writing_elsewhere``: it is in progress, not stopped). (Compaction
   ranges are resolved on the full list first, so a range whose first or last turn was aborted
   still applies; an aborted summary turn is ignored.)
2. Compacted ranges are replaced by their summary, which goes to the model as
   a *user* turn introducing it as a summary of the earlier conversation
   (:func:`render_summary`); a ``compact_summary`` block is never sent raw.
3. Pairing repair: a tool_use with no tool_result in the next user turn gets a
   synthetic error result (:data:`INTERRUPTED_RESULT`); a tool_result whose
   tool_use is not in the previous assistant turn is dropped (so is a second
   tool_use with an id already used earlier); turns left empty are dropped;
   consecutive same-role turns are merged, tool_result blocks first.
4. The history starts with a user turn. A leading assistant turn is kept and a
   minimal user turn (:data:`LEADING_USER_TEXT`) is put before it, rather than
   dropping it: an imported conversation often opens with the assistant's
   greeting or instructions, and dropping them would silently change what the
   model reads.
5. User-tail rule: for ``provider.needs_user_tail`` a history ending with the
   assistant gets a short user continuation (:data:`USER_TAIL_TEXT`). For the
   others the trailing assistant turn is a prefill: its thinking blocks are
   left out and its final text loses its trailing whitespace (Anthropic
   rejects both).
6. Images (and documents) inside tool results stay there for providers with
   ``image_in_tool_result``; for the others they move to the same user turn,
   after all tool_result blocks, behind a short text naming the tool, and the
   tool result keeps a placeholder saying where they went.

Also: thinking blocks are kept only for Anthropic and only with a signature
(its API requires one; the other APIs accept no thinking input), an assistant
turn never ends with thinking, Anthropic ``redacted_thinking`` blocks (kept as
unknown blocks) go back to Anthropic only, other unknown blocks are never
sent, empty or whitespace-only text is removed, and blocks a role cannot hold
are fitted to it (an image in an assistant turn becomes a placeholder text; a
tool_use in a user turn or a tool_result in an assistant turn is dropped).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace

from parley.core.content import (
    Block,
    CompactSummaryBlock,
    DocumentBlock,
    ImageBlock,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolResultPart,
    ToolUseBlock,
    Turn,
    UnknownBlock,
    apply_compactions,
)
from parley.core.providers.capabilities import ProviderCaps

__all__ = [
    "INTERRUPTED_RESULT",
    "LEADING_USER_TEXT",
    "STOPPED_NOTE",
    "SUMMARY_HEADING",
    "USER_TAIL_TEXT",
    "render_summary",
    "to_messages",
]

INTERRUPTED_RESULT = "no result was recorded: the run was interrupted"
SUMMARY_HEADING = (
    "[Summary of the earlier part of this conversation. The earlier messages were "
    "compacted to save context space; the conversation continues after this summary.]"
)
LEADING_USER_TEXT = "[The conversation begins with the assistant's message that follows.]"
USER_TAIL_TEXT = "Please continue."
STOPPED_NOTE = (
    "[Your previous reply was stopped before it finished; the user saw only the part above.]"
)


def render_summary(block: CompactSummaryBlock) -> str:
    """Return a compaction summary as the text the model reads.

    Args:
        block: the summary block.

    Returns:
        :data:`SUMMARY_HEADING`, a blank line, then the summary text.
    """
    return f"{SUMMARY_HEADING}\n\n{block.summary.strip()}"


def to_messages(turns: Sequence[Turn], provider: ProviderCaps) -> list[Turn]:
    """Return the turns to send to a provider, following the wire rules.

    Args:
        turns: a session's stored turns in order (aborted turns, summary
            turns and compacted ranges included). Not modified.
        provider: the capabilities of the API the request goes to.

    Returns:
        New turns (no object of the result is one of the input's turns or
        block lists; the frozen blocks themselves are shared), alternating
        user / assistant and starting with a user turn, in which every
        tool_use is answered by a tool_result at the start of the next user
        turn. Empty when nothing is left to send (no turns, or only aborted
        or empty ones); callers must not send an empty request.
    """
    keep_thinking = provider.kind == "anthropic"
    live = apply_compactions([t for t in turns if not (t.aborted and _has_summary(t))])
    fitted = _with_stopped_replies(live, keep_thinking)
    out = _merge(t for t in fitted if t.blocks)
    out = _merge(t for t in _repair_pairs(out) if t.blocks)
    if out and out[0].role == "assistant":
        first = out[0]
        lead = Turn("user", [TextBlock(LEADING_USER_TEXT)], f"{first.id}-lead", first.created_at)
        out.insert(0, lead)
    if out and out[-1].role == "assistant":
        out = _end_assistant(out, provider)
    if not provider.image_in_tool_result:
        out = _move_tool_media(out)
    return out


# --- rule 1 ------------------------------------------------------------------


def _answered_stop(turns: Sequence[Turn], k: int) -> bool:
    """True when ``turns[k]`` is a stopped reply the user answered (the next turn is theirs)."""
    turn = turns[k]
    return (
        turn.aborted
        and turn.role == "assistant"
        and not turn.writing_elsewhere  # still streaming on another computer
        and not _has_summary(turn)
        and k + 1 < len(turns)
        and turns[k + 1].role == "user"
        and not turns[k + 1].aborted
        and any(_fit_user(b) is not None for b in turns[k + 1].blocks)
    )


def _with_stopped_replies(live: Sequence[Turn], keep_thinking: bool) -> list[Turn]:
    """Fit the live turns: aborted ones left out but answered stopped replies (rule 1)."""
    out: list[Turn] = []
    for k, turn in enumerate(live):
        if not turn.aborted:
            out.append(_fit(turn, keep_thinking))
            continue
        if not _answered_stop(live, k):
            continue
        fitted = _fit(turn, keep_thinking)
        fitted.aborted = False  # sent as an ordinary assistant turn
        if not fitted.blocks:
            continue  # nothing was written before Stop: nothing to tell
        out.append(fitted)
        note = Turn("user", [TextBlock(STOPPED_NOTE)], f"{turn.id}-stopped", turn.created_at)
        out.append(note)  # merged into the user's next turn, before their words
    return out


# --- rule 2 and block fitting ---------------------------------------------


def _has_summary(turn: Turn) -> bool:
    return any(isinstance(b, CompactSummaryBlock) for b in turn.blocks)


def _placeholder(block: ImageBlock | DocumentBlock) -> TextBlock:
    if isinstance(block, ImageBlock):
        return TextBlock(f"[image: {block.media_type}]")
    return TextBlock(f"[document: {block.name or block.media_type}]")


def _clean_result(block: ToolResultBlock) -> ToolResultBlock:
    parts = block.content
    if all(not isinstance(p, TextBlock) or p.text.strip() for p in parts):
        return block
    kept = tuple(p for p in parts if not isinstance(p, TextBlock) or p.text.strip())
    return replace(block, content=kept)


def _fit_user(block: Block) -> Block | None:
    if isinstance(block, TextBlock):
        return block if block.text.strip() else None
    if isinstance(block, ImageBlock | DocumentBlock):
        return block
    if isinstance(block, ToolResultBlock):
        return _clean_result(block)
    if isinstance(block, CompactSummaryBlock):
        return TextBlock(render_summary(block))
    return None  # tool_use, thinking, unknown: nothing a user turn can carry


def _fit_assistant(block: Block, keep_thinking: bool) -> Block | None:
    if isinstance(block, TextBlock):
        return block if block.text.strip() else None
    if isinstance(block, ToolUseBlock):
        return block
    if isinstance(block, ThinkingBlock):
        return block if keep_thinking and block.signature else None
    if isinstance(block, UnknownBlock):
        redacted = block.raw.get("type") == "redacted_thinking" and "data" in block.raw
        return block if keep_thinking and redacted else None
    if isinstance(block, ImageBlock | DocumentBlock):
        return _placeholder(block)
    if isinstance(block, CompactSummaryBlock):
        return TextBlock(render_summary(block))
    return None  # tool_result: cannot be answered from an assistant turn


def _is_thinking(block: Block) -> bool:
    return isinstance(block, ThinkingBlock) or (
        isinstance(block, UnknownBlock) and block.raw.get("type") == "redacted_thinking"
    )


def _fit(turn: Turn, keep_thinking: bool) -> Turn:
    """Return a copy of `turn` holding only blocks its role can send."""
    role = "user" if _has_summary(turn) else turn.role
    blocks: list[Block] = []
    for b in turn.blocks:
        fitted = _fit_user(b) if role == "user" else _fit_assistant(b, keep_thinking)
        if fitted is not None:
            blocks.append(fitted)
    while blocks and _is_thinking(blocks[-1]):
        blocks.pop()  # "The final block in an assistant message cannot be `thinking`."
    return Turn(role, blocks, turn.id, turn.created_at, turn.aborted, turn.model, turn.usage)


# --- rule 3 ------------------------------------------------------------------


def _copy(t: Turn) -> Turn:
    return Turn(t.role, list(t.blocks), t.id, t.created_at, t.aborted, t.model, t.usage)


def _merge(turns: Iterable[Turn]) -> list[Turn]:
    """Merge consecutive same-role turns (tool_result blocks first); copies every turn."""
    out: list[Turn] = []
    for t in turns:
        if out and out[-1].role == t.role:
            last = out[-1]
            blocks = last.blocks + t.blocks
            if t.role == "user":
                results = [b for b in blocks if isinstance(b, ToolResultBlock)]
                blocks = results + [b for b in blocks if not isinstance(b, ToolResultBlock)]
            last.blocks = blocks
        else:
            out.append(_copy(t))
    return out


def _interrupted(use: ToolUseBlock) -> ToolResultBlock:
    return ToolResultBlock(use.id, (TextBlock(INTERRUPTED_RESULT),), is_error=True)


def _answer(turn: Turn, uses: list[ToolUseBlock]) -> list[Block]:
    """The blocks of user `turn` once paired with the previous assistant's `uses`."""
    wanted = {u.id for u in uses}
    results: list[Block] = []
    others: list[Block] = []
    for b in turn.blocks:
        if isinstance(b, ToolResultBlock):
            if b.tool_use_id in wanted:
                wanted.discard(b.tool_use_id)
                results.append(b)
        else:
            others.append(b)
    results.extend(_interrupted(u) for u in uses if u.id in wanted)
    return results + others


def _repair_pairs(turns: list[Turn]) -> list[Turn]:
    """Pair every tool_use with a tool_result in the next user turn (turns alternate)."""
    out: list[Turn] = []
    seen_ids: set[str] = set()
    uses: list[ToolUseBlock] = []
    for k, turn in enumerate(turns):
        if turn.role == "user":
            turn.blocks = _answer(turn, uses)
            out.append(turn)
            uses = []
            continue
        blocks: list[Block] = []
        for b in turn.blocks:
            if isinstance(b, ToolUseBlock):
                if b.id in seen_ids:
                    continue  # "`tool_use` ids must be unique": its results go as orphans
                seen_ids.add(b.id)
            blocks.append(b)
        while blocks and _is_thinking(blocks[-1]):
            blocks.pop()  # dropping a duplicate tool_use may leave thinking last
        turn.blocks = blocks
        out.append(turn)
        uses = [b for b in blocks if isinstance(b, ToolUseBlock)]
        followed = k + 1 < len(turns) and turns[k + 1].role == "user"
        if uses and not followed:
            results: list[Block] = [_interrupted(u) for u in uses]
            out.append(Turn("user", results, f"{turn.id}-results", turn.created_at))
            uses = []
    return out


# --- rule 5 ------------------------------------------------------------------


def _end_assistant(turns: list[Turn], provider: ProviderCaps) -> list[Turn]:
    last = turns[-1]
    if provider.needs_user_tail:
        tail = Turn("user", [TextBlock(USER_TAIL_TEXT)], f"{last.id}-tail", last.created_at)
        return [*turns, tail]
    # A prefill: Anthropic rejects thinking in it unless thinking is enabled (and
    # then rejects the prefill itself), and trailing whitespace at its end.
    last.blocks = [b for b in last.blocks if not _is_thinking(b)]
    final = last.blocks[-1]
    if isinstance(final, TextBlock) and final.text != final.text.rstrip():
        last.blocks[-1] = replace(final, text=final.text.rstrip())
    return turns


# --- rule 6 ------------------------------------------------------------------


def _moved_note(part: ImageBlock | DocumentBlock) -> TextBlock:
    what = "image" if isinstance(part, ImageBlock) else "document"
    return TextBlock(f"[{what} ({part.media_type}): sent after the tool results]")


def _split_result(
    block: ToolResultBlock,
) -> tuple[ToolResultBlock, list[ImageBlock | DocumentBlock]]:
    media = [p for p in block.content if isinstance(p, ImageBlock | DocumentBlock)]
    if not media:
        return block, []
    parts: list[ToolResultPart] = [
        _moved_note(p) if isinstance(p, ImageBlock | DocumentBlock) else p for p in block.content
    ]
    return replace(block, content=tuple(parts)), media


def _move_tool_media(turns: list[Turn]) -> list[Turn]:
    names: dict[str, str] = {}
    for turn in turns:
        if turn.role == "assistant":
            names = {b.id: b.name for b in turn.blocks if isinstance(b, ToolUseBlock)}
            continue
        if not any(
            isinstance(b, ToolResultBlock)
            and any(isinstance(p, ImageBlock | DocumentBlock) for p in b.content)
            for b in turn.blocks
        ):
            continue
        results: list[Block] = []
        companion: list[Block] = []
        others: list[Block] = []
        for b in turn.blocks:
            if not isinstance(b, ToolResultBlock):
                others.append(b)
                continue
            kept, media = _split_result(b)
            results.append(kept)
            if media:
                name = names.get(b.tool_use_id, "tool")
                companion.append(
                    TextBlock(f"Attachments returned by the tool `{name}` (call {b.tool_use_id}):")
                )
                companion.extend(media)
        turn.blocks = results + companion + others
    return turns

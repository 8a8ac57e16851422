"""Where a compaction cuts: the boundary, the stored range it replaces, what it restores.

Pure functions over a session's stored turns (no I/O). Rules:

* Turns are counted on the model's view (:func:`parley.core.content.apply_compactions`):
  the last ``keep_turns`` non-aborted turns stay verbatim; everything before
  them, a previous summary included, is summarized.
* The boundary never separates a tool_use from its tool_result: when the first
  kept turn is a user turn answering tool calls, the boundary moves back to
  the assistant turn that made them (keeping more), or, if that would leave
  nothing to summarize, forward past it.
* The history sent afterwards starts with the summary, a user turn, so it
  always starts with a user turn (wire rule 4 needs no synthetic turn).
* A re-compaction's range starts where the previous summary's range started,
  so the new summary (which carries the old one's facts) replaces both.
* Files the user attached in the replaced range (image and document blocks of
  user turns, the previous summary's restored files included) are restored
  after the summary: the most recent :data:`RESTORE_FILES`, at most
  :data:`RESTORE_SHARE` of the context window together.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from parley.core.compaction.check import summary_floor
from parley.core.content import (
    CompactSummaryBlock,
    DocumentBlock,
    ImageBlock,
    ToolResultBlock,
    Turn,
    apply_compactions,
)
from parley.core.context.tokens import estimate_tokens

RESTORE_FILES = 3
RESTORE_SHARE = 0.25


def summary_block(turn: Turn) -> CompactSummaryBlock | None:
    """Return the turn's compaction summary block, or None."""
    return next((b for b in turn.blocks if isinstance(b, CompactSummaryBlock)), None)


def _counted(turn: Turn) -> bool:
    return not turn.aborted and summary_block(turn) is None


def _answers_tools(turn: Turn) -> bool:
    return turn.role == "user" and any(isinstance(b, ToolResultBlock) for b in turn.blocks)


@dataclass(frozen=True)
class Plan:
    """One compaction's cut.

    Attributes:
        live: the model's view of the session (``apply_compactions``).
        boundary: index in ``live`` of the first kept turn (``len(live)``: none kept).
        first_index / last_index: the replaced range in the stored list (inclusive).
        first_turn_id / last_turn_id: the ids at those indexes.
        replaced_count: stored turns (not summary turns) in the range.
        dropped_count: turns in the range left out without being summarized
            (aborted replies; more when a too-long transcript is shortened).
        summarized: ``live[:boundary]`` without aborted turns: what the summary
            covers, a previous summary turn first.
        kept: ``live[boundary:]``.
        previous: the summary blocks being folded into the new one.
    """

    live: list[Turn]
    boundary: int
    first_index: int
    last_index: int
    first_turn_id: str
    last_turn_id: str
    replaced_count: int
    dropped_count: int
    summarized: list[Turn]
    kept: list[Turn]
    previous: list[CompactSummaryBlock]


def _boundary(live: list[Turn], keep_turns: int) -> int | None:
    counted = [i for i, t in enumerate(live) if _counted(t)]
    if len(counted) <= keep_turns:
        return None
    def has_content(end: int) -> bool:
        return any(_counted(t) for t in live[:end])

    if keep_turns == 0:
        return len(live)
    b = counted[len(counted) - keep_turns]
    back = b
    while back > 0 and _answers_tools(live[back]):
        back -= 1
    if not _answers_tools(live[back]) and has_content(back):
        return back
    forward = b
    while forward < len(live) and _answers_tools(live[forward]):
        forward += 1
    return forward if has_content(forward) else None


def _covered(stored: Sequence[Turn], head: list[Turn]) -> tuple[int, int]:
    pos = {t.id: i for i, t in enumerate(stored)}
    firsts: list[int] = []
    lasts: list[int] = []
    for t in head:
        own = pos[t.id]
        block = summary_block(t)
        if block is None:
            firsts.append(own)
            lasts.append(own)
            continue
        firsts.append(own)
        start, end = pos.get(block.first_turn_id or ""), pos.get(block.last_turn_id or "")
        if start is not None and end is not None:
            firsts.append(start)
            lasts.append(end)
    return min(firsts), (max(lasts) if lasts else min(firsts))


def plan_compaction(stored: Sequence[Turn], keep_turns: int) -> Plan | None:
    """Decide what a compaction replaces.

    Args:
        stored: the session's stored turns in order (``Store.get_turns``).
        keep_turns: recent non-aborted turns to keep verbatim (>= 0).

    Returns:
        The plan, or None when there is nothing to compact (no more than
        ``keep_turns`` turns beyond the current summary, or no boundary that
        keeps tool calls and their results together).
    """
    live = apply_compactions(stored)
    boundary = _boundary(live, keep_turns)
    if boundary is None:
        return None
    head = live[:boundary]
    first, last = _covered(stored, head)
    replaced = sum(1 for t in stored[first : last + 1] if summary_block(t) is None)
    return Plan(
        live=live,
        boundary=boundary,
        first_index=first,
        last_index=last,
        first_turn_id=stored[first].id,
        last_turn_id=stored[last].id,
        replaced_count=replaced,
        dropped_count=sum(1 for t in head if t.aborted and summary_block(t) is None),
        summarized=[t for t in head if not t.aborted],
        kept=live[boundary:],
        previous=[b for t in head if (b := summary_block(t)) is not None],
    )


def fit_keep_turns(
    stored: Sequence[Turn], keep_turns: int, fits: Callable[[list[Turn]], bool]
) -> int | None:
    """The most recent turns a compaction may keep verbatim so that the request fits.

    Used when a request is over the model's context window even though
    compaction with ``keep_turns`` would do nothing (too few turns) or not
    enough: fewer turns are kept, down to one (the message being answered,
    with the tool call it answers, :func:`plan_compaction` keeping pairs).

    Args:
        stored: the session's stored turns in order.
        keep_turns: the setting ``compaction.keep_turns`` (>= 0); 0 is tried as it is.
        fits: tells whether a plan's kept turns (``Plan.kept``), sent after a
            summary, fit the window.

    Returns:
        The largest ``k`` from ``keep_turns`` down to 1 (just 0 when
        ``keep_turns`` is 0) with a plan whose kept turns fit; None when there
        is none: nothing to compact, or the kept turns alone are too long.
    """
    candidates = range(keep_turns, 0, -1) if keep_turns > 0 else range(0, 1)
    for k in candidates:
        plan = plan_compaction(stored, k)
        if plan is not None and fits(plan.kept):
            return k
    return None


def file_label(block: ImageBlock | DocumentBlock) -> str:
    """A short name for a restored file: the document's name, else its media type."""
    if isinstance(block, DocumentBlock):
        return block.name or block.media_type
    return f"image ({block.media_type})"


def restorable_files(
    summarized: Sequence[Turn], context_window: int, limit: int = RESTORE_FILES
) -> list[ImageBlock | DocumentBlock]:
    """Return the files to add back after the summary, oldest first.

    Args:
        summarized: the turns being summarized.
        context_window: the conversation model's window, tokens.
        limit: at most this many files.

    Returns:
        The most recent image and document blocks of user turns (tool output
        excluded), duplicates once, together at most ``RESTORE_SHARE`` of the
        window by :func:`parley.core.context.tokens.estimate_tokens`.
    """
    found: list[ImageBlock | DocumentBlock] = []
    seen: set[tuple[str, str | None, str | None]] = set()
    for turn in reversed(summarized):
        if turn.role != "user":
            continue
        for block in reversed(turn.blocks):
            if not isinstance(block, ImageBlock | DocumentBlock):
                continue
            key = (block.media_type, block.data, getattr(block, "url", None))
            if key not in seen:
                seen.add(key)
                found.append(block)
    budget = int(context_window * RESTORE_SHARE)
    chosen: list[ImageBlock | DocumentBlock] = []
    used = 0
    for block in found:
        if len(chosen) >= limit:
            break
        cost = estimate_tokens([Turn("user", [block])])
        if used + cost <= budget:
            chosen.append(block)
            used += cost
    return list(reversed(chosen))


def cannot_reduce(plan: Plan, context_window: int) -> bool:
    """True when a summary of ``plan`` certainly leaves the context no smaller: what it
    replaces (``plan.summarized``, estimated) is no more than the shortest summary the
    check accepts (``parley.core.compaction.check.summary_floor`` of it) plus the files
    restored after it (:func:`restorable_files`)."""
    replaced = estimate_tokens(plan.summarized)
    files = restorable_files(plan.summarized, context_window)
    restored = estimate_tokens([Turn("user", list(files))]) if files else 0
    return replaced <= summary_floor(replaced) + restored

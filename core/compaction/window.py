"""The newest turns that fit: what a request sends when no summary can be made.

When automatic compaction cannot produce a summary (``parley.core.compaction.run``), a
request over the model's context window goes out with its oldest turns left off the
wire instead of failing. :func:`newest_that_fit` chooses where the request starts:

* on the model's view of the session (``parley.core.content.apply_compactions``): the
  latest summary turn stands for the turns it replaced;
* at a user turn someone wrote (not aborted, not a summary, holding no tool result):
  the request then starts with a user turn and never separates a tool_use from its
  tool_result (the rules ``parley.core.wire.to_messages`` follows);
* with the latest summary turn kept first when the summary and the newest start still
  fit; else without it;
* never before ``not_before`` (the start of the previous narrowed request: the window
  only moves forward while the record of ``parley.core.compaction.unseen`` stands).

The caller's ``fits`` judges a candidate list of stored turns (it stubs older tool
output and files, ``parley.core.compaction.wire.stub_for_overflow``, and estimates in
the provider's tokens). The search tries 1, 2, 4 … of the newest starts, then halves
between the last that fitted and the first that did not, so it costs a few estimates of
what is sent, never one per stored turn. The stored turns are never changed.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from parley.core.content import CompactSummaryBlock, ToolResultBlock, Turn, apply_compactions


@dataclass(frozen=True)
class Window:
    """Where a narrowed request starts.

    Attributes:
        turns: the stored turns to send, in order (the summary turn first when kept).
        first_seen: the oldest non-summary turn sent.
        hidden: non-aborted turns of the model's view before ``first_seen`` that are
            not sent (the summary turn counted when it is left out too); >= 1.
        summary_kept: the latest summary turn is sent first.
    """

    turns: list[Turn]
    first_seen: Turn
    hidden: int
    summary_kept: bool


def _is_summary(turn: Turn) -> bool:
    return any(isinstance(b, CompactSummaryBlock) for b in turn.blocks)


def _can_start(turn: Turn) -> bool:
    """A request may start at this turn: a written user turn (wire rule: user first, no
    tool_result without its tool_use before it)."""
    return (
        turn.role == "user"
        and not turn.aborted
        and not _is_summary(turn)
        and not any(isinstance(b, ToolResultBlock) for b in turn.blocks)
    )


def newest_that_fit(
    stored: Sequence[Turn],
    fits: Callable[[list[Turn]], bool],
    *,
    not_before: str | None = None,
) -> Window | None:
    """The most turns, newest first, a request can send within the window.

    Args:
        stored: the session's stored turns in order (``Store.get_turns``).
        fits: True when a request sending these stored turns fits the window.
        not_before: id of a turn the request may not start before (None: anywhere).

    Returns:
        The window, or None when nothing can be left off (the request already starts
        at the first turn the model sees) or even the newest start does not fit.
    """
    live = apply_compactions(stored)
    summary = live[0] if live and _is_summary(live[0]) else None
    starts = [i for i, t in enumerate(live) if _can_start(t)]
    if not_before is not None:
        floor = next((i for i, t in enumerate(live) if t.id == not_before), None)
        if floor is not None:
            starts = [i for i in starts if i >= floor]
    first_live = 1 if summary is not None else 0
    starts = [i for i in starts if i > first_live] or []
    if not starts:
        return None
    prefixes: list[list[Turn]] = [[summary], []] if summary is not None else [[]]
    for prefix in prefixes:
        k = _most_starts(live, starts, prefix, fits)
        if k:
            begin = starts[len(starts) - k]
            first = live[begin]
            hidden = sum(1 for t in live[first_live:begin] if not t.aborted)
            if not prefix and summary is not None:
                hidden += 1
            return Window([*prefix, *live[begin:]], first, hidden, bool(prefix))
    return None


def _most_starts(
    live: list[Turn], starts: list[int], prefix: list[Turn],
    fits: Callable[[list[Turn]], bool],
) -> int:
    """How many of the newest ``starts`` the request can reach back (0: not even one)."""

    def ok(k: int) -> bool:
        return fits([*prefix, *live[starts[len(starts) - k]:]])

    if not ok(1):
        return 0
    good, k = 1, 2
    while k <= len(starts) and ok(k):
        good, k = k, k * 2
    bad = min(k, len(starts) + 1)
    while bad - good > 1:
        mid = (good + bad) // 2
        if ok(mid):
            good = mid
        else:
            bad = mid
    return good


def newest_turns(stored: Sequence[Turn]) -> list[Turn]:
    """The turns from the newest start (the message being answered and what follows it):
    the least a request can send; the model's whole view when no turn can start one."""
    live = apply_compactions(stored)
    begin = next((i for i in range(len(live) - 1, -1, -1) if _can_start(live[i])), 0)
    return live[begin:]

"""The turns a request is built from: a compacted session without the turns it replaced.

A long chat has been compacted: its latest summary stands for every turn of its range
(``parley.core.content.apply_compactions``), so those turns are never sent, counted or
shown to the model again. Reading them for every message would make each message cost
time in proportion to the whole stored history. :func:`since_summary` keeps what
matters:

* every turn stored before the latest summary's range (normally none: a re-compaction's
  range starts where the previous one's did, ``parley.core.compaction.plan``);
* the range's first and last turn (so the summary's range is still found in the list);
* every turn stored after the range (the summary turn, the kept turns, everything since).

For any ``turns``, ``apply_compactions(since_summary(turns)) == apply_compactions(turns)``,
so the wire rules (``parley.core.wire.to_messages``), token estimates, the context meter
and compaction plans give the same result from either list. The store reads this list
without reading the rest (``Store.context_turns``); a session with no summary, an
aborted latest summary (the wire rules skip it) or a summary whose range is not stored
is returned whole.
"""

from __future__ import annotations

from collections.abc import Sequence

from parley.core.content import CompactSummaryBlock, Turn

__all__ = ["latest_range", "since_summary", "stored_prefix"]


def _summary(turn: Turn) -> CompactSummaryBlock | None:
    return next((b for b in turn.blocks if isinstance(b, CompactSummaryBlock)), None)


def latest_range(turns: Sequence[Turn]) -> tuple[int, int, int] | None:
    """``(first, last, summary)`` indexes in ``turns`` of the latest summary's range
    (inclusive) and of the summary turn, or None when nothing can be left out.

    None: no summary turn; the latest one is aborted, has no range (a v3 summary), or
    its range is not in ``turns`` or not before it.
    """
    for i in range(len(turns) - 1, -1, -1):
        block = _summary(turns[i])
        if block is None:
            continue
        if turns[i].aborted or not block.first_turn_id or not block.last_turn_id:
            return None
        first = last = None
        for j in range(i - 1, -1, -1):
            tid = turns[j].id
            if tid == block.last_turn_id and last is None:
                last = j
            if tid == block.first_turn_id:
                first = j
        if first is None or last is None or last < first:
            return None
        return first, last, i
    return None


def since_summary(turns: Sequence[Turn]) -> list[Turn]:
    """Return ``turns`` without the inside of the latest summary's range (module docstring).

    Args:
        turns: a session's stored turns in order (``Store.get_turns``).

    Returns:
        A new list of the same Turn objects: all of them when :func:`latest_range` is None.
    """
    found = latest_range(turns)
    if found is None:
        return list(turns)
    first, last, _ = found
    return [*turns[: first + 1], *turns[max(last, first + 1) :]]


def stored_prefix(sent: Sequence[Turn], stored: Sequence[Turn]) -> tuple[Turn, ...] | None:
    """The turns of ``stored`` that a request built from ``sent`` was built from.

    A request is built from :func:`since_summary` of the session's turns; code that reads
    the whole list (a compaction plans on it) uses this to ask whether its history still
    starts with that request.

    Args:
        sent: the turns a request was built from (a ``since_summary`` list, as it was).
        stored: the session's stored turns now, in order.

    Returns:
        ``stored[:n]`` when ``sent`` is ``since_summary(stored[:n])`` for some ``n``
        (every turn of ``sent`` is still stored, unchanged, in that order); else None.
    """
    if not sent:
        return ()
    pos = {t.id: i for i, t in enumerate(stored)}
    end = pos.get(sent[-1].id)
    if end is None:
        return None
    prefix = stored[: end + 1]
    if since_summary(prefix) != list(sent):
        return None
    return tuple(prefix)

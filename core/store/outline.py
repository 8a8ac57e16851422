"""The path a chat shows, as a transcript shows it: compaction spans, and windows of
top-level items.

Everything here reads the session's path (``turn_path`` joined to ``turns``:
:mod:`parley.core.store.tree`), never its other branches, and every position is a
position on the path (``turn_path.pos``: it only grows along the path; gaps are
allowed). The fields keep their historical names (``seqs``, ``first_seq``, ...): they
hold path positions.

A compaction's summary turn is stored *after* the turns it replaces (it is
appended when the compaction runs) but shown *where its range began*, with
the replaced turns folded under it. A transcript that reads only the last
turns of a long session would see the summary without its range. This module
answers, independently of what is loaded:

* :func:`spans`: every compaction whose summary turn and range are on the path,
  as positions (summary turn, first and last replaced turn, counts) and which span
  each one is folded in;
* :func:`window`: the last ``last`` *top-level items* before a position —
  turns outside every top-level range, and the top-level summary turns, each
  keyed by where it is shown (a summary: its range's first position) — and how many
  such items lie before them;
* :func:`range_turns`: every turn a span replaced (nested summaries included). A
  card opened reads its own items a page at a time instead, and a search hit in
  cards the cards around it: :mod:`parley.core.store.card_pages`.

Nesting follows ``parley.gui.transcript.rows.Transcript`` and
``parley.core.content.apply_compactions``: the latest summary whose range lies in an
interval is a card there; earlier summaries whose range lies inside its range
are nested under it (in conversation order: a summary belongs where its range
began, even when it is stored after the range of the later compaction — a
re-compaction soon after the first keeps turns stored before the first
summary); the intervals before and after it are arranged the same way.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import and_, func, not_, or_, select
from sqlalchemy.engine import Connection, Row
from sqlalchemy.sql import ColumnElement

from parley.core.content import Turn
from parley.core.store import path_count, sessions, tree, turns
from parley.core.store.schema import compactions as C
from parley.core.store.schema import turn_path as P
from parley.core.store.schema import turns as T

_COLUMNS = (P.c.pos, *turns._COLUMNS)


@dataclass(frozen=True, slots=True)
class Span:
    """One compaction as positions on the path shown (``turn_path.pos`` values).

    Attributes:
        summary_turn_id: the turn holding the summary (the card).
        summary_seq: where that turn is on the path (after its range).
        first_seq / last_seq: the replaced range, inclusive.
        replaced_count: turns the summary stands for (as recorded).
        stored_count: turns on the path in the range now, with the summary turns of
            earlier compactions nested in it (wherever they are stored): all of
            them are kept.
        outer: the summary turn id of the span this one is folded in, or None
            for a top-level span.
    """

    summary_turn_id: str
    summary_seq: int
    first_seq: int
    last_seq: int
    replaced_count: int
    stored_count: int
    outer: str | None = None


@dataclass(frozen=True)
class Window:
    """Turns read for a transcript, with what is needed to place them.

    Attributes:
        turns: the turns read, in path order.
        seqs: the position on the path (``turn_path.pos``) of each turn read, by turn id.
        spans: every compaction span of the session, by summary turn id.
        older: top-level items (turns or cards) before the first one read;
            0 when the window reaches the start (and for :func:`range_turns`).
        first_key: the display position of the first top-level item read (a
            card's is its range's first position), for the next older window; None
            when nothing was read.
        levels: see below.
    """

    turns: list[Turn]
    seqs: dict[str, int]
    spans: dict[str, Span] = field(default_factory=dict)
    older: int = 0
    first_key: int | None = None
    #: How many items a card holds itself (its own turns, and the cards nested one
    #: level in), by summary turn id: for the cards read in part
    #: (``parley.core.store.card_pages``).
    levels: dict[str, int] = field(default_factory=dict)


def spans(con: Connection, session_id: str) -> dict[str, Span]:
    """Every compaction of a session whose summary turn and range ends are on the path.

    Compactions whose summary turn was deleted (a conversation cut back before
    it), is on another branch, or whose range is not on the path are left out.

    Returns:
        Spans by summary turn id (``outer`` filled in). Raises SessionNotFound.
    """
    sessions.require(con, session_id)
    s, f, la = P.alias("s"), P.alias("f"), P.alias("l")
    rows = con.execute(
        select(C.c.summary_turn_id, s.c.pos.label("summary_seq"), f.c.pos.label("first_seq"),
               la.c.pos.label("last_seq"), C.c.replaced_count)
        .select_from(
            C.join(s, and_(s.c.turn_id == C.c.summary_turn_id, s.c.session_id == session_id))
            .join(f, and_(f.c.turn_id == C.c.first_turn_id, f.c.session_id == session_id))
            .join(la, and_(la.c.turn_id == C.c.last_turn_id, la.c.session_id == session_id))
        )
        .where(C.c.session_id == session_id)
    ).all()
    found = [r for r in rows if r.first_seq <= r.last_seq]
    if not found:
        return {}
    counts = _stored_counts(con, session_id, [(r.first_seq, r.last_seq) for r in found])
    plain = [
        Span(r.summary_turn_id, r.summary_seq, r.first_seq, r.last_seq, r.replaced_count, n)
        for r, n in zip(found, counts, strict=True)
    ]
    outer = _nest(plain)
    placed = [sp for sp in plain if sp.summary_turn_id in outer]
    extra = _counts_elsewhere(placed)
    return {
        sp.summary_turn_id: Span(sp.summary_turn_id, sp.summary_seq, sp.first_seq, sp.last_seq,
                                 sp.replaced_count, sp.stored_count + extra[sp.summary_turn_id],
                                 outer[sp.summary_turn_id])
        for sp in placed
    }


def _stored_elsewhere(all_spans: list[Span], span: Span) -> list[str]:
    """Summary turns of the spans nested in ``span`` that are stored after its range
    (they are shown, and read, inside it all the same)."""
    return [sp.summary_turn_id for sp in all_spans
            if sp is not span and span.first_seq <= sp.first_seq and sp.last_seq <= span.last_seq
            and sp.summary_seq > span.last_seq and sp.summary_seq < span.summary_seq]


def _counts_elsewhere(placed: list[Span]) -> dict[str, int]:
    """``len(_stored_elsewhere(placed, span))`` for every span, by summary turn id: only
    spans whose summary turn is stored between a span's range and its summary turn are
    looked at (found by bisection), so a session compacted hundreds of times is not
    compared pair by pair."""
    by_summary = sorted(placed, key=lambda sp: sp.summary_seq)
    keys = [sp.summary_seq for sp in by_summary]
    out: dict[str, int] = {}
    for span in placed:
        lo = bisect.bisect_right(keys, span.last_seq)
        hi = bisect.bisect_left(keys, span.summary_seq)
        out[span.summary_turn_id] = sum(
            1 for sp in by_summary[lo:hi]
            if sp is not span and span.first_seq <= sp.first_seq and sp.last_seq <= span.last_seq
        )
    return out


def _stored_counts(con: Connection, session_id: str, ranges: list[tuple[int, int]]) -> list[int]:
    """Turns on the path in each ``(first, last)`` position range (inclusive).

    When the path's positions have no gap (turns are appended below the leaf, and a
    path is cut back at its end: :func:`parley.core.store.path_count.ends`, three seeks
    of keys) a range's count is its width, so a chat compacted many times (every range
    starting at its first turn) is not counted again for every compaction, nor its
    whole path once. Otherwise each range is counted (a range of the key).
    """
    known = path_count.ends(con, session_id)
    if known is not None:
        low, high = known
        return [max(0, min(last, high) - max(first, low) + 1) for first, last in ranges]
    out = []
    for first, last in ranges:
        out.append(int(con.execute(
            select(func.count()).where(P.c.session_id == session_id)
            .where(P.c.pos.between(first, last))
        ).scalar_one()))
    return out


def _nest(all_spans: list[Span]) -> dict[str, str | None]:
    """Arrange the spans (see the module doc): the card each one is folded in (None at
    the top level), for every span shown; a span left out is not in the result.

    The rule, read newest first: in each interval the span stored last is the card; the
    spans inside its range, before it and after it are arranged the same way, and a span
    across its range's ends (partly inside it, or holding it) is left out. So a span is
    shown when every newer span shown holds its range or lies apart from it, and it is
    folded in the oldest of the newer spans shown that hold it. The spans shown form
    ranges that nest or lie apart, kept sorted by range: a new (older) span
    ``[a, b]`` is shown unless one starts inside ``(a, b]``, or the innermost one holding
    ``a`` ends before ``b``. About ``n log n`` for ``n`` spans (a chat compacted
    thousands of times, each range from its first turn, nests as deep).
    """
    outer: dict[str, str | None] = {}
    keys: list[tuple[int, int]] = []  # (first, -last) of the spans shown, sorted
    shown: list[Span] = []  # in the order of ``keys``
    by_id: dict[str, Span] = {}
    for sp in sorted(all_spans, key=lambda x: x.summary_seq, reverse=True):
        a, b = sp.first_seq, sp.last_seq
        i = bisect.bisect_right(keys, (a, 1 << 62))  # the spans starting at or before a
        if i < len(keys) and keys[i][0] <= b:
            continue  # a newer span starts inside this one's range: across its ends
        # The last of those (the innermost among equal starts) lies inside the innermost
        # span holding ``a``, if any: up its cards to the first that reaches ``a``.
        holder = shown[i - 1] if i else None
        while holder is not None and holder.last_seq < a:
            up = outer[holder.summary_turn_id]
            holder = None if up is None else by_id[up]
        if holder is not None and holder.last_seq < b:
            continue  # it holds a, not b: across its end
        outer[sp.summary_turn_id] = None if holder is None else holder.summary_turn_id
        by_id[sp.summary_turn_id] = sp
        j = bisect.bisect_right(keys, (a, -b))
        keys.insert(j, (a, -b))
        shown.insert(j, sp)
    return outer


def _outside(top: list[Span], every: list[Span]) -> ColumnElement[bool]:
    """Turns shown at the top level: outside every top-level range, not a summary turn
    (a top one is a card, read by its span; a nested one is shown in its card)."""
    conds: list[ColumnElement[bool]] = [not_(P.c.pos.between(sp.first_seq, sp.last_seq))
                                        for sp in top]
    ids = [sp.summary_turn_id for sp in every]
    if ids:  # turn_path's own column: counting the older items reads its key only
        conds.append(P.c.turn_id.not_in(ids))
    return and_(*conds) if conds else P.c.pos >= 0


def _between(top: list[Span], below: int) -> list[tuple[int | None, int]]:
    """The position intervals before ``below`` outside every top-level range, in path
    order: ``(first or None for "from the start", last)`` inclusive (top-level ranges
    nest in none and lie apart)."""
    out: list[tuple[int | None, int]] = []
    at: int | None = None
    for sp in sorted(top, key=lambda s: s.first_seq):
        if sp.first_seq >= below:
            break
        if at is None or sp.first_seq > at:
            out.append((at, sp.first_seq - 1))
        at = sp.last_seq + 1 if at is None else max(at, sp.last_seq + 1)
    if at is None or at < below:
        out.append((at, below - 1))
    return out


def _count_outside(con: Connection, session_id: str, top: list[Span], summaries: list[str],
                   below: int) -> int:
    """Turns on the path before position ``below`` shown at the top level (outside every
    top-level range, not a summary turn): a range of ``turn_path``'s key per interval
    between the top-level ranges (:func:`_between`), so the turns folded in cards —
    nearly all of a long chat's — are not walked. Cost: the turns counted."""
    total = 0
    for lo, hi in _between(top, below):
        where = [P.c.session_id == session_id, P.c.pos <= hi]
        if lo is not None:
            where.append(P.c.pos >= lo)
        if summaries:
            where.append(P.c.turn_id.not_in(summaries))
        total += int(con.execute(select(func.count()).where(*where)).scalar_one())
    return total


def window(
    con: Connection,
    session_id: str,
    *,
    last: int | None = None,
    before: int | None = None,
    hydrate: bool = False,
) -> Window:
    """Read the last ``last`` top-level items shown before display position ``before``.

    Args:
        session_id: the session.
        last: how many top-level items (None: all).
        before: only items shown before this position (a :attr:`Window.first_key`);
            None: up to the end.
        hydrate: put attached files' bytes back (``Store.get_turns``).

    Returns:
        The :class:`Window`. Raises SessionNotFound.
    """
    all_spans = spans(con, session_id)
    every = list(all_spans.values())
    top = [sp for sp in every if sp.outer is None]
    where = [_outside(top, every)]
    if before is not None:
        where.append(P.c.pos < before)
    q = tree.path_select(session_id, *_COLUMNS, newest_first=True).where(*where)
    if last is not None:
        q = q.limit(max(0, last))
    rows = list(con.execute(q))
    cards = [sp for sp in top if before is None or sp.first_seq < before]
    # Items by display key, newest first: plain turns and cards.
    items: list[tuple[int, Any]] = [(r.pos, r) for r in rows]
    items += [(sp.first_seq, sp) for sp in cards]
    items.sort(key=lambda kv: kv[0], reverse=True)
    if last is not None:
        items = items[: max(0, last)]
    chosen_rows = [v for _k, v in items if not isinstance(v, Span)]
    chosen_cards = [v for _k, v in items if isinstance(v, Span)]
    first_key = items[-1][0] if items else None
    if chosen_cards:
        chosen_rows += list(con.execute(tree.path_select(session_id, *_COLUMNS).where(
            T.c.id.in_([sp.summary_turn_id for sp in chosen_cards]))))
    older = 0
    if first_key is not None:
        older = _count_outside(con, session_id, top, [sp.summary_turn_id for sp in every],
                               first_key)
        older += sum(1 for sp in top if sp.first_seq < first_key)
    chosen_rows.sort(key=lambda r: r.pos)
    loaded = turns._load(con, chosen_rows, hydrate)
    return Window(
        turns=loaded,
        seqs={r.id: r.pos for r in chosen_rows},
        spans=all_spans,
        older=older,
        first_key=first_key,
    )


def _range_rows(con: Connection, session_id: str, span: Span,
                every: list[Span]) -> list[Row[Any]]:
    inside: ColumnElement[bool] = P.c.pos.between(span.first_seq, span.last_seq)
    nested = _stored_elsewhere(every, span)
    if nested:
        inside = or_(inside, T.c.id.in_(nested))
    return list(con.execute(tree.path_select(session_id, *_COLUMNS).where(inside)))


def range_turns(
    con: Connection, session_id: str, summary_turn_id: str, *, hydrate: bool = False
) -> Window:
    """Read the turns a compaction replaced (its card's content), in path order.

    Returns:
        A :class:`Window` of the range's turns (nested summary turns included,
        also those stored after the range;
        ``older`` 0); no turns when the summary turn is not a compaction of
        the session. Raises SessionNotFound.
    """
    all_spans = spans(con, session_id)
    span = all_spans.get(summary_turn_id)
    if span is None:
        return Window([], {}, all_spans)
    rows = _range_rows(con, session_id, span, list(all_spans.values()))
    return Window(turns._load(con, rows, hydrate), {r.id: r.pos for r in rows}, all_spans)

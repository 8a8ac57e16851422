"""A session as a transcript shows it: compaction spans, and windows of top-level items.

A compaction's summary turn is stored *after* the turns it replaces (it is
appended when the compaction runs) but shown *where its range began*, with
the replaced turns folded under it. A transcript that reads only the last
turns of a long session would see the summary without its range. This module
answers, independently of what is loaded:

* :func:`spans`: every compaction of a session as seq positions (summary turn,
  first and last replaced turn, counts) and which span each one is folded in;
* :func:`window`: the last ``last`` *top-level items* before a position —
  turns outside every top-level range, and the top-level summary turns, each
  keyed by where it is shown (a summary: its range's first seq) — and how many
  such items lie before them;
* :func:`range_turns`: the turns a span replaced (nested summaries included),
  read when its card is opened.

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
from parley.core.store import sessions, turns
from parley.core.store.schema import compactions as C
from parley.core.store.schema import turns as T

_COLUMNS = (T.c.seq, *turns._COLUMNS)


@dataclass(frozen=True, slots=True)
class Span:
    """One compaction as positions in its session (``turns.seq`` values).

    Attributes:
        summary_turn_id: the turn holding the summary (the card).
        summary_seq: where that turn is stored (after its range).
        first_seq / last_seq: the replaced range, inclusive.
        replaced_count: turns the summary stands for (as recorded).
        stored_count: turns stored in the range now, with the summary turns of
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
        turns: the turns read, in stored (seq) order.
        seqs: ``turns.seq`` of each turn read, by turn id.
        spans: every compaction span of the session, by summary turn id.
        older: top-level items (turns or cards) before the first one read;
            0 when the window reaches the start (and for :func:`range_turns`).
        first_key: the display position of the first top-level item read (a
            card's is its range's first seq), for the next older window; None
            when nothing was read.
    """

    turns: list[Turn]
    seqs: dict[str, int]
    spans: dict[str, Span] = field(default_factory=dict)
    older: int = 0
    first_key: int | None = None


def spans(con: Connection, session_id: str) -> dict[str, Span]:
    """Every compaction of a session whose summary turn and range ends are stored.

    Compactions whose summary turn was deleted (a conversation cut back before
    it) or whose range is not in the session are left out.

    Returns:
        Spans by summary turn id (``outer`` filled in). Raises SessionNotFound.
    """
    sessions.require(con, session_id)
    s, f, la = T.alias("s"), T.alias("f"), T.alias("l")
    rows = con.execute(
        select(C.c.summary_turn_id, s.c.seq.label("summary_seq"), f.c.seq.label("first_seq"),
               la.c.seq.label("last_seq"), C.c.replaced_count)
        .select_from(
            C.join(s, and_(s.c.id == C.c.summary_turn_id, s.c.session_id == session_id))
            .join(f, and_(f.c.id == C.c.first_turn_id, f.c.session_id == session_id))
            .join(la, and_(la.c.id == C.c.last_turn_id, la.c.session_id == session_id))
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
    outer: dict[str, str | None] = {}
    _nest(plain, -1, 1 << 62, None, outer)
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
    """Turns stored in each ``(first, last)`` seq range (inclusive).

    One aggregate over the session first: when its seqs have no gap (turns are only
    appended, and a conversation cut back is cut at its end) a range's count is its
    width, so a session compacted many times (every range starting at its first turn)
    is not counted again for every compaction. Otherwise each range is counted.
    """
    total, low, high = con.execute(
        select(func.count(), func.min(T.c.seq), func.max(T.c.seq))
        .where(T.c.session_id == session_id)
    ).one()
    if total and total == high - low + 1:
        return [max(0, min(last, high) - max(first, low) + 1) for first, last in ranges]
    out = []
    for first, last in ranges:
        out.append(int(con.execute(
            select(func.count()).where(T.c.session_id == session_id)
            .where(T.c.seq.between(first, last))
        ).scalar_one()))
    return out


def _nest(all_spans: list[Span], lo: int, hi: int, parent: str | None,
          outer: dict[str, str | None]) -> None:
    """Arrange the spans whose range lies in [lo, hi] (see the module doc): in each
    interval the span stored last is the card; the spans inside its range, before it
    and after it are arranged the same way (a span across its range's ends is left out).

    Without recursion (a chat compacted thousands of times nests as deep), each
    interval's spans handed down once, newest first.
    """
    newest = sorted((sp for sp in all_spans if lo <= sp.first_seq and sp.last_seq <= hi),
                    key=lambda sp: sp.summary_seq, reverse=True)
    todo: list[tuple[list[Span], str | None]] = [(newest, parent)]
    while todo:
        spans_in, above = todo.pop()
        if not spans_in:
            continue
        card, rest = spans_in[0], spans_in[1:]
        outer[card.summary_turn_id] = above
        inside: list[Span] = []
        before: list[Span] = []
        after: list[Span] = []
        for sp in rest:
            if card.first_seq <= sp.first_seq and sp.last_seq <= card.last_seq:
                inside.append(sp)
            elif sp.last_seq < card.first_seq:
                before.append(sp)
            elif sp.first_seq > card.last_seq:
                after.append(sp)
        todo += [(after, above), (before, above), (inside, card.summary_turn_id)]


def _outside(top: list[Span], every: list[Span]) -> ColumnElement[bool]:
    """Turns shown at the top level: outside every top-level range, not a summary turn
    (a top one is a card, read by its span; a nested one is shown in its card)."""
    conds: list[ColumnElement[bool]] = [not_(T.c.seq.between(sp.first_seq, sp.last_seq))
                                        for sp in top]
    ids = [sp.summary_turn_id for sp in every]
    if ids:
        conds.append(T.c.id.not_in(ids))
    return and_(*conds) if conds else T.c.seq >= 0


def window(
    con: Connection,
    session_id: str,
    *,
    last: int | None = None,
    before: int | None = None,
    reveal: str | None = None,
    hydrate: bool = False,
) -> Window:
    """Read the last ``last`` top-level items shown before display position ``before``.

    Args:
        session_id: the session.
        last: how many top-level items (None: all).
        before: only items shown before this position (a :attr:`Window.first_key`);
            None: up to the end.
        reveal: a turn id to show (a search hit): when it lies in the range of a
            top-level card that is read (now, or before ``before``), every turn
            of that range is read too. A hit older than the items read is not.
        hydrate: put attached files' bytes back (``Store.get_turns``).

    Returns:
        The :class:`Window`. Raises SessionNotFound.
    """
    all_spans = spans(con, session_id)
    every = list(all_spans.values())
    top = [sp for sp in every if sp.outer is None]
    where = [T.c.session_id == session_id, _outside(top, every)]
    if before is not None:
        where.append(T.c.seq < before)
    q = select(*_COLUMNS).where(*where).order_by(T.c.seq.desc())
    if last is not None:
        q = q.limit(max(0, last))
    rows = list(con.execute(q))
    cards = [sp for sp in top if before is None or sp.first_seq < before]
    # Items by display key, newest first: plain turns and cards.
    items: list[tuple[int, Any]] = [(r.seq, r) for r in rows]
    items += [(sp.first_seq, sp) for sp in cards]
    items.sort(key=lambda kv: kv[0], reverse=True)
    if last is not None:
        items = items[: max(0, last)]
    chosen_rows = [v for _k, v in items if not isinstance(v, Span)]
    chosen_cards = [v for _k, v in items if isinstance(v, Span)]
    first_key = items[-1][0] if items else None
    if chosen_cards:
        chosen_rows += list(con.execute(
            select(*_COLUMNS).where(T.c.id.in_([sp.summary_turn_id for sp in chosen_cards]))
        ))
    if reveal is not None and all(r.id != reveal for r in chosen_rows):
        around = _top_span_of(con, session_id, reveal, top, all_spans)
        floor = first_key if first_key is not None else before
        # only under a card that is read now or was before ``before`` (never a range
        # without its card)
        if around is not None and floor is not None and around.first_seq >= floor:
            chosen_rows += _range_rows(con, session_id, around, every)
    older = 0
    if first_key is not None:
        older = int(con.execute(
            select(func.count()).where(T.c.session_id == session_id, _outside(top, every),
                                       T.c.seq < first_key)
        ).scalar_one())
        older += sum(1 for sp in top if sp.first_seq < first_key)
    chosen_rows.sort(key=lambda r: r.seq)
    loaded = turns._load(con, chosen_rows, hydrate)
    return Window(
        turns=loaded,
        seqs={r.id: r.seq for r in chosen_rows},
        spans=all_spans,
        older=older,
        first_key=first_key,
    )


def _top_span_of(con: Connection, session_id: str, turn_id: str, top: list[Span],
                 all_spans: dict[str, Span]) -> Span | None:
    span = all_spans.get(turn_id)
    if span is not None and span.outer is not None:  # a nested summary: its top card
        while span.outer is not None:
            span = all_spans[span.outer]
        return span
    seq = con.execute(
        select(T.c.seq).where(T.c.id == turn_id, T.c.session_id == session_id)
    ).scalar()
    if seq is None:
        return None
    return next((sp for sp in top if sp.first_seq <= seq <= sp.last_seq), None)


def _range_rows(con: Connection, session_id: str, span: Span,
                every: list[Span]) -> list[Row[Any]]:
    inside: ColumnElement[bool] = T.c.seq.between(span.first_seq, span.last_seq)
    nested = _stored_elsewhere(every, span)
    if nested:
        inside = or_(inside, T.c.id.in_(nested))
    return list(con.execute(
        select(*_COLUMNS).where(T.c.session_id == session_id, inside).order_by(T.c.seq)
    ))


def range_turns(
    con: Connection, session_id: str, summary_turn_id: str, *, hydrate: bool = False
) -> Window:
    """Read the turns a compaction replaced (its card's content), in stored order.

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
    return Window(turns._load(con, rows, hydrate), {r.id: r.seq for r in rows}, all_spans)

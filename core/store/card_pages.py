"""A compaction card's own items, a page at a time, and the cards around a search hit.

A card (``parley.core.store.outline``: a span) holds *its own items*: the turns of its
range outside the ranges of the cards nested one level in, and those nested cards
(each one item, shown where its range began). A chat compacted every few hundred
turns, each re-compaction's range starting at its first turn, nests every earlier
summary in the next: its newest card holds one nested card and the turns of one
compaction, and so on hundreds of levels down. Reading a card therefore reads its own
items only — a page of them, newest first (:func:`page`), like the transcript's
top level — never the turns of the cards nested in it: what opening a card costs
does not grow with the history under it.

Every read is bounded by the card's own items (one compaction's turns): the
positions of a card's own turns are the intervals of its range between the nested
cards' ranges (:func:`gaps`), each read with a range of ``turn_path``'s key.

A search hit inside cards (:func:`window`) is shown in its innermost card: that
card's items around the hit are read, and of every card around it only its summary
turn (the card), not its other items (they are read when asked for).
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import func, select
from sqlalchemy.engine import Connection, Row

from parley.core.store import outline, tree, turns
from parley.core.store.outline import Span, Window
from parley.core.store.schema import turn_path as P
from parley.core.store.schema import turns as T

CARD_PAGE = 200  # a card's own items read at once (newest first), as the transcript's
REVEAL_CONTEXT = 50  # a hit's card: items read before the hit and after it, each


def gaps(span: Span, nested: list[Span]) -> list[tuple[int, int]]:
    """The position intervals of ``span``'s range outside the ranges of ``nested``.

    Args:
        span: the card.
        nested: the cards one level in (their ranges lie in ``span``'s, apart).

    Returns:
        ``(first, last)`` inclusive intervals, in path order (none empty).
    """
    out: list[tuple[int, int]] = []
    at = span.first_seq
    for sp in sorted(nested, key=lambda s: s.first_seq):
        if sp.first_seq > at:
            out.append((at, sp.first_seq - 1))
        at = max(at, sp.last_seq + 1)
    if at <= span.last_seq:
        out.append((at, span.last_seq))
    return out


def _nested(all_spans: dict[str, Span], summary_turn_id: str) -> list[Span]:
    return [sp for sp in all_spans.values() if sp.outer == summary_turn_id]


def _own_turns(con: Connection, session_id: str, lo: int, hi: int, summaries: list[str],
               *, limit: int | None, newest_first: bool) -> list[Row[Any]]:
    q = tree.path_select(session_id, *outline._COLUMNS, newest_first=newest_first).where(
        P.c.pos.between(lo, hi), P.c.turn_id.not_in(summaries))
    return list(con.execute(q if limit is None else q.limit(max(0, limit))))


def _count(con: Connection, session_id: str, intervals: list[tuple[int, int]],
           summaries: list[str]) -> int:
    """Turns on the path in the intervals, summary turns left out (``turn_path`` only)."""
    total = 0
    for lo, hi in intervals:
        if lo <= hi:
            total += int(con.execute(
                select(func.count()).where(P.c.session_id == session_id,
                                           P.c.pos.between(lo, hi),
                                           P.c.turn_id.not_in(summaries))).scalar_one())
    return total


def own_count(con: Connection, session_id: str, span: Span,
              all_spans: dict[str, Span]) -> int:
    """How many items a card holds itself: its own turns and the cards nested one level in."""
    nested = _nested(all_spans, span.summary_turn_id)
    return _count(con, session_id, gaps(span, nested), list(all_spans)) + len(nested)


def _summary_rows(con: Connection, session_id: str, ids: list[str]) -> list[Row[Any]]:
    if not ids:
        return []
    return list(con.execute(tree.path_select(session_id, *outline._COLUMNS)
                            .where(T.c.id.in_(ids))))


def page(con: Connection, session_id: str, summary_turn_id: str, *, last: int = CARD_PAGE,
         before: int | None = None, hydrate: bool = False) -> Window:
    """Read the last ``last`` of a card's own items shown before display position ``before``.

    Args:
        session_id: the session.
        summary_turn_id: the card (its summary turn).
        last: how many items (turns, and nested cards: their summary turns).
        before: only items shown before this position (a :attr:`Window.first_key` of an
            earlier page of the same card); None: up to the card's end.
        hydrate: put attached files' bytes back.

    Returns:
        A :class:`Window`: the items read in path order, ``older`` the card's own items
        before them, ``first_key`` the display position of the first one (None: none
        read), ``levels`` the card's count of own items. No turns when the turn is
        not a compaction of the session. Raises SessionNotFound.
    """
    all_spans = outline.spans(con, session_id)
    span = all_spans.get(summary_turn_id)
    if span is None:
        return Window([], {}, all_spans)
    nested = _nested(all_spans, summary_turn_id)
    summaries = list(all_spans)
    intervals = gaps(span, nested)
    items: list[tuple[int, Any]] = []
    got = 0
    for lo, hi in reversed(intervals):
        hi = hi if before is None else min(hi, before - 1)
        if got >= last:
            break
        if lo <= hi:
            rows = _own_turns(con, session_id, lo, hi, summaries, limit=last - got,
                              newest_first=True)
            got += len(rows)
            items += [(r.pos, r) for r in rows]
    items += [(sp.first_seq, sp) for sp in nested if before is None or sp.first_seq < before]
    items.sort(key=lambda kv: kv[0], reverse=True)
    items = items[: max(0, last)]
    first_key = items[-1][0] if items else None
    chosen = [v for _k, v in items if not isinstance(v, Span)]
    chosen += _summary_rows(con, session_id,
                            [v.summary_turn_id for _k, v in items if isinstance(v, Span)])
    older = 0
    if first_key is not None:
        older = _count(con, session_id, [(lo, min(hi, first_key - 1)) for lo, hi in intervals],
                       summaries)
        older += sum(1 for sp in nested if sp.first_seq < first_key)
    own = _count(con, session_id, intervals, summaries) + len(nested)
    chosen.sort(key=lambda r: r.pos)
    return Window(turns._load(con, chosen, hydrate), {r.id: r.pos for r in chosen}, all_spans,
                  older=older, first_key=first_key, levels={summary_turn_id: own})


def _cards_around(con: Connection, session_id: str, turn_id: str,
                  all_spans: dict[str, Span]) -> tuple[list[Span], int] | None:
    """The cards a turn is shown in, outermost first, and its display position in the
    innermost; None when it is shown at the top level or not on the path."""
    span = all_spans.get(turn_id)
    if span is not None:  # a summary: shown as a card in the card it is nested in
        inner, key = (all_spans[span.outer] if span.outer else None), span.first_seq
    else:
        pos = con.execute(select(P.c.pos).where(P.c.turn_id == turn_id,
                                                P.c.session_id == session_id)).scalar()
        if pos is None:
            return None
        holding = [sp for sp in all_spans.values() if sp.first_seq <= pos <= sp.last_seq]
        inner = min(holding, key=lambda sp: sp.last_seq - sp.first_seq, default=None)
        key = pos
    chain: list[Span] = []
    while inner is not None:
        chain.append(inner)
        inner = all_spans[inner.outer] if inner.outer else None
    return (chain[::-1], key) if chain else None


def _around(con: Connection, session_id: str, span: Span, key: int,
            all_spans: dict[str, Span]) -> list[Row[Any]]:
    """A card's own items around display position ``key``: up to :data:`REVEAL_CONTEXT`
    before it and after it (the item at ``key`` counted before), nested cards included."""
    nested = _nested(all_spans, span.summary_turn_id)
    summaries = list(all_spans)
    intervals = gaps(span, nested)
    before: list[tuple[int, Any]] = []
    after: list[tuple[int, Any]] = []
    for lo, hi in reversed(intervals):
        if len(before) < REVEAL_CONTEXT and lo <= min(hi, key):
            before += [(r.pos, r) for r in _own_turns(
                con, session_id, lo, min(hi, key), summaries,
                limit=REVEAL_CONTEXT - len(before), newest_first=True)]
    for lo, hi in intervals:
        if len(after) < REVEAL_CONTEXT and max(lo, key + 1) <= hi:
            after += [(r.pos, r) for r in _own_turns(
                con, session_id, max(lo, key + 1), hi, summaries,
                limit=REVEAL_CONTEXT - len(after), newest_first=False)]
    cards = [(sp.first_seq, sp) for sp in nested]
    near = sorted([kv for kv in before + cards if kv[0] <= key],
                  key=lambda kv: kv[0], reverse=True)[:REVEAL_CONTEXT]
    near += sorted([kv for kv in after + cards if kv[0] > key],
                   key=lambda kv: kv[0])[:REVEAL_CONTEXT]
    rows = [v for _k, v in near if not isinstance(v, Span)]
    return rows + _summary_rows(con, session_id,
                                [v.summary_turn_id for _k, v in near if isinstance(v, Span)])


def window(con: Connection, session_id: str, *, last: int | None = None,
           before: int | None = None, reveal: str | None = None,
           hydrate: bool = False) -> Window:
    """:func:`parley.core.store.outline.window`, and a search hit shown in its cards.

    Args:
        reveal: a turn id to show: when it is shown inside cards and the outermost
            of them is read (now, or before ``before``), the summary turns of the cards
            around it are read, and the items of its innermost card around it
            (:data:`REVEAL_CONTEXT` either side); ``levels`` has that card's own count.
            A hit older than the items read is not.

    Returns:
        The :class:`Window`. Raises SessionNotFound.
    """
    win = outline.window(con, session_id, last=last, before=before, hydrate=hydrate)
    if reveal is None or reveal in win.seqs:
        return win
    found = _cards_around(con, session_id, reveal, win.spans)
    floor = win.first_key if win.first_key is not None else before
    if found is None or floor is None or found[0][0].first_seq < floor:
        return win
    chain, key = found
    inner = chain[-1]
    rows = _summary_rows(con, session_id, [sp.summary_turn_id for sp in chain[1:]])
    rows += _around(con, session_id, inner, key, win.spans)
    rows = [r for r in {r.id: r for r in rows}.values() if r.id not in win.seqs]
    seqs = dict(win.seqs) | {r.id: r.pos for r in rows}
    read = turns._load(con, rows, hydrate)
    merged = sorted([*win.turns, *read], key=lambda t: seqs[t.id])
    return Window(merged, seqs, win.spans, older=win.older, first_key=win.first_key,
                  levels={inner.summary_turn_id: own_count(con, session_id, inner, win.spans)})

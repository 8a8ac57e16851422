"""A branch made after a summary keeps it: the summary carried onto a new branch.

A compaction's summary turn is stored below the path's leaf when it runs
(:mod:`parley.core.store.compactions`), i.e. after the turns it keeps. "Compact now"
right after an answer leaves the path ``… prompt, answer, SUMMARY``; a branch cut above
the summary (Regenerate of that answer, Edit of the last message: ``branch_before``)
would leave it behind although the turns it replaced all lie before the branch point,
and the next request would go out uncompacted.

:func:`carry` fixes that when the path is cut: the latest summary turn on the part of
the path cut away whose range (its first..last turn, on the path) ends at or before
the cut point is copied as the first turn of the new branch (a child of the cut
point): a new turn id, its summary block with a new ``compaction_id`` and the same
range, and a copy of its ``compactions`` row. The path then reads ``… parent,
SUMMARY'``, and the next turn saved goes below the copy. A summary whose range
reaches below the cut point (Edit of a message inside it) cannot apply and is not
carried. Cost: the path's turns cut away (each looked up in ``compactions_by_summary``)
and one turn.

A fork (:func:`parley.core.store.forks.fork`) copies the path up to its fork point, and
:func:`for_fork` names the summary it carries the same way: the summary stored after the
fork point (the turns a compaction kept word for word, shown after its card, come
before it) whose replaced turns all come before the fork point. A fork made at a turn
the summary replaced (inside its card) is the plain conversation up to there. A fork
made at the summary turn itself (Fork on its card) starts from that summary:
:func:`at_summary` names it and where its range ends, and the fork holds the turns up
to there and the summary, not the kept turns stored between them (they come after the
card).

:func:`summary_ids` names the session's summary turns for the branch points
(``parley.core.store.branch_points``: summary turns are transparent there).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from sqlalchemy import Select, select, text
from sqlalchemy.engine import Connection

from parley.core.content import CompactSummaryBlock, Turn, new_id
from parley.core.store import sessions, tree, turns
from parley.core.store.schema import compactions as C
from parley.core.store.schema import turn_path as P
from parley.core.store.schema import turns as T


def summary_ids(con: Connection, session_id: str) -> set[str]:
    """Ids of the session's summary turns that have a ``compactions`` row (every
    branch). Cost: the session's compactions (index ``compactions_by_session``)."""
    rows = con.execute(select(C.c.summary_turn_id).where(C.c.session_id == session_id))
    return {str(r) for r in rows.scalars()}


def _pos(con: Connection, session_id: str, turn_id: str | None) -> int | None:
    if turn_id is None:
        return None
    pos = con.execute(select(P.c.pos).where(P.c.turn_id == turn_id,
                                            P.c.session_id == session_id)).scalar()
    return None if pos is None else int(pos)


def find(con: Connection, session_id: str, cut_pos: int, parent_pos: int | None
         ) -> str | None:
    """The compaction (its id) to carry when the path is cut below ``parent_pos``
    (None: the path is cut whole): the one whose summary turn is the latest on the path
    at or after ``cut_pos`` with its range on the path ending at or before
    ``parent_pos``; None when there is none. Read before the path is cut."""
    if parent_pos is None:
        return None
    rows = con.execute(
        # The path cut away walked back from its end, each turn looked up in
        # compactions_by_summary (not the session's every compaction for each turn).
        select(C.c.id, C.c.first_turn_id, C.c.last_turn_id)
        .select_from(P.join(C, C.c.summary_turn_id == P.c.turn_id))
        .where(P.c.session_id == session_id, P.c.pos >= cut_pos)
        .order_by(P.c.pos.desc())
    )
    for row in rows.all():
        first = _pos(con, session_id, row.first_turn_id)
        last = _pos(con, session_id, row.last_turn_id)
        if first is not None and last is not None and first <= last <= parent_pos:
            return str(row.id)
    return None


def for_fork(con: Connection, session_id: str, at_pos: int) -> str | None:
    """The compaction (its id) a fork made at path position ``at_pos`` (inclusive)
    carries: of the session's compactions whose summary turn is on the path after
    ``at_pos`` and not aborted, and whose range lies on the path before ``at_pos`` (its
    last turn strictly before: a fork at a replaced turn is the plain conversation up to
    it), the one whose summary turn is latest on the path; None when there is none.

    Cost: the session's compactions (every branch; ``compactions_by_session``), each
    looked up on the path by turn id (``turn_path_by_turn``): it grows with the
    compactions, not the turns.
    """
    query, ps, pl = _on_path(session_id)
    found = con.execute(
        query.with_only_columns(C.c.id)
        .where(ps.c.pos > at_pos, pl.c.pos < at_pos)
        .order_by(ps.c.pos.desc())
        .limit(1)
    ).scalar()
    return None if found is None else str(found)


def at_summary(con: Connection, session_id: str, turn_id: str) -> tuple[str, int] | None:
    """``(compaction id, path position of its range's last turn)`` when ``turn_id`` is a
    summary turn on the path, not aborted, whose range lies on the path before it (the
    card a fork at it starts from); None otherwise (a message, a failed compaction, a
    v3 summary without a range: a fork copies the path up to the turn itself).

    Cost: the turn's compaction row (``compactions_by_summary``) and two path lookups.
    """
    query, ps, pl = _on_path(session_id)
    row = con.execute(
        query.with_only_columns(C.c.id, pl.c.pos)
        .where(C.c.summary_turn_id == turn_id, pl.c.pos < ps.c.pos)
        .limit(1)
    ).first()
    return None if row is None else (str(row.id), int(row.pos))


def _on_path(session_id: str) -> tuple[Select[Any], Any, Any]:
    """The session's compactions whose summary turn (``ps``) and range's first and last
    turns (``pl``: the last) are on its path, in order, the summary not aborted: the
    query (its columns to be chosen) and the summary's and last turn's path aliases."""
    ps, pf, pl = P.alias("ps"), P.alias("pf"), P.alias("pl")
    query = (
        select(C.c.id)
        .select_from(
            C.join(ps, ps.c.turn_id == C.c.summary_turn_id)
            .join(pf, pf.c.turn_id == C.c.first_turn_id)
            .join(pl, pl.c.turn_id == C.c.last_turn_id)
            .join(T, T.c.id == C.c.summary_turn_id)
        )
        .where(C.c.session_id == session_id, ps.c.session_id == session_id,
               pf.c.session_id == session_id, pl.c.session_id == session_id,
               pf.c.pos <= pl.c.pos, T.c.aborted == 0)
    )
    return query, ps, pl


def carry(con: Connection, session_id: str, compaction_id: str) -> Turn | None:
    """Append a copy of that compaction's summary turn below the path's leaf (just cut
    back to the branch point) with a copy of its ``compactions`` row; return the copy.
    None (nothing written) when the summary turn is aborted or holds no summary block
    (it would not apply)."""
    row = con.execute(select(C).where(C.c.id == compaction_id)).one()
    summary = turns.get(con, row.summary_turn_id)
    if summary.aborted or not any(isinstance(b, CompactSummaryBlock) for b in summary.blocks):
        return None
    copy_id = new_id()
    blocks = [replace(b, compaction_id=copy_id) if isinstance(b, CompactSummaryBlock) else b
              for b in summary.blocks]
    copy = replace(summary, id=new_id(), blocks=blocks)
    turns.append(con, session_id, copy)
    values = dict(row._mapping)
    values.update(id=copy_id, summary_turn_id=copy.id)
    con.execute(C.insert().values(**values))
    return copy


_PARENT_POS = text("SELECT max(pos) FROM turn_path WHERE session_id = :sid AND pos < :pos")


def branch_before(con: Connection, session_id: str, turn_id: str) -> Turn | None:
    """``parley.core.store.tree.branch_before``, then the summary that still applies
    carried onto the new branch (module doc). Returns the summary copy, or None.

    Raises:
        SessionNotFound: no such session.
        TurnNotInSession: ``turn_id`` is not a turn of the path shown.
    """
    sessions.require(con, session_id)
    tree.lock(con, session_id)
    pos = tree.pos_of(con, session_id, turn_id)
    parent = con.execute(_PARENT_POS, {"sid": session_id, "pos": pos}).scalar()
    found = find(con, session_id, pos, None if parent is None else int(parent))
    tree.branch_before(con, session_id, turn_id)
    return None if found is None else carry(con, session_id, found)

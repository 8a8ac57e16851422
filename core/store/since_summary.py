"""Reading a session the way a request needs it: without the turns its latest summary replaced.

:func:`context_turns` returns ``parley.core.context.since_summary.since_summary`` of a
session's turns without reading the turns it leaves out: the latest compaction whose
summary turn is stored is found through the ``compactions`` table, its range's ends by
their ids, and only the turns outside the inside of that range are read (two index
ranges of ``turns_order``). What a request is built from, its token estimate and the
context meter then cost time in proportion to what is sent, not to the whole history.
"""

from __future__ import annotations

from sqlalchemy import and_, func, not_, select
from sqlalchemy.engine import Connection

from parley.core.content import CompactSummaryBlock, Turn
from parley.core.context.since_summary import latest_range, since_summary
from parley.core.store import sessions, turns
from parley.core.store.errors import TurnNotInSession
from parley.core.store.schema import compactions as C
from parley.core.store.schema import turns as T


def _candidate(con: Connection, session_id: str) -> tuple[int, int, str] | None:
    """``(first seq, last seq, summary turn id)`` of the stored compaction whose summary turn
    is stored last, or None (no compaction, or its range is not in the session)."""
    s = T.alias("s")
    row = con.execute(
        select(s.c.seq, s.c.id)
        .select_from(C.join(s, and_(s.c.id == C.c.summary_turn_id,
                                    s.c.session_id == session_id)))
        .where(C.c.session_id == session_id)
        .order_by(s.c.seq.desc())
        .limit(1)
    ).first()
    if row is None:
        return None
    summary = turns.get(con, row.id)
    block = next((b for b in summary.blocks if isinstance(b, CompactSummaryBlock)), None)
    if summary.aborted or block is None or not block.first_turn_id or not block.last_turn_id:
        return None
    try:
        first = turns.seq_of(con, session_id, block.first_turn_id)
        last = turns.seq_of(con, session_id, block.last_turn_id)
    except TurnNotInSession:
        return None
    if not first <= last < int(row.seq):
        return None
    return first, last, str(row.id)


def messages_between(con: Connection, session_id: str, after_id: str, before_id: str) -> int:
    """See :meth:`parley.core.store.store_turns.TurnsStore.messages_between`."""
    sessions.require(con, session_id)
    low = turns.seq_of(con, session_id, after_id)
    high = turns.seq_of(con, session_id, before_id)
    return int(con.execute(
        select(func.count()).where(T.c.session_id == session_id)
        .where(T.c.seq > low).where(T.c.seq < high)
        .where(not_(T.c.blocks.like('%"compact_summary"%')))
    ).scalar_one())


def context_turns(con: Connection, session_id: str, hydrate: bool) -> list[Turn]:
    """See :meth:`parley.core.store.store_turns.TurnsStore.context_turns`."""
    sessions.require(con, session_id)
    found = _candidate(con, session_id)
    if found is None:
        return since_summary(turns.get_many(con, session_id, None, hydrate))
    first, last, summary_id = found
    mine = select(*turns._COLUMNS).where(T.c.session_id == session_id).order_by(T.c.seq)
    # Two ranges of the (session_id, seq) index: an OR of the two is read as one scan
    # of every turn of the session.
    # A range of one turn (first == last) is read once.
    rows = [*con.execute(mine.where(T.c.seq <= first)),
            *con.execute(mine.where(T.c.seq >= last, T.c.seq > first))]
    out = turns._load(con, list(rows), hydrate)
    latest = latest_range(out)
    if latest is None or out[latest[2]].id != summary_id:
        # A summary turn stored later without a compactions row (not made by this
        # store): the whole list decides.
        return since_summary(turns.get_many(con, session_id, None, hydrate))
    return out

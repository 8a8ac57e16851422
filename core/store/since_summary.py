"""Reading a chat the way a request needs it: the path shown, without the turns its latest
summary replaced.

:func:`context_turns` returns ``parley.core.context.since_summary.since_summary`` of the
session's path (``turn_path``: :mod:`parley.core.store.tree`) without reading the turns
it leaves out: the latest compaction whose summary turn is on the path is found through
the path walked back from its end (a compaction's summary turn found by the
``compactions_by_summary`` index), its range's ends by their positions on the path, and only the
path's turns outside the inside of that range are read (two index ranges of
``turn_path``'s primary key ``(session_id, pos)``). What a request is built from, its
token estimate and the context meter then cost time in proportion to what is sent, not
to the whole history, nor to the session's other branches.

A summary made on another branch is not on the path, so it is not used: a branch made
after a summary keeps it (the summary is its ancestor), one made before it does not.
"""

from __future__ import annotations

from sqlalchemy import ColumnElement, Exists, exists, func, not_, select
from sqlalchemy.engine import Connection

from parley.core.content import CompactSummaryBlock, Turn
from parley.core.context.since_summary import latest_range, since_summary
from parley.core.store import sessions, tree, turns
from parley.core.store.errors import TurnNotInSession
from parley.core.store.schema import compactions as C
from parley.core.store.schema import turn_path as P
from parley.core.store.schema import turns as T


def _candidate(con: Connection, session_id: str) -> tuple[int, int, str] | None:
    """``(first pos, last pos, summary turn id)`` of the stored compaction whose summary
    turn is the last on the path, or None (no compaction on the path, or its range is
    not on it)."""
    # The path walked back from its end (turn_path's key) to the first turn that is a
    # compaction's summary (index compactions_by_summary): the turns since the latest
    # summary are looked at, not every compaction the chat ever had.
    row = con.execute(
        select(P.c.pos, P.c.turn_id)
        .where(P.c.session_id == session_id, summarized(P.c.turn_id))
        .order_by(P.c.pos.desc())
        .limit(1)
    ).first()
    if row is None:
        return None
    summary = turns.get(con, row.turn_id)
    block = next((b for b in summary.blocks if isinstance(b, CompactSummaryBlock)), None)
    if summary.aborted or block is None or not block.first_turn_id or not block.last_turn_id:
        return None
    try:
        first = tree.pos_of(con, session_id, block.first_turn_id)
        last = tree.pos_of(con, session_id, block.last_turn_id)
    except TurnNotInSession:
        return None
    if not first <= last < int(row.pos):
        return None
    return first, last, str(row.turn_id)


def summarized(turn_id: ColumnElement[str]) -> Exists:
    """SQL: ``turn_id`` is a compaction's summary turn (index ``compactions_by_summary``;
    a turn is on one session's path, and its compaction row is that session's)."""
    return exists().where(C.c.summary_turn_id == turn_id)


def messages_between(con: Connection, session_id: str, after_id: str, before_id: str) -> int:
    """See :meth:`parley.core.store.store_turns.TurnsStore.messages_between`: the path's
    turns strictly between two of its turns, summaries aside (an index range of
    ``turn_path``, no turn's blocks decoded)."""
    sessions.require(con, session_id)
    low = tree.pos_of(con, session_id, after_id)
    high = tree.pos_of(con, session_id, before_id)
    return int(con.execute(
        select(func.count()).select_from(tree.PATH)
        .where(P.c.session_id == session_id, P.c.pos > low, P.c.pos < high)
        .where(not_(T.c.blocks.like('%"compact_summary"%')))
    ).scalar_one())


def context_turns(con: Connection, session_id: str, hydrate: bool) -> list[Turn]:
    """See :meth:`parley.core.store.store_turns.TurnsStore.context_turns`."""
    sessions.require(con, session_id)
    found = _candidate(con, session_id)
    path = tree.path_select(session_id, *turns._COLUMNS)
    if found is None:
        return since_summary(turns._load(con, list(con.execute(path)), hydrate))
    first, last, summary_id = found
    # Two ranges of turn_path's (session_id, pos) key: an OR of the two is read as one
    # scan of the whole path. A range of one turn (first == last) is read once.
    rows = [*con.execute(path.where(P.c.pos <= first)),
            *con.execute(path.where(P.c.pos >= last, P.c.pos > first))]
    out = turns._load(con, list(rows), hydrate)
    latest = latest_range(out)
    if latest is None or out[latest[2]].id != summary_id:
        # A summary turn stored later without a compactions row (not made by this
        # store): the whole path decides.
        return since_summary(turns._load(con, list(con.execute(path)), hydrate))
    return out

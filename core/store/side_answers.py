"""Answers saved beside the path: several models' replies to one message, as siblings.

"Ask several models" (``parley.core.chat.several``) streams 2–4 replies to one prompt at
once. Each reply's row is made here first, empty and marked cut off (as a journalled
reply is), linked below the prompt but *not* on the path shown; the journal and the
final save then only update that row (``parley.core.store.turns.upsert`` finds it), so
replies written at the same time never link below one another. Once they are done the
chosen one is shown (``Store.show_branch``); the others are its siblings (‹ n/m ›).

Functions take a Connection inside the caller's transaction.
"""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import text
from sqlalchemy.engine import Connection

from parley.core.content import Turn, now_ms
from parley.core.store import attachments, sessions, tree
from parley.core.store.errors import DuplicateTurn, TurnNotInSession
from parley.core.store.schema import turns as T
from parley.core.store.turns import next_seq, row_values

_OWNER = text("SELECT session_id FROM turns WHERE id = :tid")
_LINK = text(
    "INSERT INTO turn_links (turn_id, session_id, parent_id, shown_at) "
    "VALUES (:tid, :sid, :parent, :stamp)"
)


def add_below(con: Connection, session_id: str, parent_id: str, turns: Sequence[Turn]) -> None:
    """Insert ``turns`` as children of ``parent_id``, off the path shown (see the module doc).

    Args:
        con: a connection inside the caller's transaction.
        session_id: the session.
        parent_id: the turn they answer (any turn of the session).
        turns: the new turns, saved in this order (their ``seq`` follows it).

    Raises:
        SessionNotFound: no such session.
        TurnNotInSession: ``parent_id`` is not a turn of the session.
        DuplicateTurn: a turn with one of these ids is already saved.
    """
    sessions.require(con, session_id)
    tree.lock(con, session_id)
    if con.execute(_OWNER, {"tid": parent_id}).scalar() != session_id:
        raise TurnNotInSession(parent_id, session_id)
    seq = next_seq(con, session_id)
    stamp = now_ms()
    for i, turn in enumerate(turns):
        if con.execute(_OWNER, {"tid": turn.id}).scalar() is not None:
            raise DuplicateTurn(turn.id)
        values = row_values(attachments.store_blocks(con, turn))
        con.execute(T.insert(), {**values, "session_id": session_id, "seq": seq + i})
        con.execute(_LINK, {"tid": turn.id, "sid": session_id, "parent": parent_id,
                            "stamp": stamp})
    sessions.touch(con, session_id)

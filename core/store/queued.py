"""Queued messages: rows of ``queued_messages``, written while a reply streamed.

A message sent while its chat's reply is still coming waits here, in order, until
the reply is saved (or until the person sends it on, after a pause or a restart).
It is saved when queued, so a crash or a quit keeps it. Sending it or taking it
back deletes its row (:func:`take`). A queued message is sent as the user turn of
the same id, so once that turn is saved the message counts as sent even if its row
was not deleted yet (a crash in between): it is never listed again, and the turns'
unique id refuses a second copy. Sent exactly once. Functions take a Connection
inside the caller's transaction; both backends share them.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import ColumnElement, delete, exists, func, select, update
from sqlalchemy.engine import Connection, Row

from parley.core.content import new_id, now_ms
from parley.core.store.errors import QueuedMessageNotFound, SessionNotFound
from parley.core.store.schema import queued_messages as Q
from parley.core.store.schema import sessions as S
from parley.core.store.schema import turns as T

_COLUMNS = (Q.c.id, Q.c.session_id, Q.c.position, Q.c.text, Q.c.created_at)


@dataclass(frozen=True, slots=True)
class QueuedMessage:
    """A message waiting to be sent in its chat.

    Attributes:
        id: its id (32 hex chars), also the id of the user turn it becomes when sent.
        session_id: the chat it is sent in.
        position: its place in the chat's queue (smaller goes first; gaps allowed).
        text: what the person wrote (never empty).
        created_at: when it was queued, epoch milliseconds UTC.
    """

    id: str
    session_id: str
    position: int
    text: str
    created_at: int


def _message(row: Row) -> QueuedMessage:
    return QueuedMessage(row.id, row.session_id, row.position, row.text, row.created_at)


def _checked(text: str) -> str:
    if not text.strip():
        raise ValueError("a queued message cannot be empty")
    return text


def get(con: Connection, message_id: str) -> QueuedMessage:
    """Return one queued message. Raises QueuedMessageNotFound."""
    row = con.execute(select(*_COLUMNS).where(Q.c.id == message_id)).first()
    if row is None:
        raise QueuedMessageNotFound(message_id)
    return _message(row)


def add(con: Connection, session_id: str, text: str) -> QueuedMessage:
    """Queue ``text`` last in its chat. Raises SessionNotFound; ValueError when blank."""
    _checked(text)
    if con.execute(select(S.c.id).where(S.c.id == session_id)).first() is None:
        raise SessionNotFound(session_id)
    last = select(func.coalesce(func.max(Q.c.position), -1) + 1).where(
        Q.c.session_id == session_id
    )
    message_id = new_id()
    con.execute(
        Q.insert().values(
            id=message_id,
            session_id=session_id,
            position=con.execute(last).scalar_one(),
            text=text,
            created_at=now_ms(),
        )
    )
    return get(con, message_id)


def _unsent() -> ColumnElement[bool]:
    """Rows not sent yet: no turn has their id (a sent message's turn has it)."""
    return ~exists().where(T.c.id == Q.c.id)


def list_for(con: Connection, session_id: str) -> list[QueuedMessage]:
    """A chat's queued messages not sent yet, first to be sent first ([] when none)."""
    rows = con.execute(
        select(*_COLUMNS)
        .where(Q.c.session_id == session_id, _unsent())
        .order_by(Q.c.position, Q.c.created_at, Q.c.id)
    )
    return [_message(r) for r in rows]


def sessions_with(con: Connection) -> dict[str, int]:
    """``{session id: how many}`` of every chat that has queued messages not sent yet."""
    rows = con.execute(
        select(Q.c.session_id, func.count()).where(_unsent()).group_by(Q.c.session_id)
    )
    return {r[0]: int(r[1]) for r in rows}


def edit(con: Connection, message_id: str, text: str) -> QueuedMessage:
    """Change a queued message's text; it keeps its place. Raises QueuedMessageNotFound;
    ValueError when blank."""
    _checked(text)
    get(con, message_id)
    con.execute(update(Q).where(Q.c.id == message_id).values(text=text))
    return get(con, message_id)


def take(con: Connection, message_id: str) -> QueuedMessage | None:
    """Delete a queued message (sent, or taken back) and return it; None when it was
    already gone (sent or taken back elsewhere)."""
    row = con.execute(select(*_COLUMNS).where(Q.c.id == message_id)).first()
    if row is None:
        return None
    con.execute(delete(Q).where(Q.c.id == message_id))
    return _message(row)

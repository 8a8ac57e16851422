"""Queued messages: rows of ``queued_messages``, written while a reply streamed.

A message sent while its chat's reply is still coming waits here, in order, until
the reply is saved (or until the person sends it on, after a pause or a restart).
It is saved when queued, so a crash or a quit keeps it. Sending it or taking it
back deletes its row (:func:`take`). A queued message is sent as the user turn of
the same id, so once that turn is saved the message counts as sent even if its row
was not deleted yet (a crash in between): it is never listed again, and the turns'
unique id refuses a second copy. Sent exactly once. Functions take a Connection
inside the caller's transaction; both backends share them.

A queued message may carry files (``queued_files``): their bytes are stored once in
``attachments`` (by sha256, shared with turns using the same file) when the message is
queued, and referenced from it in order. Taking the message back lets them go: a file no
turn and no other queued message uses is deleted with it (the schema's triggers).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy import ColumnElement, delete, exists, func, select, update
from sqlalchemy.engine import Connection, Row

from parley.core.content import new_id, now_ms
from parley.core.store import attachments
from parley.core.store.errors import QueuedMessageNotFound, SessionNotFound
from parley.core.store.schema import queued_files as F
from parley.core.store.schema import queued_messages as Q
from parley.core.store.schema import sessions as S
from parley.core.store.schema import turns as T

_COLUMNS = (Q.c.id, Q.c.session_id, Q.c.position, Q.c.text, Q.c.created_at)


@dataclass(frozen=True, slots=True)
class QueuedFile:
    """A file attached to a queued message: a reference to its stored bytes.

    Attributes:
        name: the file name shown (e.g. ``photo.png``).
        media_type: e.g. ``image/png``, ``application/pdf``, ``text/plain``.
        sha256: the id of its bytes in ``attachments`` (64 lowercase hex chars).
    """

    name: str
    media_type: str
    sha256: str


@dataclass(frozen=True, slots=True)
class NewFile:
    """A file to queue with a message: its bytes (stored by :func:`add`).

    Attributes:
        name: the file name shown.
        media_type: its media type.
        data: its bytes.
    """

    name: str
    media_type: str
    data: bytes


@dataclass(frozen=True, slots=True)
class QueuedMessage:
    """A message waiting to be sent in its chat.

    Attributes:
        id: its id (32 hex chars), also the id of the user turn it becomes when sent.
        session_id: the chat it is sent in.
        position: its place in the chat's queue (smaller goes first; gaps allowed).
        text: what the person wrote (empty only when it carries files).
        created_at: when it was queued, epoch milliseconds UTC.
        files: the files attached to it, in order (() when none).
    """

    id: str
    session_id: str
    position: int
    text: str
    created_at: int
    files: tuple[QueuedFile, ...] = ()


def _files(con: Connection, ids: Sequence[str]) -> dict[str, tuple[QueuedFile, ...]]:
    """``{queued id: its files in order}`` of those among ``ids`` that have files."""
    found: dict[str, list[QueuedFile]] = {}
    if ids:
        rows = con.execute(
            select(F.c.queued_id, F.c.name, F.c.media_type, F.c.sha256)
            .where(F.c.queued_id.in_(list(ids)))
            .order_by(F.c.queued_id, F.c.position)
        )
        for r in rows:
            found.setdefault(r.queued_id, []).append(QueuedFile(r.name, r.media_type, r.sha256))
    return {k: tuple(v) for k, v in found.items()}


def _messages(con: Connection, rows: Sequence[Row]) -> list[QueuedMessage]:
    files = _files(con, [r.id for r in rows])
    return [QueuedMessage(r.id, r.session_id, r.position, r.text, r.created_at,
                          files.get(r.id, ())) for r in rows]


def _checked(text: str, files: Sequence[object] = ()) -> str:
    if not text.strip() and not files:
        raise ValueError("a queued message cannot be empty")
    return text


def get(con: Connection, message_id: str) -> QueuedMessage:
    """Return one queued message. Raises QueuedMessageNotFound."""
    row = con.execute(select(*_COLUMNS).where(Q.c.id == message_id)).first()
    if row is None:
        raise QueuedMessageNotFound(message_id)
    return _messages(con, [row])[0]


def _put_files(con: Connection, message_id: str, files: Sequence[NewFile], *,
               first: int = 0) -> None:
    """Store ``files``' bytes (once per content) and reference them from the message,
    at positions ``first``, ``first + 1``, …"""
    for position, f in enumerate(files, start=first):
        sha = attachments.put(con, f.data, f.media_type)
        con.execute(F.insert().values(queued_id=message_id, position=position, name=f.name,
                                      media_type=f.media_type, sha256=sha))


def file_data(con: Connection, sha: str) -> bytes:
    """The bytes of a queued message's file. Raises AttachmentNotFound."""
    return attachments.data_of(con, sha)


def add(con: Connection, session_id: str, text: str,
        files: Sequence[NewFile] = ()) -> QueuedMessage:
    """Queue ``text`` (and ``files``, stored) last in its chat. Raises SessionNotFound;
    ValueError when blank without files."""
    _checked(text, files)
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
    _put_files(con, message_id, files)
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
    return _messages(con, list(rows))


def sessions_with(con: Connection) -> dict[str, int]:
    """``{session id: how many}`` of every chat that has queued messages not sent yet."""
    rows = con.execute(
        select(Q.c.session_id, func.count()).where(_unsent()).group_by(Q.c.session_id)
    )
    return {r[0]: int(r[1]) for r in rows}


def edit(con: Connection, message_id: str, text: str,
         files: Sequence[NewFile] | None = None) -> QueuedMessage:
    """Change a queued message's text (and its files, unless ``files`` is None); it keeps
    its place. Raises QueuedMessageNotFound; ValueError when blank without files."""
    old = get(con, message_id)
    _checked(text, old.files if files is None else files)
    con.execute(update(Q).where(Q.c.id == message_id).values(text=text))
    if files is not None:  # the new ones referenced first: a file kept is never released
        base = len(old.files)
        _put_files(con, message_id, files, first=base)
        con.execute(delete(F).where(F.c.queued_id == message_id, F.c.position < base))
        con.execute(update(F).where(F.c.queued_id == message_id)
                    .values(position=F.c.position - base))
    return get(con, message_id)


def take(con: Connection, message_id: str) -> QueuedMessage | None:
    """Delete a queued message (sent, or taken back) and return it; None when it was
    already gone (sent or taken back elsewhere)."""
    row = con.execute(select(*_COLUMNS).where(Q.c.id == message_id)).first()
    if row is None:
        return None
    message = _messages(con, [row])[0]
    con.execute(delete(F).where(F.c.queued_id == message_id))  # their bytes go if unused
    con.execute(delete(Q).where(Q.c.id == message_id))
    return message

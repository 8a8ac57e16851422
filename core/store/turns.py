"""Turns: rows of ``turns``, ordered per session by ``seq``.

Functions take a Connection inside the caller's transaction. The search index
follows every insert, update of ``blocks`` and delete through the triggers of
:mod:`parley.core.store.schema`, in the same transaction, and so do the links to
attached files. A saved turn's image and document bytes go to the
``attachments`` table (:func:`parley.core.store.attachments.store_blocks`): the turn's
JSON keeps a reference.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from sqlalchemy import bindparam, func, select, text, update
from sqlalchemy.engine import Connection, Row

from parley.core.content import (
    Turn,
    Usage,
    blocks_from_json_text,
    blocks_to_json_text,
    now_ms,
)
from parley.core.store import attachments, sessions, tree
from parley.core.store.dialect import is_postgresql
from parley.core.store.errors import (
    DuplicateTurn,
    SessionNotFound,
    TurnInOtherSession,
    TurnNotFound,
)
from parley.core.store.models import TreeTurn
from parley.core.store.postgres import sql as pg_sql
from parley.core.store.schema import turns as T

_COLUMNS = (
    T.c.id,
    T.c.role,
    T.c.blocks,
    T.c.aborted,
    T.c.model,
    T.c.usage,
    T.c.created_at,
)


#: Key of ``turns.usage``'s JSON that holds ``Turn.stop_reason`` (no column of its own).
STOP_KEY = "stop_reason"
#: Key of ``turns.usage``'s JSON naming the Parley that journals a reply still streaming
#: (PostgreSQL: its instance id, ``PgStore.instance``); gone once the reply is saved
#: complete, stopped or failed (those writes carry no writer).
WRITER_KEY = "writer"
#: The instance ids of the Parleys connected to the server now, this one left out (each
#: names its connections ``parley:<instance>[:…]``: ``parley.core.store.postgres.store``).
_OTHER_PARLEYS = text(
    "SELECT DISTINCT split_part(application_name, ':', 2) FROM pg_stat_activity "
    "WHERE application_name LIKE 'parley:%' AND split_part(application_name, ':', 2) "
    "<> split_part(current_setting('application_name'), ':', 2)"
)


def usage_to_text(usage: Usage | None, stop_reason: str | None = None,
                  writer: str | None = None) -> str | None:
    """``turns.usage``: the usage's JSON, with the reply's kept stop reason (if any) and
    the Parley journalling it (``writer``, if any)."""
    data: dict[str, Any] = {} if usage is None else dict(usage.to_json())
    if stop_reason is not None:
        data[STOP_KEY] = stop_reason
    if writer is not None:
        data[WRITER_KEY] = writer
    return json.dumps(data, separators=(",", ":")) if data else None


def usage_from_text(text: str | None) -> Usage | None:
    """The usage kept in ``turns.usage`` (:func:`usage_to_text`), or None."""
    return _usage_of(json.loads(text)) if text else None


def _usage_of(data: Any) -> Usage | None:
    if not isinstance(data, dict) or set(data) <= {STOP_KEY, WRITER_KEY}:
        return None
    return Usage.from_json({k: v for k, v in data.items() if k != WRITER_KEY})


def writer_from_text(text: str | None) -> str | None:
    """The Parley journalling a reply (:data:`WRITER_KEY`), or None."""
    if not text or WRITER_KEY not in text:
        return None
    data = json.loads(text)
    writer = data.get(WRITER_KEY) if isinstance(data, dict) else None
    return str(writer) if writer else None


def stop_from_text(text: str | None) -> str | None:
    """The stop reason kept in ``turns.usage`` (:func:`usage_to_text`), or None."""
    if not text or STOP_KEY not in text:
        return None
    data = json.loads(text)
    reason = data.get(STOP_KEY) if isinstance(data, dict) else None
    return str(reason) if reason else None


#: ``turns.aborted`` of a reply kept as journalled while it streamed (``Turn.cut_off``):
#: 0 complete, 1 stopped or failed, 2 cut off by the end of the process.
CUT_OFF = 2


def to_turn(row: Row) -> Turn:
    """A stored row as a :class:`Turn` (its ``usage`` column parsed once: a request's
    context reads every turn since the latest summary)."""
    role, blocks, turn_id, created_at, aborted, model, usage = (
        row.role, row.blocks, row.id, row.created_at, row.aborted, row.model, row.usage)
    data = json.loads(usage) if usage else None
    stop = data.get(STOP_KEY) if isinstance(data, dict) else None
    return Turn(
        role=role,
        blocks=blocks_from_json_text(blocks),
        id=turn_id,
        created_at=created_at,
        aborted=bool(aborted),
        model=model,
        usage=_usage_of(data),
        cut_off=aborted == CUT_OFF,
        stop_reason=str(stop) if stop else None,
    )


def row_values(turn: Turn, writer: str | None = None) -> dict[str, Any]:
    """Column values of a turn (without session_id and seq); ``writer``: the Parley
    journalling it, kept with a reply cut off (:data:`WRITER_KEY`)."""
    journalled = turn.aborted and turn.cut_off
    return {
        "id": turn.id,
        "role": turn.role,
        "blocks": blocks_to_json_text(turn.blocks),
        "aborted": CUT_OFF if turn.aborted and turn.cut_off else int(turn.aborted),
        "model": turn.model,
        "usage": usage_to_text(turn.usage, turn.stop_reason,
                               writer if journalled else None),
        "created_at": turn.created_at,
    }


def next_seq(con: Connection, session_id: str) -> int:
    return int(
        con.execute(
            select(func.coalesce(func.max(T.c.seq), -1) + 1).where(T.c.session_id == session_id)
        ).scalar_one()
    )


# The save path runs once per turn and every ~250 ms while a reply streams:
# prebuilt statements, one look-up query (session exists, turn owner, next seq).
_LOOKUP = text(
    "SELECT (SELECT 1 FROM sessions WHERE id = :sid) AS session_exists, "
    "(SELECT session_id FROM turns WHERE id = :tid) AS owner, "
    "(SELECT coalesce(max(seq), -1) + 1 FROM turns WHERE session_id = :sid) AS next_seq"
)
_LINK = text(
    "INSERT INTO turn_links (turn_id, session_id, parent_id, shown_at) "
    "VALUES (:tid, :sid, :parent, :stamp)"
)
_ON_PATH = text("INSERT INTO turn_path (session_id, pos, turn_id) VALUES (:sid, :pos, :tid)")


def add_to_path(con: Connection, session_id: str, turn_id: str) -> None:
    """Link a just-inserted turn below the path's last turn and append it to the path.

    Its ``shown_at`` is now (epoch ms), or 1 more than its parent's when that is not
    earlier (stamps grow along a path). Runs in the caller's transaction.
    """
    leaf = tree.leaf(con, session_id)
    stamp = now_ms()
    if leaf is not None and leaf.shown_at is not None and leaf.shown_at >= stamp:
        stamp = int(leaf.shown_at) + 1
    con.execute(_LINK, {"tid": turn_id, "sid": session_id,
                        "parent": None if leaf is None else leaf.turn_id, "stamp": stamp})
    con.execute(_ON_PATH, {"sid": session_id, "pos": 0 if leaf is None else int(leaf.pos) + 1,
                           "tid": turn_id})
_LOCK_SESSION = text(pg_sql.LOCK_SESSION)
_INSERT = T.insert()
_UPDATE = (
    update(T)
    .where(T.c.id == bindparam("tid"))
    .values(
        blocks=bindparam("blocks"),
        aborted=bindparam("aborted"),
        model=bindparam("model"),
        usage=bindparam("usage"),
    )
)


def _save(con: Connection, session_id: str, turn: Turn, replace: bool,
          writer: str | None = None) -> Turn:
    if is_postgresql(con):  # another Parley may be saving to this chat: one at a time
        con.execute(_LOCK_SESSION, {"sid": session_id})
    found = con.execute(_LOOKUP, {"sid": session_id, "tid": turn.id}).one()
    if found.session_exists is None:
        raise SessionNotFound(session_id)
    values = row_values(attachments.store_blocks(con, turn), writer)
    if found.owner is None:
        con.execute(_INSERT, {**values, "session_id": session_id, "seq": found.next_seq})
        add_to_path(con, session_id, turn.id)
    elif not replace:
        raise DuplicateTurn(turn.id)
    elif found.owner != session_id:
        raise TurnInOtherSession(turn.id, session_id)
    else:
        con.execute(_UPDATE, {**values, "tid": turn.id})
    sessions.touch(con, session_id)
    return turn


def append(con: Connection, session_id: str, turn: Turn) -> Turn:
    """Insert a turn at the end of a session. Raises SessionNotFound, DuplicateTurn."""
    return _save(con, session_id, turn, replace=False)


def upsert(con: Connection, session_id: str, turn: Turn, writer: str | None = None) -> Turn:
    """Insert a turn, or replace the saved one's content (``writer``: see
    :func:`row_values`). Raises SessionNotFound, TurnInOtherSession."""
    return _save(con, session_id, turn, replace=True, writer=writer)


def _mark_writing(con: Connection, rows: Sequence[Row], out: list[Turn]) -> None:
    """Mark the cut-off replies another connected Parley still journals
    (``Turn.writing_elsewhere``): one look at the server's connections, and only when a
    row names a writer (a reply streaming, or left by a Parley that ended mid-reply)."""
    writers = {i: w for i, r in enumerate(rows)
               if r.aborted == CUT_OFF and (w := writer_from_text(r.usage)) is not None}
    if not writers or not is_postgresql(con):
        return
    live = set(con.execute(_OTHER_PARLEYS).scalars())
    for i, writer in writers.items():
        out[i].writing_elsewhere = writer in live


_REF_KEY = '"attachment"'  # in a row's blocks JSON: it may reference a stored file


def _load(con: Connection, rows: list[Row], hydrate: bool) -> list[Turn]:
    """Turns from rows; with ``hydrate``, stored files' bytes put back (same snapshot)."""
    out = [to_turn(r) for r in rows]
    _mark_writing(con, rows, out)
    if not hydrate:
        return out
    refs = [i for i, r in enumerate(rows) if _REF_KEY in r.blocks]
    if refs:  # only turns whose JSON holds a reference are looked at
        filled = attachments.hydrate(con, [out[i] for i in refs])
        for i, turn in zip(refs, filled, strict=True):
            out[i] = turn
    return out


def get(con: Connection, turn_id: str, hydrate: bool = False) -> Turn:
    row = con.execute(select(*_COLUMNS).where(T.c.id == turn_id)).first()
    if row is None:
        raise TurnNotFound(turn_id)
    return _load(con, [row], hydrate)[0]


def get_many(
    con: Connection, session_id: str, last: int | None, hydrate: bool = False
) -> list[Turn]:
    """The turns of the session's path shown, first message first: all, or the last
    ``last`` (read from the leaf back: their cost, not the path's). Raises SessionNotFound."""
    sessions.require(con, session_id)
    if last is None:
        return _load(con, list(con.execute(tree.path_select(session_id, *_COLUMNS))), hydrate)
    q = tree.path_select(session_id, *_COLUMNS, newest_first=True).limit(max(0, last))
    rows = list(con.execute(q))
    rows.reverse()
    return _load(con, rows, hydrate)


def count(con: Connection, session_id: str) -> int:
    """How many turns the session's path shown holds. Raises SessionNotFound.

    The path's positions are 0…n-1 (every writer keeps them so), so this is its last
    position + 1: one step of ``turn_path``'s key, not a count of the whole path."""
    sessions.require(con, session_id)
    return int(con.execute(sessions.path_length(session_id)).scalar_one())


def delete_ids(con: Connection, session_id: str, turn_ids: Sequence[str]) -> int:
    """Delete these turns of a session and every turn below them (their branches; ids of
    other sessions are left alone); return how many turns were deleted. A deleted leaf
    makes its parent the leaf. Raises SessionNotFound."""
    sessions.require(con, session_id)
    done = tree.delete_subtrees(con, session_id, turn_ids)
    sessions.touch(con, session_id)
    return done


def delete_after(con: Connection, session_id: str, turn_id: str) -> int:
    """Delete the path's turns after ``turn_id``, with their branches; return how many
    turns were deleted. Raises SessionNotFound, TurnNotInSession (not on the path)."""
    sessions.require(con, session_id)
    done = tree.delete_subtrees(con, session_id, tree.path_after(con, session_id, turn_id))
    sessions.touch(con, session_id)
    return done


_TREE = text(
    "SELECT t.id, t.role, t.blocks, t.aborted, t.model, t.usage, t.created_at, l.parent_id, "
    "(SELECT 1 FROM turn_path p WHERE p.turn_id = t.id) AS on_path "
    "FROM turns t LEFT JOIN turn_links l ON l.turn_id = t.id "
    "WHERE t.session_id = :sid ORDER BY t.seq"
)


def get_tree(con: Connection, session_id: str, hydrate: bool = False) -> list[TreeTurn]:
    """Every turn of the session in ``seq`` order, with its parent and whether it is on
    the path (:meth:`parley.core.store.store.Store.get_tree`). Raises SessionNotFound."""
    sessions.require(con, session_id)
    rows = list(con.execute(_TREE, {"sid": session_id}))
    loaded = _load(con, rows, hydrate)
    return [TreeTurn(turn, r.parent_id, r.on_path is not None)
            for turn, r in zip(loaded, rows, strict=True)]

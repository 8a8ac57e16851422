"""Turns: rows of ``turns``, ordered per session by ``seq``.

Functions take a Connection inside the caller's transaction. The search index
follows every insert, update of ``blocks`` and delete through the triggers of
:mod:`core.store.schema`, in the same transaction.
"""

from __future__ import annotations

import json
from typing import Any

from sqlalchemy import delete, func, select, update
from sqlalchemy.engine import Connection, Row

from core.content import Turn, Usage, blocks_from_json_text, blocks_to_json_text
from core.store import sessions
from core.store.errors import DuplicateTurn, TurnInOtherSession, TurnNotFound, TurnNotInSession
from core.store.schema import turns as T

_COLUMNS = (
    T.c.id,
    T.c.role,
    T.c.blocks,
    T.c.aborted,
    T.c.model,
    T.c.usage,
    T.c.created_at,
)


def usage_to_text(usage: Usage | None) -> str | None:
    return None if usage is None else json.dumps(usage.to_json(), separators=(",", ":"))


def usage_from_text(text: str | None) -> Usage | None:
    if not text:
        return None
    data = json.loads(text)
    return Usage.from_json(data) if isinstance(data, dict) else None


def to_turn(row: Row) -> Turn:
    return Turn(
        role=row.role,
        blocks=blocks_from_json_text(row.blocks),
        id=row.id,
        created_at=row.created_at,
        aborted=bool(row.aborted),
        model=row.model,
        usage=usage_from_text(row.usage),
    )


def row_values(turn: Turn) -> dict[str, Any]:
    """Column values of a turn (without session_id and seq)."""
    return {
        "id": turn.id,
        "role": turn.role,
        "blocks": blocks_to_json_text(turn.blocks),
        "aborted": int(turn.aborted),
        "model": turn.model,
        "usage": usage_to_text(turn.usage),
        "created_at": turn.created_at,
    }


def next_seq(con: Connection, session_id: str) -> int:
    return int(
        con.execute(
            select(func.coalesce(func.max(T.c.seq), -1) + 1).where(T.c.session_id == session_id)
        ).scalar_one()
    )


def append(con: Connection, session_id: str, turn: Turn) -> Turn:
    sessions.require(con, session_id)
    if con.execute(select(T.c.n).where(T.c.id == turn.id)).first() is not None:
        raise DuplicateTurn(turn.id)
    con.execute(
        T.insert().values(session_id=session_id, seq=next_seq(con, session_id), **row_values(turn))
    )
    sessions.touch(con, session_id)
    return turn


def upsert(con: Connection, session_id: str, turn: Turn) -> Turn:
    sessions.require(con, session_id)
    owner = con.execute(select(T.c.session_id).where(T.c.id == turn.id)).scalar()
    if owner is None:
        return append(con, session_id, turn)
    if owner != session_id:
        raise TurnInOtherSession(turn.id, session_id)
    values = row_values(turn)
    con.execute(
        update(T)
        .where(T.c.id == turn.id)
        .values(
            blocks=values["blocks"],
            aborted=values["aborted"],
            model=values["model"],
            usage=values["usage"],
        )
    )
    sessions.touch(con, session_id)
    return turn


def get(con: Connection, turn_id: str) -> Turn:
    row = con.execute(select(*_COLUMNS).where(T.c.id == turn_id)).first()
    if row is None:
        raise TurnNotFound(turn_id)
    return to_turn(row)


def get_many(con: Connection, session_id: str, last: int | None) -> list[Turn]:
    sessions.require(con, session_id)
    q = select(*_COLUMNS).where(T.c.session_id == session_id)
    if last is None:
        return [to_turn(r) for r in con.execute(q.order_by(T.c.seq))]
    rows = list(con.execute(q.order_by(T.c.seq.desc()).limit(max(0, last))))
    rows.reverse()
    return [to_turn(r) for r in rows]


def count(con: Connection, session_id: str) -> int:
    sessions.require(con, session_id)
    return int(
        con.execute(select(func.count()).where(T.c.session_id == session_id)).scalar_one()
    )


def seq_of(con: Connection, session_id: str, turn_id: str) -> int:
    """Return the turn's position key in its session. Raises TurnNotInSession."""
    seq = con.execute(
        select(T.c.seq).where(T.c.id == turn_id).where(T.c.session_id == session_id)
    ).scalar()
    if seq is None:
        raise TurnNotInSession(turn_id, session_id)
    return int(seq)


def delete_after(con: Connection, session_id: str, turn_id: str) -> int:
    sessions.require(con, session_id)
    seq = seq_of(con, session_id, turn_id)
    done = con.execute(delete(T).where(T.c.session_id == session_id).where(T.c.seq > seq))
    sessions.touch(con, session_id)
    return int(done.rowcount)

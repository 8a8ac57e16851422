"""Spaces: rows of ``spaces``. Functions take a Connection inside the caller's transaction."""

from __future__ import annotations

from sqlalchemy import delete, func, select, update
from sqlalchemy.engine import Connection, Row

from parley.core.content import new_id, now_ms
from parley.core.store import settings_repo
from parley.core.store.errors import (
    CannotDeleteDefaultSpace,
    EmptyName,
    InvalidSpaceOrder,
    SpaceNameTaken,
    SpaceNotFound,
)
from parley.core.store.models import UNCHANGED, Space, Unchanged
from parley.core.store.schema import DEFAULT_SPACE_ID, DEFAULT_SPACE_NAME
from parley.core.store.schema import sessions as S
from parley.core.store.schema import spaces as SP

_COLUMNS = (
    SP.c.id,
    SP.c.name,
    SP.c.position,
    SP.c.system_prompt,
    SP.c.default_model,
    SP.c.created_at,
)


def _space(row: Row) -> Space:
    return Space(
        id=row.id,
        name=row.name,
        position=row.position,
        system_prompt=row.system_prompt,
        default_model=row.default_model,
        created_at=row.created_at,
        is_default=row.id == DEFAULT_SPACE_ID,
    )


def same_name(a: str, b: str) -> bool:
    """True when two space names are the same to a person: trimmed, any case."""
    return a.strip().casefold() == b.strip().casefold()


def _name(con: Connection, name: str, space_id: str | None = None) -> str:
    """``name`` trimmed, for a new space (``space_id`` None) or ``space_id``. Raises
    EmptyName, SpaceNameTaken (another space has it: two "General" in the sidebar and
    the "Move to space" menu could not be told apart)."""
    name = name.strip()
    if not name:
        raise EmptyName("space")
    for row in con.execute(select(SP.c.id, SP.c.name).where(SP.c.id != (space_id or ""))):
        if same_name(row.name, name):
            raise SpaceNameTaken(row.name)
    return name


def get(con: Connection, space_id: str) -> Space:
    """Return a space. Raises SpaceNotFound."""
    row = con.execute(select(*_COLUMNS).where(SP.c.id == space_id)).first()
    if row is None:
        raise SpaceNotFound(space_id)
    return _space(row)


def exists(con: Connection, space_id: str) -> bool:
    return con.execute(select(SP.c.id).where(SP.c.id == space_id)).first() is not None


def has_default(con: Connection) -> bool:
    return exists(con, DEFAULT_SPACE_ID)


def ensure_default(con: Connection) -> None:
    """Create the default space if it is missing (only ever for a damaged file)."""
    if not has_default(con):
        con.execute(
            SP.insert().values(
                id=DEFAULT_SPACE_ID, name=DEFAULT_SPACE_NAME, position=0, created_at=now_ms()
            )
        )


def list_all(con: Connection) -> list[Space]:
    rows = con.execute(select(*_COLUMNS).order_by(SP.c.position, SP.c.created_at, SP.c.id))
    return [_space(r) for r in rows]


def create(
    con: Connection, name: str, system_prompt: str | None, default_model: str | None
) -> Space:
    position = con.execute(select(func.coalesce(func.max(SP.c.position), -1) + 1)).scalar_one()
    space_id = new_id()
    con.execute(
        SP.insert().values(
            id=space_id,
            name=_name(con, name),
            position=position,
            system_prompt=system_prompt,
            default_model=default_model,
            created_at=now_ms(),
        )
    )
    return get(con, space_id)


def rename(con: Connection, space_id: str, name: str) -> Space:
    get(con, space_id)
    con.execute(update(SP).where(SP.c.id == space_id).values(name=_name(con, name, space_id)))
    return get(con, space_id)


def update_defaults(
    con: Connection,
    space_id: str,
    system_prompt: str | None | Unchanged,
    default_model: str | None | Unchanged,
) -> Space:
    get(con, space_id)
    values: dict[str, str | None] = {}
    if system_prompt is not UNCHANGED:
        values["system_prompt"] = system_prompt
    if default_model is not UNCHANGED:
        values["default_model"] = default_model
    if values:
        con.execute(update(SP).where(SP.c.id == space_id).values(**values))
    return get(con, space_id)


def reorder(con: Connection, ids: list[str]) -> list[Space]:
    current = {s.id for s in list_all(con)}
    if len(ids) != len(current) or set(ids) != current:
        raise InvalidSpaceOrder()
    for position, space_id in enumerate(ids):
        con.execute(update(SP).where(SP.c.id == space_id).values(position=position))
    return list_all(con)


def delete_space(con: Connection, space_id: str, delete_sessions: bool) -> None:
    if space_id == DEFAULT_SPACE_ID:
        raise CannotDeleteDefaultSpace()
    get(con, space_id)
    settings_repo.forget_owners(con, "SELECT :space", {"space": space_id})
    if delete_sessions:
        settings_repo.forget_owners(
            con, "SELECT id FROM sessions WHERE space_id = :space", {"space": space_id}
        )
        con.execute(delete(S).where(S.c.space_id == space_id))
    else:
        con.execute(update(S).where(S.c.space_id == space_id).values(space_id=DEFAULT_SPACE_ID))
    con.execute(delete(SP).where(SP.c.id == space_id))

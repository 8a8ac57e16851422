"""Key/value rows of ``settings`` (user settings) and ``app_state`` (window state etc.).

Values are any JSON-serializable value, stored as JSON text. What each setting
key means is declared in ``parley.core.settings``; this module only stores values.
"""

from __future__ import annotations

import json
from typing import Any

from sqlalchemy import Table, delete, select
from sqlalchemy.dialects.sqlite import insert
from sqlalchemy.engine import Connection

from parley.core.store.dialect import dual_text, is_postgresql
from parley.core.store.postgres import sql as pg_sql


def encode(value: Any) -> str:
    """Return ``value`` as compact JSON text.

    Raises:
        TypeError: the value is not JSON-serializable (a bug in the caller).
        ValueError: it holds NaN or infinity, which JSON cannot carry.
    """
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def get(con: Connection, table: Table, key: str, default: Any) -> Any:
    raw = con.execute(select(table.c.value).where(table.c.key == key)).scalar()
    return default if raw is None else json.loads(raw)


def put(con: Connection, table: Table, key: str, value: Any) -> None:
    """Store ``value`` under ``key``; None removes the key (its default applies again)."""
    if value is None:
        con.execute(delete(table).where(table.c.key == key))
        return
    raw = encode(value)
    keys, values = [table.c.key], {"value": raw}
    if is_postgresql(con):
        # Imported here: SQLAlchemy's PostgreSQL dialect takes ~40 ms to import, on the
        # path of every start-up (the chats listed, the first message sent) otherwise.
        from sqlalchemy.dialects.postgresql import insert as pg_insert

        pg_stmt = pg_insert(table).values(key=key, value=raw)
        con.execute(pg_stmt.on_conflict_do_update(index_elements=keys, set_=values))
        return
    stmt = insert(table).values(key=key, value=raw)
    con.execute(stmt.on_conflict_do_update(index_elements=keys, set_=values))


def get_all(con: Connection, table: Table) -> dict[str, Any]:
    return {r.key: json.loads(r.value) for r in con.execute(select(table.c.key, table.c.value))}


_FORGET = (
    "DELETE FROM app_state WHERE instr(key, ':') > 0 "
    "AND substr(key, instr(key, ':') + 1) IN ({ids})"
)


def forget_owners(con: Connection, ids_sql: str, params: dict[str, Any]) -> int:
    """Delete the ``app_state`` rows of deleted sessions or spaces.

    Per-session and per-space state is keyed ``<kind>:<id>`` (``draft:``,
    ``frozen_prompt:``, ``tools_enabled:``, ``memory:`` …); a row whose id
    part is one of the ids selected by ``ids_sql`` goes. Run it in the
    transaction that deletes them, before the delete.

    Args:
        con: a connection in a write transaction.
        ids_sql: a SELECT of one column of ids, e.g. ``SELECT :sid``.
        params: its bound parameters.

    Returns:
        How many rows were deleted.
    """
    stmt = dual_text(_FORGET.format(ids=ids_sql), pg_sql.FORGET_OWNERS.format(ids=ids_sql))
    return int(con.execute(stmt, params).rowcount or 0)


def forget_ids(con: Connection, ids: list[str]) -> int:
    """:func:`forget_owners` for ids given as a list (one statement per id; either backend).

    Returns how many rows were deleted.
    """
    return sum(forget_owners(con, "SELECT :sid", {"sid": i}) for i in ids)

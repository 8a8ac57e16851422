"""Reading and writing a store's tables behind its back, on either backend.

For tests that check what is really stored (``count(*)`` of a table) or
write what another program could (a foreign ``meta``): SQL with ``?``
placeholders runs on the sessions.db file through ``sqlite3``, or on the
PostgreSQL database through psycopg (``?`` becomes ``%s``). Use SQL both
understand (``sum`` rather than SQLite's ``total``).
"""

from __future__ import annotations

import sqlite3
from typing import Any

from parley.core.store.postgres.store import PgStore
from parley.core.store.store import Store


def raw_rows(db: Store, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Run one statement in its own committed transaction; return its rows ([] if none)."""
    if isinstance(db, PgStore):
        import psycopg

        url = db.url.set(drivername="postgresql").render_as_string(hide_password=False)
        with psycopg.connect(url) as con:
            cur = con.execute(sql.replace("?", "%s"), params)  # type: ignore[arg-type]
            rows = [tuple(r) for r in cur.fetchall()] if cur.description else []
            con.commit()
            return rows
    con = sqlite3.connect(db.path)
    try:
        rows = con.execute(sql, params).fetchall()
        con.commit()
        return rows
    finally:
        con.close()

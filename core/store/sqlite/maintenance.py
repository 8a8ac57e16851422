"""Idle-time upkeep: merge the search index's segments and checkpoint the WAL.

Saving a turn adds a small segment to the full-text index; FTS5's automatic
merging is off (``schema.SEARCH_DDL``) so no save pays for a merge. This
module does that work in bounded steps when Parley is idle
(:meth:`parley.core.store.async_store.AsyncStore` schedules :meth:`Store.maintain`
after writes), and copies the WAL into the database file (PASSIVE checkpoint:
never waits for, nor blocks, readers or writers).
"""

from __future__ import annotations

import time

from sqlalchemy.engine import Connection

from parley.core.store.schema import dbapi_connection

#: Pages of merge output per FTS5 'merge' command (a few ms each).
MERGE_PAGES = 64
_MERGE = "INSERT INTO search_fts(search_fts, rank) VALUES ('merge', ?)"


def merge(con: Connection, budget_ms: float) -> bool:
    """Merge index segments for about ``budget_ms`` (inside the caller's write transaction).

    Returns:
        True if merging work remains (call again later), False when done.
    """
    raw = dbapi_connection(con)
    deadline = time.monotonic() + budget_ms / 1000
    while True:
        before = raw.total_changes
        con.exec_driver_sql(_MERGE, (MERGE_PAGES,))
        if raw.total_changes - before < 2:  # FTS5's documented "nothing left" sign
            return False
        if time.monotonic() >= deadline:
            return True


def checkpoint(con: Connection) -> None:
    """Copy what the WAL holds into the database file, if nobody is reading it (PASSIVE)."""
    dbapi_connection(con).execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()

"""How many rows each session's path has (``turn_path_counts``), kept by the database.

``turn_path_counts`` holds ``(session_id, n)``: the rows of ``turn_path`` (the path a
chat shows, :mod:`parley.core.store.tree`) with that session id. A path's positions
usually have no gap (turns are appended below the leaf; a path is cut back, or
rewritten, below a position), and then the turns in a range of positions are its
width: :func:`no_gaps` sees that from this count and the path's first and last
positions (two seeks of ``turn_path``'s key), so ``parley.core.store.outline`` does
not count a chat's whole path each time it is opened or switched (issue 36).

Triggers on ``turn_path`` keep the count for every writer (append, cut, switch,
fork copies, imports, merge, transfer, salvage), with no code in any of them: an
insert adds 1 to its session's row (made at 1), a delete takes 1 off, an update of
``session_id`` does both. Each touches one row of ``turn_path_counts`` by its key. A
session whose path was emptied keeps a row of 0; a session deleted takes its row
(foreign key, ON DELETE CASCADE). On SQLite these are three plain triggers; on
PostgreSQL one PL/pgSQL function (:data:`parley.core.store.postgres.sql.PATH_COUNT_FUNCTION`);
two transactions changing one path at once are serialized by the row's lock (an
upsert, then ``n = n ± 1``: read committed sees the other's count).

Files and databases written before it get it from :func:`create` when opened: the
table and the triggers, filled by one GROUP BY over ``turn_path``'s key in the same
transaction (0.21 s for the 1,000,000 path rows of the 1 GB benchmark store,
``tests.benchmarks.gen_store``, warm cache). A bulk fill of ``turn_path``
(``parley.core.store.upgrade.tree.fill``) calls :func:`suspend` before and
:func:`create` after, so it pays one GROUP BY instead of a trigger per row. Rows
written many at a time go in statements of several rows
(:func:`parley.core.store.tree.add_path`): on SQLite a trigger costs little per row
but a statement journal per statement.
"""

from __future__ import annotations

from sqlalchemy import text
from sqlalchemy.engine import Connection

from parley.core.store.kept_table import KeptTable
from parley.core.store.postgres import sql as pg_sql

TABLE = "turn_path_counts"

_TABLE_DDL = (
    "CREATE TABLE turn_path_counts (session_id TEXT NOT NULL PRIMARY KEY REFERENCES sessions (id) "
    "ON DELETE CASCADE, n INTEGER NOT NULL)"
)
_ADD = ("INSERT INTO turn_path_counts (session_id, n) VALUES (new.session_id, 1) "
        "ON CONFLICT (session_id) DO UPDATE SET n = n + 1;")
_DROP = "UPDATE turn_path_counts SET n = n - 1 WHERE session_id = old.session_id;"
#: (name, DDL) of the SQLite triggers.
SQLITE_TRIGGERS = [
    ("turn_path_count_insert",
     "CREATE TRIGGER turn_path_count_insert AFTER INSERT ON turn_path BEGIN " + _ADD + " END"),
    ("turn_path_count_delete",
     "CREATE TRIGGER turn_path_count_delete AFTER DELETE ON turn_path BEGIN " + _DROP + " END"),
    ("turn_path_count_update",
     "CREATE TRIGGER turn_path_count_update AFTER UPDATE OF session_id ON turn_path "
     "WHEN old.session_id IS NOT new.session_id BEGIN " + _DROP + " " + _ADD + " END"),
]
#: The table and the triggers that keep it (``parley.core.store.kept_table``).
KEPT = KeptTable(TABLE, _TABLE_DDL, "turn_path", SQLITE_TRIGGERS,
                 (pg_sql.PATH_COUNT_FUNCTION,), pg_sql.PATH_COUNT_TRIGGER,
                 pg_sql.PATH_COUNT_TRIGGER_NAME)
#: Every schema object of the count on a sessions.db file (``sqlite_master`` names).
OBJECTS = KEPT.objects

_FILL = ("INSERT INTO turn_path_counts (session_id, n) "
         "SELECT session_id, count(*) FROM turn_path GROUP BY session_id")
# Two seeks of turn_path's key (one aggregate each: SQLite reads min() or max() from the
# index only when it is alone) and one of the count's.
_ENDS = text(
    "SELECT (SELECT min(pos) FROM turn_path WHERE session_id = :sid) AS low, "
    "(SELECT max(pos) FROM turn_path WHERE session_id = :sid) AS high, "
    "(SELECT n FROM turn_path_counts WHERE session_id = :sid) AS n"
)


def ends(con: Connection, session_id: str) -> tuple[int, int] | None:
    """The path's first and last positions when no position between them is missing
    (then a range's turns are its width); None when the path has a gap or is empty.
    Cost: three seeks, whatever the path's length."""
    row = con.execute(_ENDS, {"sid": session_id}).one()
    if row.low is None or row.n is None or int(row.n) != row.high - row.low + 1:
        return None
    return int(row.low), int(row.high)


def create(con: Connection) -> bool:
    """Create whatever of the count is missing, and fill it from ``turn_path`` when
    anything was (idempotent; in the caller's transaction; both backends; ``turn_path``
    must exist). When all is there it only reads (a PostgreSQL server that allows only
    reading can still be opened).

    Returns:
        Whether anything was created (and the table filled again).
    """
    if not KEPT.install(con):
        return False
    con.exec_driver_sql(_FILL)
    return True


def suspend(con: Connection) -> bool:
    """Drop the triggers (before a bulk fill of ``turn_path``; :func:`create` after
    brings them back and fills the table again). Returns whether the table exists
    (False: nothing to bring back)."""
    return KEPT.suspend(con)


__all__ = ["OBJECTS", "SQLITE_TRIGGERS", "TABLE", "create", "ends", "suspend"]

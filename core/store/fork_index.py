"""The forking parents of each session (``turn_forks``), kept by the database itself.

``turn_forks`` holds one row ``(session_id, parent_key)`` per parent that has two or more
children in ``turn_links`` (a turn edited below, regenerated, answered by several
models); ``parent_key`` is the parent's id, or '' for a session with several first
messages (NULL parents: a primary key column cannot hold NULL on PostgreSQL, and an id
is 32 hex characters, never ''). Branch points (``parley.core.store.branch_points``)
read a session's rows here instead of grouping its whole ``turn_links`` index, so
their cost follows the forks, not the turns.

Triggers on ``turn_links`` keep it right for every writer (append, edit, regenerate,
fork copies, imports, merge, transfer, the v3 upgrade, salvage), with no code in
any of them: an insert adds its parent when that has another child; a delete
removes it when fewer than two are left; an update of ``parent_id`` or ``session_id``
does both. Each reads at most two children of one parent through
``turn_links_children``. A session deleted takes its rows (foreign key, ON DELETE
CASCADE; its links' deletions do the same). On SQLite these are three plain
triggers; on PostgreSQL one PL/pgSQL function
(:data:`parley.core.store.postgres.sql.FORKS_FUNCTIONS`) that first takes a per-session
advisory lock, so two transactions giving one parent its second child at once (neither
seeing the other's row under READ COMMITTED) are serialized.

Files and databases written before it get it from :func:`create` when opened: the
table and the triggers, filled by one GROUP BY over every link in the same
transaction (0.7 s for the 1,000,000 links of the 1 GB benchmark store,
``tests.benchmarks.gen_store``, warm cache). A bulk fill of ``turn_links`` that drops
its index first (``parley.core.store.upgrade.tree.fill``) calls :func:`suspend` before
and :func:`create` after (``lines``: it makes no fork), so the triggers never scan the
table.
"""

from __future__ import annotations

from sqlalchemy import text
from sqlalchemy.engine import Connection

from parley.core.store.kept_table import KeptTable
from parley.core.store.postgres import sql as pg_sql

TABLE = "turn_forks"
#: The key of a NULL parent (the session's first messages).
ROOT_KEY = ""

_TABLE_DDL = (
    "CREATE TABLE turn_forks (session_id TEXT NOT NULL REFERENCES sessions (id) "
    "ON DELETE CASCADE, parent_key TEXT NOT NULL, PRIMARY KEY (session_id, parent_key))"
)
# At most two children of one parent (the index turn_links_children; IS matches NULL).
_TWO = ("(SELECT count(*) FROM (SELECT 1 FROM turn_links WHERE session_id = {0}.session_id "
        "AND parent_id IS {0}.parent_id LIMIT 2))")
_ADD = ("INSERT OR IGNORE INTO turn_forks (session_id, parent_key) "
        "SELECT new.session_id, coalesce(new.parent_id, '') WHERE " + _TWO.format("new") + " = 2;")
_DROP = ("DELETE FROM turn_forks WHERE session_id = old.session_id "
         "AND parent_key = coalesce(old.parent_id, '') AND " + _TWO.format("old") + " < 2;")
#: (name, DDL) of the SQLite triggers.
SQLITE_TRIGGERS = [
    ("turn_links_forks_insert",
     "CREATE TRIGGER turn_links_forks_insert AFTER INSERT ON turn_links BEGIN " + _ADD + " END"),
    ("turn_links_forks_delete",
     "CREATE TRIGGER turn_links_forks_delete AFTER DELETE ON turn_links BEGIN " + _DROP + " END"),
    ("turn_links_forks_update",
     "CREATE TRIGGER turn_links_forks_update AFTER UPDATE OF parent_id, session_id ON turn_links "
     "WHEN old.parent_id IS NOT new.parent_id OR old.session_id IS NOT new.session_id BEGIN "
     + _DROP + " " + _ADD + " END"),
]
#: The table and the triggers that keep it (``parley.core.store.kept_table``).
KEPT = KeptTable(TABLE, _TABLE_DDL, "turn_links", SQLITE_TRIGGERS, pg_sql.FORKS_FUNCTIONS,
                 pg_sql.FORKS_TRIGGER, pg_sql.FORKS_TRIGGER_NAME)
#: Every schema object of the index on a sessions.db file (``sqlite_master`` names).
OBJECTS = KEPT.objects

_FILL = ("INSERT INTO turn_forks (session_id, parent_key) SELECT session_id, "
         "coalesce(parent_id, '') FROM turn_links GROUP BY session_id, parent_id "
         "HAVING count(*) > 1")
_FORKING = text("SELECT parent_key FROM turn_forks WHERE session_id = :sid")


def forking(con: Connection, session_id: str) -> set[str | None]:
    """The parents in ``session_id`` with two or more children (None: it has several first
    messages). Cost: that session's rows of ``turn_forks`` (one per fork)."""
    return {None if key == ROOT_KEY else str(key)
            for key in con.execute(_FORKING, {"sid": session_id}).scalars()}


def create(con: Connection, *, lines: bool = False) -> bool:
    """Create whatever of the index is missing, and fill it from ``turn_links`` when
    anything was (idempotent; in the caller's transaction; both backends; ``turn_links``
    must exist). When all is there it only reads (a PostgreSQL server that allows only
    reading can still be opened).

    Args:
        con: the connection.
        lines: every session's links are one line (no parent has two children, each
            session one first message: ``parley.core.store.upgrade.tree.fill``), so the
            index is emptied instead of filled (no GROUP BY over every link).

    Returns:
        Whether anything was created (and the table filled again).
    """
    if not KEPT.install(con):
        return False
    if not lines:
        con.exec_driver_sql(_FILL)
    return True


def suspend(con: Connection) -> bool:
    """Drop the triggers (before a bulk fill of ``turn_links``; :func:`create` after
    brings them back and fills the table again). Returns whether the table exists
    (False: nothing to bring back)."""
    return KEPT.suspend(con)


__all__ = ["OBJECTS", "ROOT_KEY", "SQLITE_TRIGGERS", "TABLE", "create", "forking", "suspend"]

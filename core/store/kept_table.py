"""A table the database keeps up to date by itself, with triggers on another table.

``parley.core.store.fork_index`` (``turn_forks``, kept from ``turn_links``) and
``parley.core.store.path_count`` (``turn_path_counts``, kept from ``turn_path``) are
such tables: SQLite triggers on sessions.db, one PL/pgSQL trigger on PostgreSQL. They
are added to an older file or database when it is opened (no schema version bump),
switched off for a bulk fill and brought back after it. :class:`KeptTable` holds what
each declares and does the creating and switching off; each module fills its own table.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy import text
from sqlalchemy.engine import Connection


@dataclass(frozen=True)
class KeptTable:
    """One trigger-kept table.

    Attributes:
        table: its name.
        table_ddl: ``CREATE TABLE`` (SQLite adds ``WITHOUT ROWID``).
        watched: the table whose triggers keep it.
        sqlite_triggers: ``(name, CREATE TRIGGER …)`` of each SQLite trigger.
        pg_functions: the PL/pgSQL functions (``CREATE OR REPLACE``), run every time.
        pg_trigger: ``CREATE TRIGGER …`` on PostgreSQL.
        pg_trigger_name: its name.
    """

    table: str
    table_ddl: str
    watched: str
    sqlite_triggers: Sequence[tuple[str, str]]
    pg_functions: Sequence[str]
    pg_trigger: str
    pg_trigger_name: str

    @property
    def objects(self) -> frozenset[str]:
        """The table's and its SQLite triggers' names."""
        return frozenset({self.table, *(name for name, _ddl in self.sqlite_triggers)})

    def install(self, con: Connection) -> bool:
        """Create whatever is missing and empty the table when anything was (idempotent;
        in the caller's transaction; both backends). When all is there it only reads (a
        PostgreSQL server that allows only reading can still be opened).

        Returns:
            Whether anything was created: the caller fills the table then.
        """
        if con.dialect.name == "sqlite":
            names = {r[0] for r in con.exec_driver_sql("SELECT name FROM sqlite_master")}
            if names >= self.objects:
                return False
            if self.table not in names:
                con.exec_driver_sql(self.table_ddl + " WITHOUT ROWID")
            for name, ddl in self.sqlite_triggers:
                if name not in names:
                    con.exec_driver_sql(ddl)
        else:
            has_table = _regclass(con, self.table)
            if has_table and self._pg_trigger_there(con):
                return False
            if not has_table:
                con.exec_driver_sql(self.table_ddl)
            for ddl in self.pg_functions:
                con.exec_driver_sql(ddl)
            if not self._pg_trigger_there(con):
                con.exec_driver_sql(self.pg_trigger)
        con.exec_driver_sql(f"DELETE FROM {self.table}")
        return True

    def suspend(self, con: Connection) -> bool:
        """Drop the triggers (before a bulk fill of the watched table; :meth:`install`
        after brings them back). Returns whether the table exists (False: nothing to
        bring back)."""
        if con.dialect.name == "sqlite":
            names = {r[0] for r in con.exec_driver_sql("SELECT name FROM sqlite_master")}
            for name, _ddl in self.sqlite_triggers:
                con.exec_driver_sql(f"DROP TRIGGER IF EXISTS {name}")
            return self.table in names
        if not _regclass(con, self.table):
            return False
        if _regclass(con, self.watched):
            con.exec_driver_sql(
                f"DROP TRIGGER IF EXISTS {self.pg_trigger_name} ON {self.watched}")
        return True

    def _pg_trigger_there(self, con: Connection) -> bool:
        return con.execute(text(
            "SELECT 1 FROM pg_trigger WHERE tgname = :n AND tgrelid = to_regclass(:t)"),
            {"n": self.pg_trigger_name, "t": self.watched}).first() is not None


def _regclass(con: Connection, name: str) -> bool:
    """True when PostgreSQL has a relation of that name."""
    return con.execute(text("SELECT to_regclass(:n)"), {"n": name}).scalar() is not None

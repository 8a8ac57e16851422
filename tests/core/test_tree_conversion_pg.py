"""A PostgreSQL database written before the conversation tree converts when opened (issue 32).

The database is loaded with the rows of ``tests/fixtures/versions_e73c920.db``
(written by commit e73c920: edits and regenerations as version sessions) in the
layout of that time (no ``turn_links``, no ``turn_path``), on the real test
server. Opening it converts it in the opening transaction; the checks are the
file's (``tests/core/tree_conversion_check.py``).
"""

from __future__ import annotations

import sqlite3
from typing import Any

from sqlalchemy import Table, text
from sqlalchemy.engine import Connection

from parley.core.store.postgres.store import PgStore
from parley.core.store.schema import (
    app_state,
    attachments,
    compactions,
    sessions,
    settings,
    spaces,
    turns,
)
from tests.core.rawdb import raw_rows
from tests.core.tree_conversion_check import DB, RECORD, check_store

#: In the order the foreign keys need (files before the turns that reference them).
TABLES: tuple[Table, ...] = (spaces, sessions, settings, app_state, attachments, turns,
                             compactions)


def load_old_layout(url: str) -> None:
    """A Parley database as e73c920 left it, holding the fixture file's rows."""
    store = PgStore.open_url(url)
    src = sqlite3.connect(f"file:{DB}?mode=ro", uri=True)

    def run(con: Connection) -> None:
        con.execute(text("DROP TABLE turn_path"))
        con.execute(text("DROP TABLE turn_links"))
        for table in reversed(TABLES):
            con.execute(table.delete())
        for table in TABLES:
            have = {r[1] for r in src.execute(f"PRAGMA table_info({table.name})")}
            cols = [c.name for c in table.columns if c.name in have]
            got = src.execute(f"SELECT {', '.join(cols)} FROM {table.name}").fetchall()
            if got:
                con.execute(table.insert(), [dict(zip(cols, r, strict=True)) for r in got])
        for name in ("sessions", "turns"):
            con.execute(text(f"SELECT setval(pg_get_serial_sequence('{name}', 'n'), "
                             f"(SELECT max(n) FROM {name}))"))

    try:
        store._w(run)
    finally:
        src.close()
        store.close()


def count(store: Any, table: str) -> int:
    return int(raw_rows(store, f"SELECT count(*) FROM {table}")[0][0])


def test_a_database_of_version_sessions_converts_when_opened(postgres_url):
    load_old_layout(postgres_url)
    store = PgStore.open_url(postgres_url)
    try:
        check_store(store)
        assert count(store, "turn_links") == count(store, "turns")
        assert count(store, "attachments") == RECORD["counts"]["attachments"]
        assert store.get_state("session.last@fixture-host") == RECORD["ids"]["trip"]
        versions = [RECORD["ids"][k] for k in ("trip_edit", "recipes_edit", "long_edit_after")]
        assert raw_rows(store, "SELECT id FROM sessions WHERE id IN (?, ?, ?)",
                        tuple(versions)) == []
    finally:
        store.close()


class Interrupted(Exception):
    pass


def test_a_conversion_that_fails_midway_leaves_the_database_as_it_was(postgres_url,
                                                                      monkeypatch):
    from parley.core.store.upgrade import tree_fold

    load_old_layout(postgres_url)
    fold = tree_fold.fold
    calls = [0]

    def failing(*args: Any, **kw: Any) -> Any:
        calls[0] += 1
        if calls[0] == 3:  # folds done and written, others not yet
            raise Interrupted()
        return fold(*args, **kw)

    monkeypatch.setattr(tree_fold, "fold", failing)
    try:
        PgStore.open_url(postgres_url)
    except Interrupted:
        pass
    else:
        raise AssertionError("the conversion ran through")
    monkeypatch.setattr(tree_fold, "fold", fold)
    store = PgStore.open_url(postgres_url)
    try:
        check_store(store)
    finally:
        store.close()

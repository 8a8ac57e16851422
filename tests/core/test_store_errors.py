"""SQLite conditions a user can act on become typed errors, and nothing saved is lost.

SQLite only (SQLite's error codes, locks and files); PostgreSQL's errors are in
test_pg_store.py, but for the read-only database here.
"""

from __future__ import annotations

import sqlite3
import threading
import time

import pytest

from parley.core.content import TextBlock, Turn
from parley.core.store import Store
from parley.core.store.errors import (
    DatabaseBusy,
    DatabaseCorrupt,
    DatabaseReadOnly,
    DiskError,
    DiskFull,
    translate,
)
from parley.core.store.schema import dbapi_connection


@pytest.fixture
def store(tmp_path):
    s = Store.open(tmp_path / "db" / "sessions.db", busy_timeout_ms=50)
    yield s
    s.close()


def raw(store: Store) -> sqlite3.Connection:
    assert store._con is not None  # noqa: SLF001
    return dbapi_connection(store._con)  # noqa: SLF001


def test_disk_full_is_typed_and_keeps_what_was_saved(store):
    s = store.create_session(title="full")
    store.append_turn(s.id, Turn("user", [TextBlock("saved before")]))
    pages = raw(store).execute("PRAGMA page_count").fetchone()[0]
    raw(store).execute(f"PRAGMA max_page_count = {pages}")
    with pytest.raises(DiskFull) as info:
        store.append_turn(s.id, Turn("user", [TextBlock("x" * 200_000)]))
    assert "full" in str(info.value) and "Nothing already saved was lost" in str(info.value)
    assert [t.text() for t in store.get_turns(s.id)] == ["saved before"]


def test_read_only_connection_is_typed(store):
    s = store.create_session()
    raw(store).execute("PRAGMA query_only = 1")
    with pytest.raises(DatabaseReadOnly):
        store.rename_session(s.id, "x")
    raw(store).execute("PRAGMA query_only = 0")
    assert store.get_session(s.id).title is None


def test_a_read_only_database_is_typed_and_keeps_what_was_saved(postgres_url):
    """The PostgreSQL side of the test above: a server (or replica) allowing only reads."""
    from parley.core.store.errors import ServerReadOnly
    from parley.core.store.postgres.store import PgStore

    with PgStore.open_url(postgres_url) as writer:
        s = writer.create_session(title="kept")
        writer.append_turn(s.id, Turn("user", [TextBlock("saved before")]))
    read_only = postgres_url + "%20-cdefault_transaction_read_only%3Don"
    with PgStore.open_url(read_only) as store:
        with pytest.raises(ServerReadOnly) as info:
            store.rename_session(s.id, "x")
        assert "allows only reading" in str(info.value)
        with pytest.raises(ServerReadOnly):
            store.append_turn(s.id, Turn("user", [TextBlock("not saved")]))
        assert store.get_session(s.id).title == "kept"
        assert [t.text() for t in store.get_turns(s.id)] == ["saved before"]


def test_busy_file_is_retried_then_typed(store):
    s = store.create_session()
    other = sqlite3.connect(store.path, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")
    try:
        t0 = time.monotonic()
        with pytest.raises(DatabaseBusy) as info:
            store.append_turn(s.id, Turn("user", [TextBlock("blocked")]))
        assert time.monotonic() - t0 >= 0.15  # three attempts with back-off
        assert "in use by another program" in str(info.value)
    finally:
        other.execute("ROLLBACK")
        other.close()
    assert store.count_turns(s.id) == 0
    assert store.get_session(s.id).turn_count == 0


def test_busy_file_released_during_retries_succeeds(store):
    s = store.create_session()
    other = sqlite3.connect(store.path, isolation_level=None, check_same_thread=False)
    other.execute("BEGIN IMMEDIATE")
    timer = threading.Timer(0.08, lambda: other.execute("ROLLBACK"))
    timer.start()
    try:
        store.append_turn(s.id, Turn("user", [TextBlock("waited")]))
    finally:
        timer.join()
        other.close()
    assert store.get_turns(s.id)[0].text() == "waited"


def sqlite_error(code: int, cls=sqlite3.OperationalError) -> sqlite3.Error:
    err = cls("x")
    err.sqlite_errorcode = code  # type: ignore[attr-defined]
    return err


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        (13, DiskFull),
        (8, DatabaseReadOnly),
        (8 | (2 << 8), DatabaseReadOnly),
        (11, DatabaseCorrupt),
        (26, DatabaseCorrupt),
        (5, DatabaseBusy),
        (5 | (2 << 8), DatabaseBusy),
        (10, DiskError),
        (1, None),
        (19, None),
    ],
)
def test_translate_maps_user_conditions_and_leaves_bugs(tmp_path, code, expected):
    err = translate(sqlite_error(code), tmp_path / "x.db")
    assert (type(err) if err else None) is expected
    if err is not None:
        assert str(tmp_path / "x.db") in str(err)


def test_translate_ignores_non_sqlite_errors(tmp_path):
    assert translate(ValueError("x"), tmp_path) is None
    assert translate(sqlite3.ProgrammingError("closed"), tmp_path) is None


def test_write_to_a_deleted_file_is_refused_and_close_saves_a_copy(tmp_path):
    from parley.core.store.errors import DatabaseMissing

    path = tmp_path / "db" / "sessions.db"
    with Store.open(path) as store:
        s = store.create_session(title="kept")
        store.append_turn(s.id, Turn("user", [TextBlock("saved")]))
        path.unlink()
        with pytest.raises(DatabaseMissing):
            store.append_turn(s.id, Turn("user", [TextBlock("lost?")]))
        assert store.get_turns(s.id)[0].text() == "saved"  # reads still work
    [copy] = [p for p in path.parent.iterdir() if ".rescued-" in p.name]
    with Store.open(copy) as rescued:
        assert [t.text() for t in rescued.get_turns(s.id)] == ["saved"]


def test_backup_to_copies_wal_content_and_never_overwrites(store, tmp_path):
    s = store.create_session(title="backed up")
    store.append_turn(s.id, Turn("user", [TextBlock("in the wal")]))
    copy = store.backup_to(tmp_path / "copy.db")
    with Store.open(copy) as other:
        assert other.get_turns(s.id)[0].text() == "in the wal"
        assert other.search("wal")[0].session_id == s.id
    with pytest.raises(FileExistsError):
        store.backup_to(copy)


def test_every_store_error_is_declared_in_the_errors_module() -> None:
    import importlib
    import pkgutil

    import parley.core.store as store_pkg
    from parley.core.store.errors import StoreError

    for info in pkgutil.walk_packages(store_pkg.__path__, "parley.core.store."):
        importlib.import_module(info.name)
    found, todo = set(), [StoreError]
    while todo:
        for sub in todo.pop().__subclasses__():
            if sub.__module__.startswith("parley.core.store") and sub not in found:
                found.add(sub)
                todo.append(sub)
    assert len(found) > 20
    elsewhere = sorted(f"{c.__module__}.{c.__name__}" for c in found
                       if c.__module__ != "parley.core.store.errors")
    assert elsewhere == []

"""Opening sessions.db: new, current, legacy, newer, foreign, corrupt and read-only files.

The tests taking ``any_target`` run on a sessions.db file and on a PostgreSQL
database (tests/core/conftest.py); a newer schema and another program's tables
in a database are refused in tests/core/test_pg_store.py.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
import sys
from pathlib import Path

import pytest

from parley.core.content import TextBlock, Turn
from parley.core.store import Store, schema
from parley.core.store.backends import open_store
from parley.core.store.errors import (
    ChatsFileEmptied,
    ChatsFileIsFolder,
    DatabaseCorrupt,
    DatabaseReadOnly,
    NewerFormat,
    NotAParleyFile,
    NotSQLiteFile,
    OtherSQLiteFile,
    StoreClosed,
    StoreError,
    UpgradeUnavailable,
)
from parley.core.store.sqlite.engine import make_engine, write
from parley.core.store.upgrade import migrations
from tests.core.upgrades import fake_upgrader, make_v3


def fingerprint(path: Path) -> tuple[str, int, int]:
    st = path.stat()
    return hashlib.sha256(path.read_bytes()).hexdigest(), st.st_size, st.st_mtime_ns


def sidecars(path: Path) -> list[str]:
    return sorted(p.name for p in path.parent.iterdir() if p.name.startswith(path.name + "-"))


def make_v4(path: Path) -> None:
    with Store.open(path) as store:
        s = store.create_session(title="kept")
        store.append_turn(s.id, Turn("user", [TextBlock("hello world")]))
        store.set_setting("theme", "dark")


# --- new and current files ------------------------------------------------------


def test_new_file_gets_v4_schema_wal_and_default_space(tmp_path):
    path = tmp_path / "deep" / "er" / "sessions.db"
    with Store.open(path) as store:
        space = store.default_space()
        assert (space.name, space.is_default) == ("General", True)
        assert store.list_spaces() == [space]
        assert store.migration_report is None
    con = sqlite3.connect(path)
    assert con.execute("PRAGMA user_version").fetchone()[0] == 4
    assert con.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    tables = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    assert schema.V4_TABLES | {"search_fts"} <= tables
    con.close()


@pytest.mark.parametrize("kind", ["zero-bytes", "empty-sqlite"])
def test_empty_files_become_v4(tmp_path, kind):
    path = tmp_path / "sessions.db"
    if kind == "zero-bytes":
        path.write_bytes(b"")
    else:
        sqlite3.connect(path).close()
        con = sqlite3.connect(path)
        con.execute("PRAGMA user_version = 0")
        con.close()
    with Store.open(path) as store:
        assert store.default_space().name == "General"


def test_reopening_a_v4_file_writes_not_one_byte(tmp_path):
    path = tmp_path / "sessions.db"
    make_v4(path)
    before = fingerprint(path)
    assert sidecars(path) == []
    with Store.open(path) as store:
        [session] = store.list_sessions()
        assert store.get_turns(session.id)[0].text() == "hello world"
        assert store.search("hello")[0].session_id == session.id
        assert store.get_setting("theme") == "dark"
        assert store.all_settings() == {"theme": "dark"}
        store.list_spaces()
        store.default_space()
    assert fingerprint(path) == before
    assert sidecars(path) == []


def test_a_new_store_has_only_the_default_space_on_both_backends(any_target):
    with open_store(any_target) as store:
        space = store.default_space()
        assert (space.name, space.is_default) == ("General", True)
        assert store.list_spaces() == [space]
        assert store.list_sessions(include_archived=True) == []
        assert store.migration_report is None


def test_two_stores_on_one_file_see_each_others_writes(any_target):
    with open_store(any_target) as a, open_store(any_target) as b:
        s = a.create_session(title="shared")
        b.append_turn(s.id, Turn("user", [TextBlock("from b")]))
        assert a.get_turns(s.id)[0].text() == "from b"
        b.set_setting("theme", "dark")
        assert a.get_setting("theme") == "dark"


def test_closed_store_raises_and_close_is_idempotent(any_target):
    store = open_store(any_target)
    store.close()
    store.close()
    with pytest.raises(StoreClosed):
        store.list_sessions()
    with pytest.raises(StoreClosed):
        store.create_session(title="after closing")
    with open_store(any_target) as again:  # nothing was written after the close
        assert again.list_sessions(include_archived=True) == []


# --- files that are refused, untouched -------------------------------------------


def assert_refused(path: Path, error: type[StoreError]) -> StoreError:
    before = fingerprint(path)
    names = sidecars(path)
    with pytest.raises(error) as info:
        Store.open(path)
    assert fingerprint(path) == before
    assert sidecars(path) == names
    assert str(path) in str(info.value)
    return info.value


@pytest.mark.parametrize("content", [b"these are my notes, not a database\n" * 50,
                                     bytes(range(256)) * 40])
def test_a_text_file_or_random_bytes_is_not_a_chats_file(tmp_path, content):
    path = tmp_path / "sessions.db"
    path.write_bytes(content)
    err = assert_refused(path, NotSQLiteFile)
    assert isinstance(err, NotAParleyFile)  # as every file that is not Parley's
    assert "is not a chats file: it does not start as an SQLite database does" in str(err)
    assert "damaged" not in str(err)


def test_other_programs_sqlite_is_not_a_parley_file(tmp_path):
    path = tmp_path / "sessions.db"
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE photos (id INTEGER PRIMARY KEY, path TEXT)")
    con.commit()
    con.close()
    err = assert_refused(path, NotAParleyFile)
    assert "another program" in str(err)


def test_user_version_4_without_parley_tables_is_refused(tmp_path):
    path = tmp_path / "sessions.db"
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE x (a)")
    con.execute("PRAGMA user_version = 4")
    con.commit()
    con.close()
    assert_refused(path, NotAParleyFile)


def test_newer_format_is_refused_with_versions(tmp_path):
    path = tmp_path / "sessions.db"
    make_v4(path)
    con = sqlite3.connect(path)
    con.execute("PRAGMA user_version = 7")
    con.commit()
    con.close()
    err = assert_refused(path, NewerFormat)
    assert isinstance(err, NewerFormat)
    assert (err.found, err.supported) == (7, 4)
    assert "v7" in str(err) and "v4" in str(err)


def test_folder_is_refused_and_left_as_it_is(tmp_path):
    folder = tmp_path / "sessions.db"
    folder.mkdir()
    (folder / "notes.txt").write_text("mine")
    with pytest.raises(ChatsFileIsFolder) as info:
        Store.open(folder)
    said = str(info.value)
    assert f"Parley keeps its chats in the file {folder}, but that is a folder" in said
    assert "will not delete it" in said and "Move or rename the folder" in said
    assert [p.name for p in folder.iterdir()] == ["notes.txt"]
    assert (folder / "notes.txt").read_text() == "mine"


def test_corrupt_header_pages_are_reported_and_kept(tmp_path):
    path = tmp_path / "sessions.db"
    make_v4(path)
    data = bytearray(path.read_bytes())
    data[100:8192] = b"\xa5" * (8192 - 100)
    path.write_bytes(bytes(data))
    err = assert_refused(path, DatabaseCorrupt)
    assert "backup" in str(err)


def test_corruption_found_later_is_a_typed_error(tmp_path):
    path = tmp_path / "sessions.db"
    with Store.open(path) as store:
        s = store.create_session()
        for i in range(300):
            store.append_turn(s.id, Turn("user", [TextBlock(f"turn {i} " + "x" * 500)]))
        sid = s.id
    data = bytearray(path.read_bytes())
    page = 4096
    for start in range(len(data) - 30 * page, len(data), page):
        data[start : start + page] = b"\x5a" * page
    path.write_bytes(bytes(data))
    with pytest.raises(DatabaseCorrupt):
        store = Store.open(path)
        try:
            store.get_turns(sid)
        finally:
            store.close()


def test_read_only_file_is_refused(tmp_path):
    path = tmp_path / "sessions.db"
    make_v4(path)
    path.chmod(0o444)
    try:
        err = assert_refused(path, DatabaseReadOnly)
        assert "read-only" in str(err)
    finally:
        path.chmod(0o644)


def test_read_only_file_opened_to_read_refuses_every_write_and_changes_nothing(tmp_path):
    from parley.core.store.errors import OpenedReadOnly

    path = tmp_path / "sessions.db"
    with Store.open(path, watch_closed=True) as store:
        sid = store.create_session(title="kept").id
        store.append_turn(sid, Turn("user", [TextBlock("a saved question")]))
    before = sorted(p.name for p in tmp_path.iterdir()), path.read_bytes()
    path.chmod(0o444)
    try:
        with Store.open(path, watch_closed=True, read_only_ok=True) as store:
            assert store.read_only is not None and "chmod u+w" in store.read_only.fix
            assert store.get_turns(sid)[0].text() == "a saved question"
            with pytest.raises(OpenedReadOnly, match="Not saved: Parley opened your chats"):
                store.append_turn(sid, Turn("user", [TextBlock("not saved")]))
            with pytest.raises(OpenedReadOnly):
                store.create_session()
            store.set_state("session.last", sid)  # app state: kept nowhere, not an error
        assert (sorted(p.name for p in tmp_path.iterdir()), path.read_bytes()) == before
    finally:
        path.chmod(0o644)


# --- legacy v3 files ----------------------------------------------------------------


@pytest.mark.parametrize("user_version", [3, 0])
def test_v3_file_without_upgrader_is_refused_untouched(tmp_path, monkeypatch, user_version):
    # as if v3.py did not exist
    monkeypatch.setitem(sys.modules, "parley.core.store.upgrade.v3", None)
    path = tmp_path / "sessions.db"
    make_v3(path, user_version)
    err = assert_refused(path, UpgradeUnavailable)
    assert "v3" in str(err)


@pytest.mark.parametrize("user_version", [3, 0])
def test_v3_file_is_upgraded_through_core_store_v3(tmp_path, monkeypatch, user_version):
    calls: list = []
    monkeypatch.setitem(sys.modules, "parley.core.store.upgrade.v3", fake_upgrader(calls))
    path = tmp_path / "sessions.db"
    make_v3(path, user_version)
    seen = []
    with Store.open(path, progress=lambda d, t: seen.append((d, t))) as store:
        assert store.migration_report == {"sessions": 1}
        assert store.default_space().name == "General"
    assert calls == [path]
    assert seen == [(1, 1)]
    with Store.open(path) as store:  # now v4: not upgraded again
        assert store.migration_report is None
    assert calls == [path]


# --- migration steps ----------------------------------------------------------------


def test_migrate_runs_missing_steps_in_order(tmp_path):
    ran = []
    steps = [
        migrations.Step(5, "v4→v5: notes table", lambda c: ran.append(5)),
        migrations.Step(6, "v5→v6: more", lambda c: ran.append(6)),
        migrations.Step(4, "old", lambda c: ran.append(4)),
    ]
    steps.sort(key=lambda s: s.version)
    engine = make_engine(tmp_path / "m.db")
    con = engine.connect()
    done = write(con, lambda c: migrations.migrate(c, 4, steps=steps, target=6), tmp_path)
    assert done.names == ["v4→v5: notes table", "v5→v6: more"]
    assert done.tree is None
    assert ran == [5, 6]
    with con.begin():
        assert con.exec_driver_sql("PRAGMA user_version").scalar() == 6
    again = write(con, lambda c: migrations.migrate(c, 6, steps=steps, target=6), tmp_path)
    assert again.names == []
    con.close()
    engine.dispose()


def test_open_applies_registered_steps_to_an_older_file(tmp_path, monkeypatch):
    path = tmp_path / "sessions.db"
    make_v4(path)
    monkeypatch.setattr(migrations, "SCHEMA_VERSION", 5)
    monkeypatch.setattr(migrations, "STEPS", [])
    migrations.step(5, "v4→v5: add notes")(
        lambda c: c.exec_driver_sql("CREATE TABLE notes (id TEXT PRIMARY KEY)")
    )
    with Store.open(path) as store:
        assert store.list_sessions()[0].title == "kept"
    con = sqlite3.connect(path)
    assert con.execute("PRAGMA user_version").fetchone()[0] == 5
    assert con.execute("SELECT count(*) FROM notes").fetchone()[0] == 0
    con.close()


def test_failed_step_leaves_file_at_old_version(tmp_path, monkeypatch):
    path = tmp_path / "sessions.db"
    make_v4(path)

    def broken(c):
        c.exec_driver_sql("CREATE TABLE half (a)")
        raise RuntimeError("bug in step")

    monkeypatch.setattr(migrations, "SCHEMA_VERSION", 5)
    monkeypatch.setattr(migrations, "STEPS", [migrations.Step(5, "broken", broken)])
    with pytest.raises(RuntimeError):
        Store.open(path)
    con = sqlite3.connect(path)
    assert con.execute("PRAGMA user_version").fetchone()[0] == 4
    assert con.execute("SELECT count(*) FROM sqlite_master WHERE name='half'").fetchone()[0] == 0
    con.close()


def test_create_all_runs_inside_callers_transaction(tmp_path):
    path = tmp_path / "x.db"
    engine = make_engine(path)
    con = engine.connect()
    with pytest.raises(RuntimeError), con.begin():
        schema.create_all(con)
        raise RuntimeError("abort the caller's migration")
    raw = sqlite3.connect(path)
    assert raw.execute("PRAGMA user_version").fetchone()[0] == 0
    assert raw.execute("SELECT count(*) FROM sqlite_master").fetchone()[0] == 0
    raw.close()
    con.close()
    engine.dispose()
    assert os.path.getsize(path) == 0 or migrations.inspect_file(path).kind.value == "new"


def test_looking_at_a_v3_file_writes_nothing_to_it(tmp_path):
    """The backup comes first: nothing is written before the backup exists —
    not even a checkpoint of the -wal into the main file."""
    from parley.core.store.upgrade.migrations import inspect_file
    from tests.v3gen import generate

    gen = generate(tmp_path / "sessions.db", wal_pending=True)
    wal = tmp_path / "sessions.db-wal"
    main_before, wal_before = gen.path.read_bytes(), wal.read_bytes()
    assert wal_before  # rows still only in the -wal
    inspect_file(gen.path)
    assert gen.path.read_bytes() == main_before
    assert wal.read_bytes() == wal_before


def test_another_programs_sqlite_file_is_said_to_be_one(tmp_path):
    """Trial 20: called "damaged" at start; it is a sound SQLite file, not Parley's."""
    path = tmp_path / "sessions.db"
    Store.open(path, watch_closed=True).close()  # Parley's, closed cleanly
    path.unlink()
    con = sqlite3.connect(path)  # sqlite3 sessions.db "create table t(x)"
    con.execute("CREATE TABLE t (x)")
    con.commit()
    con.close()
    before = path.read_bytes()
    with pytest.raises(OtherSQLiteFile) as info:
        Store.open(path, watch_closed=True)
    assert isinstance(info.value, NotAParleyFile)
    said = str(info.value)
    assert "is not a Parley sessions file: it is an SQLite database, but it holds another " \
        "program's data" in said and "damaged" not in said
    assert path.read_bytes() == before


def test_a_file_emptied_while_parley_was_closed_is_said_to_be_empty(tmp_path):
    """Trial 20: a 0-byte sessions.db was called damaged, and Salvage offered."""
    path = tmp_path / "sessions.db"
    with Store.open(path, watch_closed=True) as store:
        store.create_session(title="kept")
    os.truncate(path, 0)  # truncate -s 0 sessions.db, Parley closed
    with pytest.raises(ChatsFileEmptied) as info:
        Store.open(path, watch_closed=True)
    said = str(info.value)
    assert said.startswith(f"{path} is empty (0 bytes): it was emptied after Parley last "
                           "closed it") and "damaged" not in said
    assert path.stat().st_size == 0  # left as it is, and said again next time
    with pytest.raises(ChatsFileEmptied):
        Store.open(path, watch_closed=True)


def test_an_empty_file_parley_never_closed_is_a_new_file(tmp_path):
    path = tmp_path / "sessions.db"
    path.write_bytes(b"")  # touch sessions.db: no record of a clean close
    with Store.open(path, watch_closed=True) as store:
        assert store.list_sessions() == []

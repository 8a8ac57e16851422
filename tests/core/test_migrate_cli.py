"""``parley --migrate-only`` on a generated v3 file, a v4 file and no file.

SQLite only: the v3 upgrade works on files only.
"""

from __future__ import annotations

import io
import subprocess
import sys

from parley.core.cli.migrate import migrate_only
from parley.core.store.store import Store


def test_no_file_is_nothing_to_migrate(tmp_path):
    out = io.StringIO()
    assert migrate_only(tmp_path, out=out) == 0
    assert "Nothing to migrate" in out.getvalue()
    assert f"no sessions.db at {tmp_path / 'sessions.db'}" in out.getvalue()
    assert not (tmp_path / "sessions.db").exists()
    assert list(tmp_path.iterdir()) == [tmp_path / "parley-home"]  # the test's own home


def test_a_missing_folder_is_named_and_not_created(tmp_path):
    home = tmp_path / "does" / "not" / "exist"
    out = io.StringIO()
    assert migrate_only(home, out=out) == 0
    text = out.getvalue()
    assert f"Nothing to migrate: there is no sessions.db at {home / 'sessions.db'}" in text
    assert "does not exist" in text and "Nothing was created" in text
    assert not (tmp_path / "does").exists()


def test_the_data_folder_from_the_environment_is_not_created_either(tmp_path, monkeypatch):
    monkeypatch.setenv("PARLEY_HOME", str(tmp_path / "env-home"))
    out = io.StringIO()
    assert migrate_only(None, out=out) == 0
    assert str(tmp_path / "env-home" / "sessions.db") in out.getvalue()
    assert not (tmp_path / "env-home").exists()


def test_a_file_as_the_folder_is_refused_in_words(tmp_path, capsys):
    afile = tmp_path / "afile"
    afile.write_text("not a folder")
    assert migrate_only(afile, out=io.StringIO()) == 2
    err = capsys.readouterr().err
    assert f"Parley cannot keep its data in {afile}: it is a file, not a folder" in err
    assert "Nothing was changed" in err and "--home" in err
    assert afile.read_text() == "not a folder"


def test_v4_file_is_left_alone(tmp_path):
    Store.open(tmp_path / "sessions.db").close()
    before = (tmp_path / "sessions.db").read_bytes()
    out = io.StringIO()
    assert migrate_only(tmp_path, out=out) == 0
    assert "already in the current format" in out.getvalue()
    assert (tmp_path / "sessions.db").read_bytes() == before


def test_not_a_database_is_refused_in_words(tmp_path, capsys):
    (tmp_path / "sessions.db").write_bytes(b"this is not sqlite" * 100)
    out = io.StringIO()
    assert migrate_only(tmp_path, out=out) == 2
    err = capsys.readouterr().err
    assert "could not migrate" in err
    assert f"{tmp_path / 'sessions.db'} is not a chats file: it does not start as an SQLite " \
        "database does" in err
    # Advice a person at a terminal can follow: there is no file picker here.
    assert "--home pointing at another folder" in err
    assert "Choose another file" not in err
    assert out.getvalue() == ""  # no stray progress line
    assert (tmp_path / "sessions.db").read_bytes() == b"this is not sqlite" * 100


def test_command_line_wording_leaves_other_messages_alone():
    from parley.core.cli.migrate import for_command_line

    assert for_command_line("Restore it from a backup.") == "Restore it from a backup."
    assert for_command_line("x. Choose another file, or move this one away and y.") == (
        "x. Run with --home pointing at another folder, or move this file away and y.")


def test_command_line_on_a_missing_folder_creates_nothing(tmp_path):
    home = tmp_path / "does" / "not" / "exist"
    result = subprocess.run(
        [sys.executable, "-m", "parley.gui.app", "--migrate-only", "--home", str(home)],
        capture_output=True, text=True, timeout=60,
    )
    assert result.returncode == 0, result.stderr
    assert f"there is no sessions.db at {home / 'sessions.db'}" in result.stdout
    assert "Traceback" not in result.stderr
    assert not (tmp_path / "does").exists()


def test_command_line_migrates_a_v3_file_and_prints_counts(tmp_path):
    from tests.v3gen import generate

    gen = generate(tmp_path / "sessions.db", wal_pending=False)
    result = subprocess.run(
        [sys.executable, "-m", "parley.gui.app", "--migrate-only", "--home", str(tmp_path)],
        capture_output=True, text=True, timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert f"{len(gen.expected.sessions)} sessions" in result.stdout
    assert "\r" not in result.stdout and "Migrating…" not in result.stdout  # a pipe: no progress
    assert result.stdout.startswith(f"Migrated {tmp_path / 'sessions.db'}: ")
    assert (tmp_path / "sessions.db.parley-pre-v4.bak").exists()
    store = Store.open(tmp_path / "sessions.db")
    try:
        assert store.migration_report is None  # already v4 now
        assert len(store.list_sessions(limit=10_000, include_archived=True)) >= 1
    finally:
        store.close()


def test_an_empty_file_is_left_as_it_is(tmp_path):
    (tmp_path / "sessions.db").write_bytes(b"")
    out = io.StringIO()
    assert migrate_only(tmp_path, out=out) == 0
    assert "is empty (0 bytes)" in out.getvalue() and "Nothing was changed" in out.getvalue()
    assert (tmp_path / "sessions.db").read_bytes() == b""
    assert sorted(p.name for p in tmp_path.iterdir()) == ["parley-home", "sessions.db"]


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_terminal_sees_the_progress_then_the_counts(tmp_path):
    from tests.v3gen import generate

    generate(tmp_path / "sessions.db", seed=4, sessions=20, turns_per_session=10)
    out = _Terminal()
    assert migrate_only(tmp_path, out=out) == 0
    text = out.getvalue()
    assert "\rMigrating… 100%\nMigrated " in text


# --- a v4 file written before the conversation tree (issue 32) ----------------------


def _versions_in(path) -> tuple[int, int]:
    """(version sessions, the chats they belong to) in a file from before the tree, by
    the old format's own rule (``parley.core.store.upgrade.tree_family.is_version``):
    a version's chat is the first non-version up its parents."""
    import sqlite3

    from parley.core.store.upgrade.tree_family import is_version, parse_meta

    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        rows = con.execute("SELECT id, title, meta, parent_session_id FROM sessions").fetchall()
    finally:
        con.close()
    parent = {sid: up for sid, _t, _m, up in rows}
    version = {sid for sid, title, meta, up in rows
               if up in parent and is_version(title, parse_meta(meta), up)}

    def chat_of(sid: str) -> str:
        while sid in version:
            sid = parent[sid]
        return sid

    return len(version), len({chat_of(v) for v in version})


def test_command_line_converts_a_file_from_before_the_tree_and_says_so(tmp_path):
    import shutil

    from tests.core.tree_conversion_check import DB

    path = tmp_path / "sessions.db"
    shutil.copy(DB, path)
    folded, chats = _versions_in(path)
    assert folded > 1 and chats > 1  # the fixture has edits and regenerations to fold
    result = subprocess.run(
        [sys.executable, "-m", "parley.gui.app", "--migrate-only", "--home", str(tmp_path)],
        capture_output=True, text=True, timeout=120,
    )
    assert result.returncode == 0, result.stderr
    backup = tmp_path / "sessions.db.parley-pre-tree.bak"
    first, second = result.stdout.splitlines()
    assert first.startswith(f"Brought {path} up to date: {folded} edits and regenerations "
                            f"folded into their {chats} chats as branches, in ")
    assert first.endswith(" s.")
    assert second == f"Backup of the old file: {backup}"
    assert "nothing was changed" not in result.stdout
    assert backup.exists() and _versions_in(backup) == (folded, chats)
    assert _versions_in(path) == (0, 0)

    stamp = path.stat().st_size, path.stat().st_mtime_ns, path.read_bytes()
    again = subprocess.run(
        [sys.executable, "-m", "parley.gui.app", "--migrate-only", "--home", str(tmp_path)],
        capture_output=True, text=True, timeout=120,
    )
    assert again.returncode == 0, again.stderr
    assert again.stdout == f"{path} is already in the current format; nothing was changed.\n"
    assert (path.stat().st_size, path.stat().st_mtime_ns, path.read_bytes()) == stamp
    assert sorted(p.name for p in tmp_path.glob("*.bak")) == [backup.name]


def test_an_added_table_is_named_and_no_chat_is_said_changed(tmp_path):
    import sqlite3

    from parley.core.store.schema import ATTACHMENT_OBJECTS

    path = tmp_path / "sessions.db"
    Store.open(path).close()
    con = sqlite3.connect(path)
    kinds = dict(con.execute("SELECT name, type FROM sqlite_master"))
    for name in sorted(ATTACHMENT_OBJECTS, key=lambda n: kinds[n] == "table"):
        if kinds[name] != "index":  # an index goes with its table
            con.execute(f"DROP {kinds[name].upper()} {name}")
    con.close()
    out = io.StringIO()
    assert migrate_only(tmp_path, out=out) == 0
    text = out.getvalue()
    assert text.startswith(f"Brought {path} up to date (v4: attachment store ")
    assert "No chat was changed." in text and "Backup" not in text
    assert not list(tmp_path.glob("*.bak"))
    con = sqlite3.connect(path)
    assert {r[0] for r in con.execute("SELECT name FROM sqlite_master")} >= ATTACHMENT_OBJECTS
    con.close()


def test_a_current_file_that_opening_writes_to_is_not_said_unchanged(tmp_path):
    import sqlite3

    path = tmp_path / "sessions.db"
    Store.open(path).close()
    con = sqlite3.connect(path)
    con.execute("PRAGMA journal_mode = DELETE")  # as another tool may leave it
    con.close()
    out = io.StringIO()
    assert migrate_only(tmp_path, out=out) == 0
    text = out.getvalue()
    assert "nothing was changed" not in text
    assert text.startswith(f"{path} is already in the current format; Parley only set it up")
    assert "No chat was changed." in text


def test_up_to_date_words_for_one_version_and_for_none():
    from pathlib import Path

    from parley.core.cli.migrate import up_to_date_words
    from parley.core.store.upgrade.migrations import UpToDateReport

    db, bak = Path("/d/sessions.db"), Path("/d/sessions.db.parley-pre-tree.bak")
    one = UpToDateReport(["tree"], bak, folded=1, chats=1, seconds=0.04)
    assert up_to_date_words(db, one) == (
        "Brought /d/sessions.db up to date: 1 edit or regeneration folded into its chat "
        f"as a branch, in 0.0 s.\nBackup of the old file: {bak}")
    none = UpToDateReport(["tree"], bak, folded=0, chats=0, seconds=1.25)
    assert "(it had none to fold), in 1.2 s." in up_to_date_words(db, none)
    many = UpToDateReport(["tree"], bak, folded=3, chats=1, seconds=0.5)
    assert "3 edits and regenerations folded into their chat as branches" in \
        up_to_date_words(db, many)

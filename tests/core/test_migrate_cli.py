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
    assert f"{tmp_path / 'sessions.db'} is not a Parley sessions file" in err
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

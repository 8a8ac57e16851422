"""``parley --migrate-only`` on a generated v3 file, a v4 file and no file."""

from __future__ import annotations

import io
import subprocess
import sys

from core.migrate_cli import migrate_only
from core.store.store import Store


def test_no_file_is_nothing_to_migrate(tmp_path):
    out = io.StringIO()
    assert migrate_only(tmp_path, out=out) == 0
    assert "Nothing to migrate" in out.getvalue()
    assert not (tmp_path / "sessions.db").exists()


def test_v4_file_is_left_alone(tmp_path):
    Store.open(tmp_path / "sessions.db").close()
    before = (tmp_path / "sessions.db").read_bytes()
    out = io.StringIO()
    assert migrate_only(tmp_path, out=out) == 0
    assert "already in the current format" in out.getvalue()
    assert (tmp_path / "sessions.db").read_bytes() == before


def test_not_a_database_is_refused_in_words(tmp_path, capsys):
    (tmp_path / "sessions.db").write_bytes(b"this is not sqlite" * 100)
    assert migrate_only(tmp_path, out=io.StringIO()) == 2
    assert "could not migrate" in capsys.readouterr().err


def test_command_line_migrates_a_v3_file_and_prints_counts(tmp_path):
    from tests.v3gen import generate

    gen = generate(tmp_path / "sessions.db", wal_pending=False)
    result = subprocess.run(
        [sys.executable, "-m", "gui.app", "--migrate-only", "--home", str(tmp_path)],
        capture_output=True, text=True, timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert f"{len(gen.expected.sessions)} sessions" in result.stdout
    assert (tmp_path / "sessions.db.parley-pre-v4.bak").exists()
    store = Store.open(tmp_path / "sessions.db")
    try:
        assert store.migration_report is None  # already v4 now
        assert len(store.list_sessions(limit=10_000, include_archived=True)) >= 1
    finally:
        store.close()

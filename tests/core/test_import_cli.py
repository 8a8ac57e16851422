"""``parley --import FILE [--home DIR]``: the import without a window."""

from __future__ import annotations

import io
import json
import subprocess
import sys

from parley.core.cli.import_file import import_only
from parley.core.store.store import Store
from tests.histories import chatgpt_export, claude_export


def _sessions(home) -> list:
    store = Store.open(home / "sessions.db")
    try:
        return store.list_sessions(limit=10_000, include_archived=True)
    finally:
        store.close()


def test_command_line_imports_a_history_into_a_new_home_and_prints_the_summary(tmp_path):
    export = tmp_path / "conversations.json"
    export.write_text(json.dumps(chatgpt_export(12, turns=4)), encoding="utf-8")
    home = tmp_path / "new" / "home"
    run = [sys.executable, "-m", "parley.gui.app", "--import", str(export), "--home", str(home)]

    first = subprocess.run(run, capture_output=True, text=True, timeout=120)

    assert first.returncode == 0, first.stderr
    assert first.stdout == ("Imported conversations.json: 12 chats, 50 messages, 2 other "
                            "branches from a ChatGPT export.\n")
    assert "Traceback" not in first.stderr
    assert len([s for s in _sessions(home) if s.parent_session_id is None]) == 12

    again = subprocess.run(run, capture_output=True, text=True, timeout=120)
    assert again.returncode == 0, again.stderr
    assert again.stdout == ("conversations.json: Nothing new: the 12 conversations of this "
                            "ChatGPT export were imported before.\n")
    assert len(_sessions(home)) == 12  # the branches are inside their chats


def test_a_refused_file_exits_2_with_the_reason(tmp_path):
    bad = tmp_path / "settings.json"
    bad.write_text('{"theme": "dark"}', encoding="utf-8")
    result = subprocess.run(
        [sys.executable, "-m", "parley.gui.app", "--import", str(bad),
         "--home", str(tmp_path / "h")],
        capture_output=True, text=True, timeout=60)
    assert result.returncode == 2
    assert result.stdout == ""
    assert f"Parley did not import {bad}: This is not a conversation" in result.stderr
    assert "a JSON object with the keys 'theme'" in result.stderr
    assert "ChatGPT and Claude.ai data exports" in result.stderr
    assert "Traceback" not in result.stderr
    assert _sessions(tmp_path / "h") == []


def test_missing_file_and_folder_are_refused_in_words(tmp_path):
    out, err = io.StringIO(), io.StringIO()
    assert import_only(tmp_path / "nope.json", tmp_path / "h", out=out, err=err) == 2
    assert "it cannot be read (there is no such file)" in err.getvalue()
    assert import_only(tmp_path, tmp_path / "h", out=out, err=err) == 2
    assert "it is not a file" in err.getvalue()
    assert out.getvalue() == ""


def test_in_process_with_a_claude_export(tmp_path):
    export = tmp_path / "conversations.json"
    export.write_text(json.dumps(claude_export()), encoding="utf-8")
    out = io.StringIO()
    assert import_only(export, tmp_path / "h", out=out) == 0
    printed = out.getvalue()
    assert printed.startswith("Imported conversations.json: 2 chats, 9 messages, 1 other "
                              "branch from a Claude.ai export; 1 file left out (1 not in the "
                              "export).")
    # The whole list under its heading, after the summary's line.
    assert printed.endswith("\nNot in the export:\n  image: receipt.png\n")


def _pg_sessions(url: str) -> list:
    from parley.core.store.backends import open_store

    store = open_store(url)
    try:
        return store.list_sessions(limit=10_000, include_archived=True)
    finally:
        store.close()


def _keep_environment(monkeypatch, tmp_path) -> None:
    """``main`` sets PARLEY_HOME and PARLEY_DATABASE_URL for the process: put back after."""
    monkeypatch.setenv("PARLEY_DATABASE_URL", "")
    monkeypatch.setenv("PARLEY_HOME", str(tmp_path / "home"))


def test_import_goes_into_the_database_given(tmp_path, postgres_url, monkeypatch):
    """The trial: ``--database postgresql://… --import FILE`` said "Imported", exit 0, and
    wrote into the home's sessions.db. It imports where the window would open: the
    database given, also through PARLEY_DATABASE_URL; sessions.db is not made."""
    _keep_environment(monkeypatch, tmp_path)
    export = tmp_path / "conversations.json"
    export.write_text(json.dumps(chatgpt_export(3, turns=2)), encoding="utf-8")
    home = tmp_path / "home"
    # In a process of its own, as typed: after an import it looks for a window to tell,
    # which needs a Qt application that the window tests' own must not meet.
    run = subprocess.run([sys.executable, "-m", "parley.gui.app", "--home", str(home),
                          "--database", postgres_url, "--import", str(export)],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    said = run.stdout
    assert said.startswith("Imported conversations.json: 3 chats")
    assert "Into the database parley@127.0.0.1:" in said
    assert len([s for s in _pg_sessions(postgres_url) if s.parent_session_id is None]) == 3
    assert not (home / "sessions.db").exists()

    monkeypatch.setenv("PARLEY_DATABASE_URL", postgres_url)
    out = io.StringIO()
    assert import_only(export, home, out=out, on_new=lambda: out.write("told\n")) == 0
    assert "Nothing new" in out.getvalue() and "told" not in out.getvalue()  # nothing to list
    assert not (home / "sessions.db").exists()


def test_an_unreachable_database_is_refused_with_exit_2(tmp_path, capsys, monkeypatch):
    from parley.gui.app import main

    _keep_environment(monkeypatch, tmp_path)
    export = tmp_path / "conversations.json"
    export.write_text(json.dumps(chatgpt_export(2, turns=2)), encoding="utf-8")
    home = tmp_path / "home"
    url = "postgresql://parley:secretpw@127.0.0.1:1/parley"
    assert main(["--home", str(home), "--database", url, "--import", str(export)]) == 2
    said = capsys.readouterr()
    assert said.out == ""
    assert f"Parley did not import {export}: " in said.err
    assert "127.0.0.1:1" in said.err and "secretpw" not in said.err
    assert "Traceback" not in said.err
    assert not (home / "sessions.db").exists()


def test_the_summary_says_a_window_lists_new_chats_only(tmp_path):
    export = tmp_path / "conversations.json"
    export.write_text(json.dumps(chatgpt_export(2, turns=2)), encoding="utf-8")
    told: list[int] = []
    assert import_only(export, tmp_path / "h", out=io.StringIO(),
                       on_new=lambda: told.append(1)) == 0
    assert import_only(export, tmp_path / "h", out=io.StringIO(),
                       on_new=lambda: told.append(2)) == 0
    assert told == [1]


def test_a_reader_that_stops_reading_does_not_fail_the_import(tmp_path):
    """`parley --import F | head -1`: the reader exits before the summary is written. The
    import is done, so the status is 0 and no traceback is printed (fresh-user trial 16b:
    a BrokenPipeError traceback and status 1 after a successful import)."""
    import os

    export = tmp_path / "conversations.json"
    export.write_text(json.dumps(chatgpt_export(3, turns=2)), encoding="utf-8")
    home = tmp_path / "home"
    read, write = os.pipe()
    os.close(read)  # the reader is gone before anything is written
    try:
        result = subprocess.run(
            [sys.executable, "-m", "parley.gui.app", "--import", str(export), "--home",
             str(home)], stdout=write, stderr=subprocess.PIPE, text=True, timeout=120)
    finally:
        os.close(write)
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr and "BrokenPipeError" not in result.stderr
    assert len([s for s in _sessions(home) if s.parent_session_id is None]) == 3

"""A sessions.db found damaged while open: writes stop, a full check at the next start.

SQLite only: damaged pages of a file (a server's storage is its own business).
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from parley.core.content import TextBlock, Turn
from parley.core.store import Store
from parley.core.store.errors import DamagedWhileOpen, DatabaseCorrupt
from parley.core.store.sqlite.damage import marker_path
from tests.core.damaged import damage_search_index


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _store_with_damaged_index(path: Path) -> str:
    """A store whose full-text index pages (not its root) are garbage: the chats still
    read, search does not. Returns the session id."""
    with Store.open(path) as store:
        s = store.create_session()
        store.append_turn(s.id, Turn("user", [TextBlock("an early question")]))
        for i in range(300):
            store.append_turn(s.id, Turn("user", [TextBlock(f"word{i} " * 80)]))
    damage_search_index(path)
    return s.id


def test_after_damage_is_met_no_write_reaches_the_file(tmp_path: Path) -> None:
    path = tmp_path / "sessions.db"
    sound = _store_with_damaged_index(path)
    store = Store.open(path)  # opens: SQLite reads a page only when it needs it
    try:
        assert store.get_turns(sound)[0].text() == "an early question"
        with pytest.raises(DatabaseCorrupt):
            store.search("word7")
        before = _digest(path)
        with pytest.raises(DamagedWhileOpen) as err:
            store.append_turn(sound, Turn("user", [TextBlock("a new message")]))
        assert "stopped saving" in err.value.message and "start it again" in err.value.message
        assert store.get_turns(sound)[0].text() == "an early question"  # reading goes on
    finally:
        store.close()
    assert _digest(path) == before  # the refused write, and closing, changed nothing
    assert marker_path(path).exists()


def test_next_start_checks_a_marked_file_and_refuses_it(tmp_path: Path) -> None:
    path = tmp_path / "sessions.db"
    _store_with_damaged_index(path)
    with Store.open(path) as store, pytest.raises(DatabaseCorrupt):
        store.search("word7")
    with pytest.raises(DatabaseCorrupt) as err:
        Store.open(path)  # the window then shows its recovery page
    assert "Restore it from a backup if you have one" in err.value.message  # none beside it
    assert marker_path(path).exists()


def test_a_marked_file_that_checks_sound_opens_and_loses_the_marker(tmp_path: Path) -> None:
    path = tmp_path / "sessions.db"
    with Store.open(path) as store:
        s = store.create_session()
        store.append_turn(s.id, Turn("user", [TextBlock("kept")]))
    marker_path(path).write_text("a false alarm\n")
    with Store.open(path) as store:
        assert store.get_turns(s.id)[0].text() == "kept"
        store.append_turn(s.id, Turn("user", [TextBlock("and writable")]))
    assert not marker_path(path).exists()


def test_the_damage_message_names_a_backup_only_when_there_is_one(tmp_path: Path) -> None:
    path = tmp_path / "sessions.db"
    assert "if you have one" in DatabaseCorrupt(path).message
    (tmp_path / "sessions.db.parley-pre-v4.bak").write_bytes(b"x")
    assert "sessions.db.parley-pre-v4.bak" in DatabaseCorrupt(path).message


def test_the_whole_file_check_tells_sound_damaged_and_stopped_apart(tmp_path: Path) -> None:
    from parley.core.store.sqlite.damage import WholeCheck

    path = tmp_path / "sessions.db"
    _store_with_damaged_index(path)
    with Store.open(tmp_path / "sound.db") as store:
        store.create_session()
        assert WholeCheck(store.path).run() is True  # beside Parley's own open connection
    with Store.open(path) as store:  # opens: only the index pages are damaged
        assert WholeCheck(path).run() is False
        stopped = WholeCheck(path)
        stopped.stop()
        assert stopped.run() is None
        assert not store.damaged  # the check only tells: the caller decides

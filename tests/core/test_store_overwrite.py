"""sessions.db written over in place while open (``dd conv=notrunc``): caught before a save.

SQLite only: the pages of a file written over by another program.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from parley.core.content import TextBlock, Turn
from parley.core.store import Store
from parley.core.store.errors import DamagedWhileOpen, DatabaseCorrupt
from parley.core.store.sqlite.damage import marker_path
from tests.core.damaged import overwrite_pages, pages_of


def _long_chat(path: Path) -> str:
    with Store.open(path, watch_closed=True) as store:  # as the app's store
        s = store.create_session(title="long")
        for i in range(400):
            store.append_turn(s.id, Turn("user", [TextBlock(f"turn {i} " + "x" * 400)]))
        return s.id


def test_pages_overwritten_while_open_fail_the_next_save_before_it_is_kept(
    tmp_path: Path,
) -> None:
    path = tmp_path / "sessions.db"
    sid = _long_chat(path)
    store = Store.open(path)
    try:
        assert store.get_turns(sid, last=2)[-1].text().startswith("turn 399")
        store.append_turn(sid, Turn("user", [TextBlock("saved before")]))
        time.sleep(0.02)  # file times tick every few ms: not in the tick of the last checkpoint
        overwrite_pages(path, pages_of(path, "turns")[10:14])  # another program, in place
        new = Turn("user", [TextBlock("typed after the damage")])
        with pytest.raises(DatabaseCorrupt) as err:
            store.append_turn(sid, new)
        assert "while Parley was using it" in err.value.message
        assert store.damaged and marker_path(path).exists() and store.watch.checks == 1
        with pytest.raises(DamagedWhileOpen):  # and nothing after it either
            store.append_turn(sid, Turn("user", [TextBlock("later")]))
    finally:
        store.close()
    wal = Path(f"{path}-wal")
    assert not wal.exists() or b"typed after the damage" not in wal.read_bytes()
    assert b"typed after the damage" not in path.read_bytes()


def test_writes_of_another_sqlite_program_are_checked_and_accepted(tmp_path: Path) -> None:
    path = tmp_path / "sessions.db"
    sid = _long_chat(path)
    store = Store.open(path)
    try:
        time.sleep(0.02)
        with Store.open(path) as other:  # writes and checkpoints the same file
            other.append_turn(sid, Turn("user", [TextBlock("from the other one")]))
            other.maintain()
        store.append_turn(sid, Turn("user", [TextBlock("and ours")]))
        assert store.watch.checks == 1 and not store.damaged
        store.append_turn(sid, Turn("user", [TextBlock("no second check")]))
        assert store.watch.checks == 1
        assert [t.text() for t in store.get_turns(sid, last=3)] == [
            "from the other one", "and ours", "no second check"]
    finally:
        store.close()


def test_a_file_written_over_while_closed_is_refused_at_the_next_open(tmp_path: Path) -> None:
    path = tmp_path / "sessions.db"
    _long_chat(path)  # closed cleanly: its state is recorded beside it
    time.sleep(0.02)
    overwrite_pages(path, pages_of(path, "turns")[30:33])  # pages no start would read
    with pytest.raises(DatabaseCorrupt) as err:
        Store.open(path, watch_closed=True)
    assert "is damaged" in err.value.message and "while Parley" not in err.value.message
    with pytest.raises(DatabaseCorrupt):
        Store.open(path, watch_closed=True)  # and at every start until it is dealt with


def test_a_sound_file_another_program_wrote_while_closed_opens(tmp_path: Path) -> None:
    import sqlite3

    path = tmp_path / "sessions.db"
    sid = _long_chat(path)
    time.sleep(0.02)
    con = sqlite3.connect(path)
    con.execute("INSERT INTO settings (key, value) VALUES ('written', '\"elsewhere\"')")
    con.commit()
    con.close()
    with Store.open(path, watch_closed=True) as store:
        assert store.get_setting("written") == "elsewhere"
        assert len(store.get_turns(sid)) == 400

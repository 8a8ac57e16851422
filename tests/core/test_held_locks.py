"""Parley's own reads of sessions.db never drop SQLite's locks on it.

POSIX locks belong to the process and the file: closing any descriptor of the file
drops them all, SQLite's too. Parley read the file's header with a plain ``open()``
(after each checkpoint, before a backup, …); from then on its connection held no
lock, and another process's last connection, closing, took itself to be alone: it
checkpointed and deleted the ``-wal`` and ``-shm`` the window still wrote to. Fresh-user
trial 16: ``parley --import`` beside an open window left sessions.db "malformed", every
chat lost. Real files, a second real process (``parley.core.store.Store`` in it).
"""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from parley.core.content import TextBlock, Turn
from parley.core.store import Store
from parley.core.store.sqlite import header, held, kept
from parley.core.store.sqlite.damage import passes_quick_check, quick_check_ok

ROOT = Path(__file__).resolve().parents[2]

OTHER = """
import sys
from parley.core.store import Store
from parley.core.content import TextBlock, Turn
with Store.open(sys.argv[1]) as db:
    sid = db.create_session(title="from the other process").id
    db.append_turn(sid, Turn("user", [TextBlock("written by the other process")]))
"""


def _other_process_writes_and_closes(db: Path) -> None:
    subprocess.run([sys.executable, "-c", OTHER, str(db)], cwd=ROOT, check=True, timeout=120)


def _texts(db: Path) -> set[str]:
    con = sqlite3.connect(db)
    try:
        assert con.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        rows = con.execute("SELECT blocks FROM turns").fetchall()
    finally:
        con.close()
    return {text for (blocks,) in rows for text in ("mine, before", "mine, after",
                                                     "written by the other process")
            if text in blocks}


def _reads_then_another_process(tmp_path: Path, reads: Callable[[Path, Store], None]) -> None:
    """Save a turn, do ``reads`` while the store is open, let another process write and
    close: this process's -wal and -shm stay, and both sides' turns end in a sound file."""
    db = tmp_path / "sessions.db"
    with Store.open(db) as store:
        sid = store.create_session(title="mine").id
        store.append_turn(sid, Turn("user", [TextBlock("mine, before")]))
        reads(db, store)
        _other_process_writes_and_closes(db)
        # Its close found this process still there: the -wal and -shm stay.
        assert Path(f"{db}-wal").exists() and Path(f"{db}-shm").exists()
        store.append_turn(sid, Turn("assistant", [TextBlock("mine, after")]))
    assert _texts(db) == {"mine, before", "mine, after", "written by the other process"}


def test_a_checkpoint_and_header_reads_keep_the_locks_another_process_closing_needs(tmp_path):
    def reads(db: Path, store: Store) -> None:
        store.maintain()  # an idle checkpoint writes the file: the watch reads its header
        assert header.problem(db) is None  # as a backup's check does, while open
        assert passes_quick_check(db)  # the whole-file check's own connection, closed
        assert quick_check_ok(db.as_uri() + "?mode=ro&immutable=1")  # the file alone

    _reads_then_another_process(tmp_path, reads)


def test_copies_kept_of_a_damaged_file_keep_the_locks_too(tmp_path):
    def reads(db: Path, _store: Store) -> None:
        folder = kept.keep(db, "a test").folder  # copies sessions.db, -wal and -shm
        assert (folder / "sessions.db").read_bytes()[:16] == header.MAGIC

    _reads_then_another_process(tmp_path, reads)


def test_a_file_no_store_holds_is_read_as_usual_and_nothing_is_kept_after_close(tmp_path):
    db = tmp_path / "sessions.db"
    with Store.open(db):
        assert held.holding(db) and held.holding(f"{db}-shm")
        assert held.read(db, 16) == header.MAGIC
    assert not held.holding(db)
    assert held.read(db, 16) == header.MAGIC

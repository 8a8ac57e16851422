"""Another process that only opens sessions.db (a lock, `sqlite3`, a backup tool) and closes
it while Parley has it open: Parley's next saves go on, and nothing is taken for "another
database written over it" (parley.core.store.sqlite.overwrite.Watch.check,
parley.core.store.lifecycle). Its close leaves Parley's WAL alone: SQLite checkpoints and
removes the WAL on closing only when it can take the file's exclusive lock, which
Parley's connection prevents as long as nothing in Parley's process drops its locks
(until session 16 Parley's header reads did, and this test expected the WAL written into
the file; see test_held_locks). Real files, a real second process."""

from __future__ import annotations

import threading
from pathlib import Path

from parley.core.content import TextBlock, Turn
from parley.core.store import Store
from tests.core.faults import Locker


def test_a_checkpoint_by_another_process_closing_is_not_damage(tmp_path: Path) -> None:
    path = tmp_path / "sessions.db"
    with Store.open(path) as store:
        sid = store.create_session(title="a chat").id
        for i in range(5):
            store.append_turn(sid, Turn("user", [TextBlock(f"message {i}")]))
        wal = Path(f"{path}-wal")
        frames = wal.stat().st_size
        locker = Locker(path)  # another process: BEGIN IMMEDIATE … COMMIT, then it exits
        locker.release()
        assert wal.stat().st_size == frames  # its closing left Parley's WAL as it was
        store.append_turn(sid, Turn("user", [TextBlock("written once the lock goes")]))
        locker = Locker(path)  # and once more while Parley waits for it
        threading.Timer(0.5, locker.release).start()
        store.append_turn(sid, Turn("user", [TextBlock("and another")]))
        assert not store.damaged
        assert [t.text() for t in store.get_turns(sid)][-2:] == [
            "written once the lock goes", "and another"]

"""Unfinished backup copies (parley.core.store.sqlite.partials): a backup killed mid-copy
leaves a ``….db.partial``; the next start removes it, never one another process is still
writing, never a file that is not Parley's. Real files, a real backup in another process
killed with SIGKILL."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from parley.core.recovery.backup_schedule import BackupScheduler
from parley.core.store import AsyncStore, Store
from parley.core.store.sqlite import backups as B
from parley.core.store.sqlite import partials

SLOW_BACKUP = """
import sys
from pathlib import Path
from parley.core.store.sqlite.backups import make_backup
make_backup(Path(sys.argv[1]), pages_per_step=1, pause_s=0.005)
"""


def _big_store(path: Path) -> None:
    """A sessions.db of about 8 MB (so a page-by-page backup takes seconds)."""
    with Store.open(path) as store:
        store.create_session(title="a chat")
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE filler (b BLOB)")
    con.executemany("INSERT INTO filler VALUES (randomblob(1000000))", [()] * 8)
    con.commit()
    con.close()


def _start_backup(db: Path) -> tuple[subprocess.Popen[bytes], Path]:
    """A backup in another process, slowed down; returns it and its .partial once written to."""
    errors = db.with_name("backup-process.stderr")
    with errors.open("wb") as err:
        proc = subprocess.Popen([sys.executable, "-c", SLOW_BACKUP, str(db)], stderr=err)
    folder = B.folder_of(db)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and proc.poll() is None:
        found = list(folder.glob("*.db.partial")) if folder.is_dir() else []
        if found and found[0].stat().st_size > 100_000:
            return proc, found[0]
        time.sleep(0.02)
    proc.kill()
    proc.wait(10)
    said = errors.read_text(errors="replace")[-2000:]
    raise AssertionError(f"the backup did not start (exit code {proc.returncode}): {said}")


async def test_a_backup_killed_mid_copy_leaves_a_partial_that_the_next_start_removes(
    tmp_path: Path,
) -> None:
    db = tmp_path / "sessions.db"
    _big_store(db)
    proc, partial = _start_backup(db)
    try:
        assert partials.remove_leftovers(partial.parent) == []  # being written: kept
        assert partial.exists()
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(10)
    assert partial.exists() and partial.stat().st_size > 100_000  # what a kill leaves
    folder = partial.parent
    orphan = folder / "sessions-20261101-000000.db.partial-journal"  # its copy gone
    orphan.write_bytes(b"x")
    others = [folder / "notes.db.partial", folder / "sessions.db.partial",
              folder / "sessions-20261101-000000-mine.db.partial"]
    for p in others:
        p.write_bytes(b"not Parley's")
    outside = tmp_path / "sessions-20261101-000001.db.partial"
    outside.write_bytes(b"outside the backups folder")
    link = folder / "sessions-20261101-000002.db.partial"
    link.symlink_to(outside)

    store = await AsyncStore.open(db)
    sched = BackupScheduler(store)
    try:
        await sched.start()  # Parley starts
    finally:
        await sched.close(final=False)
        await store.close()
    assert not partial.exists() and not Path(f"{partial}-journal").exists()
    assert not orphan.exists()
    assert all(p.exists() for p in others) and outside.exists() and link.is_symlink()
    assert sorted(folder.glob("*.db")) == []  # no backup was counted from the leftover


def test_a_backup_made_after_a_kill_removes_the_leftover_and_keeps_its_own(
    tmp_path: Path,
) -> None:
    db = tmp_path / "sessions.db"
    _big_store(db)
    proc, partial = _start_backup(db)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(10)
    made = B.make_backup(db)
    B.rotate(made.path.parent)  # no hour to wait: the killed copy is no one's now
    assert made.path.exists() and not partial.exists()
    assert sorted(p.name for p in made.path.parent.iterdir()) == [made.path.name]

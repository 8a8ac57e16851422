"""Automatic backups (parley.core.store.sqlite.backups, parley.core.recovery.backup_schedule),
on real files.

SQLite only: Parley backs up its file; a server has its own backups (pg_dump).
"""

from __future__ import annotations

import asyncio
import os
import sqlite3
import stat
import threading
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from parley.core.content import TextBlock, Turn
from parley.core.recovery.backup_schedule import BackupScheduler
from parley.core.recovery.damaged_file import restore_backup
from parley.core.store import AsyncStore, Store
from parley.core.store.sqlite import backups as B
from tests.core.damaged import overwrite_pages, pages_of


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def fill(path: Path, chats: int = 3, turns: int = 40) -> dict[str, list[Turn]]:
    """A store with ``chats`` chats of ``turns`` turns; returns every chat's turns as read."""
    with Store.open(path) as store:
        ids = []
        for c in range(chats):
            s = store.create_session(title=f"chat {c}")
            ids.append(s.id)
            for i in range(turns):
                role = "user" if i % 2 == 0 else "assistant"
                store.append_turn(s.id, Turn(role, [TextBlock(f"chat {c} turn {i} " + "w" * 300)]))
        return {sid: store.get_turns(sid) for sid in ids}


def test_a_backup_holds_every_turn_private_and_restores_them(tmp_path: Path) -> None:
    db = tmp_path / "sessions.db"
    before = fill(db)
    old = os.umask(0)  # a lax umask changes nothing
    try:
        made = B.make_backup(db)
    finally:
        os.umask(old)
    assert made.path.parent == tmp_path / "backups"
    assert made.turns == 120 and made.chats == 3
    assert mode(made.path) == 0o600 and mode(made.path.parent) == 0o700
    assert [b.path for b in B.list_backups(db)] == [made.path]
    assert B.list_backups(db)[0].turns == 120

    overwrite_pages(db, pages_of(db, "turns")[:5])  # damaged while closed
    aside = restore_backup(db, made.path)
    assert aside is not None and aside.exists()  # the damaged file is kept aside
    with Store.open(db) as store:
        assert {sid: store.get_turns(sid) for sid in before} == before  # every turn, equal


def test_a_backup_is_one_snapshot_while_another_connection_keeps_writing(
    tmp_path: Path,
) -> None:
    db = tmp_path / "sessions.db"
    fill(db, chats=2, turns=300)
    stop = threading.Event()
    written = []

    def writer() -> None:
        with Store.open(db) as store:
            s = store.create_session(title="busy")
            while not stop.is_set():
                store.append_turn(s.id, Turn("user", [TextBlock("more " * 100)]))
                written.append(1)

    t = threading.Thread(target=writer)
    t.start()
    try:
        while not written:
            pass
        made = B.make_backup(db, pages_per_step=8, pause_s=0.001)  # many small steps
    finally:
        stop.set()
        t.join()
    assert len(written) > 1  # the writer was never blocked for the whole copy
    con = sqlite3.connect(made.path)
    assert con.execute("PRAGMA quick_check").fetchone()[0] == "ok"
    assert con.execute("PRAGMA journal_mode").fetchone()[0] == "delete"  # one file, no -wal
    assert con.execute("SELECT count(*) FROM turns").fetchone()[0] == made.turns >= 600
    con.close()


def test_a_damaged_file_is_never_kept_as_a_backup(tmp_path: Path) -> None:
    db = tmp_path / "sessions.db"
    fill(db)
    overwrite_pages(db, pages_of(db, "turns")[2:6])
    with pytest.raises(B.SourceDamaged) as err:
        B.make_backup(db)
    assert "damaged" in err.value.message
    assert list((tmp_path / "backups").iterdir()) == []  # no copy, no .partial


def test_rotation_keeps_recent_then_one_a_day_for_a_week_then_one_a_week() -> None:
    now = datetime(2026, 12, 1, 18, 0)  # a Tuesday
    made = [now - timedelta(minutes=30 * i) for i in range(6)]  # today, every 30 min
    made += [now - timedelta(days=d, hours=h) for d in range(1, 40) for h in (1, 5)]
    keep = B.to_keep(made, now)
    kept = sorted((made[i] for i in keep), reverse=True)
    assert kept[:3] == made[:3]  # the three newest
    days = {k.date() for k in kept}
    assert {(now - timedelta(days=d)).date() for d in range(7)} <= days  # one per day
    weeks = {k.isocalendar()[:2] for k in kept}
    assert len(weeks) == 4 and all(now - k < timedelta(days=28) for k in kept)
    assert len(kept) <= B.KEEP_RECENT + B.KEEP_DAYS + B.KEEP_WEEKS


def test_rotate_deletes_files_outside_the_plan_and_old_partials(tmp_path: Path) -> None:
    folder = tmp_path / "backups"
    folder.mkdir()
    now = datetime(2026, 12, 1, 18, 0)
    names = [f"sessions-{(now - timedelta(hours=6 * i)):%Y%m%d-%H%M%S}.db" for i in range(60)]
    for n in names:
        (folder / n).write_bytes(b"")
    stale = folder / "sessions-20261101-000000.db.partial"
    stale.write_bytes(b"")
    os.utime(stale, (0, 0))
    other = folder / "notes.txt"
    other.write_text("mine")
    gone = B.rotate(folder, now)
    left = sorted(p.name for p in folder.iterdir())
    assert len(gone) == 60 - (len(left) - 1)
    assert names[0] in left and other.exists() and not stale.exists()
    assert len(left) - 1 <= 14


async def test_scheduler_backs_up_after_changes_at_most_every_interval_and_at_quit(
    tmp_path: Path,
) -> None:
    db = tmp_path / "sessions.db"
    clock = [datetime(2026, 12, 1, 10, 0)]
    store = await AsyncStore.open(db)
    made: list[B.Backup] = []
    sched = BackupScheduler(store, interval_min=30, check_every_s=0.02, on_made=made.append,
                            now=lambda: clock[0])
    try:
        idle = BackupScheduler(store, interval_min=30, check_every_s=0.02, on_made=made.append,
                               now=lambda: clock[0])
        await idle.start()
        await asyncio.sleep(0.1)
        assert await idle.close() is None and made == []  # nothing written: nothing to copy
        s = await store.create_session(title="first")
        await store.append_turn(s.id, Turn("user", [TextBlock("hello")]))
        await sched.start()
        for _ in range(100):
            if made:
                break
            await asyncio.sleep(0.02)
        assert len(made) == 1 and made[0].turns == 1
        await store.append_turn(s.id, Turn("user", [TextBlock("again")]))
        clock[0] += timedelta(minutes=10)
        await asyncio.sleep(0.15)
        assert len(made) == 1  # changed, but the last backup is only 10 minutes old
        clock[0] += timedelta(minutes=21)
        for _ in range(100):
            if len(made) == 2:
                break
            await asyncio.sleep(0.02)
        assert len(made) == 2 and made[1].turns == 2
        await store.set_state("window.geometry", "x")  # not a change worth a backup
        clock[0] += timedelta(minutes=1)
        assert await sched.close() is None
        await store.append_turn(s.id, Turn("user", [TextBlock("last words")]))
        sched2 = BackupScheduler(store, now=lambda: clock[0] + timedelta(minutes=2))
        await sched2.start()
        last = await sched2.close()  # at quit: a change since the last one, made at once
        assert last is not None and last.turns == 3
    finally:
        await store.close()
    assert [b.turns for b in B.list_backups(db)] == [3, 2, 1]


def test_store_files_and_the_data_folder_are_private_whatever_the_umask(tmp_path: Path) -> None:
    from parley.core import paths

    home = tmp_path / "home"
    old = os.umask(0)
    try:
        db = paths.db_path(home)
        with Store.open(db) as store:
            s = store.create_session()
            store.append_turn(s.id, Turn("user", [TextBlock("private")]))
            sidecars = [Path(f"{db}{x}") for x in ("-wal", "-shm")]
            assert all(p.exists() for p in sidecars)
            assert [mode(p) for p in [db, *sidecars]] == [0o600] * 3
        assert mode(home) == 0o700
    finally:
        os.umask(old)


def test_files_an_older_parley_left_readable_are_narrowed_at_start(tmp_path: Path) -> None:
    from parley.core import paths

    home = tmp_path / "home"
    db = paths.db_path(home)
    with Store.open(db) as store:
        store.create_session()
    made = B.make_backup(db)
    for p, m in ((home, 0o755), (db, 0o644), (made.path, 0o644), (made.path.parent, 0o755)):
        p.chmod(m)
    paths.data_dir(home)
    with Store.open(db):
        B.secure(made.path.parent)
    assert [mode(p) for p in (home, db, made.path, made.path.parent)] == [
        0o700, 0o600, 0o600, 0o700]


def test_exports_are_written_private(tmp_path: Path) -> None:
    from parley.core.private import write_private_text

    target = tmp_path / "chat.md"
    target.write_text("old")
    target.chmod(0o644)
    write_private_text(target, "# a chat\n")
    assert target.read_text() == "# a chat\n" and mode(target) == 0o600


async def test_a_backup_that_finds_the_file_damaged_stops_writes_and_the_backups(
    tmp_path: Path,
) -> None:
    from parley.core.store.errors import DamagedWhileOpen
    from parley.core.store.sqlite.damage import marker_path

    db = tmp_path / "sessions.db"
    fill(db)
    good = B.make_backup(db, now=datetime(2026, 11, 30, 12, 0))
    overwrite_pages(db, pages_of(db, "turns")[2:6])  # a disk error nothing has read yet
    store = await AsyncStore.open(db)
    told: list[str] = []
    sched = BackupScheduler(store, on_damaged=lambda: told.append("damaged"))
    try:
        await sched.start()
        s = await store.create_session(title="after")
        assert await sched.backup_now() is None
        assert told == ["damaged"] and store.sync.damaged and marker_path(db).exists()
        with pytest.raises(DamagedWhileOpen):
            await store.append_turn(s.id, Turn("user", [TextBlock("not written")]))
        assert not sched.due() and await sched.close() is None  # no more backups
    finally:
        await store.close()
    assert [b.path for b in B.automatic_backups(db.parent / "backups")] == [good.path]

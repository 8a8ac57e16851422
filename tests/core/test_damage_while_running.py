"""sessions.db damaged by another program while Parley runs: found, kept, and nothing lost.

The five outside damages of a fault trial, each on a real file in WAL mode that
holds turns in three places — in the newest automatic backup, checkpointed into
the file after it, and only in the ``-wal`` — with a message being saved at the
moment the damage is found. Each ends with every committed turn back (ids and
texts compared) through Restore and through Salvage, and the message that met
the damage not shown as saved.
"""

from __future__ import annotations

import os
import random
import shutil
import sqlite3
import time
from pathlib import Path

import pytest

from parley.core.content import TextBlock, Turn
from parley.core.recovery import damaged_file
from parley.core.store import Store
from parley.core.store.errors import (
    DamagedWhileOpen,
    DatabaseCorrupt,
    DatabaseMissing,
    DatabaseReplacedInPlace,
    StoreError,
)
from parley.core.store.schema import dbapi_connection
from parley.core.store.sqlite import backups, header
from parley.core.store.sqlite import kept as kept_files
from parley.core.store.sqlite.damage import marked_kept, marker_path, passes_quick_check
from tests.core.damaged import PAGE, overwrite_pages, pages_of

CASES = ("emptied", "halved", "three-pages", "replaced", "older-copy", "deleted")
SENT = "the message being sent when the damage is found"


def _say(store: Store, sid: str, text: str) -> tuple[str, str]:
    turn = store.append_turn(sid, Turn("user", [TextBlock(text + " " + "x" * 300)]))
    return turn.id, turn.text()


def _committed(path: Path) -> tuple[Store, str, list[tuple[str, str]]]:
    """An open store (as the app's) whose turns are in the backup, in the file, in the WAL."""
    store = Store.open(path, watch_closed=True)
    sid = store.create_session(title="kept").id
    said = [_say(store, sid, f"in the backup {i}") for i in range(40)]
    made = backups.make_backup(path)  # an automatic backup, as the scheduler makes it
    assert made.turns == 40
    said += [_say(store, sid, f"checkpointed after the backup {i}") for i in range(40)]
    store.maintain()  # idle upkeep: copied into the file; the WAL starts over at the next commit
    said += [_say(store, sid, f"only in the WAL {i}") for i in range(20)]
    assert os.path.getsize(f"{path}-wal") > 0
    time.sleep(0.02)  # file times tick every few ms: the damage is a change of its own
    return store, sid, said


def _other_parley_file(where: Path) -> Path:
    with Store.open(where) as other:
        chat = other.create_session(title="someone else's")
        for i in range(30):
            other.append_turn(chat.id, Turn("user", [TextBlock(f"not yours {i}")]))
    return where


def _damage(case: str, path: Path, tmp_path: Path) -> None:
    if case == "emptied":
        os.truncate(path, 0)  # truncate -s 0
    elif case == "halved":
        os.truncate(path, path.stat().st_size // 2)
    elif case == "three-pages":  # garbage over three pages of older turns
        leaves = pages_of(path, "turns")
        overwrite_pages(path, random.Random(31).sample(leaves[: len(leaves) // 2], 3))
    elif case in ("replaced", "older-copy"):  # cp x.db sessions.db: another database in it
        data = _other_parley_file(tmp_path / "other" / "sessions.db").read_bytes() \
            if case == "replaced" else backups.list_backups(path)[0].path.read_bytes()
        with open(path, "r+b") as fh:
            fh.truncate(0)
            fh.write(data)
    else:
        path.unlink()


def _turns(path: Path) -> list[tuple[str, str]]:
    with Store.open(path) as store:
        return [(t.id, t.text()) for s in store.list_sessions(include_archived=True)
                for t in store.get_turns(s.id)]


@pytest.mark.parametrize("case", CASES)
def test_damage_found_while_running_loses_no_committed_turn(tmp_path: Path, case: str) -> None:
    path = tmp_path / "sessions.db"
    store, sid, said = _committed(path)
    _damage(case, path, tmp_path)
    with pytest.raises(StoreError) as err:  # the save that finds it fails, typed
        store.append_turn(sid, Turn("user", [TextBlock(SENT)]))
    with pytest.raises((DamagedWhileOpen, DatabaseMissing)):  # nothing after it either
        store.append_turn(sid, Turn("user", [TextBlock("later")]))
    assert [(t.id, t.text()) for t in store.get_turns(sid)] == said  # still shown, still read
    found = path.read_bytes() if path.exists() else None
    store.close()
    if case not in ("emptied", "deleted"):  # closed without writing its WAL into it
        assert path.read_bytes() == found and Path(f"{path}-wal").stat().st_size > 0

    if case == "deleted":  # parley.core.store.sqlite.faults: a copy beside the old name
        assert isinstance(err.value, DatabaseMissing)
        (rescued,) = tmp_path.glob("sessions.db.rescued-*")
        assert _turns(rescued) == said
        return
    kept = marked_kept(path)
    assert kept is not None and kept.folder.parent == tmp_path
    assert kept.folder.name in err.value.message  # the error names where they are
    assert (kept.folder / "sessions.db-wal").stat().st_size > 0  # the WAL kept, byte for byte
    assert (kept.folder / "sessions.db").exists()
    if case in ("replaced", "older-copy"):
        assert isinstance(err.value, DatabaseReplacedInPlace) and kept.replaced
        assert "replaced by another database" in err.value.message
        assert "part of it can no longer be read" not in err.value.message
        with pytest.raises(DatabaseReplacedInPlace):  # the next start offers the recovery
            Store.open(path, watch_closed=True)
    else:
        assert type(err.value) is DatabaseCorrupt and "while Parley was using it" in \
            err.value.message
        with pytest.raises(DatabaseCorrupt):
            Store.open(path, watch_closed=True)
    for sidecar in ("", "-wal"):  # the message that met the damage was never saved
        f = Path(f"{path}{sidecar}")
        assert not f.exists() or SENT.encode() not in f.read_bytes()

    backup = damaged_file.latest_backup(path)
    assert backup is not None
    twin = tmp_path / "twin"  # the same state, for the other way on
    twin.mkdir()
    for p in tmp_path.iterdir():
        if p.name.startswith("sessions.db"):
            (shutil.copytree if p.is_dir() else shutil.copy2)(p, twin / p.name)

    damaged_file.restore_backup(path, backup)
    assert _turns(path) == said
    assert not marker_path(path).exists() and kept.folder.is_dir()  # the folder stays

    _, report = damaged_file.salvage_into(twin / "sessions.db", backup)
    assert _turns(twin / "sessions.db") == said
    assert report.turns == len(said)


def test_an_emptied_file_fails_the_checks_quick_check_alone_passes(tmp_path: Path) -> None:
    path = tmp_path / "sessions.db"
    path.write_bytes(b"")
    assert header.problem(path) == "it is empty: another program cut it to 0 bytes"
    assert not passes_quick_check(path)
    con = sqlite3.connect(path)  # what SQLite alone says of it
    assert con.execute("PRAGMA quick_check").fetchone()[0] == "ok"
    con.close()


def test_a_file_shorter_than_its_header_says_is_named_so(tmp_path: Path) -> None:
    path = tmp_path / "sessions.db"
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE t (x)")
    con.executemany("INSERT INTO t VALUES (?)", [("y" * 1000,)] * 100)
    con.commit()
    con.close()
    pages = path.stat().st_size // PAGE
    assert header.problem(path) is None
    os.truncate(path, (pages // 2) * PAGE)
    assert header.problem(path) == (f"it was cut short: {pages // 2} of its {pages} pages are "
                                    "left (another program shortened it)")
    os.truncate(path, 50)
    assert header.problem(path) is not None


def test_a_file_mid_checkpoint_is_not_cut_short_while_the_wal_holds_its_last_pages(
        tmp_path: Path) -> None:
    """Another process's checkpoint writes page 1 (the new page count) before the pages
    past the old end; until it has, those pages are in the WAL and the file is whole."""
    path = tmp_path / "sessions.db"
    con = sqlite3.connect(path, isolation_level=None)
    con.execute("PRAGMA journal_mode=WAL")
    con.execute("PRAGMA wal_autocheckpoint=0")
    con.execute("CREATE TABLE t (x)")
    con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    before = path.stat().st_size // PAGE
    con.executemany("INSERT INTO t VALUES (?)", [("y" * 1000,)] * 40)
    wal = Path(f"{path}-wal").read_bytes()
    frame = 24 + PAGE
    page_ones = [32 + i * frame for i in range((len(wal) - 32) // frame)
                 if int.from_bytes(wal[32 + i * frame:36 + i * frame], "big") == 1]
    newest_page_one = wal[page_ones[-1] + 24:page_ones[-1] + 24 + PAGE]
    with open(path, "r+b") as fh:  # what a checkpoint has done when it is cut off here
        fh.write(newest_page_one)
    after = int.from_bytes(newest_page_one[28:32], "big")
    assert path.stat().st_size // PAGE == before < after
    assert header.problem(path) is None

    os.truncate(f"{path}-wal", 0)  # the same file with its WAL gone: cut short
    assert header.problem(path) == (f"it was cut short: {before} of its {after} pages are "
                                    "left (another program shortened it)")
    con.close()


def test_a_salvage_of_a_replaced_file_never_reads_the_other_database(tmp_path: Path) -> None:
    path = tmp_path / "sessions.db"
    store, sid, said = _committed(path)
    _damage("replaced", path, tmp_path)
    with pytest.raises(DatabaseReplacedInPlace):
        store.append_turn(sid, Turn("user", [TextBlock(SENT)]))
    store.close()
    aside, report = damaged_file.salvage_into(path, None)  # no backup: the kept files alone
    texts = [text for _id, text in _turns(path)]
    assert not any(t.startswith("not yours") for t in texts)
    assert _turns(path) == said and report.from_backup == 0
    assert aside is not None and [t for _i, t in _turns_of(aside)][:1] == ["not yours 0"]


def _turns_of(path: Path) -> list[tuple[str, str]]:
    """The turns of a file kept aside (read from a copy: it is never opened in place)."""
    copy = path.with_name(path.name + ".read")
    shutil.copy2(path, copy)
    return _turns(copy)


def test_a_backup_of_an_emptied_file_says_it_is_damaged_and_leaves_its_wal(
    tmp_path: Path,
) -> None:
    from parley.core.store.errors import SourceDamaged

    path = tmp_path / "sessions.db"
    store, _sid, _said = _committed(path)
    wal = Path(f"{path}-wal").read_bytes()
    os.truncate(path, 0)
    try:
        with pytest.raises(SourceDamaged) as err:  # not "Your chats are safe in sessions.db"
            backups.make_backup(path)
        assert "safe" not in err.value.message
        assert Path(f"{path}-wal").read_bytes() == wal  # no connection opened the empty file
    finally:
        store.close()


def test_a_file_of_an_older_parley_gets_its_id_at_its_first_save(tmp_path: Path) -> None:
    path = tmp_path / "sessions.db"
    with Store.open(path) as store:
        sid = store.create_session().id
    con = sqlite3.connect(path)
    assert con.execute("PRAGMA application_id").fetchone()[0] != 0  # a new file has one
    con.execute("PRAGMA application_id = 0")  # as an older Parley left it
    con.commit()
    con.close()
    with Store.open(path) as store:
        _say(store, sid, "first save")
        store.maintain()
    assert header.file_id(path.read_bytes()[:100]) != 0


def test_another_program_writing_through_sqlite_is_not_damage(tmp_path: Path) -> None:
    path = tmp_path / "sessions.db"
    store, sid, said = _committed(path)
    try:
        con = sqlite3.connect(path)  # the sqlite3 shell, say: commits and checkpoints
        con.execute("INSERT INTO settings (key, value) VALUES ('by', '\"hand\"')")
        con.commit()
        con.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()
        con.close()
        said.append(_say(store, sid, "after the other program"))
        assert not store.damaged and store.watch.checks == 1
        assert [(t.id, t.text()) for t in store.get_turns(sid)] == said
    finally:
        store.close()


def test_a_backup_copied_over_it_in_place_is_named_even_when_sqlite_reads_it_whole(
    tmp_path: Path,
) -> None:
    path = tmp_path / "sessions.db"
    store = Store.open(path, watch_closed=True)
    try:
        sid = store.create_session().id
        said = [_say(store, sid, f"before {i}") for i in range(10)]
        store.maintain()  # all in the file: the backup equals it, the WAL starts over
        copy = backups.make_backup(path).path
        said += [_say(store, sid, f"in the WAL {i}") for i in range(5)]
        time.sleep(0.02)
        with open(path, "r+b") as fh:  # cp backups/… sessions.db
            fh.truncate(0)
            fh.write(copy.read_bytes())
        assert passes_quick_check(path)  # with the WAL, SQLite reads it whole
        with pytest.raises(DatabaseReplacedInPlace):  # but it is not the file Parley wrote
            store.append_turn(sid, Turn("user", [TextBlock(SENT)]))
        assert [(t.id, t.text()) for t in store.get_turns(sid)] == said
    finally:
        store.close()


def test_another_process_that_checkpoints_the_wal_into_the_file_is_not_damage(
    tmp_path: Path,
) -> None:
    """Another SQLite program writes the WAL into the file (a checkpoint) and closes: the
    file changed under Parley, is looked at once, and accepted. Its close leaves the
    ``-wal`` and ``-shm`` to Parley, which still holds its locks (until session 16 this
    test expected them gone: Parley's own header reads had dropped its locks, see
    test_held_locks)."""
    import subprocess
    import sys

    path = tmp_path / "sessions.db"
    store = Store.open(path, watch_closed=True)
    try:
        sid = store.create_session().id
        said = [_say(store, sid, f"in the WAL {i}") for i in range(20)]
        time.sleep(0.02)
        subprocess.run([sys.executable, "-c", (  # a program that checkpoints, then closes
            "import sqlite3, sys; c = sqlite3.connect(sys.argv[1], isolation_level=None); "
            "c.execute('BEGIN IMMEDIATE'); c.execute('COMMIT'); "
            "assert c.execute('PRAGMA wal_checkpoint(TRUNCATE)').fetchone()[0] == 0; "
            "c.close()"), str(path)],
            check=True)
        assert Path(f"{path}-wal").stat().st_size == 0  # written into the file, kept
        said.append(_say(store, sid, "after the other program"))
        assert store.watch.checks == 1 and not store.damaged  # looked at, and accepted
        assert [(t.id, t.text()) for t in store.get_turns(sid)] == said
    finally:
        store.close()


CHILD = """
import os, signal, sys, time
from pathlib import Path
from parley.core.content import TextBlock, Turn
from parley.core.store import Store
from parley.core.store.sqlite import backups
from tests.core.damaged import overwrite_pages, pages_of

path = Path(sys.argv[1])
store = Store.open(path, watch_closed=True)
sid = store.create_session(title="kept").id
def say(text):
    t = store.append_turn(sid, Turn("user", [TextBlock(text + " " + "x" * 300)]))
    print(t.id, t.text(), sep="\\t", flush=True)
for i in range(40):
    say(f"in the backup {i}")
backups.make_backup(path)
for i in range(40):
    say(f"checkpointed after the backup {i}")
store.maintain()
for i in range(20):
    say(f"only in the WAL {i}")
leaves = pages_of(path, "turns")
overwrite_pages(path, leaves[:3])  # older turns: in the backup
store.report_damage()  # as the automatic backup's check reports it, from its own thread
os.kill(os.getpid(), signal.SIGKILL)  # and Parley is killed before it closes the store
"""


def test_killed_after_the_damage_was_found_restore_replays_the_kept_wal(tmp_path: Path) -> None:
    import subprocess
    import sys

    path = tmp_path / "sessions.db"
    done = subprocess.run([sys.executable, "-c", CHILD, str(path)], capture_output=True,
                          text=True, cwd=Path(__file__).parents[2], timeout=120, check=False)
    assert done.returncode == -9, done.stderr
    said = [tuple(line.split("\t")) for line in done.stdout.splitlines()]
    assert len(said) == 100
    kept = marked_kept(path)
    assert kept is not None and not kept.read_by_parley.exists()  # no connection to copy from
    assert (kept.folder / "sessions.db-wal").stat().st_size > 0

    backup = damaged_file.latest_backup(path)
    assert backup is not None
    damaged_file.restore_backup(path, backup)
    assert _turns(path) == said


def test_an_emptied_file_whose_pages_are_all_in_the_wal_stays_empty_when_closed(
        tmp_path: Path) -> None:
    """A new file emptied before its first checkpoint: closing the store must not write
    the WAL back into it — that would leave an older copy that passes the next start's
    check and opens as if nothing had happened, its marker gone. It stays empty, the
    next open offers the recovery, and Salvage brings every turn back."""
    path = tmp_path / "sessions.db"
    store = Store.open(path, watch_closed=True)
    sid = store.create_session(title="new").id
    said = [_say(store, sid, f"only in the WAL {i}") for i in range(30)]
    os.truncate(path, 0)
    time.sleep(0.02)
    with pytest.raises(StoreError):
        store.append_turn(sid, Turn("user", [TextBlock(SENT)]))
    store.close()
    assert path.stat().st_size == 0
    assert marker_path(path).exists()
    with pytest.raises(DatabaseCorrupt):
        Store.open(path)
    _, report = damaged_file.salvage_into(path, None)
    assert _turns(path) == said
    assert report.lost_turns == 0 and report.lost_chats == 0  # counted from the kept copies


def test_a_damaged_list_of_tables_is_still_copied_and_what_was_copied_is_said(
        tmp_path: Path) -> None:
    """Trial 20: garbage over the pages of the file's list of tables (``dd conv=notrunc``)
    while it was open: the copy of what Parley read failed at the journal-mode switch
    (SQLite reads the list for it), yet what-happened.txt said it was made."""
    path = tmp_path / "sessions.db"
    store, sid, _said = _committed(path)
    schema_pages = pages_of(path, "sqlite_schema")
    assert schema_pages and 1 not in schema_pages  # the header's page stays
    overwrite_pages(path, schema_pages)
    # Parley's cache no longer holds them (memory short, as in the trial): read from disk.
    dbapi_connection(store._con).execute("PRAGMA shrink_memory")
    with pytest.raises(DatabaseCorrupt):
        store.append_turn(sid, Turn("user", [TextBlock(SENT)]))
    store.close()
    kept = marked_kept(path)
    assert kept is not None
    copy = kept.read_by_parley
    assert copy.exists()  # the pages as read, damaged ones too
    assert copy.read_bytes()[18:20] == b"\x01\x01"  # one file: no -wal needed to read it
    assert copy.stat().st_size >= path.stat().st_size
    said = (kept.folder / "what-happened.txt").read_text(encoding="utf-8")
    assert "read-by-parley.db is what Parley could still read" in said
    assert "sessions.db, sessions.db-wal, sessions.db-shm as they were then" in said


def test_what_happened_says_only_what_was_copied(tmp_path: Path) -> None:
    """A copy of what Parley read that could not be made is not claimed."""
    path = tmp_path / "sessions.db"
    store, sid, _said = _committed(path)
    store.close()
    made = kept_files.keep(path, kept_files.UNREADABLE)
    said = (made.folder / "what-happened.txt").read_text(encoding="utf-8")
    assert "read-by-parley" not in said and "could still read" not in said
    con = sqlite3.connect(tmp_path / "gone.db")
    con.close()  # a closed connection: the copy fails
    assert kept_files.copy_what_parley_reads(con, made) is None
    said = (made.folder / "what-happened.txt").read_text(encoding="utf-8")
    assert "Parley could not copy what it still read of sessions.db" in said
    assert "there is no read-by-parley.db" in said

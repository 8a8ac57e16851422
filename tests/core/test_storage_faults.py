"""Storage faults a person can meet: each says what happened in words, and nothing saved is lost.

How each fault is produced, and why that exercises the real code path:

* **Disk full.** On a real, tiny tmpfs filesystem filled up with a filler
  file (needs root and ``mount``; skipped otherwise): SQLite's write of the WAL
  fails with ENOSPC and returns SQLITE_FULL — exactly what a full disk does.
  Everywhere: ``PRAGMA max_page_count`` on the store's own connection makes
  SQLite's pager return the same SQLITE_FULL through the same transaction
  and rollback path.
* **Read-only.** ``chmod`` does not stop root, and Linux refuses to remount a
  filesystem read-only while Parley holds the file open for writing (EBUSY),
  so "became read-only while running" can only reach Parley as SQLite saying
  SQLITE_READONLY. Two tests: a start on a real read-only bind mount (root;
  ``os.access`` and SQLite both see EROFS) and ``PRAGMA query_only`` on the
  running store's connection, which makes SQLite refuse the next write with
  SQLITE_READONLY, the code a read-only connection gets.
* **Deleted or replaced.** Real ``unlink`` / ``rename`` under an open store.
  SQLite alone keeps writing into the old file (shown below), so detection is
  Parley's job (``parley.core.store.sqlite.faults``);
  ``parley.core.recovery.damaged_file.rescue_copy`` saves what the old file holds.
* **Corrupt at start.** Real damaged bytes; ``parley.core.recovery.damaged_file`` offers the
  latest usable backup or a new file and never overwrites the damaged one.

These faults are of files, so the tests run on sessions.db only; the report of
interrupted replies at start runs on PostgreSQL too. PostgreSQL's own faults
(disk full on the server, the server away) are in test_unsaved_replies.py and
test_pg_store.py.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import os
import re
import sqlite3
import time
from pathlib import Path

import pytest

from parley.core.chat.run import ChatRunner
from parley.core.content import TextBlock, Turn
from parley.core.keys import FileBackend, KeyStore
from parley.core.providers.hub import ProviderHub
from parley.core.providers.retry import RetryPolicy
from parley.core.recovery import damaged_file, previous_run
from parley.core.store import AsyncStore, Store
from parley.core.store.errors import (
    DatabaseCorrupt,
    DatabaseMissing,
    DatabaseReadOnly,
    DatabaseReplaced,
    DiskFull,
    StoreError,
)
from parley.core.store.sqlite.faults import FileIdentity, check_identity, release_moved_file
from tests.core.faults import on_store_thread, raw
from tests.disk import fill, mount, umount
from tests.fakes.validation import validate_anthropic

MODEL = "anthropic:claude-sonnet-4-6"


# --- helpers ---------------------------------------------------------------------------


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def make_store(path: Path, n: int = 3) -> tuple[str, list[str]]:
    with Store.open(path) as store:
        sid = store.create_session(title="kept").id
        texts = [f"saved before {i} " + "x" * 200 for i in range(n)]
        for t in texts:
            store.append_turn(sid, Turn("user", [TextBlock(t)]))
    return sid, texts


def assert_kept_message(err: StoreError, path: Path) -> None:
    assert str(path) in str(err)
    assert "Nothing already saved was lost" in str(err)


@pytest.fixture
async def chat(tmp_path, fake_provider):
    """A real store, hub and run loop against the fake provider (as in test_run.py)."""

    async def make(path: Path):
        store = await AsyncStore.open(path)
        keys = KeyStore(backend=FileBackend(tmp_path / "keys.json"), environ={})
        hub = ProviderHub(store, keys=keys, retry=RetryPolicy(max_retries=0), environ={})
        await hub.load()
        await hub.add_provider("anthropic", base_url=fake_provider.anthropic_base_url,
                               api_key="sk-test", default_model="claude-sonnet-4-6")
        opened.append((store, hub))
        return store, ChatRunner(store, hub, journal_interval_s=0.01, emit_interval_s=0.0)

    opened: list = []
    yield make
    for store, hub in opened:
        await hub.aclose()
        with contextlib.suppress(StoreError):
            await store.close()


# --- disk full -------------------------------------------------------------------------


def test_really_full_disk_is_reported_in_words_and_keeps_every_saved_turn(small_disk):
    path = small_disk / "sessions.db"
    sid, texts = make_store(path)
    with Store.open(path) as store:
        filler = fill(small_disk)
        with pytest.raises(DiskFull) as info:
            for i in range(50):  # the WAL may still have room for a page or two
                store.append_turn(sid, Turn("user", [TextBlock(f"big {i} " + "y" * 20_000)]))
        assert_kept_message(info.value, path)
        assert "is full" in str(info.value) and "Free some space" in str(info.value)
        kept = [t.text() for t in store.get_turns(sid)]
        assert kept[: len(texts)] == texts
        filler.unlink()  # the person frees some space: saving works again
        store.append_turn(sid, Turn("user", [TextBlock("after freeing space")]))
    with Store.open(path) as store:
        again = [t.text() for t in store.get_turns(sid)]
        assert again[: len(texts)] == texts and again[-1] == "after freeing space"
        assert again == kept + ["after freeing space"]
    con = sqlite3.connect(path)
    assert con.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
    con.close()


async def test_disk_full_while_a_reply_streams_keeps_the_question_and_the_whole_reply(
    tmp_path, chat, fake_provider
):
    path = tmp_path / "sessions.db"
    store, runner = await chat(path)
    runner.saves.delays_s = (0.05,)
    sid = (await store.create_session()).id
    fake_provider.script("First answer.")
    await runner.send(sid, [TextBlock("first question")], model_ref=MODEL)
    pages = (await store._call(lambda: raw(store.sync).execute(  # noqa: SLF001
        "PRAGMA page_count").fetchone()))[0]
    # Room for the question, not for a 200 kB reply: the journal writes hit the limit.
    await on_store_thread(store, f"PRAGMA max_page_count = {pages + 2}")
    long_reply = "word " * 40_000
    fake_provider.script(long_reply, token_delay_ms=1, chunk_size=2000)
    events: list = []
    result = await runner.send(sid, [TextBlock("second question")], model_ref=MODEL,
                               on_event=events.append)
    # The whole reply is kept in memory, "not saved yet", and said so in words.
    assert result is not None and result.text() == long_reply
    assert runner.saves.holds(result.id)
    assert isinstance(runner.saves.error, DiskFull)
    assert_kept_message(runner.saves.error, path)
    turns = await store.get_turns(sid)
    assert [t.text() for t in turns[:3]] == ["first question", "First answer.", "second question"]
    assert all(t.aborted and long_reply.startswith(t.text()) for t in turns[3:])

    await on_store_thread(store, "PRAGMA max_page_count = 1073741823")  # space freed
    for _ in range(500):
        if not runner.saves.pending():
            break
        await asyncio.sleep(0.02)
    last = (await store.get_turns(sid))[-1]
    assert (last.id, last.text(), last.aborted) == (result.id, long_reply, False)
    fake_provider.script("Third answer.")
    assert (await runner.send(sid, [TextBlock("third")], model_ref=MODEL)) is not None
    assert validate_anthropic(fake_provider.model_requests[-1].body) is None
    assert (await store.get_turns(sid))[-1].text() == "Third answer."
    await runner.saves.aclose()


# --- read-only -------------------------------------------------------------------------


def test_start_on_read_only_storage_is_refused_in_words_and_writes_nothing(tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    make_store(data / "sessions.db")
    before = digest(data / "sessions.db")
    view = tmp_path / "ro"
    view.mkdir()
    if not mount("--bind", str(data), str(view)):
        pytest.skip("needs root and mount (a real read-only filesystem)")
    try:
        if not mount("-o", "remount,ro,bind", str(view)):
            pytest.skip("cannot remount read-only here")
        with pytest.raises(StoreError) as info:
            Store.open(view / "sessions.db")
        assert isinstance(info.value, DatabaseReadOnly), repr(info.value)
        assert "read-only" in str(info.value)
        assert_kept_message(info.value, view / "sessions.db")
    finally:
        umount(view)
    assert digest(data / "sessions.db") == before


async def test_store_turned_read_only_refuses_the_message_before_anything_is_sent(
    tmp_path, chat, fake_provider
):
    path = tmp_path / "sessions.db"
    store, runner = await chat(path)
    sid = (await store.create_session()).id
    fake_provider.script("Answer one.")
    await runner.send(sid, [TextBlock("one")], model_ref=MODEL)
    sent = len(fake_provider.model_requests)
    await on_store_thread(store, "PRAGMA query_only = ON")
    with pytest.raises(DatabaseReadOnly) as info:
        await runner.send(sid, [TextBlock("two")], model_ref=MODEL)
    assert "read-only" in str(info.value)
    assert_kept_message(info.value, path)
    assert len(fake_provider.model_requests) == sent  # unsaved question never left
    assert [t.text() for t in await store.get_turns(sid)] == ["one", "Answer one."]
    assert not runner.is_running(sid)

    await on_store_thread(store, "PRAGMA query_only = OFF")  # writable again
    fake_provider.script("Answer two.")
    assert (await runner.send(sid, [TextBlock("two")], model_ref=MODEL)) is not None


# --- deleted or replaced under the app ----------------------------------------------------


def test_sqlite_alone_writes_into_a_deleted_file_without_a_word(tmp_path):
    """Why Parley checks the file itself: SQLite reports nothing."""
    path = tmp_path / "sessions.db"
    con = sqlite3.connect(path, isolation_level=None)
    con.execute("PRAGMA journal_mode = WAL")
    con.execute("CREATE TABLE t (x)")
    path.unlink()
    con.execute("INSERT INTO t VALUES (1)")  # succeeds, into a file nobody can see
    con.close()
    assert not path.exists()


def test_file_identity_tells_deleted_replaced_and_put_back(tmp_path):
    path = tmp_path / "sessions.db"
    make_store(path, 1)
    ident = FileIdentity.of(path)
    assert ident is not None
    check_identity(path, ident)  # same file: no error

    path.rename(tmp_path / "moved.db")
    with pytest.raises(DatabaseMissing) as missing:
        check_identity(path, ident)
    assert str(path) in str(missing.value) and "deleted or moved" in str(missing.value)
    assert "Nothing already saved was lost" in str(missing.value)
    (tmp_path / "moved.db").rename(path)
    check_identity(path, ident)  # put back: the same file again

    other = tmp_path / "other.db"
    make_store(other, 1)
    os.replace(other, path)
    with pytest.raises(DatabaseReplaced) as replaced:
        check_identity(path, ident)
    assert "replaced by another file" in str(replaced.value)
    assert "new file is not damaged" in str(replaced.value)


STORE_CHECK = (
    "core/store: Store._w must call faults.check_identity (identity taken at open) "
    "inside the write transaction, and Store.close must call faults.rescue_and_release "
    "when the file moved; see the durability report"
)


def test_store_refuses_to_write_after_its_file_was_deleted_and_saves_a_copy(tmp_path):
    path = tmp_path / "sessions.db"
    sid, texts = make_store(path)
    with Store.open(path) as store:
        store.append_turn(sid, Turn("user", [TextBlock("written after opening")]))
        path.unlink()
        with pytest.raises(DatabaseMissing):
            store.append_turn(sid, Turn("user", [TextBlock("into the void?")]))
        assert store.get_turns(sid)[-1].text() == "written after opening"  # still readable
    # Closing keeps the message's promise: a copy beside the old name.
    [copy] = [p for p in tmp_path.iterdir() if p.name.startswith("sessions.db.rescued-")]
    with Store.open(copy) as rescued:
        assert [t.text() for t in rescued.get_turns(sid)] == texts + ["written after opening"]


def test_store_leaves_a_file_put_in_its_place_intact(tmp_path):
    path = tmp_path / "sessions.db"
    sid, texts = make_store(path)
    restored = tmp_path / "restored.db"
    other_sid, other_texts = make_store(restored, 2)
    store = Store.open(path)
    try:
        store.append_turn(sid, Turn("user", [TextBlock("in the WAL")]))
        os.replace(restored, path)  # e.g. a backup restored with mv
        with pytest.raises(DatabaseReplaced):
            store.append_turn(sid, Turn("user", [TextBlock("must not land anywhere")]))
    finally:
        store.close()
    with Store.open(path) as reopened:  # the restored file, not the old one's pages
        assert [t.text() for t in reopened.get_turns(other_sid)] == other_texts
    [copy] = [p for p in tmp_path.iterdir() if p.name.startswith("sessions.db.rescued-")]
    with Store.open(copy) as rescued:  # and what the old file held is kept too
        assert [t.text() for t in rescued.get_turns(sid)] == texts + ["in the WAL"]


def test_rescue_copy_saves_what_a_deleted_file_held(tmp_path):
    path = tmp_path / "sessions.db"
    sid, texts = make_store(path)
    with Store.open(path) as store:
        store.append_turn(sid, Turn("user", [TextBlock("written after opening")]))
        path.unlink()
        for suffix in ("-wal", "-shm"):
            Path(f"{path}{suffix}").unlink(missing_ok=True)
        rescued = damaged_file.rescue_copy(store)
    assert re.fullmatch(r"sessions\.db\.rescued-\d{8}-\d{6}", rescued.name)
    assert not path.exists()
    with Store.open(rescued) as store:
        assert [t.text() for t in store.get_turns(sid)] == texts + ["written after opening"]
        assert store.search("opening")[0].session_id == sid


def _wal_db(path: Path, table: str) -> sqlite3.Connection:
    con = sqlite3.connect(path, isolation_level=None)
    con.execute("PRAGMA journal_mode = WAL")
    con.execute(f"CREATE TABLE {table} (x)")
    for i in range(20):
        con.execute(f"INSERT INTO {table} VALUES (?)", (f"{table} {i}",))
    return con


@pytest.mark.parametrize("release", [False, True])
def test_release_moved_file_keeps_old_pages_out_of_the_new_file(tmp_path, release):
    path = tmp_path / "sessions.db"
    old = _wal_db(path, "old_rows")
    new = sqlite3.connect(tmp_path / "backup.db")
    new.execute("CREATE TABLE restored (x)")
    new.execute("INSERT INTO restored VALUES ('the backup')")
    new.commit()
    new.close()
    os.replace(tmp_path / "backup.db", path)  # restored under the running connection
    if release:
        release_moved_file(old)
    old.close()
    con = sqlite3.connect(path)
    tables = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    con.close()
    # Without the release SQLite replays the old file's WAL into the restored one.
    assert ("restored" in tables) is release


# --- corrupt at start --------------------------------------------------------------------


def damage(path: Path) -> None:
    data = bytearray(path.read_bytes())
    data[100:4096] = b"\xa5" * (4096 - 100)
    path.write_bytes(bytes(data))


def test_corrupt_file_at_start_then_start_fresh_keeps_the_damaged_file(tmp_path):
    path = tmp_path / "sessions.db"
    make_store(path)
    damage(path)
    damaged = digest(path)
    with pytest.raises(DatabaseCorrupt) as info:
        Store.open(path)
    assert "damaged" in str(info.value) and "did not change it" in str(info.value)
    assert damaged_file.latest_backup(path) is None

    aside = damaged_file.start_fresh(path)
    assert aside is not None and re.fullmatch(r"sessions\.db\.corrupt-\d{8}-\d{6}", aside.name)
    # The new, empty file is already in place (made beside it, then swapped in: never a
    # moment without a sessions.db, so a kill midway cannot start an empty app silently).
    assert digest(aside) == damaged and damaged_file.is_usable(path)
    with Store.open(path) as store:
        assert store.list_sessions() == []

    make_store(path)  # damaged again, within the same second: a new name, nothing replaced
    damage(path)
    second = damaged_file.start_fresh(path)
    assert second is not None and second != aside
    assert digest(aside) == damaged and digest(second) != damaged


def test_set_aside_moves_the_wal_with_the_file_and_never_overwrites(tmp_path):
    path = tmp_path / "sessions.db"
    con = _wal_db(path, "rows")  # open: the rows are still in sessions.db-wal
    taken = path.with_name(f"{path.name}.corrupt-{time.strftime('%Y%m%d-%H%M%S')}")
    taken.write_bytes(b"someone else's file")
    aside = damaged_file.set_aside(path)
    con.close()
    assert aside is not None and aside != taken and taken.read_bytes() == b"someone else's file"
    assert Path(f"{aside}-wal").exists() and not Path(f"{path}-wal").exists()
    moved = sqlite3.connect(aside)
    assert moved.execute("SELECT count(*) FROM rows").fetchone() == (20,)
    moved.close()


def test_latest_backup_is_the_newest_usable_one(tmp_path):
    path = tmp_path / "sessions.db"
    make_store(path)
    good = path.with_name("sessions.db.parley-pre-v4.bak")
    newer_but_damaged = path.with_name("sessions.db.parley-pre-v4.1.bak")
    src = sqlite3.connect(path)
    for target in (good, newer_but_damaged):
        dst = sqlite3.connect(target)
        src.backup(dst)
        dst.close()
    src.close()
    damage(newer_but_damaged)
    os.utime(good, ns=(1_000_000_000_000_000_000, 1_000_000_000_000_000_000))
    os.utime(newer_but_damaged, ns=(2_000_000_000_000_000_000, 2_000_000_000_000_000_000))
    path.with_name("sessions.db.parley-pre-v4.2.bak.partial").write_bytes(b"unfinished")

    assert damaged_file.backups(path) == [newer_but_damaged, good]
    assert damaged_file.latest_backup(path) == good


def test_restore_backup_opens_a_copy_and_keeps_backup_and_damaged_file(tmp_path):
    path = tmp_path / "sessions.db"
    sid, texts = make_store(path)
    backup = path.with_name("sessions.db.parley-pre-v4.bak")
    src, dst = sqlite3.connect(path), sqlite3.connect(backup)
    src.backup(dst)
    src.close()
    dst.close()
    kept = digest(backup)
    damage(path)
    damaged = digest(path)

    aside = damaged_file.restore_backup(path, damaged_file.latest_backup(path))
    assert aside is not None and digest(aside) == damaged
    assert digest(backup) == kept
    with Store.open(path) as store:
        assert [t.text() for t in store.get_turns(sid)] == texts
        store.append_turn(sid, Turn("user", [TextBlock("after the restore")]))

    damage(backup)
    with pytest.raises(DatabaseCorrupt):
        damaged_file.restore_backup(path, backup)
    assert Store.open(path).get_turns(sid)[-1].text() == "after the restore"


# --- the start-up report of interrupted replies -----------------------------------------


async def test_start_after_a_crash_reports_interrupted_replies(any_target):
    store = await AsyncStore.open(any_target)
    try:
        assert await previous_run.mark_running(store, pid=1, now_ms=1) is None  # a new store
        cut = (await store.create_session(title="cut")).id
        await store.append_turn(cut, Turn("user", [TextBlock("tell me")]))
        reply = Turn("assistant", [TextBlock("Once upon")], aborted=True, cut_off=True)
        await store.append_turn(cut, reply)
        waiting = (await store.create_session(title="waiting")).id
        question = Turn("user", [TextBlock("hello?")])
        await store.append_turn(waiting, question)
        fine = (await store.create_session(title="fine")).id
        await store.append_turn(fine, Turn("user", [TextBlock("hi")]))
        await store.append_turn(fine, Turn("assistant", [TextBlock("Hi!")]))

        previous = await previous_run.mark_running(store, pid=2)  # no clean exit before
        assert previous is not None and previous.pid == 1
        found = {(i.session_id, i.turn_id, i.kind, i.chars) for i in previous.interrupted}
        assert found == {(cut, reply.id, "partial", 9), (waiting, question.id, "unanswered", 0)}

        await previous_run.mark_clean_exit(store)
        assert await previous_run.mark_running(store) is None
        since_ms = int(time.time() * 1000) + 60_000
        later = await previous_run.interrupted_replies(store, since_ms=since_ms)
        assert later == []
    finally:
        await store.close()

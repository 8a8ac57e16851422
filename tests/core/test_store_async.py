"""AsyncStore: the same API awaitable, every call on one worker thread.

Tests taking ``any_target``/``any_store`` run on a sessions.db file and on PostgreSQL;
the others are about files only (a file that is not a database, the v3 upgrade, the
file's upkeep: ``maintain`` does nothing on a server).
"""

from __future__ import annotations

import asyncio
import inspect
import threading

import pytest

from parley.core.content import TextBlock, Turn
from parley.core.store import AsyncStore, Store
from parley.core.store.backends import open_store
from parley.core.store.errors import NotAParleyFile, SessionNotFound, StoreClosed, StoreError


def public_methods(cls: type) -> set[str]:
    return {n for n, v in inspect.getmembers(cls) if callable(v) and not n.startswith("_")}


def test_every_store_method_has_an_awaitable_twin_with_the_same_signature():
    missing = public_methods(Store) - public_methods(AsyncStore) - {"open"}
    assert missing == set()
    assert {"open", "close", "maintain", "append_turn", "search"} <= public_methods(Store)
    for name in public_methods(Store) - {"open", "close"}:
        twin = getattr(AsyncStore, name)
        assert inspect.iscoroutinefunction(twin), name
        a = list(inspect.signature(getattr(Store, name)).parameters.values())
        b = list(inspect.signature(twin).parameters.values())
        assert [(p.name, p.kind, p.default) for p in a] == [
            (p.name, p.kind, p.default) for p in b
        ], name


async def test_calls_run_on_one_worker_thread(any_target, monkeypatch):
    threads: set[str] = set()
    original = Store.get_session

    def spy(self, session_id):
        threads.add(threading.current_thread().name)
        return original(self, session_id)

    monkeypatch.setattr(Store, "get_session", spy)
    astore = await AsyncStore.open(any_target)
    try:
        s = await astore.create_session(title="async")
        await astore.append_turn(s.id, Turn("user", [TextBlock("hello")]))
        results = await asyncio.gather(*(astore.get_session(s.id) for _ in range(20)))
        assert {r.turn_count for r in results} == {1}
        assert len(threads) == 1
        assert threads.pop().startswith("parley-store")
        assert threading.current_thread().name not in threads
        assert (await astore.search("hello"))[0].session_id == s.id
        assert astore.sync.get_session(s.id).title == "async"
        assert astore.path == astore.sync.path and astore.path.name in str(any_target)
        assert astore.migration_report is None
        with pytest.raises(SessionNotFound):
            await astore.get_session("nope")
    finally:
        await astore.close()
        await astore.close()


async def test_open_errors_are_raised_from_await(tmp_path):
    bad = tmp_path / "sessions.db"
    bad.write_text("not a database")
    with pytest.raises(NotAParleyFile):
        await AsyncStore.open(bad)


async def test_writes_are_serialized_in_order(any_store):
    astore = any_store  # a sessions.db file, then a PostgreSQL database
    s = await astore.create_session()
    turns = [Turn("user", [TextBlock(f"m{i}")]) for i in range(30)]
    await asyncio.gather(*(astore.append_turn(s.id, t) for t in turns))
    assert [t.text() for t in await astore.get_turns(s.id)] == [f"m{i}" for i in range(30)]


async def test_upgrade_progress_is_reported_on_the_loop_thread(tmp_path, monkeypatch):
    import sys

    from tests.core.upgrades import fake_upgrader, make_v3

    monkeypatch.setitem(sys.modules, "parley.core.store.upgrade.v3", fake_upgrader([]))
    path = tmp_path / "sessions.db"
    make_v3(path)
    seen: list[tuple[int, int, str]] = []
    astore = await AsyncStore.open(
        path, lambda d, t: seen.append((d, t, threading.current_thread().name))
    )
    try:
        await asyncio.sleep(0)
        assert seen == [(1, 1, threading.current_thread().name)]
        assert astore.migration_report == {"sessions": 1}
    finally:
        await astore.close()


async def test_upkeep_runs_on_the_worker_after_writes_only(tmp_path, monkeypatch):
    calls: list[str] = []
    original = Store.maintain

    def spy(self, budget_ms=20.0):
        calls.append(threading.current_thread().name)
        return original(self, budget_ms)

    monkeypatch.setattr(Store, "maintain", spy)
    astore = await AsyncStore.open(tmp_path / "sessions.db", maintenance_delay_s=0.05)
    try:
        await astore.list_sessions()
        await asyncio.sleep(0.2)
        assert calls == []  # reads schedule nothing
        s = await astore.create_session()
        for i in range(5):  # writes closer together than the delay postpone it
            await astore.append_turn(s.id, Turn("user", [TextBlock(f"w{i}")]))
        await asyncio.sleep(0.3)
        assert len(calls) == 1 and calls[0].startswith("parley-store")
        assert (await astore.search("w4"))[0].session_id == s.id
    finally:
        await astore.close()
    await asyncio.sleep(0.1)
    assert len(calls) == 1


async def test_a_call_after_close_raises_store_closed_and_the_store_keeps_its_rows(any_target):
    astore = await AsyncStore.open(any_target)
    s = await astore.create_session(title="kept")
    assert not astore.closed
    await astore.close()
    assert astore.closed
    with pytest.raises(StoreClosed):
        await astore.get_setting("keyboard.bindings", None)
    with pytest.raises(StoreClosed):
        await astore.append_turn(s.id, Turn("user", [TextBlock("late")]))
    reopened = open_store(any_target)
    try:
        assert reopened.get_session(s.id).title == "kept"
        assert reopened.get_session(s.id).turn_count == 0
    finally:
        reopened.close()


async def test_forwarded_calls_reach_the_open_backends_own_method(any_store, tmp_path):
    astore = any_store  # a sessions.db file, then a PostgreSQL database (PgStore overrides some)
    if astore.on_server:
        with pytest.raises(StoreError, match="pg_dump"):
            await astore.backup_to(tmp_path / "copy.db")
        assert await astore.maintain() is False
    else:
        copy = await astore.backup_to(tmp_path / "copy.db")
        assert copy.exists() and copy.stat().st_size > 0


async def test_writes_count_changes_except_app_state(any_store):
    astore = any_store
    assert astore.changes == 0
    s = await astore.create_session(title="counted")
    await astore.append_turn(s.id, Turn("user", [TextBlock("one")]))
    await astore.set_setting("compaction.auto", False)
    assert astore.changes == 3
    await astore.set_state("window.geometry", [1, 2, 3, 4])
    await astore.get_session(s.id)
    await astore.list_sessions()
    assert astore.changes == 3
    assert await astore.get_state("window.geometry") == [1, 2, 3, 4]


def test_a_forward_under_another_name_is_refused_when_the_class_is_made():
    from parley.core.store.async_store import reads

    with pytest.raises((TypeError, RuntimeError)) as raised:  # Python 3.11 wraps it in RuntimeError
        class Wrong(AsyncStore):
            get_turns = reads(Store.get_turn)
    error = raised.value.__cause__ or raised.value
    assert str(error) == "Wrong.get_turns forwards Store.get_turn"


async def test_the_whole_file_check_runs_once_a_day_after_clean_closes(tmp_path):
    """A file found sound, closed cleanly and unchanged since is checked again only a day
    later (the check reads every page); after a crash (no record of a clean close) it is
    checked at once. The time it was found sound is kept in the file's app state."""
    from parley.core.app_state import WHOLE_CHECK
    from parley.core.store.sqlite.overwrite import closed_record

    path = tmp_path / "sessions.db"
    astore = await AsyncStore.open(path)
    await astore.create_session()
    assert await astore.check_whole() is True  # a first open: checked
    recorded = (await WHOLE_CHECK.get(astore))["sound_at"]
    await astore.close()
    astore = await AsyncStore.open(path)  # closed cleanly, unchanged
    try:
        assert await astore.check_whole() is None  # found sound just now: not again
        assert await astore.check_whole(every_s=0) is True  # a day later
        assert (await WHOLE_CHECK.get(astore))["sound_at"] >= recorded
    finally:
        await astore.close()
    closed_record(path).unlink()  # as a crash leaves it
    astore = await AsyncStore.open(path)
    try:
        assert await astore.check_whole() is True
    finally:
        await astore.close()

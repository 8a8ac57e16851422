"""Two Parleys on one PostgreSQL database hear each other's changes (LISTEN/NOTIFY), on a
real server: a second process writes, the first sees the turn without reopening anything."""

from __future__ import annotations

import asyncio
import sys
import threading
from pathlib import Path

import pytest

from parley.core.content import TextBlock, Turn
from parley.core.store.async_store import AsyncStore
from parley.core.store.postgres.changes import Change, parse
from parley.core.store.postgres.store import PgStore
from tests.fakes.postgres import PostgresServer, find_bin_dir

ROOT = Path(__file__).parents[2]

OTHER_PARLEY = """
import asyncio, sys
from parley.core.content import TextBlock, Turn
from parley.core.store.async_store import AsyncStore

async def main(url, sid):
    store = await AsyncStore.open(url)
    heard = asyncio.Queue()
    await store.watch_changes(heard.put_nowait)
    print("ready", flush=True)
    while True:
        change = await asyncio.wait_for(heard.get(), 30)
        if change.table == "turns" and change.session_id == sid:
            turns = await store.get_turns(sid)
            if turns:
                break
    print("seen " + turns[-1].text(), flush=True)
    reply = Turn("assistant", [TextBlock("answer from B to: " + turns[-1].text())])
    await store.append_turn(sid, reply)
    await store.close()

asyncio.run(main(sys.argv[1], sys.argv[2]))
"""


async def _next_change(queue: asyncio.Queue[Change], session_id: str) -> Change:
    while True:
        change = await asyncio.wait_for(queue.get(), 30)
        if change.table == "turns" and change.session_id == session_id:
            return change


async def test_two_parleys_see_each_others_turns_without_a_restart(postgres_url):
    a = await AsyncStore.open(postgres_url)
    try:
        chat = await a.create_session(title="shared")
        heard: asyncio.Queue[Change] = asyncio.Queue()
        assert await a.watch_changes(heard.put_nowait) is not None
        other = await asyncio.create_subprocess_exec(
            sys.executable, "-c", OTHER_PARLEY, postgres_url, chat.id, cwd=ROOT,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
        try:
            assert await asyncio.wait_for(other.stdout.readline(), 60) == b"ready\n"
            await a.append_turn(chat.id, Turn("user", [TextBlock("question from A")]))
            line = await asyncio.wait_for(other.stdout.readline(), 30)
            assert line.decode().strip() == "seen question from A"
            await _next_change(heard, chat.id)
            texts = [t.text() for t in await a.get_turns(chat.id)]
            assert texts == ["question from A", "answer from B to: question from A"]
            assert await asyncio.wait_for(other.wait(), 30) == 0
        finally:
            if other.returncode is None:
                other.kill()
                await other.wait()
        # A's own writes were never reported back to it: every change heard was B's
        while not heard.empty():
            assert heard.get_nowait().table in ("turns", "sessions")
    finally:
        await a.close()


async def test_a_file_store_has_no_change_feed(tmp_path):
    store = await AsyncStore.open(tmp_path / "sessions.db")
    try:
        assert await store.watch_changes(lambda change: None) is None
        assert not store.on_server
    finally:
        await store.close()


def test_own_and_malformed_notices_are_left_out():
    own = "parley:abc"
    assert parse('{"table": "turns", "session": "s1", "by": "parley:xyz"}', own) == \
        Change("turns", "s1")
    assert parse('{"table": "spaces", "session": null, "by": "psql"}', own) == Change("spaces")
    assert parse('{"table": "turns", "session": "s1", "by": "parley:abc"}', own) is None
    assert parse("not json", own) is None
    assert parse('{"session": "s1"}', own) is None


def test_a_rolled_back_write_is_never_heard(postgres_url):
    writer, listener = PgStore.open_url(postgres_url), PgStore.open_url(postgres_url)
    heard: list[Change] = []
    got = threading.Event()

    def on_change(change: Change) -> None:
        heard.append(change)
        got.set()

    feed = listener.change_feed(on_change)
    try:
        chat = writer.create_session(title="x")
        assert got.wait(10)
        got.clear()
        heard.clear()
        with pytest.raises(RuntimeError):
            writer._w(lambda c: _fail(c, chat.id))
        assert not got.wait(1.0)
        writer.append_turn(chat.id, Turn("user", [TextBlock("kept")]))
        assert got.wait(10)
        assert Change("turns", chat.id) in heard
    finally:
        feed.close()
        writer.close()
        listener.close()


def _fail(con, session_id):
    from parley.core.store import turns

    turns.append(con, session_id, Turn("user", [TextBlock("rolled back")]))
    raise RuntimeError("the transaction is rolled back")


def test_the_feed_comes_back_with_the_server_and_says_so():
    bin_dir = find_bin_dir()
    if bin_dir is None:
        pytest.skip("no PostgreSQL server binaries (initdb, pg_ctl): install Debian's postgresql")
    server = PostgresServer(bin_dir).start()
    try:
        url = server.new_database()
        writer, listener = PgStore.open_url(url), PgStore.open_url(url)
        heard: list[Change] = []
        back = threading.Event()

        def on_change(change: Change) -> None:
            heard.append(change)
            if change.table == "reconnected":
                back.set()

        feed = listener.change_feed(on_change)
        try:
            assert feed.listening
            server.pause()
            server.resume()
            assert back.wait(20)
            chat = writer.create_session(title="after the restart")
            deadline = threading.Event()
            for _ in range(100):
                if Change("sessions", chat.id) in heard:
                    break
                deadline.wait(0.1)
            assert Change("sessions", chat.id) in heard
        finally:
            feed.close()
            writer.close()
            listener.close()
    finally:
        server.stop()

"""A PostgreSQL server that stops answering (a proxy that holds every byte, the sockets
left open) is noticed within the answer bound (parley.core.store.answering): calls made
meanwhile are refused at once instead of queueing behind the stuck one, a reply's save
is kept in memory instead of waiting, and once the server answers again the stuck call
finishes, the notice clears and the kept reply is written once: nothing is lost."""

from __future__ import annotations

import asyncio
import time

import pytest

from parley.core.chat.save_queue import FIRST_WAIT_S, SaveQueue
from parley.core.content import TextBlock, Turn, Usage
from parley.core.store.async_store import AsyncStore
from parley.core.store.errors import ServerNotAnswering
from parley.core.store.postgres.store import PgStore
from tests.fakes.freezing_proxy import FreezingProxy

BOUND_S = 1.0


@pytest.fixture
def proxy(postgres_server):
    p = FreezingProxy(postgres_server.port).start()
    yield p
    p.close()


async def _until(predicate, timeout: float) -> float:
    start = time.monotonic()
    while not predicate():
        assert time.monotonic() - start < timeout, "not within the bound"
        await asyncio.sleep(0.02)
    return time.monotonic() - start


async def test_a_frozen_server_is_told_calls_are_not_queued_and_nothing_is_lost(
        postgres_url, proxy):
    store = await AsyncStore.open(proxy.url_of(postgres_url), answer_s=BOUND_S)
    told: list[bool] = []
    assert store.answers is not None
    store.answers.listen(told.append)
    saves = SaveQueue(store)
    try:
        chat = await store.create_session(title="frozen")
        await store.append_turn(chat.id, Turn("user", [TextBlock("a question")]))
        proxy.freeze()
        stuck = asyncio.ensure_future(
            store.set_state("draft:x", "written while frozen"))  # waits on the server
        await asyncio.sleep(0.1)
        behind = asyncio.ensure_future(store.list_sessions())  # queued behind it
        waited = await _until(lambda: told == [False], BOUND_S + 1.0)
        assert waited >= BOUND_S - 0.3
        # queued before the notice and made after it: refused at once, in words
        with pytest.raises(ServerNotAnswering, match="has not answered"):
            await asyncio.wait_for(behind, 0.5)
        start = time.monotonic()
        with pytest.raises(ServerNotAnswering):
            await store.search("question")
        assert time.monotonic() - start < 0.2
        # a complete reply saved meanwhile is kept in memory at once, not waited for
        reply = Turn("assistant", [TextBlock("the whole answer")])
        start = time.monotonic()
        assert await saves.save(chat.id, reply, Usage(input_tokens=10, output_tokens=5)) \
            is False
        assert time.monotonic() - start < 0.5
        assert saves.holds(reply.id)
        assert not stuck.done()

        proxy.resume()
        await asyncio.wait_for(stuck, 10)
        await _until(lambda: told == [False, True], 5)
        await _until(lambda: not saves.pending(), 5)  # written as soon as it answers
        turns = await store.get_turns(chat.id)
        assert [(t.role, t.text(), t.aborted) for t in turns] == [
            ("user", "a question", False), ("assistant", "the whole answer", False)]
        session = await store.get_session(chat.id)
        assert (session.usage.input_tokens, session.usage.output_tokens) == (10, 5)  # counted once
        assert await store.get_state("draft:x") == "written while frozen"
    finally:
        proxy.resume()
        await saves.aclose()
        await store.close()


async def test_a_save_that_itself_waits_for_the_server_is_kept_and_written_once(
        postgres_url, proxy):
    store = await AsyncStore.open(proxy.url_of(postgres_url), answer_s=BOUND_S)
    saves = SaveQueue(store)
    try:
        chat = await store.create_session(title="frozen save")
        await store.append_turn(chat.id, Turn("user", [TextBlock("q")]))
        proxy.freeze()
        reply = Turn("assistant", [TextBlock("kept whole")])
        start = time.monotonic()
        assert await saves.save(chat.id, reply, Usage(input_tokens=7, output_tokens=3)) \
            is False  # its own write is the one waiting
        assert time.monotonic() - start < FIRST_WAIT_S + 1.0
        assert saves.holds(reply.id)
        await asyncio.sleep(BOUND_S)
        assert store.answers is not None and not store.answers.answering
        proxy.resume()
        await _until(lambda: not saves.pending(), 10)
        session = await store.get_session(chat.id)
        assert (session.usage.input_tokens, session.usage.output_tokens) == (7, 3)  # added once
        assert [t.text() for t in await store.get_turns(chat.id)] == ["q", "kept whole"]
    finally:
        proxy.resume()
        await saves.aclose()
        await store.close()


async def test_a_long_call_on_purpose_is_not_taken_for_a_silent_server(postgres_url):
    store = await AsyncStore.open(postgres_url, answer_s=0.2)
    try:
        told: list[bool] = []
        assert store.answers is not None
        store.answers.listen(told.append)
        pg = store.sync
        assert isinstance(pg, PgStore)
        await store._call(lambda: pg._r(lambda c: c.exec_driver_sql("SELECT pg_sleep(0.6)")),
                          long=True)
        assert told == [] and store.answers.answering
        await store._call(lambda: pg._r(lambda c: c.exec_driver_sql("SELECT pg_sleep(0.6)")))
        assert told == [False, True]  # an ordinary call that slow is: told, then cleared
    finally:
        await store.close()

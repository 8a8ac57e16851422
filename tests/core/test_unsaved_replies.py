"""A reply is kept as saved only once it is in the store complete.

Real faults on real files: a full disk (``PRAGMA max_page_count`` on the
store's own connection makes SQLite's pager return SQLITE_FULL through the
same transaction path as a full filesystem; a real tiny tmpfs where ``mount``
is allowed), and the write lock held by another *process* past the busy
timeout. On PostgreSQL: the server's own disk-full error (SQLSTATE 53100, raised
by a trigger for rows too big for the room left) and the server going away. In
each, while the fault lasts no reply counts as saved unless it is in the store
complete, new messages are refused, and once it clears the whole reply is
stored, complete, not aborted — without anything being sent again.
"""

from __future__ import annotations

import asyncio
import contextlib

import pytest

from parley.core.chat.run import ChatRunner, RunFinished, RunStarted, SavesPending, UserTurnSaving
from parley.core.chat.save_queue import SaveNews
from parley.core.content import TextBlock, Turn
from parley.core.store import AsyncStore
from parley.core.store.errors import DatabaseBusy, DiskFull, ServerDiskFull
from parley.core.store.postgres.store import PgStore
from tests.core.faults import BIG, MODEL, PG_FULL_DISK, Locker, disk_nearly_full, page_limit
from tests.core.rawdb import raw_rows
from tests.disk import fill, mount, umount
from tests.fakes.validation import validate_anthropic

REPLY = "All of this reply must be kept, word for word. " * 8  # 384 characters


async def disk_freed(store: AsyncStore) -> None:
    if not isinstance(store.sync, PgStore):
        await page_limit(store, None)
        return
    await store._call(lambda: raw_rows(  # noqa: SLF001
        store.sync, "DROP TRIGGER disk_is_full ON turns"))


async def wait_saved(runner: ChatRunner, timeout: float = 10.0) -> None:
    for _ in range(int(timeout / 0.02)):
        if not runner.saves.pending():
            return
        await asyncio.sleep(0.02)
    raise AssertionError(f"still not saved: {runner.saves.pending()}")


async def fill_wal_room(store: AsyncStore, sid: str) -> None:
    """Spend the pages left (a full disk) with small writes until one fails."""
    with contextlib.suppress(DiskFull):
        for i in range(200):
            await store.append_turn(sid, Turn("user", [TextBlock(f"filler {i} " + "z" * 3000)]))


async def test_reply_whose_save_meets_a_full_disk_is_kept_whole_and_written_later(
    any_target, chat, fake_provider
):
    store, runner = await chat(any_target)
    full, why = ((ServerDiskFull, "the disk of the PostgreSQL server is full")
                 if isinstance(store.sync, PgStore) else (DiskFull, "the disk is full"))
    sid = (await store.create_session()).id
    fake_provider.script("First answer.")
    await runner.send(sid, [TextBlock("first question")], model_ref=MODEL)
    news: list[SaveNews] = []
    runner.saves.listen(news.append)

    # Room for the question only: the journal and the final save hit the limit.
    await disk_nearly_full(store)
    fake_provider.script(BIG, token_delay_ms=1, chunk_size=2000)
    events: list = []
    reply = await runner.send(sid, [TextBlock("second question")],
                              model_ref=MODEL, on_event=events.append)
    assert reply is not None and reply.text() == BIG and not reply.aborted
    finished = next(e for e in events if isinstance(e, RunFinished))
    assert finished.saved is False  # told: not saved yet
    assert runner.saves.holds(reply.id) and isinstance(runner.saves.error, full)
    assert [n.kind for n in news] == ["kept"]
    on_disk = {t.id: t for t in await store.get_turns(sid)}
    # Not in the file complete: at most the journal's aborted prefix is.
    assert reply.id not in on_disk or on_disk[reply.id].aborted
    # Nothing new is sent or saved meanwhile; the question is refused in words.
    sent = len(fake_provider.model_requests)
    with pytest.raises(SavesPending) as refused:
        await runner.send(sid, [TextBlock("third question")], model_ref=MODEL)
    assert f"not saved yet ({why})" in refused.value.message
    with pytest.raises(SavesPending):
        await runner.retry(sid, model_ref=MODEL)
    assert len(fake_provider.model_requests) == sent
    await asyncio.sleep(0.3)  # attempts go on in the background, and fail
    assert runner.saves.holds(reply.id)

    await disk_freed(store)  # space freed
    await wait_saved(runner)
    assert news[-1].kind == "saved" and runner.saves.error is None
    saved = (await store.get_turns(sid))[-1]
    assert (saved.id, saved.text(), saved.aborted) == (reply.id, BIG, False)
    assert len(fake_provider.model_requests) == sent  # written, not asked again
    # The next request carries the whole reply (aborted turns are left out).
    fake_provider.script("Third answer.")
    assert (await runner.send(sid, [TextBlock("third question")], model_ref=MODEL)) is not None
    body = fake_provider.model_requests[-1].body
    assert validate_anthropic(body) is None
    assert BIG.strip() in str(body["messages"][-2]["content"])


async def test_reply_on_a_really_full_disk_is_written_whole_once_space_is_freed(
    tmp_path, chat, fake_provider
):
    """The reported case on a real small filesystem: no ~95-character prefix is left."""
    where = tmp_path / "disk"
    where.mkdir()
    if not mount("-t", "tmpfs", "-o", "size=4m", "tmpfs", str(where)):
        pytest.skip("needs root and mount (a real small filesystem)")
    try:
        store, runner = await chat(where / "sessions.db")
        sid = (await store.create_session(title="full disk")).id
        other = (await store.create_session(title="filler")).id
        await store.append_turn(sid, Turn("user", [TextBlock("question")]))
        filler = await asyncio.to_thread(fill, where)
        await fill_wal_room(store, other)  # the WAL's own spare room is used up too
        fake_provider.script(BIG, token_delay_ms=1, chunk_size=2000)
        reply = await runner.retry(sid, model_ref=MODEL)
        assert reply is not None and runner.saves.holds(reply.id)
        assert isinstance(runner.saves.error, DiskFull)
        for t in await store.get_turns(sid):
            assert t.role == "user" or t.aborted  # nothing counts as kept that is not whole
        with pytest.raises(SavesPending):
            await runner.send(other, [TextBlock("next")], model_ref=MODEL)
        filler.unlink()  # the person frees space
        await wait_saved(runner)
        last = (await store.get_turns(sid))[-1]
        assert (last.id, last.text(), last.aborted) == (reply.id, BIG, False)
        await runner.saves.aclose()
        await store.close()
    finally:
        umount(where)


async def test_reply_whose_save_meets_a_lock_held_past_the_busy_timeout_is_kept_and_retried(
    tmp_path, chat, fake_provider
):
    path = tmp_path / "sessions.db"
    store, runner = await chat(path, busy_timeout_ms=150)
    sid = (await store.create_session(title="titled: no title is written")).id
    lockers: list[Locker] = []
    events: list = []

    def on_event(ev) -> None:
        events.append(ev)
        if isinstance(ev, RunStarted) and not lockers:  # the question is saved: lock now
            lockers.append(Locker(path))

    fake_provider.script(REPLY, token_delay_ms=5, chunk_size=40)
    try:
        reply = await runner.send(sid, [TextBlock("question")], model_ref=MODEL,
                                  on_event=on_event)
        assert isinstance(events[0], UserTurnSaving) and events[0].turn.text() == "question"
        assert reply is not None and reply.text() == REPLY
        assert next(e for e in events if isinstance(e, RunFinished)).saved is False
        assert isinstance(runner.saves.error, DatabaseBusy)
        await asyncio.sleep(0.5)  # the lock is still held: attempts fail
        assert runner.saves.holds(reply.id)
        turns = await store.get_turns(sid)
        assert [t.text() for t in turns] == ["question"]  # nothing but the question
    finally:
        for locker in lockers:
            locker.release()
    await wait_saved(runner)
    turns = await store.get_turns(sid)
    assert [(t.text(), t.aborted) for t in turns] == [("question", False), (REPLY, False)]
    session = await store.get_session(sid)
    assert session.turn_count == 2


async def test_message_waits_for_a_short_lock_and_is_announced_before_it_is_saved(
    tmp_path, chat, fake_provider
):
    path = tmp_path / "sessions.db"
    store, runner = await chat(path, busy_timeout_ms=3000)
    sid = (await store.create_session(title="t")).id
    locker = Locker(path)
    seen: list = []
    fake_provider.script("Answer.")
    send = asyncio.ensure_future(runner.send(sid, [TextBlock("held")], model_ref=MODEL,
                                             on_event=lambda ev: seen.append(type(ev))))
    await asyncio.sleep(0.5)
    assert seen == [UserTurnSaving]  # announced, still waiting for the lock
    assert not send.done()
    await asyncio.to_thread(locker.release)
    assert (await send) is not None
    assert [t.text() for t in await store.get_turns(sid)] == ["held", "Answer."]


async def test_a_reply_arriving_while_the_postgresql_server_is_away_is_kept_then_written(
    chat, fake_provider, postgres_own_server
):
    """The same rule on PostgreSQL: the question is saved before it is sent; the reply
    that streams in after the server went away is kept whole and written once it is back."""
    from parley.core.store.errors import ServerUnreachable

    store, runner = await chat(postgres_own_server.new_database())
    sid = (await store.create_session()).id
    fake_provider.script(REPLY, token_delay_ms=40, chunk_size=16)  # ~1 s of streaming
    events: list = []
    sending = asyncio.create_task(runner.send(sid, [TextBlock("asked before it went away")],
                                              model_ref=MODEL, on_event=events.append))
    asked = len(fake_provider.model_requests)
    for _ in range(1000):  # the request is at the provider: everything before it is done
        if len(fake_provider.model_requests) > asked:
            break
        await asyncio.sleep(0.01)
    assert [t.text() for t in await store.get_turns(sid)] == ["asked before it went away"]
    await asyncio.to_thread(postgres_own_server.pause)
    try:
        reply = await sending
        assert reply is not None and reply.text() == REPLY
        finished = next(e for e in events if isinstance(e, RunFinished))
        assert finished.saved is False
        assert runner.saves.holds(reply.id)
        assert isinstance(runner.saves.error, ServerUnreachable)
        sent = len(fake_provider.model_requests)
        with pytest.raises(SavesPending) as refused:
            await runner.send(sid, [TextBlock("while it is away")], model_ref=MODEL)
        assert "PostgreSQL server cannot be reached" in refused.value.message
        assert len(fake_provider.model_requests) == sent
        with pytest.raises(ServerUnreachable):  # nor searched: said in the search window
            await store.search("asked")
    finally:
        await asyncio.to_thread(postgres_own_server.resume)
    await wait_saved(runner, timeout=30)
    turns = await store.get_turns(sid)
    assert [(t.text(), t.aborted) for t in turns] == [
        ("asked before it went away", False), (REPLY, False)]
    assert turns[-1].id == reply.id


async def test_a_title_the_store_cannot_write_does_not_stop_the_saved_question(
    chat, fake_provider, postgres_url
):
    """Between the saved question and the request the chat is titled; a passing refusal
    there (here the server's disk full, for the title only) leaves the question answered."""
    store, runner = await chat(postgres_url)
    sid = (await store.create_session()).id
    await store._call(lambda: raw_rows(store.sync, PG_FULL_DISK))  # noqa: SLF001
    await store._call(lambda: raw_rows(  # noqa: SLF001
        store.sync, "CREATE TRIGGER no_room_for_titles BEFORE UPDATE OF title ON sessions "
                    "FOR EACH ROW WHEN (OLD.title IS DISTINCT FROM NEW.title) "
                    "EXECUTE FUNCTION full_disk()"))
    fake_provider.script("Answered all the same.")
    events: list = []
    reply = await runner.send(sid, [TextBlock("a question worth a title")], model_ref=MODEL,
                              on_event=events.append)
    assert reply is not None and reply.text() == "Answered all the same."
    assert next(e for e in events if isinstance(e, RunFinished)).saved is True
    assert [t.text() for t in await store.get_turns(sid)] == [
        "a question worth a title", "Answered all the same."]
    assert (await store.get_session(sid)).title is None  # not titled, nothing else lost

"""A reply another computer's Parley is still streaming into a shared chat (two Parleys
on one real PostgreSQL database) is read as in progress (``Turn.writing_elsewhere``),
not as cut off: a message sent here meanwhile does not send it to the model as a
stopped reply, and the start-up report does not count it as interrupted. Once that
Parley is gone (a crash), the same row is a cut-off reply again, as before."""

from __future__ import annotations

import asyncio

import pytest

from parley.core.content import TextBlock, Turn, Usage
from parley.core.recovery.previous_run import interrupted_replies
from parley.core.store.postgres.store import PgStore
from parley.core.wire import STOPPED_NOTE

PARTIAL = "The first half of an answer still arriving on the laptop"


@pytest.fixture
async def here(chat, postgres_url):
    """This computer's Parley: a store, hub and run loop on the shared database
    (``tests/core/conftest.py``'s ``chat``, closed after the test)."""
    return await chat(postgres_url)


def _journal(laptop: PgStore, sid: str) -> Turn:
    """The laptop's reply as its journal writes it while it streams."""
    reply = Turn("assistant", [TextBlock(PARTIAL)], aborted=True, cut_off=True,
                 model="anthropic:claude-sonnet-4-6")
    laptop.upsert_turn(sid, reply)
    return reply


def _sent_texts(fake_provider) -> list[str]:
    body = fake_provider.requests[-1].body
    out = []
    for message in body["messages"]:
        content = message["content"]
        parts = [content] if isinstance(content, str) else [
            p.get("text", "") for p in content if isinstance(p, dict)]
        out.append(f"{message['role']}: " + " | ".join(parts))
    return out


async def test_a_reply_streaming_elsewhere_is_in_progress_and_not_sent_as_stopped(
        here, fake_provider, postgres_url):
    store, runner = here
    laptop = PgStore.open_url(postgres_url)
    try:
        sid = laptop.create_session(title="shared").id
        laptop.append_turn(sid, Turn("user", [TextBlock("asked on the laptop")]))
        reply = _journal(laptop, sid)

        seen = await store.get_turns(sid)
        assert seen[-1].id == reply.id and seen[-1].aborted and seen[-1].cut_off
        assert seen[-1].writing_elsewhere  # the laptop is connected: still streaming
        assert seen[-1].usage is None
        assert not laptop.get_turns(sid)[-1].writing_elsewhere  # its own: not elsewhere
        assert await interrupted_replies(store) == []  # no leftover of a run

        fake_provider.script("Answer here.")
        await runner.send(sid, [TextBlock("asked here meanwhile")],
                          model_ref="anthropic:claude-sonnet-4-6")
        sent = _sent_texts(fake_provider)
        assert sent == ["user: asked on the laptop | asked here meanwhile"]
        assert not any(STOPPED_NOTE in s or PARTIAL in s for s in sent)
    finally:
        laptop.close()


async def test_a_reply_whose_parley_is_gone_is_cut_off_as_before(here, fake_provider,
                                                                 postgres_url):
    store, runner = here
    laptop = PgStore.open_url(postgres_url)
    sid = laptop.create_session(title="shared").id
    laptop.append_turn(sid, Turn("user", [TextBlock("asked on the laptop")]))
    reply = _journal(laptop, sid)
    laptop.close()  # the laptop's Parley ended mid-reply (its connections are gone)

    for _ in range(50):  # the server drops a closed connection's row at once, or nearly
        last = (await store.get_turns(sid))[-1]
        if not last.writing_elsewhere:
            break
        await asyncio.sleep(0.1)
    assert last.id == reply.id and last.cut_off and not last.writing_elsewhere
    found = await interrupted_replies(store)
    assert [(f.session_id, f.kind) for f in found] == [(sid, "partial")]

    fake_provider.script("Answer here.")
    await runner.send(sid, [TextBlock("go on")], model_ref="anthropic:claude-sonnet-4-6")
    sent = _sent_texts(fake_provider)
    assert sent[1] == f"assistant: {PARTIAL}"  # answered: sent as the stopped reply it is
    assert sent[2].startswith(f"user: {STOPPED_NOTE}")


async def test_a_finished_reply_loses_its_writer(here, postgres_url):
    store, _runner = here
    laptop = PgStore.open_url(postgres_url)
    try:
        sid = laptop.create_session(title="shared").id
        laptop.append_turn(sid, Turn("user", [TextBlock("q")]))
        reply = _journal(laptop, sid)
        usage = Usage(input_tokens=3, output_tokens=9)
        done = Turn("assistant", [TextBlock(PARTIAL + " and the rest.")], id=reply.id,
                    model=reply.model, usage=usage)
        laptop.finish_turn(sid, done, usage)
        last = (await store.get_turns(sid))[-1]
        assert (last.aborted, last.cut_off, last.writing_elsewhere) == (False, False, False)
        assert last.usage is not None and last.usage.output_tokens == 9
    finally:
        laptop.close()

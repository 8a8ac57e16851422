"""A reply cut off by a failure keeps why with it (``Turn.failure``, stored in
``Turn.stop_reason``), unlike one stopped with Esc; Retry after a reply that ended
incomplete keeps it as the new answer's earlier version (``retry_incomplete``).

Every test runs on a sessions.db file and on a PostgreSQL database (``env`` below).
"""

from __future__ import annotations

import asyncio

import pytest

from parley.core.chat.regenerate import ReplySetAside, incomplete_start, retry_incomplete
from parley.core.chat.reply import failed_stop_reason
from parley.core.chat.run import ReplyUpdated, RunFailed, RunFinished, RunStarted
from parley.core.content import TextBlock, ToolResultBlock, ToolUseBlock, Turn
from parley.core.errors import ParleyError
from parley.core.providers.errors import Overloaded, StreamInterrupted
from tests.core.hubs import fake_workspace
from tests.fakes.validation import validate_anthropic

CLAUDE = "anthropic:claude-sonnet-4-6"


@pytest.fixture
async def env(tmp_path, fake_provider, any_target):
    ws = await fake_workspace(tmp_path, fake_provider, at=any_target)  # a file, then PostgreSQL
    session = await ws.store.create_session(title="Story")
    yield ws.store, ws.runner, session.id
    await ws.close()


async def cut_reply(store, runner, sid, fake_provider, kind: str = "cut") -> Turn:
    """Send a message whose reply the fake server breaks off (``kind``) after a few words;
    return the stored reply."""
    fake_provider.fail(kind, reply="Once upon a time, in a land far away", after_chars=16)
    events: list = []
    assert await runner.send(sid, [TextBlock("Tell me a story")], model_ref=CLAUDE,
                             on_event=events.append) is None
    assert any(isinstance(e, RunFailed) and e.partial is not None for e in events)
    return (await store.get_turns(sid))[-1]


async def test_a_reply_cut_by_a_broken_connection_is_stored_with_why(env, fake_provider):
    store, runner, sid = env
    reply = await cut_reply(store, runner, sid, fake_provider)
    assert reply.aborted and reply.text().startswith("Once upon")
    assert reply.failure == "connection" and reply.stop_reason == "failed:connection"
    assert not reply.cut_off  # not "Parley closed"


async def test_a_reply_cut_by_an_error_event_is_stored_with_why(env, fake_provider):
    store, runner, sid = env
    reply = await cut_reply(store, runner, sid, fake_provider, kind="mid_stream_error")
    assert reply.aborted and reply.failure == "error"


async def test_a_reply_stopped_with_esc_has_no_failure(env, fake_provider):
    store, runner, sid = env
    fake_provider.script("word " * 400, token_delay_ms=5, chunk_size=5)
    events: list = []
    task = asyncio.ensure_future(runner.send(sid, [TextBlock("Tell me a story")],
                                             model_ref=CLAUDE, on_event=events.append))
    for _ in range(400):
        await asyncio.sleep(0.01)
        if any(isinstance(e, ReplyUpdated) and "word word" in e.turn.text() for e in events):
            break
    assert runner.cancel(sid)
    assert await task is None
    reply = (await store.get_turns(sid))[-1]
    assert reply.aborted and reply.failure is None and reply.stop_reason is None


def test_the_kept_reason_names_the_failure() -> None:
    assert failed_stop_reason(StreamInterrupted("Anthropic", cause="process")) == "failed:process"
    assert failed_stop_reason(Overloaded("Anthropic")) == "failed:error"
    assert failed_stop_reason(ParleyError("Something else.")) == "failed:other"
    cut = Turn("assistant", [TextBlock("half")], aborted=True, stop_reason="failed:timeout")
    assert cut.failure == "timeout"
    assert Turn.from_json(cut.to_json()).failure == "timeout"  # Parley's JSON export keeps it
    complete = Turn("assistant", [TextBlock("all")], stop_reason="failed:timeout")
    assert complete.failure is None  # only an aborted reply was cut off
    assert Turn("assistant", [TextBlock("half")], aborted=True).failure is None  # Esc


async def test_retry_keeps_the_cut_reply_as_the_earlier_version(env, fake_provider):
    store, runner, sid = env
    cut = await cut_reply(store, runner, sid, fake_provider)
    prompt = (await store.get_turns(sid))[0]

    fake_provider.script("A whole story.")
    events: list = []
    new = await retry_incomplete(runner, sid, model_ref=CLAUDE, on_event=events.append)

    assert new is not None and new.text() == "A whole story."
    assert [t.id for t in await store.get_turns(sid)] == [prompt.id, new.id]
    tree = await store.get_tree(sid)
    assert [(t.turn.id, t.parent_id, t.on_path) for t in tree] == [
        (prompt.id, None, True), (cut.id, prompt.id, False), (new.id, prompt.id, True)]
    assert tree[1].turn.aborted and tree[1].turn.failure == "connection"  # kept as it was
    point = (await store.branches(sid)).points[new.id]
    assert (point.index, point.total, point.turn_ids) == (2, 2, (cut.id, new.id))
    assert events[0] == ReplySetAside(sid, (cut.id,))
    assert isinstance(events[1], RunStarted) and isinstance(events[-1], RunFinished)
    body = fake_provider.model_requests[-1].body
    assert validate_anthropic(body) is None
    assert [m["role"] for m in body["messages"]] == ["user"]  # the cut reply is not sent


async def test_retry_of_a_message_never_answered_sets_nothing_aside(env, fake_provider):
    store, runner, sid = env
    fake_provider.fail("server_error")
    assert await runner.send(sid, [TextBlock("Hello")], model_ref=CLAUDE) is None
    fake_provider.script("Hi.")
    events: list = []
    new = await retry_incomplete(runner, sid, model_ref=CLAUDE, on_event=events.append)
    assert new is not None and new.text() == "Hi."
    assert not any(isinstance(e, ReplySetAside) for e in events)
    assert [t.text() for t in await store.get_turns(sid)] == ["Hello", "Hi."]
    assert (await store.branches(sid)).points == {}


async def test_retry_after_tool_rounds_sets_aside_only_the_cut_step(env, fake_provider):
    store, runner, sid = env
    turns = [
        Turn("user", [TextBlock("Weather?")]),
        Turn("assistant", [ToolUseBlock("call_1", "weather", {"city": "Oslo"})], model=CLAUDE),
        Turn("user", [ToolResultBlock("call_1", (TextBlock("rain"),))]),
        Turn("assistant", [TextBlock("It ra")], model=CLAUDE, aborted=True,
             stop_reason="failed:connection"),
    ]
    for t in turns:
        await store.append_turn(sid, t)
    assert incomplete_start(turns) == 3

    fake_provider.script("It rains.")
    new = await retry_incomplete(runner, sid, model_ref=CLAUDE)
    assert new is not None
    assert [t.id for t in await store.get_turns(sid)] == [*(t.id for t in turns[:3]), new.id]
    point = (await store.branches(sid)).points[new.id]
    assert point.turn_ids == (turns[3].id, new.id)

"""The run loop against a real store and the fake provider over real HTTP.

Every test runs on a sessions.db file and on a PostgreSQL database (``env`` below).
"""

from __future__ import annotations

import asyncio
import json

import pytest

from parley.core.chat.run import (
    ReplyUpdated,
    RunCancelled,
    RunFailed,
    RunFinished,
    RunInProgress,
    RunStarted,
    SessionTitled,
    UserTurnSaving,
)
from parley.core.compaction.compact import CompactionInProgress
from parley.core.content import TextBlock, Turn
from parley.core.events import RequestEnded, RequestStarted
from parley.core.wire import STOPPED_NOTE
from tests.core.hubs import fake_workspace
from tests.fakes.validation import validate_anthropic, validate_openai


@pytest.fixture
async def env(tmp_path, fake_provider, any_target):
    ws = await fake_workspace(tmp_path, fake_provider, at=any_target)  # a file, then PostgreSQL
    session = await ws.store.create_session()
    yield ws.store, ws.hub, ws.runner, session.id
    await ws.close()


@pytest.mark.parametrize("model", ["anthropic:claude-sonnet-4-6", "openai:gpt-5"])
async def test_send_saves_user_turn_then_reply_with_usage(env, fake_provider, model):
    store, _hub, runner, sid = env
    fake_provider.script("Hello there, friend.", usage={"input_tokens": 12, "output_tokens": 5})
    events = []
    turn = await runner.send(sid, [TextBlock("Hi!")], model_ref=model, on_event=events.append)

    assert turn is not None and turn.text() == "Hello there, friend." and not turn.aborted
    turns = await store.get_turns(sid)
    assert [t.role for t in turns] == ["user", "assistant"]
    assert turns[0].text() == "Hi!"
    assert turns[1].text() == "Hello there, friend." and turns[1].model == model
    assert turns[1].usage is not None and turns[1].usage.output_tokens == 5
    session = await store.get_session(sid)
    assert session.usage.output_tokens == 5
    assert session.title == "Hi!"  # first-line fallback title
    kinds = [type(e) for e in events]
    # The message is announced before it is written (a locked file may make that wait).
    assert kinds[:2] == [UserTurnSaving, RunStarted]
    assert RunFinished in kinds and SessionTitled in kinds
    assert any(isinstance(e, ReplyUpdated) for e in events)


async def test_second_request_is_valid_and_carries_history(env, fake_provider):
    store, _hub, runner, sid = env
    fake_provider.script("one").script("two")
    await runner.send(sid, [TextBlock("first")], model_ref="anthropic:claude-sonnet-4-6")
    await runner.send(sid, [TextBlock("second")], model_ref="anthropic:claude-sonnet-4-6")
    body = fake_provider.model_requests[-1].body
    assert validate_anthropic(body) is None
    assert len(body["messages"]) == 3
    assert len(await store.get_turns(sid)) == 4


async def test_cancel_keeps_partial_as_aborted_and_next_request_leaves_it_out(env, fake_provider):
    store, _hub, runner, sid = env
    fake_provider.script("word " * 400, token_delay_ms=5, chunk_size=5)
    events: list = []
    task = asyncio.ensure_future(
        runner.send(sid, [TextBlock("Tell me a story")], model_ref="openai:gpt-5",
                    on_event=events.append)
    )
    for _ in range(400):
        await asyncio.sleep(0.01)
        if any(isinstance(e, ReplyUpdated) and "word word" in e.turn.text() for e in events):
            break
    assert runner.is_running(sid)
    assert runner.cancel(sid)
    assert await task is None
    assert not runner.is_running(sid)
    cancelled = [e for e in events if isinstance(e, RunCancelled)]
    assert cancelled and cancelled[0].partial is not None
    last = (await store.get_turns(sid))[-1]
    assert last.aborted and last.role == "assistant" and last.text().startswith("word word")
    assert len(last.text()) < len("word " * 400)

    fake_provider.script("Sure.")
    await runner.retry(sid, model_ref="openai:gpt-5")
    body = fake_provider.model_requests[-1].body
    assert validate_openai(body) is None
    sent = [m for m in body["messages"] if m["role"] != "system"]
    assert [m["role"] for m in sent] == ["user"]  # the aborted reply is not sent
    turns = await store.get_turns(sid)
    assert [t.aborted for t in turns] == [False, True, False]


async def test_a_run_stopped_before_its_request_keeps_the_message_and_asks_nothing(
        env, fake_provider):
    """Stop (Esc) right after Enter, while the message is still being saved: the run
    holds the session but has no request yet; it ends stopped as soon as it would send
    it (it used to go on: cancel found nothing to stop and said so)."""
    store, _hub, runner, sid = env
    events: list = []

    def on_event(ev: object) -> None:
        events.append(ev)
        if isinstance(ev, UserTurnSaving):
            assert runner.cancel(sid)  # before the message is written

    asked = len(fake_provider.model_requests)
    assert await runner.send(sid, [TextBlock("Hi!")], model_ref="openai:gpt-5",
                             on_event=on_event) is None
    assert [type(e) for e in events][-1] is RunCancelled and events[-1].partial is None
    assert len(fake_provider.model_requests) == asked  # no request sent
    assert [t.text() for t in await store.get_turns(sid)] == ["Hi!"]  # the message kept
    assert not runner.is_running(sid)
    fake_provider.script("Sure.")  # the next run is not stopped by that Esc
    turn = await runner.retry(sid, model_ref="openai:gpt-5")
    assert turn is not None and turn.text() == "Sure."


async def test_a_stopped_reply_goes_with_the_next_message_as_it_was(env, fake_provider):
    store, _hub, runner, sid = env
    fake_provider.script("word " * 400, token_delay_ms=5, chunk_size=5)
    events: list = []
    task = asyncio.ensure_future(
        runner.send(sid, [TextBlock("Tell me a story")], model_ref="anthropic:claude-sonnet-4-6",
                    on_event=events.append)
    )
    for _ in range(400):
        await asyncio.sleep(0.01)
        if any(isinstance(e, ReplyUpdated) and "word word" in e.turn.text() for e in events):
            break
    assert runner.cancel(sid)
    await task
    partial = (await store.get_turns(sid))[-1]
    assert partial.aborted and partial.text().startswith("word word")

    for ref in ("anthropic:claude-sonnet-4-6", "openai:gpt-5"):
        fake_provider.script("Sure.")
        await runner.send(sid, [TextBlock("Shorter please")], model_ref=ref)
        body = fake_provider.model_requests[-1].body
        sent = [m for m in body["messages"] if m["role"] != "system"]
        assert [m["role"] for m in sent][:3] == ["user", "assistant", "user"]
        assert "word word" in json.dumps(sent[1])
        assert STOPPED_NOTE in json.dumps(sent[2]) and "Shorter please" in json.dumps(sent[2])
        check = validate_anthropic if ref.startswith("anthropic") else validate_openai
        assert check(body) is None


async def test_provider_error_keeps_user_turn_and_reports_in_words(env, fake_provider):
    store, _hub, runner, sid = env
    fake_provider.fail("auth")
    events: list = []
    result = await runner.send(
        sid, [TextBlock("hello")], model_ref="anthropic:claude-sonnet-4-6",
        on_event=events.append,
    )
    assert result is None
    failed = [e for e in events if isinstance(e, RunFailed)]
    assert failed and "key" in failed[0].error.message.lower()
    assert "sk-test" not in failed[0].error.message
    turns = await store.get_turns(sid)
    assert [t.role for t in turns] == ["user"]  # saved before the request left


async def test_cut_stream_keeps_partial_as_aborted(env, fake_provider):
    store, _hub, runner, sid = env
    fake_provider.fail("cut", reply="partial answer that will be cut " * 5, after_chars=40)
    events: list = []
    await runner.send(sid, [TextBlock("go")], model_ref="anthropic:claude-sonnet-4-6",
                      on_event=events.append)
    failed = [e for e in events if isinstance(e, RunFailed)]
    assert failed
    last = (await store.get_turns(sid))[-1]
    assert last.role == "assistant" and last.aborted and last.text()


async def test_second_run_in_same_session_is_rejected(env, fake_provider):
    store, _hub, runner, sid = env
    fake_provider.script("slow " * 50, token_delay_ms=5)
    task = asyncio.ensure_future(
        runner.send(sid, [TextBlock("a")], model_ref="anthropic:claude-sonnet-4-6")
    )
    await asyncio.sleep(0.05)
    with pytest.raises(RunInProgress):
        await runner.send(sid, [TextBlock("b")], model_ref="anthropic:claude-sonnet-4-6")
    await task
    assert [t.text() for t in await store.get_turns(sid) if t.role == "user"] == ["a"]


async def test_events_at_run_boundaries(env, fake_provider):
    _store, _hub, runner, sid = env
    seen: list[RequestStarted | RequestEnded] = []
    runner.events.on(RequestStarted, seen.append)
    runner.events.on(RequestEnded, seen.append)
    fake_provider.script("ok")
    await runner.send(sid, [TextBlock("x")], model_ref="anthropic:claude-sonnet-4-6")
    assert seen == [RequestStarted(sid, "anthropic:claude-sonnet-4-6"),
                    RequestEnded(sid, "ok", (0, 2))]


async def test_streaming_reply_is_journalled_before_it_completes(env, fake_provider):
    store, _hub, runner, sid = env
    fake_provider.script("chunk " * 200, token_delay_ms=5, chunk_size=6)
    task = asyncio.ensure_future(
        runner.send(sid, [TextBlock("q")], model_ref="anthropic:claude-sonnet-4-6")
    )
    journalled = None
    for _ in range(300):
        await asyncio.sleep(0.01)
        turns = await store.get_turns(sid)
        if len(turns) == 2:
            journalled = turns[1]
            break
    await task
    assert journalled is not None and journalled.aborted and journalled.text()
    final = (await store.get_turns(sid))[-1]
    assert not final.aborted and final.text() == "chunk " * 200


async def test_claim_says_whether_a_run_or_a_compaction_holds_the_session(env, fake_provider):
    store, _hub, runner, sid = env
    runner.claim(sid, "compaction")
    with pytest.raises(CompactionInProgress):
        await runner.send(sid, [TextBlock("a")], model_ref="anthropic:claude-sonnet-4-6")
    with pytest.raises(CompactionInProgress):
        await runner.compact(sid, keep_turns=0)
    runner.release(sid)
    runner.claim(sid)
    with pytest.raises(RunInProgress):
        await runner.compact(sid, keep_turns=0)
    runner.release(sid)
    assert not runner.is_running(sid) and await store.get_turns(sid) == []
    assert fake_provider.requests == []


async def test_wait_released_returns_when_the_holder_lets_go_and_waits_again_if_retaken(
        env, fake_provider):
    store, _hub, runner, sid = env
    await asyncio.wait_for(runner.wait_released(sid), 1)  # nothing holds it: at once
    runner.claim(sid, "compaction")
    assert runner.holder(sid) == "compaction"
    waiter = asyncio.ensure_future(runner.wait_released(sid))
    await asyncio.sleep(0.05)
    assert not waiter.done()
    runner.release(sid)
    runner.claim(sid)  # taken again at once (a run): still held
    await asyncio.sleep(0.05)
    assert not waiter.done() and runner.holder(sid) == "run"
    runner.release(sid)
    await asyncio.wait_for(waiter, 1)
    assert runner.holder(sid) is None


@pytest.mark.parametrize("model", ["anthropic:claude-sonnet-4-6", "openai:gpt-5"])
async def test_a_reply_stopped_at_the_output_limit_keeps_that_reason(env, fake_provider, model):
    """Anthropic ``stop_reason: max_tokens`` / OpenAI ``finish_reason: length``: kept with
    the turn (in its usage's stored JSON), read back, exported and copied to a fork."""
    store, _hub, runner, sid = env
    fake_provider.script("A long answer that stops in the mid", stop_reason="max_tokens")
    turn = await runner.send(sid, [TextBlock("Tell me everything")], model_ref=model)
    assert turn is not None and turn.stop_reason == "max_tokens" and not turn.aborted
    fake_provider.script("A short answer.")
    done = await runner.send(sid, [TextBlock("Briefly?")], model_ref=model)
    assert done is not None and done.stop_reason is None

    cut, complete = [t for t in await store.get_turns(sid) if t.role == "assistant"]
    assert cut.stop_reason == "max_tokens" and cut.usage is not None
    assert cut.usage.output_tokens > 0 and complete.stop_reason is None
    assert Turn.from_json(cut.to_json()) == cut
    fork = await store.fork(sid, cut.id)
    assert (await store.get_turns(fork.id))[-1].stop_reason == "max_tokens"

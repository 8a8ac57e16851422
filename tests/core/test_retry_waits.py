"""A request waited out and sent again is told, not hidden: ``RetryWaiting`` from the run
loop (real sessions.db, the real SDKs against the fake provider server's 429s)."""

from __future__ import annotations

import asyncio
import time

import pytest

from parley.core.chat.run import RetryWaiting, RunCancelled, RunFinished
from parley.core.content import TextBlock
from parley.core.providers.errors import RateLimited
from parley.core.providers.retry import RetryPolicy, RetryWait, retry_waits, stream_with_retries
from tests.core.hubs import fake_workspace

SONNET = "anthropic:claude-sonnet-4-6"


@pytest.fixture
async def env(tmp_path, fake_provider):
    ws = await fake_workspace(tmp_path, fake_provider,
                              retry=RetryPolicy(max_retries=2, max_retry_after_s=60))
    session = await ws.store.create_session()
    yield ws.store, ws.runner, session.id
    await ws.close()


@pytest.mark.parametrize("model", [SONNET, "openai:gpt-5"])
async def test_a_rate_limit_wait_is_announced_with_its_length_before_the_reply(
    env, fake_provider, model
):
    store, runner, sid = env
    fake_provider.fail("rate_limit", retry_after=0.3)
    fake_provider.script("Hello after the wait.")
    events: list = []
    turn = await runner.send(sid, [TextBlock("hi")], model_ref=model, on_event=events.append)
    assert turn is not None and turn.text() == "Hello after the wait."
    waits = [e for e in events if isinstance(e, RetryWaiting)]
    assert len(waits) == 1
    (wait,) = waits
    assert wait.session_id == sid and wait.rate_limited and wait.attempt == 1
    assert wait.seconds == pytest.approx(0.3, abs=0.01)
    assert "rate-limiting" in wait.message
    kinds = [type(e).__name__ for e in events]
    assert kinds.index("RetryWaiting") < kinds.index("ReplyUpdated") < kinds.index("RunFinished")


async def test_stopping_during_the_wait_ends_it_and_keeps_the_message(env, fake_provider):
    store, runner, sid = env
    fake_provider.fail("rate_limit", retry_after=30)
    events: list = []
    task = asyncio.ensure_future(
        runner.send(sid, [TextBlock("hi")], model_ref=SONNET, on_event=events.append))
    for _ in range(500):
        await asyncio.sleep(0.01)
        if any(isinstance(e, RetryWaiting) for e in events):
            break
    started = time.monotonic()
    assert runner.cancel(sid)
    assert await task is None
    assert time.monotonic() - started < 2  # not the 30 s wait
    assert any(isinstance(e, RunCancelled) for e in events)
    assert not any(isinstance(e, RunFinished) for e in events)
    assert [t.role for t in await store.get_turns(sid)] == ["user"]


async def test_the_listener_is_only_for_the_block_it_was_set_in():
    told: list[RetryWait] = []
    calls = 0

    async def attempt():
        nonlocal calls
        calls += 1
        if calls == 1:
            raise RateLimited("Fake", retry_after_s=0.01)
        yield "ok"

    async def slept(_s: float) -> None:
        return None

    policy = RetryPolicy(max_retries=1)
    with retry_waits(told.append):
        assert [x async for x in stream_with_retries(attempt, policy, slept)] == ["ok"]
    assert [(w.seconds, w.attempt, w.rate_limited) for w in told] == [(0.01, 1, True)]
    calls = 0
    assert [x async for x in stream_with_retries(attempt, policy, slept)] == ["ok"]
    assert len(told) == 1  # outside the block nobody is told

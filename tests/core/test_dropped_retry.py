"""Parley's one automatic retry of a reply (``parley.core.providers.retry``, the real
policy: two more tries after a short backoff) is never silent, and never replaces what
arrived. A stream that drops before any of the reply came is sent again and announced as
``RetryWaiting(dropped=True)``; one that drops after text is not sent again: the text is
kept (the reply cut off), and Retry is the person's. Real sessions.db, real SDKs, the fake
provider server cutting its stream."""

from __future__ import annotations

import pytest

from parley.core.chat.run import ReplyUpdated, RetryWaiting, RunFailed, RunFinished
from parley.core.content import TextBlock
from parley.core.providers.retry import RetryPolicy
from tests.core.hubs import fake_workspace

STORY = "Once upon a time, in a land far away, there lived a fox"
#: The window's policy (``RetryPolicy()``: two more tries), with waits short for the test.
POLICY = RetryPolicy(max_retries=2, initial_delay_s=0.05, max_delay_s=0.1)


@pytest.fixture
async def env(tmp_path, fake_provider):
    ws = await fake_workspace(tmp_path, fake_provider, retry=POLICY)
    session = await ws.store.create_session(title="Story")
    yield ws.store, ws.runner, session.id
    await ws.close()


@pytest.mark.parametrize("model", ["anthropic:claude-sonnet-4-6", "openai:gpt-5"])
async def test_a_stream_dropped_before_the_reply_is_sent_again_and_says_so(
        env, fake_provider, model):
    store, runner, sid = env
    fake_provider.fail("cut", reply=STORY, after_chars=0)  # the connection drops at once
    fake_provider.script("A whole story.")
    before = len(fake_provider.model_requests)
    events: list = []
    turn = await runner.send(sid, [TextBlock("Tell me a story")], model_ref=model,
                             on_event=events.append)
    assert turn is not None and turn.text() == "A whole story."
    assert len(fake_provider.model_requests) - before == 2
    (wait,) = [e for e in events if isinstance(e, RetryWaiting)]
    assert wait.dropped and not wait.rate_limited and wait.attempt == 1
    kinds = [type(e) for e in events]
    assert kinds.index(RetryWaiting) < kinds.index(ReplyUpdated) < kinds.index(RunFinished)
    assert [t.text() for t in await store.get_turns(sid)] == ["Tell me a story",
                                                             "A whole story."]


@pytest.mark.parametrize("model", ["anthropic:claude-sonnet-4-6", "openai:gpt-5"])
async def test_a_stream_dropped_after_text_is_not_sent_again_and_keeps_the_text(
        env, fake_provider, model):
    store, runner, sid = env
    fake_provider.fail("cut", reply=STORY, after_chars=20)
    fake_provider.script("A whole story.")  # would replace the cut one, were it retried
    before = len(fake_provider.model_requests)
    events: list = []
    assert await runner.send(sid, [TextBlock("Tell me a story")], model_ref=model,
                             on_event=events.append) is None
    assert len(fake_provider.model_requests) - before == 1
    assert not [e for e in events if isinstance(e, RetryWaiting)]
    (failed,) = [e for e in events if isinstance(e, RunFailed)]
    assert failed.partial is not None and failed.partial.text().startswith(STORY[:20])
    last = (await store.get_turns(sid))[-1]
    assert last.role == "assistant" and last.aborted and last.text().startswith(STORY[:20])
    assert "What arrived is kept" in failed.error.message


async def test_a_rate_limit_wait_is_not_a_dropped_connection(env, fake_provider):
    _store, runner, sid = env
    fake_provider.fail("rate_limit", retry_after=0.1)
    fake_provider.script("Hello.")
    events: list = []
    await runner.send(sid, [TextBlock("hi")], model_ref="anthropic:claude-sonnet-4-6",
                      on_event=events.append)
    (wait,) = [e for e in events if isinstance(e, RetryWaiting)]
    assert wait.rate_limited and not wait.dropped

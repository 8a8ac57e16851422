"""A compatible server's stream that ends before its first chunk is read again, unstreamed.

llama-cpp-python 0.3's server answers a streamed prompt over its window with HTTP 200 and
an empty stream (the reason only in its own log); the same request unstreamed gets HTTP
400 ``context_length_exceeded``. Parley resends such a request once without streaming:
a refusal is a context overflow (never "the connection broke off… what arrived is kept"),
a whole reply is used as the answer. Real SDK, the fake server on 127.0.0.1.
"""

from __future__ import annotations

import pytest

from parley.core.providers.base import Stop, TextDelta, UsageUpdate
from parley.core.providers.errors import ContextOverflow, StreamInterrupted
from parley.core.providers.retry import RetryPolicy
from tests.core.hubs import fake_workspace
from tests.core.local_model import TINY, request

#: Retries on, as in the app: an overflow must not be retried, an empty stream is resent once.
RETRY = RetryPolicy(max_retries=3, initial_delay_s=0.01, max_delay_s=0.01)


@pytest.fixture
async def hub(tmp_path, fake_provider):
    ws = await fake_workspace(tmp_path, fake_provider, retry=RETRY, compatible={
        "name": "Local server", "provider_id": "local", "default_model": TINY})
    try:
        yield ws.hub
    finally:
        await ws.close()


async def test_empty_stream_over_the_window_is_an_overflow_naming_the_window(hub, fake_provider):
    fake_provider.windows.llamacpp(2_048, overflow="llamacpp_python")
    fake_provider.openai_models = [{"id": TINY}]
    provider, model = hub.resolve(f"local:{TINY}")

    with pytest.raises(ContextOverflow) as caught:
        _ = [e async for e in provider.stream(request(model, "word " * 4_000))]

    assert caught.value.maximum == 2_048 and caught.value.tokens > 2_048
    assert "too long for the model" in caught.value.message
    sent = fake_provider.model_requests
    assert [r.body.get("stream") for r in sent] == [True, False]  # resent once, not retried
    assert "stream_options" not in sent[1].body
    assert sent[1].body["messages"] == sent[0].body["messages"]


async def test_empty_stream_whose_resend_answers_gives_that_answer(hub, fake_provider):
    fake_provider.windows.empty_streams = 1
    fake_provider.openai_models = [{"id": TINY}]
    fake_provider.script("Ten.")
    provider, model = hub.resolve(f"local:{TINY}")

    events = [e async for e in provider.stream(request(model, "Count to 10."))]

    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "Ten."
    assert isinstance(events[-1], Stop) and events[-1].reason == "end_turn"
    assert [e for e in events if isinstance(e, UsageUpdate)][0].usage.output_tokens > 0
    assert [r.body.get("stream") for r in fake_provider.model_requests] == [True, False]


async def test_empty_stream_from_openai_says_nothing_arrived(hub, fake_provider):
    fake_provider.windows.empty_streams = 9
    provider, model = hub.resolve("openai:gpt-5")

    with pytest.raises(StreamInterrupted) as caught:
        _ = [e async for e in provider.stream(request(model, "Hello?"))]

    assert caught.value.nothing_arrived
    assert "What arrived is kept" not in caught.value.message
    assert "before sending any of it" in caught.value.message
    assert all(r.body.get("stream") for r in fake_provider.model_requests)  # OpenAI: no resend


async def test_a_stream_from_anthropic_cut_before_any_text_says_nothing_arrived(
    hub, fake_provider,
):
    """Trial 20d: a cut before the first text said "What arrived is kept" with nothing kept."""
    fake_provider.fail("cut", reply="Hello there", after_chars=0, times=9)
    provider, model = hub.resolve("anthropic:claude-sonnet-4-6")

    with pytest.raises(StreamInterrupted) as caught:
        _ = [e async for e in provider.stream(request(model, "Hello?"))]

    assert caught.value.nothing_arrived
    assert "What arrived is kept" not in caught.value.message


async def test_a_stream_from_anthropic_cut_after_some_text_says_it_is_kept(hub, fake_provider):
    fake_provider.fail("cut", reply="Hello there, a longer reply", after_chars=8, times=9)
    provider, model = hub.resolve("anthropic:claude-sonnet-4-6")
    events = []

    with pytest.raises(StreamInterrupted) as caught:
        async for event in provider.stream(request(model, "Hello?")):
            events.append(event)

    assert any(isinstance(e, TextDelta) and e.text for e in events)
    assert not caught.value.nothing_arrived
    assert "What arrived is kept" in caught.value.message

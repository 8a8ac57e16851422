"""A provider's over-window refusal, in each of its forms, is a context overflow: the chat is
compacted and the request sent once more, and the window the refusal named is remembered.

Anthropic's "prompt is too long", OpenAI's ``context_length_exceeded`` and llama.cpp's stream
that aborts with ``exceed_context_size_error`` (its non-standard ``error:`` line, which used to
end as "the connection broke off… send again"). Real sessions.db, real SDKs, the fake server.
"""

from __future__ import annotations

import pytest

from parley.core.chat.run import RunFailed
from parley.core.compaction.compact import CompactPromptTooLongError
from parley.core.wire import SUMMARY_HEADING
from tests.core.compaction_support import GPT, SONNET, SUMMARY, blocks_text, validate
from tests.core.hubs import fake_hub
from tests.core.local_model import LOCAL, TINY, local_env, send


@pytest.fixture
async def env(tmp_path, fake_provider):
    async with local_env(tmp_path, fake_provider) as opened:
        yield opened


def assert_compacted_then_answered(fake_provider, reply, events) -> None:
    assert reply is not None, [e for e in events if isinstance(e, RunFailed)]
    assert not [e for e in events if isinstance(e, RunFailed)]
    final = fake_provider.model_requests[-1]
    sent = [m for m in final.body["messages"] if m["role"] != "system"]
    assert blocks_text(sent[0]).startswith(SUMMARY_HEADING)
    assert validate(final) is None


@pytest.mark.parametrize("style", ["llamacpp_line", "llamacpp_data", "llamacpp_400"])
async def test_llamacpp_refusal_is_compacted_and_retried(env, fake_provider, style):
    # The server's window (7,000) is not told anywhere (no /props): Parley assumes 8,192
    # and learns the real one from the refusal. The server counts twice Parley's estimate.
    fake_provider.windows.enforce_windows = True
    fake_provider.windows.token_scale = 2.0
    fake_provider.windows.openai_window = 7_000
    fake_provider.windows.openai_overflow = style
    fake_provider.openai_models = [{"id": TINY}]
    await env.seed(8, words=140)  # about 3,700 tokens by the estimate (under 0.8 × 8,192)

    reply, events = await send(env, "And now?", LOCAL)

    assert fake_provider.windows.refused == 1  # one refusal, then compaction and one retry
    assert_compacted_then_answered(fake_provider, reply, events)
    (row,) = await env.store.list_compactions(env.sid)
    assert row.reason == "auto"
    info = env.hub.model_info(LOCAL)
    assert (info.context_window, info.window_source) == (7_000, "provider")
    for req in fake_provider.model_requests:  # max_tokens on every request, summary included
        assert req.body["max_tokens"] >= 1


async def test_llama_cpp_python_empty_stream_is_compacted_retried_and_learnt(
        env, tmp_path, fake_provider):
    # llama-cpp-python's server: no /props, an over-window stream is HTTP 200 and empty; the
    # same request unstreamed is refused with "maximum context length is 7000 tokens".
    fake_provider.windows.llamacpp(7_000, overflow="llamacpp_python")
    fake_provider.windows.token_scale = 2.0
    fake_provider.openai_models = [{"id": TINY}]
    await env.hub.fetch_model_info(LOCAL)  # the list is kept, with the safe default
    assert env.hub.model_info(LOCAL).window_source == "default"
    await env.seed(8, words=140)

    reply, events = await send(env, "And now?", LOCAL)

    assert fake_provider.windows.refused == 2  # the empty stream and its unstreamed resend
    assert_compacted_then_answered(fake_provider, reply, events)
    streamed = [r.body.get("stream") for r in fake_provider.model_requests]
    assert streamed[:2] == [True, False] and streamed.count(False) == 1
    info = env.hub.model_info(LOCAL)
    assert (info.context_window, info.window_source) == (7_000, "provider")
    await env.hub.aclose()  # a restart: a new hub on the same sessions.db keeps the window
    again = await fake_hub(env.store, tmp_path, fake_provider)
    try:
        info = again.model_info(LOCAL)
        assert (info.context_window, info.window_source) == (7_000, "provider")
    finally:
        await again.aclose()


async def test_openai_context_length_exceeded_is_compacted_and_retried(env, fake_provider):
    fake_provider.windows.enforce_windows = True
    fake_provider.windows.token_scale = 2.0
    fake_provider.windows.openai_window = 7_000  # GPT-5 by the catalog: 400k
    fake_provider.windows.openai_overflow = "openai"
    await env.seed(8, words=140)

    reply, events = await send(env, "And now?", GPT)

    assert fake_provider.windows.refused == 1
    assert_compacted_then_answered(fake_provider, reply, events)
    assert env.hub.model_info(GPT).context_window == 7_000


async def test_anthropic_prompt_too_long_is_compacted_and_retried(env, fake_provider):
    await env.seed(6, words=20)
    fake_provider.fail("prompt_too_long", tokens=212_000, maximum=200_000)

    reply, events = await send(env, "And now?", SONNET)

    assert_compacted_then_answered(fake_provider, reply, events)
    refused, *rest = fake_provider.model_requests
    assert len(rest) == 2  # the summary, then the one retry (no identical resend first)
    info = env.hub.model_info(SONNET)
    assert (info.context_window, info.window_source) == (200_000, "provider")


async def test_refused_again_after_compaction_is_said_in_words(env, fake_provider):
    await env.seed(6, words=20)
    fake_provider.fail("prompt_too_long").script(f"<summary>{SUMMARY}</summary>")
    fake_provider.fail("prompt_too_long")

    reply, events = await send(env, "And now?", SONNET)

    assert reply is None
    (failed,) = [e for e in events if isinstance(e, RunFailed)]
    assert isinstance(failed.error, CompactPromptTooLongError)
    assert "still too long" in failed.error.message and "Nothing was lost" in failed.error.message
    assert "connection" not in failed.error.message
    assert len(fake_provider.model_requests) == 3  # refused, summary, refused: then it stops


async def test_a_first_message_over_the_window_is_said_to_be_too_long_itself(env, fake_provider):
    """llama-cpp-python started with ``--n_ctx 2048`` (no /props): a first message of about
    4,600 tokens is refused; there is nothing to compact, so Parley says the message itself
    is too long for the window, with the numbers (not "even after compacting it"), asks for
    no summary, and keeps the message."""
    fake_provider.windows.llamacpp(2_048, overflow="llamacpp_python")
    fake_provider.openai_models = [{"id": TINY}]
    text = " ".join(f"word{i}" for i in range(4_600))

    reply, events = await send(env, text, LOCAL)

    assert reply is None
    (failed,) = [e for e in events if isinstance(e, RunFailed)]
    message = failed.error.message
    # (issue 30: the refusal's count shows the window too small for the message itself)
    assert message.startswith("The newest message is too long for ")
    assert "context window holds 2,048 tokens" in message and "compacting" not in message
    assert "refused it, so it was not answered" in message
    assert isinstance(failed.error, CompactPromptTooLongError)  # shown as before (Edit…)
    assert all("summary" not in str(r.body).lower()[:2000] for r in fake_provider.model_requests)
    stored = await env.store.get_turns(env.sid)
    assert stored and stored[-1].text() == text  # kept in the chat
    assert env.hub.model_info(LOCAL).context_window == 2_048  # learnt from the refusal

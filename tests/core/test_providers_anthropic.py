"""The Anthropic adapter through the real SDK against the fake provider server."""

from __future__ import annotations

import json
import time

import pytest

from parley.core.content import TextBlock, ToolResultBlock, ToolUseBlock, Turn
from parley.core.providers.anthropic_provider import AnthropicProvider
from parley.core.providers.base import (
    ChatRequest,
    Stop,
    TextDelta,
    ThinkingDelta,
    ThinkingSignature,
    ToolSpec,
    ToolUseInputDelta,
    ToolUseStart,
    ToolUseStop,
    UsageUpdate,
)
from parley.core.providers.errors import (
    AuthenticationFailed,
    ContextOverflow,
    ModelNotFound,
    NetworkError,
    Overloaded,
    PermissionDenied,
    RateLimited,
    ServerError,
    StreamInterrupted,
)
from parley.core.providers.retry import RetryPolicy

KEY = "sk-ant-fake.SECRETSECRETSECRET-0123456789"
MODEL = "claude-haiku-4-5"
FAST = RetryPolicy(max_retries=2, initial_delay_s=0.001, max_delay_s=0.002, max_retry_after_s=5)


@pytest.fixture
def sleeps() -> list[float]:
    return []


@pytest.fixture
async def claude(fake_provider, sleeps):
    async def sleep(seconds: float) -> None:
        sleeps.append(seconds)

    provider = AnthropicProvider(KEY, fake_provider.anthropic_base_url, retry=FAST, sleep=sleep)
    yield provider
    await provider.aclose()


def user(text: str) -> Turn:
    return Turn("user", [TextBlock(text)])


def request(*turns: Turn, **kw) -> ChatRequest:
    return ChatRequest(MODEL, list(turns or [user("Hello?")]), **kw)


async def collect(provider, req):
    return [e async for e in provider.stream(req)]


def text_of(events) -> str:
    return "".join(e.text for e in events if isinstance(e, TextDelta))


async def test_streams_text_and_ends_with_usage_and_stop(fake_provider, claude):
    fake_provider.script("Hello from the fake model", chunk_size=5)
    events = await collect(claude, request(system="Be brief."))
    assert text_of(events) == "Hello from the fake model"
    assert len([e for e in events if isinstance(e, TextDelta)]) == 5
    assert isinstance(events[0], UsageUpdate)  # input tokens known before the text
    assert events[-1] == Stop("end_turn")
    final = [e for e in events if isinstance(e, UsageUpdate)][-1].usage
    assert final.output_tokens > 0 and final.total_input_tokens > 0
    assert final.cost_usd > 0
    body = fake_provider.last_request.body
    assert body["model"] == MODEL and body["stream"] is True
    assert body["system"] == [
        {"type": "text", "text": "Be brief.", "cache_control": {"type": "ephemeral"}}
    ]
    assert body["max_tokens"] == 32_000


async def test_thinking_and_signature_come_before_the_text(fake_provider, claude):
    fake_provider.script("Answer", thinking="Step one. Step two.", signature="sig-xyz")
    events = await collect(claude, request(thinking_budget=4000, temperature=0.3))
    thinking = "".join(e.text for e in events if isinstance(e, ThinkingDelta))
    assert thinking == "Step one. Step two."
    kinds = [type(e).__name__ for e in events if not isinstance(e, UsageUpdate)]
    assert kinds.index("ThinkingSignature") < kinds.index("TextDelta")
    assert ThinkingSignature("sig-xyz") in events
    body = fake_provider.last_request.body
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 4000}
    assert body["max_tokens"] > 4000
    assert "temperature" not in body  # the API takes no temperature with thinking


async def test_tool_call_streams_its_input_json(fake_provider, claude):
    args = {"city": "Paris", "days": 3, "units": "metric"}
    fake_provider.script(
        "Let me look.",
        tool_calls=[{"name": "forecast", "input": args, "id": "toolu_abc"}],
        chunk_size=6,
    )
    tool = ToolSpec("forecast", "Weather forecast", {"type": "object"})
    events = await collect(claude, request(tools=[tool]))
    assert ToolUseStart("toolu_abc", "forecast") in events
    pieces = [e.partial_json for e in events if isinstance(e, ToolUseInputDelta)]
    assert len(pieces) > 2 and json.loads("".join(pieces)) == args
    assert ToolUseStop("toolu_abc", args) in events
    assert events[-1] == Stop("tool_use")
    sent = fake_provider.last_request.body["tools"]
    assert sent[0]["name"] == "forecast" and sent[0]["input_schema"] == {"type": "object"}
    assert sent[-1]["cache_control"] == {"type": "ephemeral"}  # no system prompt: last tool


async def test_tool_results_go_back_paired(fake_provider, claude):
    turns = [
        user("Weather?"),
        Turn("assistant", [ToolUseBlock("toolu_1", "forecast", {"city": "Oslo"})]),
        Turn("user", [ToolResultBlock("toolu_1", (TextBlock("Snow"),))]),
    ]
    fake_provider.script("It snows.")
    events = await collect(claude, request(*turns))
    assert text_of(events) == "It snows."
    sent = fake_provider.last_request.body["messages"]
    assert sent[2]["content"][0]["type"] == "tool_result"
    assert sent[2]["content"][0]["tool_use_id"] == "toolu_1"


async def test_second_request_reads_the_first_prefix_from_the_cache(fake_provider, claude):
    system = "You are a careful assistant. " * 30
    first = [user("First question, with enough words to matter. " * 10)]
    fake_provider.script("First answer.")
    events1 = await collect(claude, request(*first, system=system))
    usage1 = [e for e in events1 if isinstance(e, UsageUpdate)][-1].usage
    assert usage1.cache_write_tokens > 0 and usage1.cache_read_tokens == 0
    raw1 = fake_provider.last_request.raw
    body1 = fake_provider.last_request.body

    second = [*first, Turn("assistant", [TextBlock("First answer.")]), user("Second question?")]
    fake_provider.script("Second answer.")
    events2 = await collect(claude, request(*second, system=system))
    usage2 = [e for e in events2 if isinstance(e, UsageUpdate)][-1].usage
    body2 = fake_provider.last_request.body
    raw2 = fake_provider.last_request.raw

    # The earlier prefix, breakpoint included, is byte-identical in the second request ...
    n = len(body1["messages"])
    assert body2["messages"][:n] == body1["messages"]
    prefix = json.dumps(body1["messages"], separators=(",", ":"))[:-1].encode()
    assert prefix in raw2 and prefix in raw1
    assert body2["messages"][0]["content"][-1]["cache_control"] == {"type": "ephemeral"}
    # ... the moving end is marked too ...
    assert body2["messages"][-1]["content"][-1]["cache_control"] == {"type": "ephemeral"}
    # ... so everything the first request wrote is read back from the cache.
    assert usage2.cache_read_tokens == usage1.cache_write_tokens
    assert usage2.cache_write_tokens > 0


async def test_hour_cache_ttl_is_asked_for(fake_provider):
    provider = AnthropicProvider(KEY, fake_provider.anthropic_base_url, cache_ttl_s=3600)
    try:
        await collect(provider, request(system="S"))
    finally:
        await provider.aclose()
    assert fake_provider.last_request.body["system"][0]["cache_control"]["ttl"] == "1h"


async def test_no_cache_marks_when_caching_is_off(fake_provider, claude):
    await collect(claude, request(system="S", cache=False))
    assert b"cache_control" not in fake_provider.last_request.raw


# --- errors --------------------------------------------------------------


async def test_bad_key_is_authentication_failed_without_the_key(fake_provider, claude, sleeps):
    fake_provider.fail("auth")
    with pytest.raises(AuthenticationFailed) as info:
        await collect(claude, request())
    assert "Anthropic" in str(info.value) and "Settings" in str(info.value)
    assert KEY not in str(info.value) and KEY not in repr(info.value)
    assert sleeps == [] and len(fake_provider.model_requests) == 1  # never retried


async def test_permission_denied(fake_provider, claude):
    fake_provider.fail("permission")
    with pytest.raises(PermissionDenied):
        await collect(claude, request())


async def test_missing_key_fails_before_any_request(fake_provider):
    provider = AnthropicProvider(None, fake_provider.anthropic_base_url)
    with pytest.raises(AuthenticationFailed) as info:
        await collect(provider, request())
    assert info.value.missing and fake_provider.requests == []


async def test_rate_limit_waits_for_retry_after_then_succeeds(fake_provider, claude, sleeps):
    fake_provider.fail("rate_limit", retry_after=1.5)
    fake_provider.script("Made it")
    events = await collect(claude, request())
    assert text_of(events) == "Made it"
    assert sleeps == [1.5]
    assert len(fake_provider.model_requests) == 2


async def test_rate_limit_with_a_long_retry_after_is_not_waited_for(fake_provider, claude, sleeps):
    fake_provider.fail("rate_limit", retry_after=120)
    with pytest.raises(RateLimited) as info:
        await collect(claude, request())
    assert info.value.retry_after_s == 120 and "2 min" in str(info.value)
    assert sleeps == [] and len(fake_provider.model_requests) == 1


async def test_rate_limit_gives_up_after_max_retries(fake_provider, claude, sleeps):
    fake_provider.fail("rate_limit", retry_after=1, times=3)
    with pytest.raises(RateLimited):
        await collect(claude, request())
    assert sleeps == [1.0, 1.0] and len(fake_provider.model_requests) == 3


async def test_overloaded_529_is_retried_with_backoff(fake_provider, claude, sleeps):
    fake_provider.fail("overloaded", times=2)
    fake_provider.script("Finally")
    events = await collect(claude, request())
    assert text_of(events) == "Finally"
    assert len(sleeps) == 2 and 0 < sleeps[0] <= sleeps[1] <= FAST.max_delay_s


async def test_overloaded_every_time(fake_provider, claude):
    fake_provider.fail("overloaded", times=3)
    with pytest.raises(Overloaded) as info:
        await collect(claude, request())
    assert info.value.status == 529


async def test_server_error(fake_provider, claude):
    fake_provider.fail("server_error", times=3)
    with pytest.raises(ServerError):
        await collect(claude, request())
    assert len(fake_provider.model_requests) == 3


async def test_prompt_too_long_is_context_overflow_and_not_retried(fake_provider, claude):
    fake_provider.fail("prompt_too_long", tokens=212_345, maximum=200_000)
    with pytest.raises(ContextOverflow) as info:
        await collect(claude, request())
    assert (info.value.tokens, info.value.maximum) == (212_345, 200_000)
    assert "212,345" in str(info.value)
    assert len(fake_provider.model_requests) == 1


async def test_unknown_model(fake_provider, claude):
    fake_provider.fail("not_found")
    with pytest.raises(ModelNotFound) as info:
        await collect(claude, request())
    assert MODEL in str(info.value)


async def test_mid_stream_overloaded_before_output_is_retried(fake_provider, claude, sleeps):
    fake_provider.fail("mid_stream_error", after_chars=0)
    fake_provider.script("Clean second try")
    events = await collect(claude, request())
    assert text_of(events) == "Clean second try"
    assert len(sleeps) == 1
    # the failed attempt yielded nothing, not even its usage
    assert sum(isinstance(e, UsageUpdate) for e in events) == 2


async def test_mid_stream_overloaded_after_output_is_not_retried(fake_provider, claude, sleeps):
    received = []
    fake_provider.fail("mid_stream_error", reply="Half an answer, then", after_chars=8)
    fake_provider.script("never sent")
    with pytest.raises(Overloaded) as info:
        async for event in claude.stream(request()):
            received.append(event)
    assert text_of(received) == "Half an "
    assert info.value.status is None  # an event in a 200 stream
    assert sleeps == [] and len(fake_provider.model_requests) == 1


async def test_stream_cut_after_output_is_stream_interrupted(fake_provider, claude, sleeps):
    received = []
    fake_provider.fail("cut", reply="Some words then nothing", after_chars=10)
    with pytest.raises(StreamInterrupted) as info:
        async for event in claude.stream(request()):
            received.append(event)
    assert text_of(received).startswith("Some words")
    assert "What arrived is kept" in str(info.value)
    assert info.value.cause == "connection"  # the part kept is marked "connection lost"
    assert sleeps == []


async def test_stream_cut_before_output_is_retried(fake_provider, claude, sleeps):
    fake_provider.fail("cut", after_chars=0)
    fake_provider.script("Second time lucky")
    events = await collect(claude, request())
    assert text_of(events) == "Second time lucky" and len(sleeps) == 1


async def test_network_down_is_network_error_after_retries(closed_port_url, sleeps):
    async def sleep(seconds: float) -> None:
        sleeps.append(seconds)

    provider = AnthropicProvider(KEY, closed_port_url, retry=FAST, sleep=sleep)
    try:
        with pytest.raises(NetworkError) as info:
            await collect(provider, request())
    finally:
        await provider.aclose()
    assert not info.value.timed_out and closed_port_url in str(info.value)
    assert len(sleeps) == 2


async def test_timeout_is_network_error(fake_provider):
    fake_provider.fail("hang", seconds=3)
    provider = AnthropicProvider(
        KEY, fake_provider.anthropic_base_url, retry=RetryPolicy(max_retries=0), timeout_s=0.2
    )
    start = time.monotonic()
    try:
        with pytest.raises(NetworkError) as info:
            await collect(provider, request())
    finally:
        await provider.aclose()
    assert info.value.timed_out and time.monotonic() - start < 2


# --- other calls -----------------------------------------------------------


async def test_count_tokens_uses_the_endpoint(fake_provider, claude):
    count = await claude.count_tokens(request(system="Be brief."))
    assert isinstance(count, int) and count > 0
    rec = fake_provider.last_request
    assert rec.path == "/v1/messages/count_tokens" and "max_tokens" not in rec.body


async def test_list_models_merges_api_limits_with_the_catalog(fake_provider, claude):
    fake_provider.anthropic_models = [
        {
            "id": "claude-sonnet-4-5",
            "display_name": "Claude Sonnet 4.5",
            "max_input_tokens": 200_000,
            "max_tokens": 64_000,
        },
        {
            "id": "claude-new-9",
            "display_name": "Claude New 9",
            "max_input_tokens": 500_000,
            "max_tokens": 100_000,
        },
    ]
    models = {m.id: m for m in await claude.list_models()}
    assert models["claude-sonnet-4-5"].input_usd_per_mtok == 3
    assert models["claude-new-9"].context_window == 500_000
    assert models["claude-new-9"].display_name == "Claude New 9"


def test_repr_hides_the_key(fake_provider):
    provider = AnthropicProvider(KEY, fake_provider.anthropic_base_url)
    assert KEY not in repr(provider) and "key=set" in repr(provider)


async def test_cancelling_a_stream_is_not_an_error(fake_provider, claude):
    import asyncio

    fake_provider.script("word " * 200, chunk_size=5, token_delay_ms=20)
    first = asyncio.Event()
    got = []

    async def consume():
        async for event in claude.stream(request()):
            got.append(event)
            if isinstance(event, TextDelta):
                first.set()

    task = asyncio.create_task(consume())
    await asyncio.wait_for(first.wait(), 5)
    start = time.monotonic()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert time.monotonic() - start < 1
    assert 0 < len([e for e in got if isinstance(e, TextDelta)]) < 200
    assert len(fake_provider.model_requests) == 1


async def test_breaking_out_early_closes_the_stream(fake_provider, claude):
    import contextlib

    fake_provider.script("word " * 200, chunk_size=5, token_delay_ms=5)
    events = claude.stream(request())
    async with contextlib.aclosing(events):
        async for event in events:
            if isinstance(event, TextDelta):
                break
    fake_provider.script("next")  # the client is still usable afterwards
    assert text_of(await collect(claude, request())) == "next"


async def test_keys_stay_out_of_the_logs(fake_provider, claude, caplog):
    import logging

    with caplog.at_level(logging.DEBUG):
        await collect(claude, request())
        fake_provider.fail("auth")
        with pytest.raises(AuthenticationFailed) as refused:
            await collect(claude, request())
    # The SDK logs in the provider process, whose warnings come to this log.
    assert KEY not in caplog.text and KEY not in str(refused.value)


def test_warm_builds_the_sdks_stream_event_validator():
    """``warm`` (run by the provider process at its start) builds what the SDK builds at a
    reply's first event, so the first reply does not wait for it (issue 33)."""
    from anthropic._models import _CachedTypeAdapter, construct_type
    from anthropic.types import RawMessageStreamEvent

    from parley.core.providers.anthropic_sender import warm

    warm()
    built = _CachedTypeAdapter.cache_info().misses
    construct_type(value={"type": "message_stop"}, type_=RawMessageStreamEvent)
    assert _CachedTypeAdapter.cache_info().misses == built

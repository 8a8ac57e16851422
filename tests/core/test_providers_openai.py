"""The OpenAI adapter (OpenAI and compatible servers) through the real SDK and the fake server."""

from __future__ import annotations

import json

import pytest

from parley.core.content import TextBlock, Turn
from parley.core.providers.base import (
    ChatRequest,
    Stop,
    TextDelta,
    ThinkingDelta,
    ToolSpec,
    ToolUseInputDelta,
    ToolUseStart,
    ToolUseStop,
    UsageUpdate,
)
from parley.core.providers.errors import (
    AuthenticationFailed,
    ContextOverflow,
    NetworkError,
    Overloaded,
    RateLimited,
    ServerError,
    StreamInterrupted,
)
from parley.core.providers.openai_provider import OpenAIProvider, reasoning_effort
from parley.core.providers.retry import RetryPolicy

KEY = "sk-proj-SECRETSECRETSECRET-0123456789abcd"
FAST = RetryPolicy(max_retries=2, initial_delay_s=0.001, max_delay_s=0.002, max_retry_after_s=5)


@pytest.fixture
def sleeps() -> list[float]:
    return []


def _make(fake_provider, sleeps, **kw) -> OpenAIProvider:
    async def sleep(seconds: float) -> None:
        sleeps.append(seconds)

    kw.setdefault("retry", FAST)
    return OpenAIProvider(kw.pop("key", KEY), fake_provider.openai_base_url, sleep=sleep, **kw)


@pytest.fixture
async def gpt(fake_provider, sleeps):
    provider = _make(fake_provider, sleeps)
    yield provider
    await provider.aclose()


@pytest.fixture
async def local(fake_provider, sleeps):
    provider = _make(
        fake_provider, sleeps, key=None, kind="openai_compatible", id="ollama", name="Ollama"
    )
    yield provider
    await provider.aclose()


def request(*texts: str, model: str = "gpt-4.1", **kw) -> ChatRequest:
    turns = [Turn("user", [TextBlock(t)]) for t in (texts or ("Hello?",))]
    return ChatRequest(model, turns, **kw)


async def collect(provider, req):
    return [e async for e in provider.stream(req)]


def text_of(events) -> str:
    return "".join(e.text for e in events if isinstance(e, TextDelta))


async def test_streams_text_and_asks_for_usage(fake_provider, gpt):
    fake_provider.script("Streaming works", chunk_size=4)
    events = await collect(gpt, request(system="Be brief.", temperature=0.2, max_tokens=300))
    assert text_of(events) == "Streaming works"
    assert events[-1] == Stop("end_turn")
    usage = [e for e in events if isinstance(e, UsageUpdate)][-1].usage
    assert usage.input_tokens > 0 and usage.output_tokens > 0 and usage.cost_usd > 0
    body = fake_provider.last_request.body
    assert body["stream_options"] == {"include_usage": True}
    assert body["messages"][0] == {"role": "system", "content": "Be brief."}
    assert body["temperature"] == 0.2 and body["max_completion_tokens"] == 300


async def test_cached_tokens_are_recorded(fake_provider, gpt):
    await collect(gpt, request("First question " * 20))
    long_turns = request("First question " * 20).turns + [
        Turn("assistant", [TextBlock("You said: ...")]),
        Turn("user", [TextBlock("And then?")]),
    ]
    events = await collect(gpt, ChatRequest("gpt-4.1", long_turns))
    usage = [e for e in events if isinstance(e, UsageUpdate)][-1].usage
    assert usage.cache_read_tokens > 0
    sent = fake_provider.last_request.body
    assert usage.cache_read_tokens + usage.input_tokens == _prompt_tokens(fake_provider)
    assert sent["messages"][-1]["role"] == "user"


def _prompt_tokens(fake_provider) -> int:
    from tests.fakes.cache import estimate_tokens, openai_elements

    return sum(estimate_tokens(e) for e in openai_elements(fake_provider.last_request.body))


async def test_tool_call_deltas(fake_provider, gpt):
    args = {"query": "weather in Lyon", "limit": 5}
    fake_provider.script(None, tool_calls=[{"name": "search", "input": args}], chunk_size=5)
    tool = ToolSpec("search", "Search the web", {"type": "object"})
    events = await collect(gpt, request(tools=[tool]))
    start = next(e for e in events if isinstance(e, ToolUseStart))
    assert start.name == "search" and start.id.startswith("call_")
    pieces = [e.partial_json for e in events if isinstance(e, ToolUseInputDelta)]
    assert len(pieces) > 2 and json.loads("".join(pieces)) == args
    assert ToolUseStop(start.id, args) in events
    assert events[-1] == Stop("tool_use")
    sent = fake_provider.last_request.body["tools"][0]
    assert sent == {
        "type": "function",
        "function": {
            "name": "search",
            "description": "Search the web",
            "parameters": {"type": "object"},
        },
    }


async def test_reasoning_models_get_effort_not_temperature(fake_provider, gpt):
    await collect(gpt, request(model="gpt-5", thinking_budget=20_000, temperature=0.5))
    body = fake_provider.last_request.body
    assert body["reasoning_effort"] == "high" and "temperature" not in body
    assert [reasoning_effort(b) for b in (1000, 8000, 50_000)] == ["low", "medium", "high"]


async def test_compatible_server_without_key_sends_no_authorization(fake_provider, local):
    fake_provider.script("Local hello", thinking="local reasoning")
    events = await collect(local, request(model="llama3.2:3b", max_tokens=50))
    assert text_of(events) == "Local hello"
    assert "".join(e.text for e in events if isinstance(e, ThinkingDelta)) == "local reasoning"
    rec = fake_provider.last_request
    assert not rec.has_auth
    assert rec.body["max_tokens"] == 50 and "max_completion_tokens" not in rec.body


async def test_compatible_server_never_gets_the_openai_env_key(fake_provider, local, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    provider = OpenAIProvider(None, fake_provider.openai_base_url, kind="openai_compatible")
    try:
        await collect(provider, request(model="llama3.2:3b"))
    finally:
        await provider.aclose()
    assert not fake_provider.last_request.has_auth


async def test_list_models_from_v1_models(fake_provider, local):
    fake_provider.openai_models = [{"id": "qwen2.5:7b"}, {"id": "llama3.2:3b"}]
    models = await local.list_models()
    assert [m.id for m in models] == ["qwen2.5:7b", "llama3.2:3b"]
    assert all(not m.known and m.context_window == 8_192 for m in models)
    assert await local.count_tokens(request()) is None


async def test_openai_without_key_fails_before_any_request(fake_provider):
    provider = OpenAIProvider(None, fake_provider.openai_base_url)
    with pytest.raises(AuthenticationFailed):
        await collect(provider, request())
    assert fake_provider.requests == []


# --- errors --------------------------------------------------------------


async def test_bad_key_message_has_no_key_at_all(fake_provider, gpt):
    fake_provider.fail("auth")  # the API's own message echoes a masked key
    with pytest.raises(AuthenticationFailed) as info:
        await collect(gpt, request())
    # A provider left named "OpenAI" at another server's address is named by that address.
    assert "sk-" not in str(info.value)
    assert str(info.value).startswith("The server at 127.0.0.1:")


@pytest.mark.parametrize(
    ("flavor", "tokens", "maximum"),
    [
        ("openai", 130_000, 128_000),
        ("openai_new", 300_000, 272_000),
        ("vllm", 5000, 4096),
        ("llamacpp", 9000, 8192),
        ("lmstudio", 5000, 4096),
        ("ollama", 9000, 8192),
    ],
)
async def test_context_overflow_in_every_dialect(fake_provider, gpt, flavor, tokens, maximum):
    fake_provider.fail("prompt_too_long", flavor=flavor, tokens=tokens, maximum=maximum)
    with pytest.raises(ContextOverflow) as info:
        await collect(gpt, request())
    assert (info.value.tokens, info.value.maximum) == (tokens, maximum)
    assert len(fake_provider.model_requests) == 1


async def test_rate_limit_retry_after(fake_provider, gpt, sleeps):
    fake_provider.fail("rate_limit", retry_after=2)
    fake_provider.script("ok")
    assert text_of(await collect(gpt, request())) == "ok"
    assert sleeps == [2.0]


async def test_rate_limit_without_retry_after_backs_off_then_raises(fake_provider, gpt, sleeps):
    fake_provider.fail("rate_limit", times=3)
    with pytest.raises(RateLimited) as info:
        await collect(gpt, request())
    assert info.value.retry_after_s is None and len(sleeps) == 2


async def test_503_is_overloaded(fake_provider, gpt):
    fake_provider.fail("overloaded", times=3)
    with pytest.raises(Overloaded):
        await collect(gpt, request())


async def test_500_is_server_error_and_retried(fake_provider, gpt):
    fake_provider.fail("server_error")
    fake_provider.script("recovered")
    assert text_of(await collect(gpt, request())) == "recovered"
    fake_provider.fail("server_error", times=3)
    with pytest.raises(ServerError):
        await collect(gpt, request())


async def test_mid_stream_error_after_output(fake_provider, gpt, sleeps):
    got = []
    fake_provider.fail("mid_stream_error", reply="abcdefghijkl", after_chars=4, chunk_size=4)
    with pytest.raises(Overloaded):  # {"error": {"message": "The server is overloaded..."}}
        async for e in gpt.stream(request()):
            got.append(e)
    assert text_of(got) == "abcd" and sleeps == []


async def test_stream_cut(fake_provider, gpt, sleeps):
    got = []
    fake_provider.fail("cut", reply="abcdefghijkl", after_chars=4, chunk_size=4)
    with pytest.raises(StreamInterrupted) as info:
        async for e in gpt.stream(request()):
            got.append(e)
    assert text_of(got) == "abcd" and sleeps == []
    assert info.value.cause == "connection"


async def test_network_down(closed_port_url, sleeps):
    async def sleep(seconds: float) -> None:
        sleeps.append(seconds)

    provider = OpenAIProvider(
        None,
        closed_port_url + "/v1",
        kind="openai_compatible",
        name="LM Studio",
        retry=FAST,
        sleep=sleep,
    )
    try:
        with pytest.raises(NetworkError) as info:
            await collect(provider, request())
    finally:
        await provider.aclose()
    assert "LM Studio" in str(info.value) and "local server is running" in str(info.value)
    assert len(sleeps) == 2


def test_repr_hides_the_key(fake_provider):
    provider = OpenAIProvider(KEY, fake_provider.openai_base_url)
    assert KEY not in repr(provider)


async def test_keys_stay_out_of_the_logs(fake_provider, gpt, caplog):
    import logging

    with caplog.at_level(logging.DEBUG):
        fake_provider.script("logged?")
        await collect(gpt, request())
        fake_provider.fail("auth")
        with pytest.raises(AuthenticationFailed) as refused:
            await collect(gpt, request())
    # The SDK logs in the provider process, whose warnings come to this log.
    assert KEY not in caplog.text and KEY not in str(refused.value)


async def test_openai_model_list_keeps_chat_models_catalog_first(fake_provider, gpt):
    fake_provider.openai_models = [
        {"id": i}
        for i in (
            "text-embedding-3-small",
            "gpt-4o-mini-tts",
            "gpt-5-mini",
            "whisper-1",
            "gpt-9-preview",
            "gpt-4.1",
            "dall-e-3",
            "gpt-realtime",
            "o3",
        )
    ]
    assert [m.id for m in await gpt.list_models()] == [
        "gpt-5-mini",
        "gpt-4.1",
        "o3",
        "gpt-9-preview",
    ]

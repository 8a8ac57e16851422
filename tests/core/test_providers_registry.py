"""Registry, catalog, error classification, cache breakpoints and the retry policy."""

from __future__ import annotations

import copy

import pytest

from parley.core.content import Usage
from parley.core.keys import FileBackend, KeyStore
from parley.core.providers import cache_points, catalog
from parley.core.providers.anthropic_provider import AnthropicProvider
from parley.core.providers.base import Provider
from parley.core.providers.errors import (
    AuthenticationFailed,
    BadRequest,
    ContextOverflow,
    ModelNotFound,
    Overloaded,
    PermissionDenied,
    RateLimited,
    ServerError,
    StreamInterrupted,
    scrub,
)
from parley.core.providers.failures import classify, retry_after_s
from parley.core.providers.model_ref import InvalidModelRef, format_model_ref, parse_model_ref
from parley.core.providers.openai_provider import OpenAIProvider
from parley.core.providers.registry import (
    BUILTIN_PROVIDERS,
    ProviderConfig,
    ProviderConfigError,
    key_source,
    make_provider,
    resolve_api_key,
    resolve_base_url,
)
from parley.core.providers.retry import RetryPolicy, stream_with_retries
from parley.core.providers.sdk_provider import parse_tool_input

# --- model references -------------------------------------------------------


@pytest.mark.parametrize(
    ("ref", "expected"),
    [
        ("anthropic:claude-sonnet-4-5", ("anthropic", "claude-sonnet-4-5")),
        ("ollama:llama3.2:3b", ("ollama", "llama3.2:3b")),
        ("claude-haiku-4-5", ("anthropic", "claude-haiku-4-5")),
        ("gpt-5-mini", ("openai", "gpt-5-mini")),
        ("o3", ("openai", "o3")),
    ],
)
def test_parse_model_ref(ref, expected):
    assert parse_model_ref(ref) == expected


@pytest.mark.parametrize("ref", ["", ":", "anthropic:", ":gpt-5", "llama3"])
def test_parse_model_ref_rejects(ref):
    with pytest.raises(InvalidModelRef):
        parse_model_ref(ref)


def test_format_model_ref_round_trips():
    assert parse_model_ref(format_model_ref("lmstudio", "qwen:7b")) == ("lmstudio", "qwen:7b")


# --- base URL and key sources ----------------------------------------------

ANTHROPIC, OPENAI = BUILTIN_PROVIDERS


def test_base_url_from_settings_then_environment_then_default():
    env = {"ANTHROPIC_BASE_URL": "http://proxy.local:9000/"}
    assert resolve_base_url(ANTHROPIC, {}).source == "default"
    assert resolve_base_url(ANTHROPIC, env) == resolve_base_url(ANTHROPIC, env)
    got = resolve_base_url(ANTHROPIC, env)
    assert (got.value, got.source) == ("http://proxy.local:9000", "environment")
    mine = ProviderConfig("anthropic", "anthropic", "Anthropic", "http://mine:1")
    assert resolve_base_url(mine, env).source == "settings"
    assert resolve_base_url(OPENAI, {"OPENAI_BASE_URL": "http://x/v1"}).source == "environment"
    local = ProviderConfig("ollama", "openai_compatible", "Ollama")
    assert resolve_base_url(local, {"OPENAI_BASE_URL": "http://x/v1"}).source == "none"


@pytest.mark.parametrize(
    ("kind", "typed", "expected"),
    [
        ("anthropic", "https://api.anthropic.com/v1/", "https://api.anthropic.com"),
        ("anthropic", "http://proxy:9000", "http://proxy:9000"),
        ("openai_compatible", "http://localhost:11434", "http://localhost:11434/v1"),
        ("openai_compatible", "http://localhost:11434/v1/", "http://localhost:11434/v1"),
        ("openai_compatible", "http://host/custom/api", "http://host/custom/api"),
        ("openai", " https://api.openai.com/v1 ", "https://api.openai.com/v1"),
    ],
)
def test_typed_base_urls_are_normalized(kind, typed, expected):
    assert resolve_base_url(ProviderConfig("p", kind, "P", typed), {}).value == expected


def test_key_from_environment_unless_saved(tmp_path, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-from-env-000000000")
    keys = KeyStore(FileBackend(tmp_path / "keys.json"))
    assert key_source(ANTHROPIC, keys) == "environment"
    assert resolve_api_key(ANTHROPIC, keys).value == "sk-ant-from-env-000000000"
    keys.set("anthropic", "sk-ant-saved-1111111111")
    assert key_source(ANTHROPIC, keys) == "file"
    assert resolve_api_key(ANTHROPIC, keys).value == "sk-ant-saved-1111111111"
    assert key_source(OPENAI, keys) == "none"


def test_make_provider_by_kind(monkeypatch):
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:1/v1")
    a = make_provider(ANTHROPIC, "k")
    o = make_provider(OPENAI, "k")
    local = make_provider(
        ProviderConfig("lm", "openai_compatible", "LM Studio", "http://localhost:1234/v1"), None
    )
    assert isinstance(a, AnthropicProvider) and a.caps.kind == "anthropic"
    assert all(isinstance(p, Provider) for p in (a, o, local))
    assert isinstance(o, OpenAIProvider) and o.base_url == "http://127.0.0.1:1/v1"
    assert isinstance(local, OpenAIProvider) and local.caps.needs_user_tail
    assert local.caps.cache_ttl_s is None and local.id == "lm"
    with pytest.raises(ProviderConfigError):
        make_provider(ProviderConfig("x", "openai_compatible", "X"), None)


# --- catalog ---------------------------------------------------------------------


def test_catalog_knows_current_models_and_dated_snapshots():
    sonnet = catalog.lookup("anthropic", "claude-sonnet-4-5-20250929")
    assert sonnet.id == "claude-sonnet-4-5-20250929" and sonnet.known
    assert (sonnet.context_window, sonnet.max_output_tokens) == (200_000, 64_000)
    assert sonnet.cache_write_usd_per_mtok == 3.75 and sonnet.cache_read_usd_per_mtok == 0.3
    gpt = catalog.lookup("openai", "gpt-4.1-2025-04-14")
    assert gpt.context_window == 1_047_576 and gpt.cache_read_usd_per_mtok == 0.5


def test_catalog_defaults_for_unknown_and_local_models():
    assert not catalog.lookup("anthropic", "claude-future-9").known
    local = catalog.lookup("openai_compatible", "gpt-4.1")  # served by some local proxy
    assert local.input_usd_per_mtok is None and local.context_window == 8_192


def test_catalog_overrides_from_settings():
    overrides = {
        "llama3.2:3b": {"context_window": 131_072, "bogus": 1},
        "claude-haiku-4-5": {"input_usd_per_mtok": 0.5},
    }
    local = catalog.lookup("openai_compatible", "llama3.2:3b", overrides)
    assert local.context_window == 131_072 and local.known
    assert catalog.lookup("anthropic", "claude-haiku-4-5", overrides).input_usd_per_mtok == 0.5


def test_cost_uses_cache_prices_and_the_hour_ttl():
    info = catalog.lookup("anthropic", "claude-haiku-4-5")  # $1 in, $5 out
    usage = Usage(1_000_000, 1_000_000, 1_000_000, 1_000_000)
    assert info.cost_usd(usage) == pytest.approx(1 + 5 + 0.1 + 1.25)
    assert info.cost_usd(usage, cache_write_hour=True) == pytest.approx(1 + 5 + 0.1 + 2)


# --- error classification ----------------------------------------------------------


@pytest.mark.parametrize(
    ("status", "body", "expected"),
    [
        (
            401,
            {"type": "error", "error": {"type": "authentication_error", "message": "x"}},
            AuthenticationFailed,
        ),
        (403, {"error": {"message": "no", "type": "request_forbidden"}}, PermissionDenied),
        (
            404,
            {"error": {"message": "The model `m` does not exist", "code": "model_not_found"}},
            ModelNotFound,
        ),
        (404, "404 page not found", BadRequest),
        (429, {"error": {"message": "slow down"}}, RateLimited),
        (
            529,
            {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}},
            Overloaded,
        ),
        (503, {"error": {"message": "The engine is currently overloaded"}}, Overloaded),
        (500, {"type": "error", "error": {"type": "api_error", "message": "oops"}}, ServerError),
        (502, "<html>Bad gateway</html>", ServerError),
        (400, {"error": 'model "x" not found, try pulling it first'}, BadRequest),
        (
            None,
            {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}},
            Overloaded,
        ),
        (None, {"type": "error", "error": {"type": "api_error", "message": "x"}}, ServerError),
        (
            None,
            {"type": "error", "error": {"type": "weird_error", "message": "x"}},
            StreamInterrupted,
        ),
        (
            400,
            {"error": {"message": "too long", "code": "context_length_exceeded"}},
            ContextOverflow,
        ),
    ],
)
def test_classify(status, body, expected):
    assert type(classify("P", status, body, model="m")) is expected


def test_anthropic_max_tokens_overflow_wording():
    body = {
        "type": "error",
        "error": {
            "type": "invalid_request_error",
            "message": "input length and `max_tokens` exceed context limit: "
            "188240 + 21333 > 200000, decrease input length or `max_tokens` and try again",
        },
    }
    err = classify("Anthropic", 400, body)
    assert isinstance(err, ContextOverflow) and (err.tokens, err.maximum) == (188_240, 200_000)


def test_retry_after_headers():
    assert retry_after_s({"retry-after-ms": "1500", "retry-after": "9"}) == 1.5
    assert retry_after_s({"retry-after": "7"}) == 7
    assert retry_after_s({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}) == 0
    assert retry_after_s({"retry-after": "soon"}) is None
    assert retry_after_s({}) is None


def test_quoted_api_text_is_scrubbed():
    key = "sk-ant-fake.abcdefghijklmnop"
    body = {
        "error": {"type": "invalid_request_error", "message": f"bad header {key} and sk-ab****wxyz"}
    }
    err = classify("Anthropic", 400, body, secrets=[key])
    assert key not in str(err) and "sk-ab" not in str(err) and "[redacted]" in str(err)
    assert scrub("task-force risk-free", []) == "task-force risk-free"


# --- cache breakpoints -------------------------------------------------------------


def test_breakpoints_on_the_end_and_the_previous_end():
    messages = [
        {"role": "user", "content": [{"type": "text", "text": "q1"}]},
        {"role": "assistant", "content": [{"type": "text", "text": "a1"}]},
        {"role": "user", "content": "q2"},
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "calling"},
                {"type": "tool_use", "id": "t", "name": "n", "input": {}},
            ],
        },
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "content": "r"}]},
    ]
    marked = cache_points.mark_messages(messages, 300)
    assert messages[2]["content"] == "q2"  # input untouched
    marks = [
        (i, j)
        for i, m in enumerate(marked)
        if isinstance(m["content"], list)
        for j, b in enumerate(m["content"])
        if "cache_control" in b
    ]
    assert marks == [(2, 0), (4, 0)]
    assert marked[2]["content"] == [
        {"type": "text", "text": "q2", "cache_control": {"type": "ephemeral"}}
    ]


def test_breakpoints_skip_thinking_and_replace_old_marks():
    messages = [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "old", "cache_control": {"type": "ephemeral"}},
                {"type": "text", "text": "new"},
            ],
        },
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "answer"},
                {"type": "thinking", "thinking": "t", "signature": "s"},
            ],
        },
    ]
    marked = cache_points.mark_messages(messages, 3600)
    assert "cache_control" not in marked[0]["content"][0]
    assert marked[0]["content"][1]["cache_control"] == {"type": "ephemeral", "ttl": "1h"}
    assert "cache_control" not in marked[1]["content"][1]
    assert "cache_control" in marked[1]["content"][0]



def test_breakpoints_leave_the_given_messages_as_they_were():
    """Marks are set and old ones removed on copies: the caller's messages (kept as the
    request's converted turns) are the same after as before, block for block."""
    messages = [
        {"role": "user", "content": [{"type": "text", "text": "q1",
                                      "cache_control": {"type": "ephemeral"}}]},
        {"role": "assistant", "content": [{"type": "text", "text": "a1"}]},
        {"role": "user", "content": [{"type": "text", "text": "q2"}]},
        {"role": "assistant", "content": [{"type": "text", "text": "a2"}]},
        {"role": "user", "content": "q3"},
    ]
    before = copy.deepcopy(messages)
    marked = cache_points.mark_messages(messages, 300)
    assert messages == before
    again = cache_points.mark_messages(marked, 300)  # marking a marked request again
    assert again == marked
    assert [i for i, m in enumerate(marked) if isinstance(m["content"], list)
            and any("cache_control" in b for b in m["content"])] == [2, 4]

# --- retry policy ---------------------------------------------------------------------


async def test_stream_with_retries_never_retries_after_an_item():
    calls = 0

    async def attempt():
        nonlocal calls
        calls += 1
        yield "first"
        raise Overloaded("P")

    out = []
    with pytest.raises(Overloaded):
        async for item in stream_with_retries(attempt, RetryPolicy(initial_delay_s=0)):
            out.append(item)
    assert out == ["first"] and calls == 1


def test_backoff_grows_and_is_capped():
    policy = RetryPolicy(max_retries=5, initial_delay_s=1, max_delay_s=3, jitter=0)
    err = ServerError("P")
    assert [policy.delay_s(i, err) for i in range(6)] == [1, 2, 3, 3, 3, None]
    assert policy.delay_s(0, ContextOverflow("P")) is None


def test_tool_input_parsing():
    assert parse_tool_input("") == {}
    assert parse_tool_input('{"a": 1}') == {"a": 1}
    assert parse_tool_input("[1]") == {"_raw_input": "[1]"}
    assert parse_tool_input('{"a": ') == {"_raw_input": '{"a": '}

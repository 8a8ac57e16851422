"""A provider is OpenAI only at OpenAI's address; anywhere else it is a compatible server.

Providers saved with kind ``openai`` and another server's address (by hand in Settings, or
by an earlier Parley) are used as OpenAI-compatible servers: their own model list and
limits, ``max_tokens``, no gpt-5, no OpenAI-only parameters. The fake provider server
plays a llama.cpp server at ``openai_base_url`` (model id a file path, small window, no
usage chunk) and OpenAI itself at ``openai_own_url`` (listed in ``PARLEY_OPENAI_URLS``
by the ``fake_provider`` fixture). Real sessions.db, real SDK, real HTTP.
"""

from __future__ import annotations

from parley.core.content import TextBlock, Turn
from parley.core.keys import FileBackend, KeyStore
from parley.core.providers.base import ChatRequest, Stop, TextDelta, UsageUpdate
from parley.core.providers.hub import ProviderHub
from parley.core.providers.registry import (
    BUILTIN_PROVIDERS,
    ENV_COMPATIBLE,
    ENV_OPENAI_URLS,
    ProviderConfig,
    as_used,
    builtin_providers,
    is_openai_url,
    make_provider,
)
from parley.core.providers.retry import RetryPolicy

TINY = "/models/SmolLM2-135M-Instruct-Q8_0.gguf"  # llama.cpp names the model by its file
OPENAI = BUILTIN_PROVIDERS[1]


def _hub(store, tmp_path, environ=None):
    keys = KeyStore(backend=FileBackend(tmp_path / "keys.json"), environ=environ or {})
    return ProviderHub(store, keys=keys, retry=RetryPolicy(max_retries=0),
                       environ=environ or {})


def test_openai_kind_at_another_address_is_used_as_a_compatible_server(monkeypatch):
    monkeypatch.delenv(ENV_OPENAI_URLS, raising=False)
    saved = ProviderConfig("openai", "openai", "OpenAI", "http://127.0.0.1:8080/v1", "gpt-5")
    used = as_used(saved, {})
    assert used == ProviderConfig("openai", "openai_compatible", "OpenAI-compatible server",
                                  "http://127.0.0.1:8080/v1", None)  # no gpt-5 default
    named = ProviderConfig("lab", "openai", "Lab box", "http://lab:8000/v1", "qwen3-8b")
    assert as_used(named, {}) == ProviderConfig(
        "lab", "openai_compatible", "Lab box", "http://lab:8000/v1", "qwen3-8b")
    real = ProviderConfig("openai", "openai", "OpenAI", "https://api.openai.com/v1/", "gpt-5")
    assert as_used(real, {}) is real and as_used(OPENAI, {}) is OPENAI  # typed, or default
    assert as_used(OPENAI, {"OPENAI_BASE_URL": "http://localhost:11434/v1"}) == ENV_COMPATIBLE
    compatible = ProviderConfig("c", "openai_compatible", "C", "https://api.openai.com/v1")
    assert as_used(compatible, {}) is compatible  # the kind chosen is kept
    built = make_provider(saved, None, environ={})
    assert built.caps.kind == "openai_compatible" and built.base_url == saved.base_url


def test_parley_openai_urls_names_more_addresses_of_openais_own_api(monkeypatch):
    gateway = "https://gateway.example.net/team/openai/v1"
    monkeypatch.setenv(ENV_OPENAI_URLS, f"http://other:1/v1, {gateway}/")
    assert is_openai_url(gateway) and is_openai_url(gateway + "/")
    assert not is_openai_url("https://gateway.example.net/team/openai-v1")
    assert not is_openai_url("https://gateway.example.net/team")
    saved = ProviderConfig("openai", "openai", "OpenAI", gateway, "gpt-5")
    assert as_used(saved, {}) is saved
    env = {c.id: c for c in builtin_providers({"OPENAI_BASE_URL": gateway})}
    assert env["openai"] is OPENAI
    monkeypatch.delenv(ENV_OPENAI_URLS)
    assert as_used(saved, {}).kind == "openai_compatible"


async def test_an_existing_users_openai_provider_at_a_local_server_works_as_that_server(
    store, tmp_path, fake_provider
):
    fake_provider.openai_models = [{"id": TINY}]
    fake_provider.windows.llamacpp(2_048)
    fake_provider.windows.usage_chunk = False
    stored = [{"id": "openai", "kind": "openai", "name": "OpenAI",
               "base_url": fake_provider.openai_base_url, "default_model": "gpt-5"}]
    await store.set_setting("providers", stored)  # as an earlier Parley saved it
    await store.set_setting("default_model", "openai:gpt-5")
    hub = _hub(store, tmp_path)
    await hub.load()
    config = hub.config("openai")
    assert (config.kind, config.name, config.default_model) == (
        "openai_compatible", "OpenAI-compatible server", None)

    await hub.prepare_all()
    assert hub.default_model_ref() == f"openai:{TINY}"  # the server's model, not gpt-5
    info = await hub.fetch_model_info(f"openai:{TINY}")
    assert (info.context_window, info.window_source) == (2_048, "provider")  # not 400k
    provider, model = hub.resolve(f"openai:{TINY}")
    fake_provider.script("Hello!")
    events = [e async for e in provider.stream(
        ChatRequest(model, [Turn("user", [TextBlock("Hi")])], temperature=0.5))]
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "Hello!"
    assert events[-1] == Stop("end_turn") and not any(isinstance(e, UsageUpdate) for e in events)
    body = fake_provider.model_requests[-1].body
    assert body["model"] == TINY and 256 <= body["max_tokens"] <= 2_048
    assert "max_completion_tokens" not in body and "reasoning_effort" not in body
    assert await store.get_setting("providers") == stored  # read so, never rewritten
    await hub.aclose()


async def test_openai_typed_with_a_local_address_in_settings_lists_the_servers_models(
    store, tmp_path, fake_provider
):
    fake_provider.openai_models = [{"id": TINY}, {"id": "gpt-4o"}, {"id": "qwen3:8b"}]
    hub = _hub(store, tmp_path)
    await hub.load()
    tested = await hub.test_connection("openai", fake_provider.openai_base_url, None)
    assert [m.id for m in tested] == [TINY, "gpt-4o", "qwen3:8b"]  # not only gpt-*
    assert all(m.context_window == 8_192 for m in tested)  # local defaults, no OpenAI guess
    used = await hub.add_provider("openai", base_url=fake_provider.openai_base_url,
                                  default_model="qwen3:8b")
    assert used.kind == "openai_compatible" and hub.default_model_ref() == "openai:qwen3:8b"
    mine = await hub.add_provider("openai", base_url=fake_provider.openai_own_url,
                                  api_key="sk-test-1234567890", provider_id="openai-2")
    assert mine.kind == "openai"  # OpenAI's own address (here: the fake playing it)
    await hub.aclose()


async def test_a_servers_word_on_tools_is_kept_with_its_model_list(store, tmp_path, fake_provider):
    fake_provider.openai_models = [{"id": "qwen3:8b"}, {"id": "gemma3:1b"}]
    fake_provider.windows.ollama_show = {
        "qwen3:8b": {"capabilities": ["completion", "tools", "thinking"]},
        "gemma3:1b": {"capabilities": ["completion"]},
    }
    hub = _hub(store, tmp_path)
    await hub.load()
    await hub.add_provider("openai_compatible", name="Ollama",
                           base_url=fake_provider.openai_base_url)
    listed = {m.id: m.tools for m in await hub.list_models("ollama")}
    assert listed == {"qwen3:8b": True, "gemma3:1b": False}
    await hub.aclose()

    again = _hub(store, tmp_path)  # after a restart, before the server is asked again
    await again.load()
    assert again.model_info("ollama:qwen3:8b").tools is True
    assert again.model_info("ollama:gemma3:1b").tools is False
    assert again.model_info("ollama:unlisted").tools is None
    await again.aclose()

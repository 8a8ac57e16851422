"""Context windows and output limits come from the provider first, and say where they came from.

Real sessions.db, the real SDKs, the fake provider server playing Anthropic (a model list
with ``max_input_tokens``), llama.cpp (``/props``, a small window, stream errors), vLLM
(``max_model_len`` in the model list) and Ollama (``/api/show``).
"""

from __future__ import annotations

import pytest

from parley.core.providers.errors import ContextOverflow, StreamInterrupted
from parley.core.providers.server_limits import MIN_OUTPUT_TOKENS
from tests.core.hubs import fake_workspace
from tests.core.local_model import TINY, request


@pytest.fixture
async def hub(tmp_path, fake_provider):
    ws = await fake_workspace(tmp_path, fake_provider, compatible={
        "name": "Local", "provider_id": "local", "default_model": TINY})
    try:
        yield ws.hub
    finally:
        await ws.close()


async def test_anthropic_window_comes_from_the_model_list_not_the_catalog(hub, fake_provider):
    fake_provider.anthropic_models = [{"id": "claude-sonnet-4-6", "display_name": "Sonnet",
                                       "max_input_tokens": 200_000, "max_tokens": 64_000}]
    before = hub.model_info("anthropic:claude-sonnet-4-6")
    assert before.context_window == 1_000_000 and before.window_source == "catalog"

    info = await hub.fetch_model_info("anthropic:claude-sonnet-4-6")

    assert (info.context_window, info.window_source) == (200_000, "provider")
    assert (info.max_output_tokens, info.output_source) == (64_000, "provider")
    assert hub.resolve("anthropic:claude-sonnet-4-6")[0].model_info(
        "claude-sonnet-4-6").context_window == 200_000  # the adapter knows it too
    listings = [r for r in fake_provider.requests if r.path == "/v1/models"]
    await hub.fetch_model_info("anthropic:claude-sonnet-4-6")  # asked once, not per request
    assert [r for r in fake_provider.requests if r.path == "/v1/models"] == listings


async def test_a_smaller_user_setting_stays_a_larger_one_gives_way(hub, fake_provider):
    fake_provider.anthropic_models = [{"id": "claude-sonnet-4-6", "max_input_tokens": 200_000}]
    await hub.store.set_setting("model_overrides", {
        "claude-sonnet-4-6": {"context_window": 50_000},
        "claude-haiku-4-5": {"context_window": 900_000}})
    await hub.load()
    await hub.list_models("anthropic")
    info = hub.model_info("anthropic:claude-sonnet-4-6")
    assert (info.context_window, info.window_source) == (50_000, "settings")
    fake_provider.anthropic_models = [{"id": "claude-haiku-4-5", "max_input_tokens": 200_000}]
    await hub.list_models("anthropic")
    info = hub.model_info("anthropic:claude-haiku-4-5")
    assert (info.context_window, info.window_source) == (200_000, "provider")


async def test_llamacpp_window_is_read_from_props(hub, fake_provider):
    fake_provider.windows.llamacpp(8_192)
    fake_provider.openai_models = [{"id": TINY, "meta": {"n_ctx_train": 32_768}}]
    assert hub.model_info(f"local:{TINY}").window_source == "default"

    info = await hub.fetch_model_info(f"local:{TINY}")

    assert (info.context_window, info.window_source) == (8_192, "provider")
    assert info.known
    assert any(r.path == "/props" for r in fake_provider.requests)


async def test_vllm_and_ollama_windows(hub, fake_provider):
    fake_provider.openai_models = [{"id": "Qwen/Qwen2.5-7B", "max_model_len": 32_768},
                                   {"id": "qwen2.5:7b"}, {"id": "llama3.2:3b"}]
    fake_provider.windows.ollama_show = {
        "qwen2.5:7b": {"parameters": "num_ctx 16384\nstop \"<|im_end|>\"",
                       "model_info": {"qwen2.context_length": 32_768}},
        "llama3.2:3b": {"parameters": "", "model_info": {"llama.context_length": 131_072}},
    }
    models = {m.id: m for m in await hub.list_models("local")}
    assert models["Qwen/Qwen2.5-7B"].context_window == 32_768
    assert models["qwen2.5:7b"].context_window == 16_384  # what the server runs it with
    assert models["llama3.2:3b"].context_window == 131_072
    assert {m.window_source for m in models.values()} == {"provider"}
    shows = [r.body["model"] for r in fake_provider.requests if r.path == "/api/show"]
    assert sorted(shows) == ["llama3.2:3b", "qwen2.5:7b"]  # vLLM's entry said it already


async def test_lmstudio_windows_from_its_own_model_list(hub, fake_provider):
    fake_provider.openai_models = [{"id": "qwen2.5-7b-instruct"}, {"id": "gemma-3-4b"}]
    fake_provider.windows.lmstudio_models = [
        {"id": "qwen2.5-7b-instruct", "state": "loaded", "max_context_length": 32_768,
         "loaded_context_length": 4_096, "capabilities": ["tool_use"]},
        {"id": "gemma-3-4b", "state": "not-loaded", "max_context_length": 131_072},
    ]
    models = {m.id: m for m in await hub.list_models("local")}
    assert models["qwen2.5-7b-instruct"].context_window == 4_096  # as loaded, not the maximum
    assert models["gemma-3-4b"].context_window == 131_072
    assert not any(r.path == "/api/show" for r in fake_provider.requests)
    assert models["qwen2.5-7b-instruct"].tools is True and models["gemma-3-4b"].tools is None


async def test_a_server_that_says_nothing_keeps_the_safe_default(hub, fake_provider):
    fake_provider.openai_models = [{"id": "mystery"}]
    info = await hub.fetch_model_info("local:mystery")
    assert (info.context_window, info.window_source) == (8_192, "default")


async def test_compatible_requests_always_carry_max_tokens(hub, fake_provider):
    fake_provider.windows.llamacpp(8_192)
    fake_provider.openai_models = [{"id": TINY}]
    await hub.fetch_model_info(f"local:{TINY}")
    provider, model = hub.resolve(f"local:{TINY}")
    fake_provider.script("short").script("short")

    _ = [e async for e in provider.stream(request(model, "Count to 10."))]
    assert fake_provider.model_requests[-1].body["max_tokens"] == 4_096  # the output limit
    _ = [e async for e in provider.stream(request(model, "word " * 6_000))]  # ~7,500 of 8,192
    bounded = fake_provider.model_requests[-1].body["max_tokens"]
    assert bounded == MIN_OUTPUT_TOKENS  # bounded by what the input leaves (here: little)


@pytest.mark.parametrize("style", ["llamacpp_line", "llamacpp_data", "llamacpp_400", "openai"])
async def test_an_over_window_refusal_is_a_context_overflow(hub, fake_provider, style):
    fake_provider.windows.llamacpp(2_048, overflow=style)
    fake_provider.openai_models = [{"id": TINY}]
    provider, model = hub.resolve(f"local:{TINY}")

    with pytest.raises(ContextOverflow) as caught:
        _ = [e async for e in provider.stream(request(model, "word " * 4_000))]

    assert not isinstance(caught.value, StreamInterrupted)
    assert caught.value.maximum == 2_048 and caught.value.tokens > 2_048
    assert "too long for the model" in caught.value.message
    assert fake_provider.windows.refused == 1


async def test_anthropic_prompt_too_long_is_a_context_overflow(hub, fake_provider):
    fake_provider.windows.enforce_windows = True
    fake_provider.windows.token_scale = 3.0
    fake_provider.anthropic_models = [{"id": "claude-sonnet-4-6", "max_input_tokens": 1_000}]
    provider, model = hub.resolve("anthropic:claude-sonnet-4-6")
    with pytest.raises(ContextOverflow) as caught:
        _ = [e async for e in provider.stream(request(model, "word " * 500))]
    assert caught.value.maximum == 1_000 and caught.value.tokens > 1_000

"""Errors name what the person set up: the provider's own name when they typed one, "the
server at 127.0.0.1:8000" for a provider left with Parley's name but sent to another
server than its vendor's (``ANTHROPIC_BASE_URL`` naming a proxy, ``OPENAI_BASE_URL`` a
local server), else the vendor ("Anthropic"). Real SDKs in the provider process against
the fake provider server, which plays a proxy here (not listed in
``PARLEY_ANTHROPIC_URLS`` / ``PARLEY_OPENAI_URLS``)."""

from __future__ import annotations

import asyncio
import os
import signal
from urllib.parse import urlsplit

import pytest

from parley.core.content import TextBlock, Turn
from parley.core.providers.base import ChatRequest
from parley.core.providers.errors import (
    NetworkError,
    ProviderError,
    ProviderProcessStopped,
    ServerError,
    StreamInterrupted,
)
from parley.core.providers.naming import ENV_ANTHROPIC_URLS, ENV_OPENAI_URLS, message_name
from parley.core.providers.process.client import ProviderProcess, RemoteSender
from parley.core.providers.registry import BUILTIN_PROVIDERS, ProviderConfig, make_provider
from parley.core.providers.retry import RetryPolicy

KEY = "sk-ant-test-key"
NONE = RetryPolicy(max_retries=0)
ANTHROPIC, OPENAI = BUILTIN_PROVIDERS


def test_the_name_messages_give() -> None:
    proxy = "http://127.0.0.1:8000"
    assert message_name("anthropic", "Anthropic", proxy) == "the server at 127.0.0.1:8000"
    assert message_name("anthropic", "Anthropic", "https://api.anthropic.com") == "Anthropic"
    assert message_name("anthropic", "Anthropic", None) == "Anthropic"
    assert message_name("anthropic", "Work proxy", proxy) == "Work proxy"
    assert message_name("openai", "OpenAI", "https://api.openai.com/v1") == "OpenAI"
    assert message_name("openai_compatible", "OpenAI-compatible server",
                        "http://localhost:11434/v1") == "the server at localhost:11434"
    assert message_name("openai_compatible", "Local server",
                        "http://user:pw@gpu.lan:8080/v1") == "the server at gpu.lan:8080"
    assert message_name("openai_compatible", "Ollama", "http://localhost:11434/v1") == "Ollama"


@pytest.fixture
def proxy(fake_provider, monkeypatch):
    """The fake server as a proxy: not Anthropic's or OpenAI's own address."""
    monkeypatch.delenv(ENV_ANTHROPIC_URLS, raising=False)
    monkeypatch.delenv(ENV_OPENAI_URLS, raising=False)
    return fake_provider


def _address(url: str) -> str:
    return urlsplit(url).netloc


async def _failure(provider, model: str) -> ProviderError:
    request = ChatRequest(model, [Turn("user", [TextBlock("Hello?")])])
    try:
        with pytest.raises(ProviderError) as info:
            async for _ in provider.stream(request):
                pass
    finally:
        await provider.aclose()
    return info.value


async def test_anthropic_base_url_at_a_proxy_is_named_by_its_address(proxy) -> None:
    env = {"ANTHROPIC_BASE_URL": proxy.anthropic_base_url}
    where = f"the server at {_address(proxy.anthropic_base_url)}"

    proxy.fail("cut", reply="Once upon a time, in a land far away", after_chars=12)
    cut = await _failure(make_provider(ANTHROPIC, KEY, retry=NONE, environ=env),
                         "claude-sonnet-4-6")
    assert isinstance(cut, StreamInterrupted) and cut.provider == where
    assert str(cut).startswith(f"The connection to {where} broke off")
    assert "Anthropic" not in str(cut)

    proxy.fail("server_error")
    failed = await _failure(make_provider(ANTHROPIC, KEY, retry=NONE, environ=env),
                            "claude-sonnet-4-6")
    assert isinstance(failed, ServerError) and failed.status == 500
    assert str(failed).startswith(f"The server at {_address(proxy.anthropic_base_url)} had")
    assert "Anthropic" not in str(failed)


async def test_a_proxy_given_a_name_in_settings_is_called_by_it(proxy) -> None:
    config = ProviderConfig("work", "anthropic", "Work proxy", proxy.anthropic_base_url)
    proxy.fail("overloaded")
    failed = await _failure(make_provider(config, KEY, retry=NONE, environ={}),
                            "claude-sonnet-4-6")
    assert str(failed).startswith("Work proxy is overloaded") and failed.provider == "Work proxy"


async def test_anthropic_at_its_own_address_is_still_anthropic(fake_provider) -> None:
    # The fake_provider fixture lists the fake server as Anthropic's own (a gateway).
    env = {"ANTHROPIC_BASE_URL": fake_provider.anthropic_base_url}
    fake_provider.fail("server_error")
    failed = await _failure(make_provider(ANTHROPIC, KEY, retry=NONE, environ=env),
                            "claude-sonnet-4-6")
    assert str(failed).startswith("Anthropic had an internal error")


async def test_an_unreachable_proxy_is_named_once_with_its_whole_address(
        closed_port_url, monkeypatch) -> None:
    monkeypatch.delenv(ENV_ANTHROPIC_URLS, raising=False)
    env = {"ANTHROPIC_BASE_URL": closed_port_url}
    failed = await _failure(make_provider(ANTHROPIC, KEY, retry=NONE, environ=env),
                            "claude-sonnet-4-6")
    assert isinstance(failed, NetworkError) and not failed.timed_out
    assert str(failed).startswith(f"Parley could not reach the server at {closed_port_url}. ")
    assert "Anthropic" not in str(failed)


async def test_openai_base_url_at_a_local_server_is_named_by_its_address(proxy) -> None:
    env = {"OPENAI_BASE_URL": proxy.openai_base_url}
    proxy.fail("cut", reply="Once upon a time, in a land far away", after_chars=12)
    cut = await _failure(make_provider(OPENAI, None, retry=NONE, environ=env), "tiny")
    where = f"the server at {_address(proxy.openai_base_url)}"
    assert isinstance(cut, StreamInterrupted) and cut.provider == where
    assert "OpenAI" not in str(cut)


async def test_a_stopped_provider_process_names_the_proxy_too(proxy) -> None:
    """"Parley's connection to … stopped unexpectedly" is said by the provider process's
    side of the adapter, which is given the same name (a process of this test's own,
    killed while the proxy holds the request)."""
    env = {"ANTHROPIC_BASE_URL": proxy.anthropic_base_url}
    provider = make_provider(ANTHROPIC, KEY, retry=NONE, environ=env)
    spec = provider._require_sender().spec  # noqa: SLF001 - what the process is told
    request = ChatRequest("claude-haiku-4-5", [Turn("user", [TextBlock("hi")])], cache=False)
    params, info = provider.request_params(request), provider.model_info(request.model)
    await provider.aclose()
    process = ProviderProcess()
    try:
        remote = RemoteSender(spec, process)
        await remote.open()
        proxy.fail("hang", seconds=30)  # the request goes, no answer comes
        events = remote.attempt(params, info)
        waiting = asyncio.ensure_future(anext(events))
        await asyncio.sleep(0.5)
        os.kill(process._proc.pid, signal.SIGKILL)  # noqa: SLF001 - a crash
        with pytest.raises(ProviderProcessStopped) as stopped:
            await asyncio.wait_for(waiting, 20)
        where = f"the server at {_address(proxy.anthropic_base_url)}"
        assert str(stopped.value).startswith(f"Parley's connection to {where} stopped "
                                             "unexpectedly")
        await events.aclose()
    finally:
        process.close()

"""ProviderHub: configured providers, keys, default model, connection tests.

Every test runs on a sessions.db file and on a PostgreSQL database (``store`` below).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from parley.core.keys import FileBackend, KeyStore
from parley.core.providers.errors import AuthenticationFailed, NetworkError
from parley.core.providers.hub import ProviderHub, UnknownProvider
from parley.core.providers.registry import ProviderConfigError
from parley.core.providers.retry import RetryPolicy
from parley.core.settings import Settings
from parley.core.store.async_store import AsyncStore
from tests.core.rawdb import raw_rows

FAST = RetryPolicy(max_retries=0)


@pytest.fixture
def store(any_store: AsyncStore) -> AsyncStore:
    """The shared ``store`` (tests/core/conftest.py), once on each backend."""
    return any_store


def stored(store: AsyncStore, secret: str) -> bool:
    """True when ``secret`` is anywhere in the sessions.db file (or its WAL), or in the
    database's settings and app state."""
    if not store.on_server:  # the file and its write-ahead log
        files = [Path(store.path), Path(f"{store.path}-wal")]
        return any(secret.encode() in f.read_bytes() for f in files if f.exists())
    [(found,)] = raw_rows(store.sync, "SELECT (SELECT count(*) FROM settings WHERE value LIKE ?)"
                                      " + (SELECT count(*) FROM app_state WHERE value LIKE ?)",
                          (f"%{secret}%", f"%{secret}%"))
    return bool(found)


def _hub(store, tmp_path, environ=None):
    keys = KeyStore(backend=FileBackend(tmp_path / "keys.json"), environ=environ or {})
    return ProviderHub(store, keys=keys, retry=FAST, environ=environ or {})


async def test_nothing_configured_on_a_new_machine(store, tmp_path):
    hub = _hub(store, tmp_path)
    await hub.load()
    assert not hub.is_configured and hub.default_model_ref() is None
    with pytest.raises(UnknownProvider):
        hub.resolve("anthropic:claude-sonnet-4-6")
    await hub.aclose()


async def test_environment_key_makes_a_builtin_provider_usable(store, tmp_path):
    hub = _hub(store, tmp_path, environ={"ANTHROPIC_API_KEY": "sk-ant-from-env"})
    await hub.load()
    assert [c.id for c in hub.configs] == ["anthropic"]
    assert hub.key_source("anthropic") == "environment"
    assert hub.default_model_ref() == "anthropic:claude-sonnet-4-6"
    await hub.aclose()


async def test_a_keyring_key_without_its_settings_sends_nothing_to_the_default_server(
    store, tmp_path, fake_provider
):
    # Trial 17b: Anthropic set up with a server address of its own, sessions.db damaged,
    # "Start a new file": the settings went, the key stayed in the keyring, and the
    # chats (and the key) went to https://api.anthropic.com, a server never chosen.
    hub = _hub(store, tmp_path)
    await hub.load()
    await hub.add_provider("anthropic", base_url=fake_provider.anthropic_base_url,
                           api_key="sk-ant-for-my-own-server", default_model="claude-haiku-4-5")
    await hub.aclose()
    await Settings.of(store).set("providers", [])  # the settings gone, the key kept

    again = _hub(store, tmp_path)
    await again.load()
    assert again.configs == [] and not again.is_configured  # set-up asks again
    await again.add_provider("anthropic", base_url=fake_provider.anthropic_base_url,
                             default_model="claude-haiku-4-5")  # no key typed: the saved one
    assert again.key_source("anthropic") != "none"
    assert [c.base_url for c in again.configs] == [fake_provider.anthropic_base_url]
    await again.aclose()


async def test_added_provider_persists_with_its_key_outside_the_database(
    store, tmp_path, fake_provider
):
    hub = _hub(store, tmp_path)
    await hub.load()
    await hub.add_provider(
        "openai_compatible", name="Ollama", base_url=fake_provider.openai_base_url,
        default_model="llama3.2",
    )
    await hub.add_provider(
        "anthropic", base_url=fake_provider.anthropic_base_url, api_key="sk-ant-secret-1234",
        default_model="claude-haiku-4-5",
    )
    await hub.aclose()

    again = _hub(store, tmp_path)
    await again.load()
    assert {c.id for c in again.configs} == {"ollama", "anthropic"}
    assert again.key_source("anthropic") == "file"
    assert again.default_model_ref() == "ollama:llama3.2"  # the first one set up
    assert not stored(store, "sk-ant-secret-1234")
    assert stored(store, "llama3.2")  # (where the providers are kept)
    models = await again.list_models("anthropic")
    assert models
    await again.aclose()


async def test_compatible_server_needs_an_address(store, tmp_path):
    hub = _hub(store, tmp_path)
    await hub.load()
    with pytest.raises(ProviderConfigError, match="address"):
        await hub.add_provider("openai_compatible", name="LM Studio", base_url="  ")
    assert not hub.is_configured
    await hub.aclose()


async def test_test_connection_reports_bad_key_and_dead_server_in_words(
    store, tmp_path, fake_provider, closed_port_url
):
    hub = _hub(store, tmp_path)
    await hub.load()
    fake_provider.valid_keys = {"good-key"}
    models = await hub.test_connection("anthropic", fake_provider.anthropic_base_url, "good-key")
    assert models
    with pytest.raises(AuthenticationFailed) as bad:
        await hub.test_connection("anthropic", fake_provider.anthropic_base_url, "wrong-key")
    assert "wrong-key" not in str(bad.value)
    with pytest.raises(NetworkError):
        await hub.test_connection("openai_compatible", closed_port_url + "/v1", None)
    await hub.aclose()


async def test_one_hour_cache_setting_reaches_the_anthropic_adapter(store, tmp_path):
    hub = _hub(store, tmp_path, environ={"ANTHROPIC_API_KEY": "sk-ant-env"})
    await hub.load()
    assert hub.get("anthropic").caps.cache_ttl_s == 300
    await store.set_setting("cache.anthropic_ttl", "1h")
    await hub.load()
    assert hub.get("anthropic").caps.cache_ttl_s == 3600
    await hub.aclose()


async def test_an_address_typed_without_a_scheme_reaches_the_server(store, tmp_path,
                                                                    fake_provider):
    """The trial: ``localhost:8766`` said the (running) server could not be reached. A
    local address gets http://, another https://, and the server answers."""
    from parley.core.providers.registry import with_scheme

    hub = _hub(store, tmp_path)
    await hub.load()
    bare = fake_provider.base_url.removeprefix("http://")  # 127.0.0.1:PORT
    assert await hub.test_connection("openai_compatible", bare + "/v1", None)
    assert await hub.test_connection("openai_compatible", "localhost:" + bare.split(":")[1],
                                     None)
    config = await hub.add_provider("openai_compatible", name="Local", base_url=bare + "/v1")
    assert await hub.list_models(config.id)  # saved as typed, used with http://
    fake_provider.valid_keys = {"good-key"}
    assert await hub.test_connection("anthropic", bare, "good-key")
    assert with_scheme("api.example.com/v1") == "https://api.example.com/v1"
    assert with_scheme("192.168.1.5:11434") == "http://192.168.1.5:11434"
    assert with_scheme("https://example.com") == "https://example.com"
    await hub.aclose()


async def test_a_model_list_asked_while_the_settings_change_comes_from_the_new_settings(
        store, tmp_path, fake_provider):
    """load() (any settings change) closes the adapters; a listing in flight on the old
    one is asked again of the new one instead of failing with the SDK's "client has been
    closed" (Settings → Providers changing a model's window while its models listed)."""
    import asyncio

    hub = _hub(store, tmp_path)
    await hub.load()
    config = await hub.add_provider("openai_compatible", name="Local",
                                    base_url=fake_provider.openai_base_url)
    fake_provider.openai_models = [{"id": "local-model"}]
    await hub.prepare(config.id)
    fake_provider.models_delay_s = 0.5
    listing = asyncio.ensure_future(hub.list_models(config.id))
    await asyncio.sleep(0.2)  # the request is at the server
    await hub.load()  # closes the adapter the listing uses
    fake_provider.models_delay_s = 0.0
    models = await asyncio.wait_for(listing, 10)
    assert [m.id for m in models] == ["local-model"]
    assert [m.id for m in hub.cached_models(config.id) or []] == ["local-model"]
    await hub.aclose()

"""ProviderHub at start-up: model lists kept in the store, SDKs imported off the caller's
thread and only for the providers in use.

The tests of kept model lists run on a sessions.db file and on PostgreSQL (``store`` below).
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from parley.core.app_state import MODELS
from parley.core.keys import FileBackend, KeyStore
from parley.core.providers.hub import ProviderHub
from parley.core.providers.retry import RetryPolicy
from parley.core.store.async_store import AsyncStore

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def store(any_store: AsyncStore) -> AsyncStore:
    """The shared ``store`` (tests/core/conftest.py), once on each backend."""
    return any_store


def _hub(store, tmp_path, environ=None) -> ProviderHub:
    env = environ or {}
    keys = KeyStore(backend=FileBackend(tmp_path / "keys.json"), environ=env)
    return ProviderHub(store, keys=keys, retry=RetryPolicy(max_retries=0), environ=env)


async def test_a_listed_model_list_is_there_at_the_next_start_without_asking(
        store, tmp_path, fake_provider):
    env = {"ANTHROPIC_API_KEY": "sk-ant-x", "ANTHROPIC_BASE_URL": fake_provider.anthropic_base_url}
    hub = _hub(store, tmp_path, env)
    await hub.load()
    assert hub.cached_models("anthropic") is None  # never listed
    listed = await hub.list_models("anthropic")
    assert listed and hub.cached_models("anthropic") == listed
    await hub.aclose()

    asked = len(fake_provider.requests)
    again = _hub(store, tmp_path, env)
    await again.load()
    assert again.cached_models("anthropic") == listed  # every field, as listed
    assert len(fake_provider.requests) == asked  # from sessions.db, not the server
    await again.aclose()


async def test_a_model_list_from_another_address_is_not_used(store, tmp_path, fake_provider):
    env = {"ANTHROPIC_API_KEY": "sk-ant-x", "ANTHROPIC_BASE_URL": fake_provider.anthropic_base_url}
    hub = _hub(store, tmp_path, env)
    await hub.load()
    await hub.list_models("anthropic")
    await hub.aclose()

    moved = _hub(store, tmp_path, {**env, "ANTHROPIC_BASE_URL": "http://127.0.0.1:9"})
    await moved.load()
    assert moved.cached_models("anthropic") is None
    await moved.aclose()


async def test_a_kept_list_with_fields_added_or_dropped_still_reads(store, tmp_path):
    env = {"OPENAI_API_KEY": "sk-x"}
    hub = _hub(store, tmp_path, env)
    origin = {"kind": "openai", "base_url": "https://api.openai.com/v1"}
    await store.set_state(MODELS.key("openai"), {**origin, "models": [
        {"id": "gpt-x", "context_window": 1000, "max_output_tokens": 100,
         "a_field_from_a_newer_parley": 7},
    ]})
    await hub.load()
    [model] = hub.cached_models("openai") or []
    assert (model.id, model.context_window, model.max_output_tokens) == ("gpt-x", 1000, 100)
    assert model.display_name == ""  # not kept: the default

    await store.set_state(MODELS.key("openai"), {**origin, "models": [{"id": "x"}]})
    await hub.load()
    assert hub.cached_models("openai") is None  # unreadable: asked again, never guessed
    await hub.aclose()


async def test_prepare_builds_the_adapter_once_in_a_worker_thread(store, tmp_path):
    hub = _hub(store, tmp_path, {"OPENAI_API_KEY": "sk-x"})
    built_in: list[str] = []
    real_build = hub._build

    def recording_build(config):
        built_in.append(threading.current_thread().name)
        return real_build(config)

    hub._build = recording_build  # type: ignore[method-assign]
    await hub.load()
    assert not hub.is_prepared("openai:gpt-5")
    await asyncio.gather(hub.prepare_all(first="openai:gpt-5"), hub.prepare("openai"))
    adapter = hub.get("openai")
    await hub.prepare("openai:gpt-5")
    assert hub.is_prepared("openai") and hub.get("openai") is adapter
    assert len(built_in) == 1 and built_in[0] != threading.current_thread().name
    await hub.aclose()


SCRIPT = """
import asyncio, sys, tempfile
from pathlib import Path
from parley.core.keys import FileBackend, KeyStore
from parley.core.providers.hub import ProviderHub
from parley.core.store.async_store import AsyncStore

async def main():
    folder = Path(tempfile.mkdtemp())
    store = await AsyncStore.open(folder / "sessions.db")
    env = {"OPENAI_API_KEY": "sk-x"}
    hub = ProviderHub(store, keys=KeyStore(backend=FileBackend(folder / "k.json"), environ=env),
                      environ=env)
    await hub.load()
    print("loaded:", sorted(m for m in ("anthropic", "openai") if m in sys.modules))
    await hub.prepare_all()
    print("prepared:", sorted(m for m in ("anthropic", "openai") if m in sys.modules))
    await hub.aclose()
    await store.close()

asyncio.run(main())
"""


def test_no_sdk_is_imported_in_parleys_own_process() -> None:
    """The SDKs are the provider process's (parley.core.providers.process): preparing a
    provider there leaves Parley's process without them."""
    out = subprocess.run([sys.executable, "-c", SCRIPT], cwd=ROOT, capture_output=True,
                         text=True, timeout=120, env={"PATH": "/usr/bin:/bin"})
    assert out.returncode == 0, out.stderr
    assert "loaded: []" in out.stdout, out.stdout
    assert "prepared: []" in out.stdout, out.stdout


async def test_a_learnt_window_outlives_a_restart_and_a_new_model_list(
        store, tmp_path, fake_provider):
    """A server that names no window (llama-cpp-python: no /props) refused a request at
    2,048 tokens: the window learnt is kept with the model list, read back at the next
    start, and not lost when the server lists its models again (without a window)."""
    tiny = "/models/tiny.gguf"
    fake_provider.openai_models = [{"id": tiny}]
    fake_provider.windows.llamacpp(2_048, overflow="llamacpp_python")
    env = {"OPENAI_BASE_URL": fake_provider.openai_base_url}
    hub = _hub(store, tmp_path, env)
    await hub.load()
    await hub.list_models("openai")
    assert hub.model_info(f"openai:{tiny}").context_window != 2_048  # not said yet
    hub.learn_limits(f"openai:{tiny}", 2_048)
    assert hub.model_info(f"openai:{tiny}").context_window == 2_048
    await asyncio.sleep(0.2)  # the kept list is written in the background
    await hub.aclose()

    again = _hub(store, tmp_path, env)
    await again.load()
    assert again.model_info(f"openai:{tiny}").context_window == 2_048  # from sessions.db
    await again.list_models("openai")  # the server still names no window
    assert again.model_info(f"openai:{tiny}").context_window == 2_048
    await again.aclose()

    third = _hub(store, tmp_path, env)
    await third.load()
    assert third.model_info(f"openai:{tiny}").context_window == 2_048
    await third.aclose()


async def test_the_models_set_up_tested_are_kept_as_listed(store, tmp_path, fake_provider):
    """Set-up saves a provider with the models its connection test listed: they are
    named and their limits known at once, and there at the next start, with no second
    request to the server."""
    fake_provider.anthropic_models = [{"id": "claude-fresh-5", "display_name": "Claude Fresh 5",
                                       "max_input_tokens": 500_000, "max_tokens": 64_000}]
    hub = _hub(store, tmp_path)
    await hub.load()
    url = fake_provider.anthropic_base_url
    tested = await hub.test_connection("anthropic", url, "sk-ant-x")
    asked = len(fake_provider.requests)
    config = await hub.add_provider("anthropic", base_url=url, api_key="sk-ant-x",
                                    default_model="claude-fresh-5", models=tested)
    assert hub.cached_models(config.id) == tested  # the picker's names (cached_choices)
    assert [m.display_name for m in tested] == ["Claude Fresh 5"]
    assert hub.model_info(f"{config.id}:claude-fresh-5").context_window == 500_000
    assert len(fake_provider.requests) == asked  # kept, not asked again
    await hub.aclose()

    again = _hub(store, tmp_path)
    await again.load()
    assert again.cached_models(config.id) == tested
    await again.aclose()

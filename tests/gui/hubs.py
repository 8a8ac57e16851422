"""A loaded ProviderHub on a real sessions.db and a file key store, for GUI tests that
show Settings or the model picker without a main window."""

from __future__ import annotations

from pathlib import Path

from parley.core.keys import FileBackend, KeyStore
from parley.core.providers.hub import ProviderHub
from parley.core.providers.retry import RetryPolicy
from parley.core.store.async_store import AsyncStore


async def open_hub(folder: Path, environ: dict[str, str] | None = None) -> ProviderHub:
    """Open ``folder/sessions.db`` and load a hub on it (no retries; keys in
    ``folder/keys.json``; ``environ`` as the process environment, default empty)."""
    env = environ or {}
    store = await AsyncStore.open(folder / "sessions.db")
    keys = KeyStore(backend=FileBackend(folder / "keys.json"), environ=env)
    hub = ProviderHub(store, keys=keys, retry=RetryPolicy(max_retries=0), environ=env)
    await hub.load()
    return hub

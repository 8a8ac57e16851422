"""A workspace with a loaded ProviderHub on a real sessions.db and a file key store, for GUI
tests that show Settings or the model picker without a main window."""

from __future__ import annotations

from pathlib import Path

from parley.core.keys import FileBackend, KeyStore
from parley.core.providers.retry import RetryPolicy
from parley.core.workspace import Options, Workspace

#: The store, the hub and a runner without tools; no backups, timers or SDK imports.
HUB_ONLY = Options(tools=False, mcp=False, backups=False, cache_timer=False, prepare=False)


async def open_hub(folder: Path, environ: dict[str, str] | None = None) -> Workspace:
    """Open ``folder/sessions.db`` and load a hub on it (no retries; keys in
    ``folder/keys.json``; ``environ`` as the process environment, default empty): the
    workspace, stage READY (``ws.store``, ``ws.hub``, ``ws.runner``); close it after."""
    env = environ or {}
    ws = Workspace(folder, target=folder / "sessions.db", environ=env,
                   keys=KeyStore(backend=FileBackend(folder / "keys.json"), environ=env),
                   retry=RetryPolicy(max_retries=0), options=HUB_ONLY)
    await ws.open_store()
    await ws.open_providers()
    return ws

"""The provider hub the core's run-loop tests share: real keys file, real SDKs, fake server.

``fake_hub`` sets up Anthropic (``anthropic:claude-sonnet-4-6``) and OpenAI
(``openai:gpt-5``) against the fake provider server on 127.0.0.1, plus an
OpenAI-compatible provider when asked (OpenAI at the fake's ``openai_own_url``, a
compatible server at its ``openai_base_url``), with retries off so failures show at once.
``fake_workspace`` opens a whole :class:`~parley.core.workspace.Workspace` (store, that
hub, a runner) the same way, as the window opens it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from parley.core.keys import FileBackend, KeyStore
from parley.core.providers.hub import ProviderHub
from parley.core.providers.retry import RetryPolicy
from parley.core.workspace import Options, Workspace

FAST = RetryPolicy(max_retries=0, initial_delay_s=0.01, max_delay_s=0.01)
#: What the run-loop tests open: the store, the hub and a runner without tools, no
#: backups, no cache timer; replies journalled every 20 ms and handed on at once.
BARE = Options(tools=False, mcp=False, backups=False, cache_timer=False, prepare=False,
               journal_interval_s=0.02, emit_interval_s=0.0)


async def fake_hub(store: Any, tmp_path: Path, fake: Any, *, openai: bool = True,
                   compatible: dict[str, Any] | None = None,
                   retry: RetryPolicy = FAST) -> ProviderHub:
    """A loaded hub on ``store`` with its keys in ``tmp_path/keys.json``.

    Args:
        store: an ``AsyncStore``.
        tmp_path: the test's folder.
        fake: the ``fake_provider`` fixture.
        openai: add the OpenAI provider too.
        compatible: ``add_provider`` arguments of an OpenAI-compatible provider
            (``name``, ``default_model``, ``provider_id`` …) on the fake's OpenAI URL.
        retry: the hub's retry policy.
    """
    keys = KeyStore(backend=FileBackend(tmp_path / "keys.json"), environ={})
    hub = ProviderHub(store, keys=keys, retry=retry, environ={})
    await hub.load()
    await add_fakes(hub, fake, openai=openai, compatible=compatible)
    return hub


async def add_fakes(hub: ProviderHub, fake: Any, *, openai: bool = True,
                    compatible: dict[str, Any] | None = None) -> None:
    """Set up the fake server's providers in ``hub`` (arguments as :func:`fake_hub`)."""
    await hub.add_provider("anthropic", base_url=fake.anthropic_base_url,
                           api_key="sk-test-anthropic", default_model="claude-sonnet-4-6")
    if openai:
        await hub.add_provider("openai", base_url=fake.openai_own_url,
                               api_key="sk-test-openai", default_model="gpt-5")
    if compatible is not None:
        await hub.add_provider("openai_compatible", base_url=fake.openai_base_url,
                               **compatible)


async def fake_workspace(tmp_path: Path, fake: Any, *, at: Path | str | None = None,
                         openai: bool = True, compatible: dict[str, Any] | None = None,
                         options: Options = BARE, retry: RetryPolicy = FAST) -> Workspace:
    """An open workspace (stage READY) with the fake's providers set up (:func:`add_fakes`);
    the caller closes it (``await ws.close()``).

    Args:
        tmp_path: the test's folder (keys in ``keys.json`` there).
        fake: the ``fake_provider`` fixture.
        at: the store (a sessions.db path or a PostgreSQL URL; default
            ``tmp_path/sessions.db``).
        openai, compatible: as :func:`fake_hub`.
        options: the parts opened (default :data:`BARE`).
        retry: the hub's retry policy.
    """
    ws = Workspace(tmp_path, target=at if at is not None else tmp_path / "sessions.db",
                   environ={}, keys=KeyStore(backend=FileBackend(tmp_path / "keys.json"),
                                             environ={}),
                   retry=retry, options=options)
    try:
        await ws.open_store()
        await ws.open_providers()
        await add_fakes(ws.hub, fake, openai=openai, compatible=compatible)
    except BaseException:
        await ws.close()
        raise
    return ws

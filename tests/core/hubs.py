"""The provider hub the core's run-loop tests share: real keys file, real SDKs, fake server.

``fake_hub`` sets up Anthropic (``anthropic:claude-sonnet-4-6``) and OpenAI
(``openai:gpt-5``) against the fake provider server on 127.0.0.1, plus an
OpenAI-compatible provider when asked (OpenAI at the fake's ``openai_own_url``, a
compatible server at its ``openai_base_url``), with retries off so failures show at once.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from parley.core.keys import FileBackend, KeyStore
from parley.core.providers.hub import ProviderHub
from parley.core.providers.retry import RetryPolicy

FAST = RetryPolicy(max_retries=0, initial_delay_s=0.01, max_delay_s=0.01)


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
    await hub.add_provider("anthropic", base_url=fake.anthropic_base_url,
                           api_key="sk-test-anthropic", default_model="claude-sonnet-4-6")
    if openai:
        await hub.add_provider("openai", base_url=fake.openai_own_url,
                               api_key="sk-test-openai", default_model="gpt-5")
    if compatible is not None:
        await hub.add_provider("openai_compatible", base_url=fake.openai_base_url,
                               **compatible)
    return hub

"""The providers the user has set up, and their adapters, for the rest of the app.

Provider settings live in sessions.db (setting ``providers``: a list of
:class:`ProviderConfig` objects as JSON); keys live in the OS keyring (or its
fallback, see ``core.keys``) and never in the database. A built-in provider
whose environment key is set (``ANTHROPIC_API_KEY``, ``OPENAI_API_KEY``) is
usable without any set-up, as people who already use the SDKs expect.

Keyring calls can block (a locked keyring, a slow D-Bus), so they run on one
worker thread of their own, never on the caller's event loop.
"""

from __future__ import annotations

import asyncio
import logging
import re
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, replace
from typing import Any

from core.errors import ParleyError
from core.keys import KeyStore
from core.providers.base import ModelInfo, Provider
from core.providers.capabilities import ProviderKind
from core.providers.catalog import lookup, with_reported
from core.providers.model_ref import format_model_ref, parse_model_ref
from core.providers.registry import (
    BUILTIN_PROVIDERS,
    ENV_API_KEY,
    ProviderConfig,
    ProviderConfigError,
    make_provider,
)
from core.providers.retry import RetryPolicy

log = logging.getLogger(__name__)

#: Seconds :meth:`ProviderHub.fetch_model_info` waits for a provider's model list.
LIST_TIMEOUT_S = 10.0
#: Seconds before a provider whose model list could not be read is asked again.
LIST_RETRY_S = 300.0

SETTING_PROVIDERS = "providers"
SETTING_DEFAULT_MODEL = "default_model"
SETTING_MODEL_OVERRIDES = "model_overrides"
SETTING_ANTHROPIC_TTL = "cache.anthropic_ttl"

_KIND_NAMES: dict[str, str] = {
    "anthropic": "Anthropic",
    "openai": "OpenAI",
    "openai_compatible": "Local server",
}


class UnknownProvider(ProviderConfigError):
    """A model reference names a provider that is not set up."""

    def __init__(self, provider_id: str) -> None:
        super().__init__(
            f"No provider called '{provider_id}' is set up. Add it in Settings → Providers, "
            "or pick another model."
        )
        self.provider_id = provider_id


def _slug(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-") or "server"


class ProviderHub:
    """Configured providers, their keys and adapters.

    Args:
        store: an ``AsyncStore`` (settings are read and written through it).
        keys: where API keys are kept (default: detected keyring or file).
        retry: retry policy handed to adapters (tests pass a fast one).
        environ: environment for ``*_API_KEY`` / ``*_BASE_URL`` (default ``os.environ``).
    """

    def __init__(
        self,
        store: Any,
        *,
        keys: KeyStore | None = None,
        retry: RetryPolicy | None = None,
        environ: dict[str, str] | None = None,
    ) -> None:
        self.store = store
        self.keys = keys or KeyStore(environ=environ)
        self.retry = retry
        self.environ = environ
        self._saved: list[ProviderConfig] = []
        self._keys: dict[str, str | None] = {}
        self._key_sources: dict[str, str] = {}
        self._providers: dict[str, Provider] = {}
        self._overrides: dict[str, Any] = {}
        self._default_model: str | None = None
        self._anthropic_ttl_s = 300
        # Limits the providers gave: {provider id: {model id: (window, output)}}.
        self._reported: dict[str, dict[str, tuple[int | None, int | None]]] = {}
        self._listed_at: dict[str, tuple[float, bool]] = {}  # id -> (when, it worked)
        self._listed_ids: dict[str, tuple[str, ...]] = {}  # id -> the model ids it listed
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="parley-keys")

    async def _in_keys_thread(self, fn: Any, *args: Any) -> Any:
        return await asyncio.get_running_loop().run_in_executor(self._pool, fn, *args)

    async def load(self) -> None:
        """Read provider settings and keys (keyring on its own thread)."""
        raw = await self.store.get_setting(SETTING_PROVIDERS, [])
        self._saved = [ProviderConfig(**c) for c in raw if isinstance(c, dict)]
        self._default_model = await self.store.get_setting(SETTING_DEFAULT_MODEL, None)
        self._overrides = await self.store.get_setting(SETTING_MODEL_OVERRIDES, {}) or {}
        ttl = await self.store.get_setting(SETTING_ANTHROPIC_TTL, "5m")
        self._anthropic_ttl_s = 3600 if ttl == "1h" else 300
        self._keys, self._key_sources = {}, {}
        for config in self._all_candidates():
            key = await self._in_keys_thread(
                self.keys.get, config.id, ENV_API_KEY.get(config.kind)
            )
            self._keys[config.id] = key.value if key is not None else None
            self._key_sources[config.id] = key.source if key is not None else "none"
        await self._close_providers()

    def _all_candidates(self) -> list[ProviderConfig]:
        saved_ids = {c.id for c in self._saved}
        return self._saved + [c for c in BUILTIN_PROVIDERS if c.id not in saved_ids]

    @property
    def configs(self) -> list[ProviderConfig]:
        """Usable providers: the saved ones, plus built-ins that have a key
        (from the keyring or the environment)."""
        saved_ids = {c.id for c in self._saved}
        implicit = [
            c for c in BUILTIN_PROVIDERS if c.id not in saved_ids and self._keys.get(c.id)
        ]
        return self._saved + implicit

    @property
    def is_configured(self) -> bool:
        """True when at least one provider can be used."""
        return bool(self.configs)

    def config(self, provider_id: str) -> ProviderConfig:
        """Return one provider's settings.

        Raises:
            UnknownProvider: no usable provider has that id.
        """
        for c in self.configs:
            if c.id == provider_id:
                return c
        raise UnknownProvider(provider_id)

    def key_source(self, provider_id: str) -> str:
        """Where the provider's key comes from (``keyring``, ``file``,
        ``environment`` or ``none``), as read by the last :meth:`load`; never the key."""
        return self._key_sources.get(self.config(provider_id).id, "none")

    def _new_id(self, kind: ProviderKind, name: str) -> str:
        base = kind if kind != "openai_compatible" else _slug(name)
        taken = {c.id for c in self._saved}
        if base not in taken:
            return base
        n = 2
        while f"{base}-{n}" in taken:
            n += 1
        return f"{base}-{n}"

    async def add_provider(
        self,
        kind: ProviderKind,
        *,
        name: str | None = None,
        base_url: str | None = None,
        api_key: str | None = None,
        default_model: str | None = None,
        provider_id: str | None = None,
    ) -> ProviderConfig:
        """Save a provider (and its key, in the keyring) and make it usable.

        Args:
            kind: the API family.
            name: display name (default: the family's name).
            base_url: API root; required for ``openai_compatible``.
            api_key: saved through ``core.keys``; None keeps any saved/env key.
            default_model: bare model id; it also becomes the app's default
                model when none is set.
            provider_id: replace the provider with this id instead of adding one.

        Returns:
            The saved configuration.

        Raises:
            ProviderConfigError: a compatible server without a base URL.
            KeyStoreError: the key could not be saved.
        """
        if kind == "openai_compatible" and not (base_url or "").strip():
            raise ProviderConfigError(
                "Enter the server's address, for example http://localhost:11434/v1 for Ollama."
            )
        name = (name or "").strip() or _KIND_NAMES[kind]
        pid = provider_id or self._new_id(kind, name)
        config = ProviderConfig(pid, kind, name, (base_url or "").strip() or None, default_model)
        if api_key and api_key.strip():
            await self._in_keys_thread(self.keys.set, pid, api_key)
        self._saved = [c for c in self._saved if c.id != pid] + [config]
        self.forget_limits(pid)  # another server or key may serve other models
        await self.store.set_setting(SETTING_PROVIDERS, [asdict(c) for c in self._saved])
        if default_model and not self._default_model:
            await self.set_default_model(format_model_ref(pid, default_model))
        await self.load()
        return config

    async def remove_provider(self, provider_id: str) -> None:
        """Forget a saved provider and its saved key."""
        self._saved = [c for c in self._saved if c.id != provider_id]
        self.forget_limits(provider_id)
        await self.store.set_setting(SETTING_PROVIDERS, [asdict(c) for c in self._saved])
        await self._in_keys_thread(self.keys.delete, provider_id)
        await self.load()

    async def set_default_model(self, model_ref: str) -> None:
        """Make ``model_ref`` (``provider:model``) the model of new sessions."""
        parse_model_ref(model_ref)
        self._default_model = model_ref
        await self.store.set_setting(SETTING_DEFAULT_MODEL, model_ref)

    def default_model_ref(self) -> str | None:
        """The model of new sessions: the setting if its provider is usable, else
        the first usable provider's default model; None when nothing is set up."""
        usable = {c.id: c for c in self.configs}
        if self._default_model:
            pid, _ = parse_model_ref(self._default_model)
            if pid in usable:
                return self._default_model
        for c in usable.values():
            if c.default_model:
                return format_model_ref(c.id, c.default_model)
        return None

    def get(self, provider_id: str) -> Provider:
        """Return the adapter of a usable provider (built once, then reused).

        Raises:
            UnknownProvider: no usable provider has that id.
        """
        if provider_id not in self._providers:
            config = self.config(provider_id)
            self._providers[provider_id] = make_provider(
                config,
                self._keys.get(provider_id),
                retry=self.retry,
                cache_ttl_s=self._anthropic_ttl_s,
                model_overrides=self._overrides,
                environ=self.environ,
            )
            self._share_limits(provider_id)
        return self._providers[provider_id]

    def resolve(self, model_ref: str) -> tuple[Provider, str]:
        """Return ``(adapter, bare model id)`` for ``"provider:model"``.

        Raises:
            InvalidModelRef: not ``provider:model``.
            UnknownProvider: the provider is not set up.
        """
        pid, model_id = parse_model_ref(model_ref)
        return self.get(pid), model_id

    def model_info(self, model_ref: str) -> ModelInfo:
        """What Parley knows of a model: context window, output limit, prices.

        The limits the provider gave (its model list, a local server's own
        endpoints, the limit it named when refusing a request) come first,
        then the user's ``model_overrides`` (kept when smaller), then the
        catalog, then a safe default; ``window_source`` / ``output_source``
        say which. Never makes a request (see :meth:`fetch_model_info`).
        """
        pid, model_id = parse_model_ref(model_ref)
        kind: ProviderKind = "openai_compatible"
        for c in self._all_candidates():
            if c.id == pid:
                kind = c.kind
        window, output = self._reported.get(pid, {}).get(model_id, (None, None))
        return with_reported(lookup(kind, model_id, self._overrides), window, output)

    async def fetch_model_info(self, model_ref: str) -> ModelInfo:
        """:meth:`model_info`, after asking the provider for its model list once.

        The list is asked for at most once per provider (again after
        :data:`LIST_RETRY_S` seconds when it failed), within
        :data:`LIST_TIMEOUT_S` seconds; a provider that cannot list its models
        leaves the settings, the catalog or the default in place.

        Raises:
            InvalidModelRef: not ``provider:model``.
        """
        pid, _ = parse_model_ref(model_ref)
        when, worked = self._listed_at.get(pid, (None, False))
        fresh = when is not None and (worked or time.monotonic() - when < LIST_RETRY_S)
        if not fresh and any(c.id == pid for c in self.configs):
            try:
                await asyncio.wait_for(self.list_models(pid), LIST_TIMEOUT_S)
            except (TimeoutError, ParleyError) as exc:
                log.info("no model list from %s: %s", pid, exc)
                self._listed_at[pid] = (time.monotonic(), False)
        return self.model_info(model_ref)

    async def list_models(self, provider_id: str) -> list[ModelInfo]:
        """Ask the provider which models it serves (and remember the limits it gives).

        Raises:
            ProviderError: the provider could not be reached or refused the key.
        """
        models = await self.get(provider_id).list_models()
        self.remember_models(provider_id, models)
        return models

    def remember_models(self, provider_id: str, models: list[ModelInfo]) -> None:
        """Keep the limits of a provider's listed models for :meth:`model_info`.

        Args:
            provider_id: the provider that listed them.
            models: its :meth:`list_models` result (or the same read back from a
                cache); only limits whose source is ``provider`` are kept.
        """
        self._listed_ids[provider_id] = tuple(m.id for m in models)
        known = self._reported.setdefault(provider_id, {})
        for m in models:
            window = m.context_window if m.window_source == "provider" else None
            output = m.max_output_tokens if m.output_source == "provider" else None
            if window or output:
                known[m.id] = (window, output)
        self._listed_at[provider_id] = (time.monotonic(), True)
        self._share_limits(provider_id)

    def listed_ids(self, provider_id: str) -> tuple[str, ...] | None:
        """The model ids the provider last listed (:meth:`list_models`), or None when
        it has not listed them since it was set up (no request is made)."""
        return self._listed_ids.get(provider_id)

    def learn_limits(self, model_ref: str, window: int | None) -> None:
        """Remember a context window the provider named (e.g. when it refused a request
        as too long) for :meth:`model_info` and the adapter.

        Args:
            model_ref: ``provider:model``.
            window: the window in tokens (None or 0: nothing learnt).
        """
        if not window or window <= 0:
            return
        pid, model_id = parse_model_ref(model_ref)
        known = self._reported.setdefault(pid, {})
        known[model_id] = (window, known.get(model_id, (None, None))[1])
        self._share_limits(pid)

    def forget_limits(self, provider_id: str) -> None:
        """Drop what a provider said of its models (its address or key changed)."""
        self._reported.pop(provider_id, None)
        self._listed_at.pop(provider_id, None)
        self._listed_ids.pop(provider_id, None)

    def _share_limits(self, provider_id: str) -> None:
        """Give the provider's adapter, if built, the limits the hub knows."""
        adapter = self._providers.get(provider_id)
        remember = getattr(adapter, "remember_limits", None)
        if remember is None:
            return
        for model_id, (window, output) in self._reported.get(provider_id, {}).items():
            remember(model_id, window, output)

    async def test_connection(
        self, kind: ProviderKind, base_url: str | None, api_key: str | None
    ) -> list[ModelInfo]:
        """Try a provider's settings before saving them.

        Returns:
            The models it serves (list endpoint), so set-up can offer them.

        Raises:
            ProviderError: a readable reason (bad key, unreachable server …).
            ProviderConfigError: a compatible server without an address.
        """
        config = ProviderConfig("test", kind, _KIND_NAMES[kind], base_url or None)
        key = (api_key or "").strip() or None
        if key is None and kind != "openai_compatible":
            stored = await self._in_keys_thread(self.keys.get, kind, ENV_API_KEY.get(kind))
            key = stored.value if stored is not None else None
        provider = make_provider(config, key, retry=self.retry, environ=self.environ)
        try:
            return await provider.list_models()
        finally:
            await provider.aclose()

    async def _close_providers(self) -> None:
        providers, self._providers = self._providers, {}
        for p in providers.values():
            await p.aclose()

    async def aclose(self) -> None:
        """Close every adapter's HTTP client and the keys thread."""
        await self._close_providers()
        self._pool.shutdown(wait=False)

    def with_config(self, config: ProviderConfig, **changes: Any) -> ProviderConfig:
        """Return ``config`` with fields changed (helper for Settings)."""
        return replace(config, **changes)

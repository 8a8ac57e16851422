"""The providers the user has set up, and their adapters, for the rest of the app.

Provider settings live in sessions.db (setting ``providers``: a list of
:class:`ProviderConfig` objects as JSON); keys live in the OS keyring (or its
fallback, see ``parley.core.keys``) and never in the database. A built-in provider
whose environment key is set (``ANTHROPIC_API_KEY``, ``OPENAI_API_KEY``) is
usable without any set-up, as people who already use the SDKs expect; an
``OPENAI_BASE_URL`` naming another server than OpenAI's makes the built-in
``openai`` provider an OpenAI-compatible server (``registry.builtin_providers``),
usable without a key, whose first listed model is its default. In the same way a
provider saved with kind ``openai`` at another server's address is used as a
compatible server (``registry.as_used``; the saved setting is left as it is).

Keyring calls can block (a locked keyring, a slow D-Bus), so they run on one
worker thread of their own, never on the caller's event loop.

No SDK is imported in this process: the SDK clients live in the provider process
(:mod:`parley.core.providers.process`). A provider's adapter is imported and built
by :meth:`ProviderHub.prepare` in a worker thread, which then has the provider
process start making its SDK client (importing the SDK there, seconds on a cold
start: a request sent meanwhile waits there for it), or at the latest when
:meth:`ProviderHub.get` first needs it.

The models each provider lists are kept in sessions.db (``app_state`` key
``models:<provider id>``, the :class:`ModelInfo` fields as JSON, with the
provider's kind and base URL they came from), so the model picker can show
them at start-up before any SDK is imported or any server asked;
:meth:`ProviderHub.list_models` asks the server again and updates that copy.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import re
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict
from typing import TYPE_CHECKING, Any

from parley.core.app_state import MODELS
from parley.core.errors import ParleyError
from parley.core.keys import KeyStore
from parley.core.providers.address import check_server_address
from parley.core.providers.base import ModelInfo, Provider
from parley.core.providers.capabilities import ProviderKind
from parley.core.providers.catalog import known_models, lookup, with_reported
from parley.core.providers.model_ref import format_model_ref, parse_model_ref
from parley.core.providers.registry import (
    ENV_API_KEY,
    ENV_COMPATIBLE,
    ProviderConfig,
    ProviderConfigError,
    as_used,
    builtin_providers,
    env_key_var,
    import_adapter,
    make_provider,
    resolve_base_url,
)
from parley.core.providers.retry import RetryPolicy
from parley.core.settings import Settings

if TYPE_CHECKING:
    from collections.abc import Sequence

    from parley.core.store.async_store import AsyncStore

log = logging.getLogger(__name__)

#: Seconds :meth:`ProviderHub.fetch_model_info` waits for a provider's model list.
LIST_TIMEOUT_S = 10.0
#: Seconds before a provider whose model list could not be read is asked again.
LIST_RETRY_S = 300.0

#: The settings the hub reads (declared, with their defaults, in ``parley.core.settings``).
SETTING_PROVIDERS = "providers"
SETTING_DEFAULT_MODEL = "default_model"
SETTING_MODEL_OVERRIDES = "model_overrides"
SETTING_ANTHROPIC_TTL = "cache.anthropic_ttl"
_SETTINGS = (SETTING_PROVIDERS, SETTING_DEFAULT_MODEL, SETTING_MODEL_OVERRIDES,
             SETTING_ANTHROPIC_TTL)

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
        store: AsyncStore,
        *,
        keys: KeyStore | None = None,
        retry: RetryPolicy | None = None,
        environ: dict[str, str] | None = None,
    ) -> None:
        self.store = store
        self.keys = keys or KeyStore(environ=environ)
        self.retry = retry
        self.environ = environ
        self._stored: list[ProviderConfig] = []  # as saved in settings
        self._saved: list[ProviderConfig] = []  # as used (registry.as_used)
        self._reinterpreted: set[str] = set()  # ids saved as OpenAI, used as compatible
        self._keys: dict[str, str | None] = {}
        self._key_sources: dict[str, str] = {}
        self._providers: dict[str, Provider] = {}
        self._overrides: dict[str, Any] = {}
        self._default_model: str | None = None
        self._anthropic_ttl_s = 300
        # Limits the providers gave: {provider id: {model id: (window, output)}}.
        self._reported: dict[str, dict[str, tuple[int | None, int | None]]] = {}
        # Whether a compatible server said a model takes tools: {provider id: {model: bool}}.
        self._tools: dict[str, dict[str, bool]] = {}
        self._listed_at: dict[str, tuple[float, bool]] = {}  # id -> (when, it worked)
        self._listed_ids: dict[str, tuple[str, ...]] = {}  # id -> the model ids it listed
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="parley-keys")
        self._building: dict[str, asyncio.Future[Provider]] = {}
        self._threads: set[asyncio.Future[Any]] = set()  # work in worker threads
        self._generation = 0  # +1 at each load: adapters being built for older settings
        self._models: dict[str, list[ModelInfo]] = {}

    async def _in_keys_thread(self, fn: Any, *args: Any) -> Any:
        return await asyncio.get_running_loop().run_in_executor(self._pool, fn, *args)

    def _in_thread(self, fn: Any, *args: Any) -> asyncio.Future[Any]:
        """Run ``fn`` in a worker thread; :meth:`aclose` waits for it (a thread that
        finished after its loop closed could not report back)."""
        future = asyncio.ensure_future(asyncio.to_thread(fn, *args))
        self._threads.add(future)
        future.add_done_callback(self._threads.discard)
        return future

    async def load(self) -> None:
        """Read provider settings and keys (keyring on its own thread)."""
        values = await Settings.of(self.store).values(_SETTINGS)
        raw = values[SETTING_PROVIDERS]
        self._stored = [ProviderConfig(**c) for c in raw if isinstance(c, dict)]
        self._saved = [as_used(c, self.environ) for c in self._stored]
        self._reinterpreted = {
            c.id for c, used in zip(self._stored, self._saved, strict=True) if c != used
        }
        self._default_model = values[SETTING_DEFAULT_MODEL]
        self._overrides = values[SETTING_MODEL_OVERRIDES]
        self._anthropic_ttl_s = 3600 if values[SETTING_ANTHROPIC_TTL] == "1h" else 300
        self._keys, self._key_sources = {}, {}
        for config in self._all_candidates():
            key = await self._in_keys_thread(self.keys.get, config.id, env_key_var(config))
            self._keys[config.id] = key.value if key is not None else None
            self._key_sources[config.id] = key.source if key is not None else "none"
        await self._close_providers()
        self._models = {}
        for config in self.configs:
            cached = _models_from_state(
                await MODELS.get(self.store, config.id),
                self._cache_origin(config),
            )
            if cached is not None:
                self._models[config.id] = cached
                # Its limits and ids count until the provider is asked again (it is
                # still asked: fetch_model_info does not take a kept list as fresh).
                self.remember_models(config.id, cached)
                self._listed_at.pop(config.id, None)

    def _cache_origin(self, config: ProviderConfig) -> dict[str, Any]:
        """What a cached model list must have come from to be used for ``config``."""
        return {"kind": config.kind, "base_url": resolve_base_url(config, self.environ).value}

    def is_prepared(self, model_or_provider: str) -> bool:
        """True when the provider's adapter is built (``get`` is then instant).

        Raises:
            UnknownProvider: no usable provider has that id.
        """
        pid = self.config(model_or_provider.split(":", 1)[0]).id
        return pid in self._providers

    async def prepare(self, model_or_provider: str) -> None:
        """Import a provider's adapter and build it, in a worker thread, and have the
        provider process start making its SDK client (once; later calls return at once,
        concurrent ones wait for the same work; the SDK client is not waited for: a
        request waits for it in that process).

        Args:
            model_or_provider: a provider id or a model reference (``provider:model``).

        Raises:
            UnknownProvider: no usable provider has that id.
            ProviderConfigError: it cannot be built (a compatible server without an
                address).
        """
        config = self.config(model_or_provider.split(":", 1)[0])
        pid = config.id
        if pid in self._providers:
            return
        generation = self._generation
        pending = self._building.get(pid)
        if pending is None:
            pending = self._in_thread(self._build, config)
            self._building[pid] = pending
        provider = await asyncio.shield(pending)
        if self._building.get(pid) is pending:
            del self._building[pid]
        if generation != self._generation or self._providers.setdefault(pid, provider) \
                is not provider:  # settings changed meanwhile, or get() built one
            await provider.aclose()
            return
        self._share_limits(pid)
        connect = getattr(provider, "connect", None)
        if callable(connect):  # its SDK client, made in the provider process (not awaited)
            await connect()

    def _build(self, config: ProviderConfig) -> Provider:
        """Make the adapter of ``config`` (importing its module the first time);
        thread-safe."""
        return make_provider(
            config,
            self._keys.get(config.id),
            retry=self.retry,
            cache_ttl_s=self._anthropic_ttl_s,
            model_overrides=self._overrides,
            environ=self.environ,
        )

    async def prepare_all(self, first: str | None = None) -> None:
        """:meth:`prepare` every usable provider, ``first`` (a provider id or model
        reference whose provider is usable) before the others; only the SDKs of the
        kinds in use are imported. A provider with no default model that has not
        listed its models yet (a compatible server from ``OPENAI_BASE_URL``) is
        asked for its list, whose first model becomes its default. An unknown
        ``first`` is skipped; a provider that cannot be built is left for its first
        use to say why (logged here)."""
        order = [c.id for c in self.configs]
        head = (first or "").split(":", 1)[0]
        if head in order:
            order.remove(head)
            order.insert(0, head)
        for pid in order:
            try:
                await self.prepare(pid)
            except ParleyError as exc:
                log.info("provider %s not prepared: %s", pid, exc.message)
        for config in self.configs:  # no model set, none listed yet: its list names one
            if not config.default_model and config.id not in self._listed_ids:
                try:
                    await asyncio.wait_for(self.list_models(config.id), LIST_TIMEOUT_S)
                except (TimeoutError, ParleyError) as exc:
                    log.info("no model list from %s: %s", config.id, exc)

    def _all_candidates(self) -> list[ProviderConfig]:
        saved_ids = {c.id for c in self._saved}
        builtins = builtin_providers(self.environ)
        return self._saved + [c for c in builtins if c.id not in saved_ids]

    @property
    def configs(self) -> list[ProviderConfig]:
        """Usable providers: the saved ones, plus built-ins whose key is in the
        environment (``ANTHROPIC_API_KEY`` …), plus a compatible server named by
        ``OPENAI_BASE_URL`` (:data:`ENV_COMPATIBLE`, usable without a key).

        A key left in the keyring without its provider's settings (a new sessions.db
        after a damaged one) makes nothing usable: which server it was for went with
        the settings, and the built-in's default address could be another company's
        server than the one the key and the chats were meant for. Adding the provider
        again finds the key (``key_source`` says so)."""
        saved_ids = {c.id for c in self._saved}
        implicit = [
            c for c in builtin_providers(self.environ)
            if c.id not in saved_ids and (
                (self._keys.get(c.id) and self._key_sources.get(c.id) == "environment")
                or c == ENV_COMPATIBLE)
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
        models: Sequence[ModelInfo] = (),
    ) -> ProviderConfig:
        """Save a provider (and its key, in the keyring) and make it usable.

        Args:
            kind: the API family.
            name: display name (default: the family's name).
            base_url: API root; required for ``openai_compatible``.
            api_key: saved through ``parley.core.keys``; None keeps any saved/env key.
            default_model: bare model id; it also becomes the app's default
                model when none is set.
            provider_id: replace the provider with this id instead of adding one.
            models: what :meth:`test_connection` listed with these same settings (set-up
                passes them): kept as the provider's listed models, so their names and
                limits show at once, not its raw model ids until it is asked again.

        Returns:
            The saved configuration.

        Raises:
            ProviderConfigError: a compatible server without a base URL.
            InvalidServerAddress: ``base_url`` is not a valid http(s) URL.
            KeyStoreError: the key could not be saved.
        """
        if kind == "openai_compatible" and not (base_url or "").strip():
            raise ProviderConfigError(
                "Enter the server's address, for example http://localhost:11434/v1 for Ollama."
            )
        if (base_url or "").strip():  # "Save anyway" cannot keep a malformed one either
            check_server_address(base_url or "")
        name = (name or "").strip() or _KIND_NAMES[kind]
        pid = provider_id or self._new_id(kind, name)
        config = ProviderConfig(pid, kind, name, (base_url or "").strip() or None, default_model)
        if api_key and api_key.strip():
            await self._in_keys_thread(self.keys.set, pid, api_key)
        self._stored = [c for c in self._stored if c.id != pid] + [config]
        self.forget_limits(pid)  # another server or key may serve other models
        await Settings.of(self.store).set(SETTING_PROVIDERS, [asdict(c) for c in self._stored])
        used = as_used(config, self.environ)
        if used.default_model and not self._default_model:
            await self.set_default_model(format_model_ref(pid, used.default_model))
        await self.load()
        if models:
            await self._listed(pid, models)
        return used

    async def remove_provider(self, provider_id: str) -> None:
        """Forget a saved provider and its saved key."""
        self._stored = [c for c in self._stored if c.id != provider_id]
        self.forget_limits(provider_id)
        await Settings.of(self.store).set(SETTING_PROVIDERS, [asdict(c) for c in self._stored])
        await self._in_keys_thread(self.keys.delete, provider_id)
        await self.load()

    async def set_default_model(self, model_ref: str) -> None:
        """Make ``model_ref`` (``provider:model``) the model of new sessions."""
        parse_model_ref(model_ref)
        self._default_model = await Settings.of(self.store).set(SETTING_DEFAULT_MODEL, model_ref)

    def default_model_ref(self) -> str | None:
        """The model of new sessions: the setting if its provider is usable, else
        the first usable provider's default model; None when nothing is set up."""
        usable = {c.id: c for c in self.configs}
        if self._default_model:
            pid, model_id = parse_model_ref(self._default_model)
            if pid in usable and not self._openai_default(pid, model_id):
                return self._default_model
        for c in usable.values():
            if c.default_model:
                return format_model_ref(c.id, c.default_model)
            listed = self._listed_ids.get(c.id)
            if listed:  # a compatible server with no model set: the first it lists
                return format_model_ref(c.id, listed[0])
        return None

    def _openai_default(self, provider_id: str, model_id: str) -> bool:
        """True when ``model_id`` is an OpenAI catalog model that Parley chose for a
        provider saved as OpenAI but used as a compatible server (not its model)."""
        if provider_id not in self._reinterpreted:
            return False
        return model_id in {m.id for m in known_models("openai")}

    def get(self, provider_id: str) -> Provider:
        """Return the adapter of a usable provider (built once, then reused). Imports
        its adapter module on this thread if :meth:`prepare` has not done so.

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
        info = with_reported(lookup(kind, model_id, self._overrides), window, output)
        tools = self._tools.get(pid, {}).get(model_id)
        return dataclasses.replace(info, tools=tools) if tools is not None else info

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
        """Ask the provider which models it serves (its adapter prepared off this thread
        first), remember the limits it gives, and keep the list in sessions.db for
        :meth:`cached_models`.

        Settings changed meanwhile (:meth:`load` closes the adapters): listed again
        by the adapter of the new settings.

        Raises:
            ProviderError: the provider could not be reached or refused the key.
        """
        await self.prepare(provider_id)
        generation = self._generation
        try:
            models = await self.get(provider_id).list_models()
        except (RuntimeError, ParleyError):
            # The settings changed while it listed and load() closed that adapter (the
            # SDK's "client has been closed", or the connection cut): what it said is
            # moot. Ask the one built from the new settings.
            if generation == self._generation:
                raise
            return await self.list_models(provider_id)
        await self._listed(provider_id, models)
        return models

    async def _listed(self, provider_id: str, models: Sequence[ModelInfo]) -> None:
        """The provider just listed ``models``: their limits remembered, the list kept
        (for :meth:`cached_models`, in memory and in sessions.db)."""
        self.remember_models(provider_id, list(models))
        self._models[provider_id] = list(models)
        await self._keep_models(self.config(provider_id))

    def cached_models(self, provider_id: str) -> list[ModelInfo] | None:
        """The models the provider listed last time (kept in sessions.db, read by
        :meth:`load`); None when it was never listed with its current kind and URL."""
        models = self._models.get(provider_id)
        return list(models) if models is not None else None

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
            if m.tools is not None:
                self._tools.setdefault(provider_id, {})[m.id] = m.tools
        self._listed_at[provider_id] = (time.monotonic(), True)
        self._share_limits(provider_id)

    def listed_ids(self, provider_id: str) -> tuple[str, ...] | None:
        """The model ids the provider last listed (:meth:`list_models`), or None when
        it has not listed them since it was set up (no request is made)."""
        return self._listed_ids.get(provider_id)

    def learn_limits(self, model_ref: str, window: int | None) -> None:
        """Remember a context window the provider named (e.g. when it refused a request
        as too long) for :meth:`model_info` and the adapter.

        When the provider's model list is kept (``models:<id>`` in sessions.db), the
        window is written into it too (in the background), so a restart keeps it.

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
        models = self._models.get(pid)
        if models is None or not any(m.id == model_id for m in models):
            return  # no kept list to carry it over a restart
        self._models[pid] = [with_reported(m, window) if m.id == model_id else m for m in models]
        try:
            config = self.config(pid)
            task = asyncio.get_running_loop().create_task(self._keep_models(config))
        except (ParleyError, RuntimeError):  # no such provider now, or no loop (a sync caller)
            return
        self._threads.add(task)
        task.add_done_callback(self._threads.discard)

    async def _keep_models(self, config: ProviderConfig) -> None:
        """Write the provider's model list as known now to sessions.db (``models:<id>``),
        for :meth:`load` after a restart; a failure is logged, the list stays in memory."""
        models = self._models.get(config.id, [])
        entry = {**self._cache_origin(config), "models": [asdict(m) for m in models]}
        try:
            await MODELS.set(self.store, entry, config.id)
        except ParleyError as exc:  # a full disk …: the list is still used, just not kept
            log.warning("model list of %s not kept: %s", config.id, exc.message)

    def forget_limits(self, provider_id: str) -> None:
        """Drop what a provider said of its models (its address or key changed)."""
        self._reported.pop(provider_id, None)
        self._tools.pop(provider_id, None)
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
        said = getattr(adapter, "tool_support", None)
        if isinstance(said, dict):
            said.update(self._tools.get(provider_id, {}))

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
        await asyncio.shield(self._in_thread(import_adapter, kind))
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
        self._generation += 1
        self._building = {}
        providers, self._providers = self._providers, {}
        for p in providers.values():
            await p.aclose()

    async def aclose(self) -> None:
        """Close every adapter's HTTP client and the keys thread (after the adapters
        being built in worker threads are done: they are closed too)."""
        if self._threads:
            await asyncio.wait(list(self._threads), timeout=30)
        for pending in self._building.values():
            if pending.done() and not pending.cancelled() and pending.exception() is None:
                await pending.result().aclose()
        await self._close_providers()
        self._pool.shutdown(wait=False)


_MODEL_FIELDS = {f.name for f in dataclasses.fields(ModelInfo)}


def _models_from_state(entry: Any, origin: dict[str, Any]) -> list[ModelInfo] | None:
    """Read a cached model list (see the module docstring); None when there is none,
    it came from another kind or URL, or it cannot be read. Fields ModelInfo no
    longer has are dropped; fields it gained take their defaults."""
    if not isinstance(entry, dict) or any(entry.get(k) != v for k, v in origin.items()):
        return None
    models = entry.get("models")
    if not isinstance(models, list):
        return None
    out: list[ModelInfo] = []
    for raw in models:
        if not isinstance(raw, dict):
            return None
        try:
            out.append(ModelInfo(**{k: v for k, v in raw.items() if k in _MODEL_FIELDS}))
        except TypeError:  # a required field missing: an older or damaged entry
            return None
    return out

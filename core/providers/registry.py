"""Configured providers: their settings, base URL and key resolution, and adapters.

A model is named across the app as ``"provider_id:model_id"``
(``anthropic:claude-sonnet-4-5``, ``ollama:llama3.2:3b`` — only the first
colon separates). Values come from settings first, then the environment
(``ANTHROPIC_BASE_URL`` / ``OPENAI_BASE_URL``, ``ANTHROPIC_API_KEY`` /
``OPENAI_API_KEY``), then built-in defaults, and each resolution reports its
source so Settings can say "from environment", "from keyring", "from settings".

The adapters are imported when a provider of their kind is first built, not
with this module. They import no SDK: their SDK halves run in the provider process
(:mod:`parley.core.providers.process`), which imports ``anthropic`` (≈ 0.8–2.3 s on
one core) at its start and ``openai`` (≈ 0.4–1.0 s) when a provider of that kind is
first used. :func:`import_adapter` imports one kind's adapter (request building: the
converters and the wire rules); ``ProviderHub.prepare`` runs it in a worker thread.
"""

from __future__ import annotations

import importlib
import ipaddress
import os
from collections.abc import Mapping
from dataclasses import dataclass, replace
from types import ModuleType
from typing import Any, Literal, TypeAlias

from parley.core.errors import ParleyError
from parley.core.keys import ApiKey, KeyStore
from parley.core.providers.base import Provider
from parley.core.providers.capabilities import DEFAULT_URLS, ProviderKind
from parley.core.providers.capabilities import ENV_API_KEY as ENV_API_KEY  # read here
from parley.core.providers.capabilities import ENV_BASE_URL as ENV_BASE_URL
from parley.core.providers.naming import ANTHROPIC_HOSTS as ANTHROPIC_HOSTS
from parley.core.providers.naming import COMPATIBLE_NAME as COMPATIBLE_NAME
from parley.core.providers.naming import DEFAULT_NAMES as DEFAULT_NAMES
from parley.core.providers.naming import ENV_ANTHROPIC_URLS as ENV_ANTHROPIC_URLS
from parley.core.providers.naming import ENV_OPENAI_URLS as ENV_OPENAI_URLS
from parley.core.providers.naming import OPENAI_HOSTS as OPENAI_HOSTS
from parley.core.providers.naming import OPENAI_NAME as OPENAI_NAME
from parley.core.providers.naming import is_anthropic_url as is_anthropic_url
from parley.core.providers.naming import is_openai_url as is_openai_url
from parley.core.providers.naming import is_vendor_url as is_vendor_url
from parley.core.providers.naming import message_name as message_name
from parley.core.providers.retry import RetryPolicy

Source: TypeAlias = Literal["settings", "environment", "keyring", "file", "default", "none"]

#: The module of each kind's adapter (its request building; the SDK half is the
#: provider process's, ``parley.core.providers.process.worker.SENDER_MODULES``).
ADAPTER_MODULES: dict[ProviderKind, str] = {
    "anthropic": "parley.core.providers.anthropic_provider",
    "openai": "parley.core.providers.openai_provider",
    "openai_compatible": "parley.core.providers.openai_provider",
}


def import_adapter(kind: ProviderKind) -> ModuleType:
    """Import the adapter module of ``kind`` (tens of milliseconds the first time;
    instant once imported). Safe to call from a worker thread.

    Returns:
        The module (``AnthropicProvider`` or ``OpenAIProvider`` lives in it).
    """
    return importlib.import_module(ADAPTER_MODULES[kind])


class ProviderConfigError(ParleyError):
    """A provider is set up in a way Parley cannot use (the message says what to fix)."""


@dataclass(frozen=True)
class ProviderConfig:
    """One provider as the user set it up.

    Attributes:
        id: unique id, the prefix of model references (``anthropic``, ``ollama``).
        kind: the API it speaks.
        name: display name (``Anthropic``, ``Ollama on this computer``).
        base_url: the API root from settings (None: environment, then default).
        default_model: the bare model id new sessions use.
    """

    id: str
    kind: ProviderKind
    name: str
    base_url: str | None = None
    default_model: str | None = None


BUILTIN_PROVIDERS: tuple[ProviderConfig, ...] = (
    ProviderConfig("anthropic", "anthropic", "Anthropic", None, "claude-sonnet-4-6"),
    ProviderConfig("openai", "openai", "OpenAI", None, "gpt-5"),
)
#: The built-in ``openai`` provider when ``OPENAI_BASE_URL`` names another server than
#: OpenAI's: a compatible server, its address and key from the environment, its default
#: model the first one it lists (see :func:`builtin_providers`).
ENV_COMPATIBLE = ProviderConfig("openai", "openai_compatible", "OpenAI-compatible server")
def builtin_providers(environ: Mapping[str, str] | None = None) -> tuple[ProviderConfig, ...]:
    """The built-in providers for this environment.

    A provider is "OpenAI" only at OpenAI's address: when ``OPENAI_BASE_URL``
    names any other server, the built-in ``openai`` provider is
    :data:`ENV_COMPATIBLE` instead (no OpenAI catalog, model, window, prompt
    cache or OpenAI-only parameters; tools off by default, as for every
    compatible server).

    Args:
        environ: the environment (default ``os.environ``).
    """
    return tuple(as_used(c, environ) for c in BUILTIN_PROVIDERS)


def as_used(config: ProviderConfig, environ: Mapping[str, str] | None = None) -> ProviderConfig:
    """The provider as Parley uses it: kind ``openai`` away from OpenAI's address is a
    compatible server.

    A provider saved with kind ``openai`` and a base URL (from settings, else
    ``OPENAI_BASE_URL``) that is not OpenAI's (:func:`is_openai_url`) gets
    kind ``openai_compatible``: its own model list, local limits, tools off
    by default, no OpenAI-only parameters. Its default model is dropped when
    it is one of OpenAI's catalog models (Parley filled it in for OpenAI; the
    server's first listed model is used instead), and the name ``OpenAI``
    Parley gave it becomes ``OpenAI-compatible server``. Nothing is written:
    the saved setting is read this way at every start (settings saved by
    earlier versions included), so naming the address in
    ``PARLEY_OPENAI_URLS`` makes it OpenAI again.

    Args:
        config: the provider as saved (or built in).
        environ: the environment for ``OPENAI_BASE_URL`` (default ``os.environ``).

    Returns:
        ``config`` itself, or the compatible server it stands for.
    """
    if config.kind != "openai":
        return config
    url = resolve_base_url(config, environ).value
    if url is None or is_openai_url(url):
        return config
    from parley.core.providers.catalog import known_models

    model = config.default_model
    if model and model in {m.id for m in known_models("openai")}:
        model = None
    name = COMPATIBLE_NAME if config.name == OPENAI_NAME else config.name
    return replace(config, kind="openai_compatible", name=name, default_model=model)


def env_kind(config: ProviderConfig) -> ProviderKind:
    """The kind whose environment variables (``*_BASE_URL``, ``*_API_KEY``) apply to
    ``config``: its own, or ``openai`` for the ``openai`` provider used as a compatible
    server with no address of its own (:data:`ENV_COMPATIBLE`, or one saved as OpenAI
    that :func:`as_used` found at ``OPENAI_BASE_URL``)."""
    no_url = not (config.base_url or "").strip()
    if config.kind == "openai_compatible" and config.id == "openai" and no_url:
        return "openai"
    return config.kind


def env_key_var(config: ProviderConfig) -> str | None:
    """The environment variable of ``config``'s key (None: it has none)."""
    return ENV_API_KEY.get(env_kind(config))


@dataclass(frozen=True)
class Resolved:
    """A setting's value and where it came from (never used for keys: see ApiKey)."""

    value: str | None
    source: Source


def _local_host(host: str) -> bool:
    """True for a host on this computer or the local network: ``localhost``, a name
    without dots or ending in ``.local``, a loopback, private or link-local address."""
    name = host.strip("[]").lower()
    if name in ("localhost", "") or "." not in name and ":" not in name \
            or name.endswith((".local", ".localhost")):
        return True
    try:
        ip = ipaddress.ip_address(name)
    except ValueError:
        return False
    return ip.is_loopback or ip.is_private or ip.is_link_local


def with_scheme(url: str) -> str:
    """``url`` with a scheme: as typed when it has one; else ``http://`` for a server on
    this computer or the local network (``localhost:8080/v1``, ``192.168.1.5:11434``),
    which local servers speak, and ``https://`` for any other (``api.example.com/v1``).

    Args:
        url: an address as a person typed it (stripped).
    """
    if "://" in url or not url:
        return url
    authority = url.split("/", 1)[0].rsplit("@", 1)[-1]
    if authority.startswith("["):  # [::1]:8080
        host = authority.partition("]")[0] + "]"
    else:
        host = authority.rsplit(":", 1)[0] if authority.count(":") == 1 else authority
    return ("http://" if _local_host(host) else "https://") + url


def normalize_base_url(kind: ProviderKind, url: str) -> str:
    """Return the API root the SDK expects for a URL a person typed.

    An address without a scheme gets one (:func:`with_scheme`: ``http://`` on this
    computer and the local network, else ``https://``). Anthropic's SDK adds
    ``/v1/…`` itself, so a trailing ``/v1`` is removed; OpenAI-style roots include
    ``/v1``, so a bare ``http://host:port`` gets it (Ollama, LM Studio and vLLM
    serve the API there). Trailing slashes go.
    """
    url = with_scheme(url.strip().rstrip("/"))
    if kind == "anthropic":
        return url[: -len("/v1")] if url.endswith("/v1") else url
    scheme, sep, rest = url.partition("://")
    if sep and "/" not in rest:
        return url + "/v1"
    return url


def resolve_base_url(config: ProviderConfig, environ: Mapping[str, str] | None = None) -> Resolved:
    """Return the base URL to use and its source: settings → environment → default.

    OpenAI-compatible servers have no environment variable or default: their
    URL must come from settings (source ``none`` otherwise), except
    :data:`ENV_COMPATIBLE`, whose URL is ``OPENAI_BASE_URL``. The value is
    normalized (:func:`normalize_base_url`).
    """
    if config.base_url and config.base_url.strip():
        return Resolved(normalize_base_url(config.kind, config.base_url), "settings")
    env = os.environ if environ is None else environ
    var = ENV_BASE_URL.get(env_kind(config))
    if var and env.get(var, "").strip():
        return Resolved(normalize_base_url(config.kind, env[var]), "environment")
    default = DEFAULT_URLS.get(config.kind)
    return Resolved(default, "default") if default else Resolved(None, "none")


def resolve_api_key(config: ProviderConfig, keys: KeyStore) -> ApiKey | None:
    """Return the provider's key (saved in Parley, else its environment variable).

    The result's ``source`` is ``keyring``, ``file`` or ``environment``; None
    means no key (fine for most local servers).
    """
    return keys.get(config.id, env_key_var(config))


def key_source(config: ProviderConfig, keys: KeyStore) -> Source:
    """Return where the provider's key comes from (``none`` when there is none)."""
    key = resolve_api_key(config, keys)
    return key.source if key is not None else "none"


def make_provider(
    config: ProviderConfig,
    api_key: str | None,
    *,
    retry: RetryPolicy | None = None,
    timeout_s: float = 600.0,
    connect_timeout_s: float = 10.0,
    cache_ttl_s: int = 300,
    model_overrides: Mapping[str, Mapping[str, Any]] | None = None,
    environ: Mapping[str, str] | None = None,
) -> Provider:
    """Build the adapter for a configured provider (importing its module if not done
    yet: see :func:`import_adapter`).

    Args:
        config: the provider's settings (read through :func:`as_used`: kind ``openai``
            at another server's address builds a compatible server).
        api_key: its key (see :func:`resolve_api_key`), None when there is none.
        retry: retry policy (tests pass a fast one).
        timeout_s: read timeout per request, seconds.
        connect_timeout_s: connect timeout, seconds.
        cache_ttl_s: Anthropic prompt cache TTL to ask for (300 or 3600).
        model_overrides: model catalog overrides from settings.
        environ: environment for the base URL (default ``os.environ``).

    Raises:
        ProviderConfigError: an OpenAI-compatible provider without a server address.
    """
    config = as_used(config, environ)
    base_url = resolve_base_url(config, environ).value
    common: dict[str, Any] = {
        "id": config.id,
        "name": config.name,
        "retry": retry,
        "timeout_s": timeout_s,
        "connect_timeout_s": connect_timeout_s,
        "model_overrides": model_overrides,
    }
    if config.kind == "anthropic":
        from parley.core.providers.anthropic_provider import (
            AnthropicProvider,
        )

        return AnthropicProvider(api_key, base_url, cache_ttl_s=cache_ttl_s, **common)
    if config.kind == "openai_compatible" and not base_url:
        raise ProviderConfigError(
            f"{config.name} has no server address. Set it in Settings → Providers "
            "(for example http://localhost:11434/v1 for Ollama)."
        )
    from parley.core.providers.openai_provider import OpenAIProvider

    return OpenAIProvider(api_key, base_url, kind=config.kind, **common)

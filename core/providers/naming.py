"""Whose server a provider is sent to, and how messages name the provider.

A provider of kind ``anthropic`` or ``openai`` is at its vendor's own API (host
``api.anthropic.com`` / ``api.openai.com``, or a root listed in ``PARLEY_ANTHROPIC_URLS`` /
``PARLEY_OPENAI_URLS``) or at another server: a proxy speaking the vendor's API, a local
server. :func:`message_name` is the name error messages give it
(``parley.core.providers.errors``): the name the person typed, else "the server at
127.0.0.1:8000" away from the vendor's address, else the vendor. Imported by the
registry (which re-exports these names) and the adapters; imports neither.
"""

from __future__ import annotations

import os
from urllib.parse import urlsplit

from parley.core.providers.capabilities import ProviderKind
from parley.core.providers.errors import server_address

#: The hosts whose OpenAI-style API is OpenAI's own.
OPENAI_HOSTS = frozenset({"api.openai.com"})
#: Process environment variable: more API roots that are OpenAI's own API, separated by
#: spaces or commas (a gateway that passes requests to OpenAI unchanged; the tests'
#: fake server playing OpenAI). Read from ``os.environ`` at each call.
ENV_OPENAI_URLS = "PARLEY_OPENAI_URLS"
#: The hosts whose Messages API is Anthropic's own.
ANTHROPIC_HOSTS = frozenset({"api.anthropic.com"})
#: Process environment variable: more API roots that are Anthropic's own API, as
#: :data:`ENV_OPENAI_URLS` is for OpenAI (a gateway passing requests to Anthropic
#: unchanged; the tests' fake server playing Anthropic). Read at each call.
ENV_ANTHROPIC_URLS = "PARLEY_ANTHROPIC_URLS"


def _root(url: str) -> str:
    return url.strip().rstrip("/").lower()


def _is_own_url(url: str | None, hosts: frozenset[str], env_var: str) -> bool:
    """True when ``url``'s host is one of ``hosts``, or ``url`` is at or under a root
    listed in the environment variable ``env_var``."""
    if not url or not url.strip():
        return False
    host = urlsplit(url.strip() if "://" in url else "//" + url.strip()).hostname or ""
    if host.lower() in hosts:
        return True
    wanted = _root(url)
    listed = os.environ.get(env_var, "").replace(",", " ").split()
    return any(wanted == _root(r) or wanted.startswith(_root(r) + "/") for r in listed)


def is_openai_url(url: str | None) -> bool:
    """True when ``url`` is OpenAI's API (host ``api.openai.com``, or at or under a root
    listed in ``PARLEY_OPENAI_URLS``), not another server."""
    return _is_own_url(url, OPENAI_HOSTS, ENV_OPENAI_URLS)


def is_anthropic_url(url: str | None) -> bool:
    """True when ``url`` is Anthropic's API (host ``api.anthropic.com``, or at or under a
    root listed in ``PARLEY_ANTHROPIC_URLS``), not another server (a proxy speaking the
    Messages API)."""
    return _is_own_url(url, ANTHROPIC_HOSTS, ENV_ANTHROPIC_URLS)


def is_vendor_url(kind: ProviderKind, url: str | None) -> bool:
    """True when ``url`` is the API of the vendor whose kind ``kind`` is (Anthropic's,
    OpenAI's); always False for ``openai_compatible``, which has no vendor."""
    if kind == "anthropic":
        return is_anthropic_url(url)
    if kind == "openai":
        return is_openai_url(url)
    return False


#: The name Parley gives a provider of kind ``openai`` when none is typed.
OPENAI_NAME = "OpenAI"
#: The name of an ``openai`` provider found at another server's address (:func:`as_used`).
COMPATIBLE_NAME = "OpenAI-compatible server"


#: The names Parley gives a provider nobody named (built in, or no name typed in
#: set-up: ``hub._KIND_NAMES``): messages name the server instead, when it is not the
#: vendor's own (:func:`message_name`).
DEFAULT_NAMES = frozenset({"Anthropic", OPENAI_NAME, COMPATIBLE_NAME, "Local server"})


def message_name(kind: ProviderKind, name: str, base_url: str | None) -> str:
    """How error messages name a provider: what the person set up.

    The name typed in Settings when it is not one Parley gave
    (:data:`DEFAULT_NAMES`); else "the server at 127.0.0.1:8000" when the address is
    not the vendor's own (``ANTHROPIC_BASE_URL`` naming a proxy, ``OPENAI_BASE_URL``
    a local server, any compatible server); else the vendor's name.

    Args:
        kind: the API the provider speaks.
        name: its display name (``ProviderConfig.name``).
        base_url: the address it is sent to (None: the vendor's default).

    Returns:
        A name to put in a sentence (it may start with "the": see
        ``parley.core.providers.errors``, which capitalizes it at a sentence's start).
    """
    if name.strip() and name not in DEFAULT_NAMES:
        return name
    if base_url and not is_vendor_url(kind, base_url):
        return f"the server at {server_address(base_url)}"
    return name

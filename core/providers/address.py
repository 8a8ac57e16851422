"""A provider's server address as typed in set-up or Settings: checked before any
connection is tried, so a malformed one is called what it is (not "unreachable").

An address is valid when, after :func:`parley.core.providers.registry.with_scheme`
(``localhost:8080`` → ``http://localhost:8080``), its scheme is ``http`` or
``https``, it names a host (letters, digits, ``.``, ``-``, ``_``, or an IPv6
literal in brackets; no spaces) and its port, if given, is a number from 1 to
65535.
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit

from parley.core.providers.registry import ProviderConfigError, with_scheme

SCHEMES = ("http", "https")
_HOST = re.compile(r"^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9._-]+)$")
EXAMPLE = "http://localhost:11434/v1 or https://api.example.com/v1"


class InvalidServerAddress(ProviderConfigError):
    """A server address that is not a valid URL (nothing was tried).

    Attributes:
        address: the address as typed (stripped).
        reason: what is wrong with it, in words ("the port must be a number from
            1 to 65535").
    """

    def __init__(self, address: str, reason: str) -> None:
        self.address, self.reason = address, reason
        super().__init__(f"“{address}” is not a valid server address: {reason}. "
                         f"Use an address like {EXAMPLE}.")


def check_server_address(address: str) -> str:
    """Return ``address`` as it will be used (with its scheme), or say why it cannot be.

    Args:
        address: what was typed in the Server address field (non-empty).

    Raises:
        InvalidServerAddress: its scheme is not http/https, it has no valid host, or
            its port is not a number from 1 to 65535.
    """
    typed = address.strip()
    url = with_scheme(typed)
    scheme, _, rest = url.partition("://")
    if scheme.lower() not in SCHEMES:
        raise InvalidServerAddress(typed, "it must start with http:// or https://")
    authority = re.split(r"[/?#]", rest, maxsplit=1)[0].rsplit("@", 1)[-1]
    host = authority
    port: str | None = None
    if authority.startswith("["):
        host, _, after = authority.partition("]")
        host += "]"
        port = after[1:] if after.startswith(":") else (after or None)
    elif ":" in authority:
        host, _, port = authority.rpartition(":")
    if not host or not _HOST.match(host):
        raise InvalidServerAddress(typed, "it needs a host name without spaces "
                                          "(like localhost or api.example.com)")
    if port is not None and not (port.isdigit() and 1 <= int(port) <= 65535):
        raise InvalidServerAddress(typed, "the port must be a number from 1 to 65535")
    try:
        urlsplit(url).port  # noqa: B018  # what the SDKs will parse must parse
    except ValueError as exc:
        raise InvalidServerAddress(typed, str(exc)) from None
    return url

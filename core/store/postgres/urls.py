"""Passwords in a PostgreSQL address: found wherever they are written, never shown.

A password can sit in two places of ``postgresql://user:password@host:port/db?…``: the
user part, and the query (``?password=…``, which libpq and psycopg accept as well).
People also type passwords that are not percent-encoded, and an ``@`` in one
(``user:p@ss@host``) made the part after it read as the host — shown in errors as
the host, and sent to DNS. This module:

* reads the user part up to the **last** ``@`` of the address's authority (a host
  has no ``@``), percent-encoding the ``@`` found before it (:func:`normalized`), the
  way ``urllib.parse`` splits a netloc;
* masks every password in an address as written (:func:`hide_password`): the user
  part's, and the value of any query parameter whose name holds "password"
  (``password``, ``sslpassword``);
* says, without echoing any of it, when a password holds ``/``, ``?`` or ``#``,
  which end an address's authority and so cannot be read unencoded
  (:func:`ambiguous_password`).

The address syntax is libpq's connection URI (PostgreSQL documentation,
"Connection Strings": percent-encoding may be used in any part).
"""

from __future__ import annotations

import re

#: A query parameter holding a secret, and its value up to the next ``&`` or ``#``.
_QUERY_SECRET = re.compile(r"([?&][^=&#]*password[^=&#]*=)[^&#]*", re.IGNORECASE)
#: ``user:password@`` after the start or a ``/``, for addresses with a mistyped scheme
#: (``postgresql//u:pw@…``); the ``:`` of a scheme (``://``) is no password's.
_USER_PASSWORD = re.compile(r"(^|/)([^:/@]*):(?!//)[^@]*@")
MASK = "***"


def _split(url: str) -> tuple[str, str] | None:
    """``(scheme://, the rest)``, or None for a text with no ``://``."""
    head, sep, rest = url.partition("://")
    return (head + sep, rest) if sep else None


def _authority_end(rest: str) -> int:
    """Where the authority of ``rest`` (what follows ``://``) ends: the first ``/``,
    ``?`` or ``#`` (its length when there is none)."""
    ends = [i for i in (rest.find(c) for c in "/?#") if i != -1]
    return min(ends) if ends else len(rest)


def normalized(url: str) -> str:
    """``url`` with the ``@`` inside its user part percent-encoded (``%40``): the user part
    ends at the last ``@`` of the authority. An address with at most one ``@`` there
    is returned as it is."""
    parts = _split(url)
    if parts is None:
        return url
    head, rest = parts
    authority = rest[:_authority_end(rest)]
    if authority.count("@") < 2:
        return url
    at = authority.rfind("@")
    return head + rest[:at].replace("@", "%40") + rest[at:]


def ambiguous_password(url: str) -> bool:
    """True when the user part seems to hold a password with ``/``, ``?`` or ``#``
    unencoded: the authority has ``user:…`` with no ``@``, and an ``@`` comes later."""
    parts = _split(url)
    if parts is None:
        return False
    rest = parts[1]
    end = _authority_end(rest)
    authority = rest[:end]
    return "@" not in authority and ":" in authority and "@" in rest[end:]


def hide_password(url: str) -> str:
    """``url`` as written with every password replaced by ``***``: the user part's
    (``user:***@host``, read up to the last ``@`` of the authority — or of the whole
    address when a ``/``, ``?`` or ``#`` in the password ends the authority early)
    and any ``…password…=`` query value. The ``:`` of a scheme is no password's."""
    url = _QUERY_SECRET.sub(lambda m: m.group(1) + MASK, url)
    return _USER_PASSWORD.sub(rf"\1\2:{MASK}@", _hide_user_password(url))


def _hide_user_password(url: str) -> str:
    parts = _split(url)
    if parts is None:  # no "://": "user:pw@host/db" as typed, or a mistyped scheme
        colon = url.find(":")
        if colon == -1 or "/" in url[:colon + 2]:
            return url  # "postgresql:/u:pw@…": _USER_PASSWORD's
        head, rest = "", url
    else:
        head, rest = parts
    end = _authority_end(rest)
    at = rest.rfind("@", 0, end)
    if at == -1 and ambiguous_password(head + rest if head else "x://" + rest):
        at = rest.rfind("@")
    if at == -1:
        return url
    colon = rest.find(":", 0, at)
    if colon == -1:
        return url
    return head + rest[:colon + 1] + MASK + rest[at:]

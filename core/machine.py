"""This computer, among the machines that share one database.

A PostgreSQL database (or a sessions.db file carried between computers) is used by
the Parleys of several machines. What belongs to one computer — the MCP approvals
given for the programs configured there, the window's size and place, the chat left
open — is stored in app state under a key of that machine's own
(:func:`this_machine`; read and written with :func:`get_own_state` and
:func:`set_own_state`), so it does not follow the person to another computer.
"""

from __future__ import annotations

import socket
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from parley.core.store.async_store import AsyncStore

#: Separates an app_state key from the machine it belongs to.
SEPARATOR = "@"


def machine_name() -> str:
    """This computer's name (the host name), which tells machines sharing a database apart."""
    return socket.gethostname()


def this_machine(key: str) -> str:
    """The app_state key of this machine's own copy of ``key``: ``key@<machine name>``."""
    return f"{key}{SEPARATOR}{machine_name()}"


async def get_own_state(store: AsyncStore, key: str, default: Any = None) -> Any:
    """This machine's app-state value of ``key``.

    Falls back to the shared ``key`` itself — where a Parley before per-machine state
    kept it (window geometry, the last chat…) — while this machine has none of its own
    yet: once, as the first :func:`set_own_state` gives it one.

    Args:
        store: the ``AsyncStore``.
        key: the app-state key (``"window.geometry"``).
        default: returned when neither is set.
    """
    value = await store.get_state(this_machine(key), None)
    if value is None:
        value = await store.get_state(key, None)
    return default if value is None else value


async def set_own_state(store: AsyncStore, key: str, value: Any) -> None:
    """Store this machine's value of ``key`` (None removes it); other machines' values,
    and the shared key, are left as they are."""
    await store.set_state(this_machine(key), value)

"""This computer, among the machines that share one database.

A PostgreSQL database (or a sessions.db file carried between computers) is used by
the Parleys of several machines. What belongs to one computer — the MCP approvals
given for the programs configured there, the window's size and place, the chat left
open — is stored in app state under a key of that machine's own
(:func:`this_machine`; declared with its ``whose`` in ``parley.core.app_state``), so it
does not follow the person to another computer.
"""

from __future__ import annotations

import socket

#: Separates an app_state key from the machine it belongs to.
SEPARATOR = "@"


def machine_name() -> str:
    """This computer's name (the host name), which tells machines sharing a database apart."""
    return socket.gethostname()


def this_machine(key: str) -> str:
    """The app_state key of this machine's own copy of ``key``: ``key@<machine name>``."""
    return f"{key}{SEPARATOR}{machine_name()}"

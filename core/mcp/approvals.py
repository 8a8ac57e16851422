"""Approvals of MCP tool calls: tied to the program, kept per machine.

An approval is about the program that runs, not the server's name: the same name in
another machine's ``mcp.json``, or after an edit of this one, may start something
else. So every approval records :func:`program_of` the server as configured when it
was given, and holds only while the configuration still names that program:

* **Always for this chat** — app state ``mcp_allowed:<session id>@<machine>``
  (``parley.core.machine.this_machine``): a list of ``{"server", "tool", "program"}``.
  An approval stored by an older Parley under ``mcp_allowed:<session id>`` (the
  server's name only, shared by every machine) is not trusted: the call asks again.
* **Always for this tool** — the tool is added to the server's ``alwaysAllow`` in this
  machine's ``mcp.json`` and recorded in app state ``mcp_always@<machine>`` (same
  shape). A tool in ``alwaysAllow`` runs at once unless such a record names another
  program (the command line or URL changed since): then it asks again. An
  ``alwaysAllow`` written by hand, with no record, is the person's own word next to
  the command it is about, and is trusted.
"""

from __future__ import annotations

import hashlib
import json
from typing import TYPE_CHECKING, Any

from parley.core.app_state import MCP_ALLOWED, MCP_ALWAYS, StateKey

if TYPE_CHECKING:
    from parley.core.mcp.config import ServerConfig
    from parley.core.store.async_store import AsyncStore



def program_of(server: ServerConfig) -> str:
    """What an approval of ``server`` is about, as a digest (hex SHA-256).

    Covers what decides which program answers: for a stdio server the command, its
    arguments, environment (values as written in ``mcp.json``; secrets kept in the
    keyring appear as their mark) and folder; for an HTTP server the URL. A digest
    rather than the command line itself, so arguments that carry secrets are not
    copied into a shared database.
    """
    if server.command:
        what: list[Any] = ["stdio", server.command, list(server.args),
                           sorted(server.env.items()), server.cwd]
    else:
        what = ["http", server.url]
    return hashlib.sha256(json.dumps(what).encode("utf-8")).hexdigest()


def _records(value: object) -> list[dict[str, str]]:
    """The well-formed records of a stored list (anything else is ignored)."""
    if not isinstance(value, list):
        return []
    return [r for r in value if isinstance(r, dict)
            and all(isinstance(r.get(k), str) for k in ("server", "tool", "program"))]


def _record(server: ServerConfig, tool: str) -> dict[str, str]:
    return {"server": server.name, "tool": tool, "program": program_of(server)}


class Approvals:
    """Reads and writes this machine's approvals in the store's app state.

    Args:
        store: the ``AsyncStore``.
    """

    def __init__(self, store: AsyncStore) -> None:
        self.store = store

    async def allowed(self, session_id: str, server: ServerConfig, tool: str) -> bool:
        """True when ``tool`` of ``server`` may run in the chat without asking."""
        program = program_of(server)
        if tool in server.always_allow:
            given = [r for r in _records(await MCP_ALWAYS.get(self.store))
                     if r["server"] == server.name and r["tool"] == tool]
            if not given or any(r["program"] == program for r in given):
                return True
        chat = _records(await MCP_ALLOWED.get(self.store, session_id))
        return any(r["server"] == server.name and r["tool"] == tool
                   and r["program"] == program for r in chat)

    async def other_program(self, session_id: str, server: ServerConfig) -> bool:
        """True when this machine approved a tool of ``server`` (for the chat, or always)
        for a program other than the one it names now: its command line or URL changed
        since (the approval dialog says so)."""
        program = program_of(server)
        given = _records(await MCP_ALWAYS.get(self.store)) + \
            _records(await MCP_ALLOWED.get(self.store, session_id))
        return any(r["server"] == server.name and r["program"] != program for r in given)

    async def allow_in_chat(self, session_id: str, server: ServerConfig, tool: str) -> None:
        """Remember "Always for this chat" for the program ``server`` names now."""
        await self._add(MCP_ALLOWED, server, tool, session_id)

    async def allow_always(self, server: ServerConfig, tool: str) -> None:
        """Record that "Always for this tool" was given for the program ``server`` names
        now (the caller writes ``alwaysAllow`` to ``mcp.json``)."""
        await self._add(MCP_ALWAYS, server, tool)

    async def _add(self, key: StateKey[list[dict[str, str]]], server: ServerConfig, tool: str,
                   of: str | None = None) -> None:
        kept = [r for r in _records(await key.get(self.store, of))
                if (r["server"], r["tool"]) != (server.name, tool)]
        await key.set(self.store, [*kept, _record(server, tool)], of)

"""MCP tools offered to the model next to Parley's own, and running a call.

:class:`McpTools` is what ``parley.core.tools.executor.ToolExecutor`` asks about MCP:

* **What is offered** (:meth:`McpTools.specs_for`): the tools of every
  configured server that is on in the session's space (a space turns servers
  off with :meth:`McpTools.set_server_on`; app state ``mcp_off:<space_id>``),
  minus the tools disabled in Settings (``disabledTools``), named by
  ``parley.core.mcp.names.wire_name``, in the file's server order and each server's
  tool order. The list is **frozen per session** (app state
  ``mcp_tools:<session_id>``) like the system prompt, so the tool definitions
  at the head of every request stay byte-identical for the prompt cache: a
  server that changes its tools (or starts later) is seen at the session's
  next compaction, after "Refresh tools" (:meth:`McpTools.refresh`), or when
  the user turns a server on or off for the space.
* **Running a call** (:meth:`McpTools.run`): the call is routed to its server
  through the session's frozen list, after approval: tools in the server's
  ``alwaysAllow`` run at once, as do tools allowed "for this chat"; any other
  call asks the :data:`Approver` (the window's dialog): Allow once, Always for
  this chat, Always for this tool (written to ``alwaysAllow`` in ``mcp.json``)
  or Deny. Approvals hold for the program the server's configuration names on
  this machine, and are kept per machine (``parley.core.mcp.approvals``). Whatever happens
  (denied, server failed or crashed, timeout, protocol error) the model gets a
  tool_result, with ``is_error`` set when the call did not succeed; only
  cancellation (Stop) propagates.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from parley.core.app_state import MCP_OFF, MCP_TOOLS
from parley.core.content import ToolResultBlock, ToolUseBlock, Turn
from parley.core.errors import ParleyError
from parley.core.mcp.approvals import Approvals
from parley.core.mcp.client import ServerFailed
from parley.core.mcp.config import ServerConfig, with_tool_allowed
from parley.core.mcp.host import McpHost
from parley.core.mcp.names import is_mcp_name, wire_name, wire_schema
from parley.core.mcp.results import to_tool_result
from parley.core.providers.base import ToolSpec
from parley.core.settings import Settings
from parley.core.tools.registry import ToolContext, text_result

if TYPE_CHECKING:
    from parley.core.store.async_store import AsyncStore
    from parley.core.store.models import Session

log = logging.getLogger(__name__)

TIMEOUT_KEY = "tools.mcp_timeout_s"

Decision = Literal["once", "chat", "tool", "deny"]


@dataclass(frozen=True)
class ApprovalRequest:
    """A call waiting for the user's yes or no.

    Attributes:
        session_id: the chat it runs in.
        server: the MCP server's name.
        tool: the tool's name on that server.
        arguments: what the model passed.
        description: the tool's description (may be empty).
        program: the command line or URL that will answer
            (``parley.core.mcp.config.ServerConfig.describe``: no environment values).
        program_changed: an earlier approval on this machine of a tool of this server
            was for another program (``parley.core.mcp.approvals.Approvals.other_program``).
    """

    session_id: str
    server: str
    tool: str
    arguments: Mapping[str, Any]
    description: str = ""
    program: str = ""
    program_changed: bool = False


#: Asks the user about a call; returns the choice (the window shows a dialog).
Approver = Callable[[ApprovalRequest], Awaitable[Decision]]


def declined_text(server: str, tool: str) -> str:
    """The result the model gets when the user said no."""
    return (f"The user declined to run {tool} (MCP server “{server}”); it did not run. "
            "Do not call it again for this request unless the user asks; answer without it "
            "or ask the user how to go on.")


@dataclass(frozen=True)
class _Entry:
    spec: ToolSpec
    server: str
    tool: str


class McpTools:
    """The MCP side of the tool executor.

    Args:
        host: the servers.
        store: the ``AsyncStore`` (per-space switches, frozen lists, chat approvals).
        approver: asks the user before a call runs; None denies every call that
            is not always allowed (nobody to ask).
    """

    def __init__(
        self, host: McpHost, store: AsyncStore, *, approver: Approver | None = None
    ) -> None:
        self.host = host
        self.store = store
        self.approver = approver
        self.approvals = Approvals(store)
        self._frozen: dict[str, dict[str, _Entry]] = {}

    # --- per space ----------------------------------------------------------------

    async def servers_off(self, space_id: str) -> list[str]:
        """The servers turned off in a space (every other configured server is on)."""
        return list(await MCP_OFF.get(self.store, space_id, []) or [])

    async def set_server_on(self, space_id: str, server: str, on: bool) -> None:
        """Turn a server on or off for a space; its chats take the change at their next
        request (an on-purpose change of the tool list)."""
        off = [s for s in await self.servers_off(space_id) if s != server]
        if not on:
            off.append(server)
        await MCP_OFF.set(self.store, sorted(off) or None, space_id)

    # --- what is offered --------------------------------------------------------------

    async def _build(self, off: Sequence[str]) -> list[_Entry]:
        names = [n for n in self.host.configs if n not in off]
        statuses = await self.host.ensure(names, retry_failed=False)
        out: list[_Entry] = []
        for name in names:
            status = statuses.get(name)
            conf = self.host.configs.get(name)
            if status is None or status.state != "ready" or conf is None:
                continue
            for tool in status.tools:
                if tool.name in conf.disabled_tools:
                    continue
                about = tool.description.strip() or tool.title or tool.name
                spec = ToolSpec(wire_name(name, tool.name), f"[MCP server “{name}”] {about}",
                                wire_schema(tool.input_schema))
                out.append(_Entry(spec, name, tool.name))
        return out

    async def specs_for(self, session: Session, turns: Sequence[Turn]) -> list[ToolSpec]:
        """The MCP tools a session's request carries (its frozen list; built, starting
        the servers, on its first request, after a compaction, a refresh or a change of
        the space's servers).

        Args:
            session: the session (``id``, ``space_id``).
            turns: its stored turns (the latest compaction summary is looked up).
        """
        from parley.core.tools.system_prompt import latest_summary_id

        await self.host.reload_if_changed()
        if not self.host.configs:
            return []
        off = await self.servers_off(session.space_id)
        summary = latest_summary_id(turns)
        saved = await MCP_TOOLS.get(self.store, session.id)
        if (isinstance(saved, dict) and saved.get("summary") == summary
                and saved.get("off") == off):
            entries = [_Entry(ToolSpec(e["name"], e["description"], e["input_schema"]),
                              e["server"], e["tool"]) for e in saved.get("tools", [])]
        else:
            entries = await self._build(off)
            await MCP_TOOLS.set(self.store, {"summary": summary, "off": off, "tools": [
                {"name": e.spec.name, "description": e.spec.description,
                 "input_schema": e.spec.input_schema, "server": e.server, "tool": e.tool}
                for e in entries]}, session.id)
        self._frozen[session.id] = {e.spec.name: e for e in entries}
        return [e.spec for e in entries]

    async def refresh(self, session_id: str) -> None:
        """Forget a session's frozen list ("Refresh tools"): its next request lists the
        servers' tools again."""
        self._frozen.pop(session_id, None)
        await MCP_TOOLS.set(self.store, None, session_id)

    async def load_names(self, session_id: str) -> None:
        """Read a chat's frozen tool list (one app-state row) unless held already, so
        :meth:`names_of` knows its tools before any call (a chat opened after a restart)."""
        if session_id not in self._frozen:
            await self._route(session_id, "")

    def names_of(self, name: str) -> tuple[str, str] | None:
        """The server and tool a wire name (``parley.core.mcp.names.wire_name``) stands
        for, as configured (invisible characters and all), from the chats' frozen lists
        or the running servers' tools; None when neither knows it. No I/O: for labels."""
        for frozen in self._frozen.values():
            entry = frozen.get(name)
            if entry is not None:
                return entry.server, entry.tool
        for server, status in self.host.statuses().items():
            for tool in status.tools:
                if wire_name(server, tool.name) == name:
                    return server, tool.name
        return None

    def owns(self, name: str) -> bool:
        """True when a tool_use names an MCP tool."""
        return is_mcp_name(name)

    # --- running a call -------------------------------------------------------------------

    async def _route(self, session_id: str, name: str) -> _Entry | None:
        frozen = self._frozen.get(session_id)
        if frozen is None:
            saved = await MCP_TOOLS.get(self.store, session_id)
            tools = saved.get("tools", []) if isinstance(saved, dict) else []
            frozen = {e["name"]: _Entry(ToolSpec(e["name"], e["description"], e["input_schema"]),
                                        e["server"], e["tool"]) for e in tools}
            self._frozen[session_id] = frozen
        return frozen.get(name)

    async def _approve(self, session_id: str, entry: _Entry, conf: ServerConfig,
                       args: Mapping[str, Any]) -> bool:
        if await self.approvals.allowed(session_id, conf, entry.tool):
            return True
        if self.approver is None:
            return False
        about = entry.spec.description.split("] ", 1)[-1]
        changed = await self.approvals.other_program(session_id, conf)
        decision = await self.approver(ApprovalRequest(
            session_id, entry.server, entry.tool, dict(args), about,
            program=conf.describe(), program_changed=changed))
        if decision == "chat":
            await self.approvals.allow_in_chat(session_id, conf, entry.tool)
        elif decision == "tool":
            await self.approvals.allow_always(conf, entry.tool)
            servers = dict(self.host.configs)
            servers[entry.server] = with_tool_allowed(conf, entry.tool)
            try:
                await self.host.save(servers)
            except ParleyError as exc:  # allowed now; not remembered
                log.warning("%s", exc.message)
        return decision != "deny"

    async def timeout_s(self, server: str) -> float:
        """Seconds one call to ``server`` may take (its ``timeout``, else the setting)."""
        conf = self.host.configs.get(server)
        if conf is not None and conf.timeout_s is not None:
            return conf.timeout_s
        value: float = await Settings.of(self.store).get(TIMEOUT_KEY)
        return value

    async def run(self, call: ToolUseBlock, ctx: ToolContext) -> ToolResultBlock:
        """Run one MCP tool call after approval and return its result (never raises but
        for cancellation).

        ``mcp.json`` is read again first when it changed on disk
        (``McpHost.reload_if_changed``): a server whose program changed is stopped, so the
        program approved and the program that runs are both the one configured now.
        """
        await self.host.reload_if_changed()
        entry = await self._route(ctx.session_id, call.name)
        if entry is None:
            return text_result(call.id, f"There is no tool called '{call.name}' in this chat "
                                        "(its MCP server may have been removed).", is_error=True)
        conf = self.host.configs.get(entry.server)
        if conf is None:
            return text_result(call.id, f"{entry.tool} did not run: its MCP server "
                                        f"“{entry.server}” is no longer configured.",
                               is_error=True)
        args = dict(call.input)
        if not await self._approve(ctx.session_id, entry, conf, args):
            return text_result(call.id, declined_text(entry.server, entry.tool), is_error=True)
        timeout = await self.timeout_s(entry.server)
        try:
            result = await self.host.call(entry.server, entry.tool, args, timeout)
        except asyncio.CancelledError:
            raise
        except TimeoutError:
            return text_result(call.id, f"{entry.tool} (MCP server “{entry.server}”) did not "
                                        f"answer within {timeout:g} seconds; the call was "
                                        "abandoned.", is_error=True)
        except ServerFailed as exc:
            return text_result(call.id, exc.message, is_error=True)
        except Exception as exc:
            message = getattr(exc, "message", None) or str(exc) or type(exc).__name__
            if getattr(exc, "error", None) is None:  # not a protocol error: a bug, log it
                log.exception("MCP call %s/%s failed", entry.server, entry.tool)
            return text_result(call.id, f"{entry.tool} (MCP server “{entry.server}”) failed: "
                                        f"{message}", is_error=True)
        return to_tool_result(call.id, result)

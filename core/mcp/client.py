"""One connection to one MCP server, on the official ``mcp`` SDK.

:class:`Connection` owns the transport (``mcp.client.stdio.stdio_client`` for a
program, ``mcp.client.streamable_http.streamable_http_client`` for a URL) and
the ``mcp.ClientSession`` over it, inside one task (the SDK's transports are
anyio context managers that must be entered and left in the same task). It
runs on the MCP event loop (``parley.core.mcp.host``), never on the window's.

Its :class:`ServerStatus` says what people see in Settings → Tools:
``starting``, ``ready`` (with its tools), ``failed`` (the error, and for a
program the end of what it wrote to stderr) or ``stopped``. A server that
dies while a call waits fails that call (:class:`ServerFailed`) and turns
``failed``; the next use starts it again.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import tempfile
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from parley.core.errors import ParleyError
from parley.core.mcp.config import ServerConfig

log = logging.getLogger(__name__)

State = Literal["stopped", "starting", "ready", "failed"]
#: How long a server may take to start and list its tools (seconds).
START_TIMEOUT_S = 30.0
#: How much of a program's stderr is read for its status (bytes), and shown (lines, characters).
STDERR_TAIL = 4000
TAIL_LINES = 6
TAIL_CHARS = 800


class ServerFailed(ParleyError):
    """An MCP server could not be started, or stopped answering.

    Attributes:
        server: the server's name.
    """

    def __init__(self, server: str, message: str) -> None:
        super().__init__(message)
        self.server = server


@dataclass(frozen=True)
class ToolInfo:
    """A tool a server offers.

    Attributes:
        name: the server's own name for it.
        description: what it does (may be empty).
        input_schema: its JSON Schema, as the server sent it.
        title: a display name, when the server gives one.
    """

    name: str
    description: str
    input_schema: Mapping[str, Any]
    title: str = ""


@dataclass(frozen=True)
class ServerStatus:
    """What a server is doing, for people.

    Attributes:
        name: the server.
        state: stopped / starting / ready / failed.
        tools: its tools when ready (the server's order).
        error: when failed, what went wrong (the server's own words where it gave any).
    """

    name: str
    state: State = "stopped"
    tools: tuple[ToolInfo, ...] = ()
    error: str = ""

    def describe(self) -> str:
        """One line: “Ready — 3 tools”, “Failed: …”, “Starting…”, “Not started”."""
        if self.state == "ready":
            n = len(self.tools)
            return f"Ready — {n} tool{'' if n == 1 else 's'}"
        if self.state == "starting":
            return f"Starting… ({self.error})" if self.error else "Starting…"
        if self.state == "failed":
            return f"Failed: {self.error}"
        return "Not started (starts when a chat first needs it)"


def _closed(exc: BaseException) -> bool:
    """True when an SDK error means the connection is gone (the server exited)."""
    code = getattr(getattr(exc, "error", None), "code", None)
    from mcp_types import CONNECTION_CLOSED

    return code == CONNECTION_CLOSED or isinstance(exc, EOFError | BrokenPipeError)


def _words(exc: BaseException, command: str | None = None) -> str:
    """An exception (or an exception group from the SDK's task groups) in a few words
    (``command``: the server's program, named when it is not found)."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    text = str(exc).strip() or type(exc).__name__
    if _closed(exc):
        return "the program ended or closed its connection"
    status = getattr(getattr(exc, "response", None), "status_code", None)
    if status == 401 or " 401" in text:
        return ("the server refused Parley (401 Unauthorized): check the token in its "
                "headers, or press Start / restart to sign in again")
    if type(exc).__name__.startswith("OAuth"):
        return f"signing in failed ({text})"
    if isinstance(exc, FileNotFoundError):  # not Python's "[Errno 2] No such file…"
        return f"command not found: {exc.filename or command or text}"
    return text


class Connection:
    """A live (or not yet started) connection to one server.

    Args:
        config: the server.
        env: its environment with secrets filled in (stdio).
        headers: its headers with secrets filled in (HTTP).
        on_change: called (on the MCP loop) with the new status whenever it changes.
        auth: for an HTTP server, makes its sign-in (``parley.core.mcp.oauth.make_auth``) given a
            callback told when the person is expected to sign in in the browser.
    """

    def __init__(self, config: ServerConfig, *, env: Mapping[str, str] | None = None,
                 headers: Mapping[str, str] | None = None,
                 on_change: Callable[[ServerStatus], None] | None = None,
                 auth: Callable[[Callable[[bool], None]], Any] | None = None) -> None:
        self.config = config
        self.auth = auth
        self.signing_in = False
        self.env = dict(env if env is not None else config.env)
        self.headers = dict(headers if headers is not None else config.headers)
        self._on_change = on_change
        self.status = ServerStatus(config.name)
        self.failed_at: float | None = None  # time.monotonic() of the last failure
        self.session: Any = None
        self._task: asyncio.Task[None] | None = None
        self._ready = asyncio.Event()
        self._stop = asyncio.Event()
        self._errlog: Any = None
        self.tools_changed = False

    # --- status ---------------------------------------------------------------

    def _set(self, state: State, *, tools: tuple[ToolInfo, ...] = (), error: str = "") -> None:
        self.status = ServerStatus(self.config.name, state, tools, error)
        if state == "failed":
            self.failed_at = time.monotonic()
        if self._on_change is not None:
            try:
                self._on_change(self.status)
            except Exception:  # a listener's bug must not stop the server
                log.exception("MCP status listener failed")

    def stderr_tail(self) -> str:
        """The end of what the program wrote to stderr ('' for HTTP servers or nothing)."""
        f = self._errlog
        if f is None:
            return ""
        try:
            size = os.fstat(f.fileno()).st_size
            data = os.pread(f.fileno(), STDERR_TAIL, max(0, size - STDERR_TAIL))
        except (OSError, ValueError):
            return ""
        lines = data.decode("utf-8", "replace").strip().splitlines()
        return "\n".join(lines[-TAIL_LINES:])[-TAIL_CHARS:]

    def _failure(self, what: str) -> str:
        tail = self.stderr_tail()
        return f"{what}. The server wrote: {tail}" if tail else what

    # --- life -------------------------------------------------------------------

    @property
    def running(self) -> bool:
        return self._task is not None and not self._task.done()

    async def start(self, timeout_s: float = START_TIMEOUT_S) -> ServerStatus:
        """Start the server (if not running) and wait until it is ready or failed.

        Returns:
            The status: ``ready`` or ``failed`` (never raises for the server's failure).
        """
        if self.status.state == "ready" and self.running:
            return self.status
        if not self.running:
            self._ready = asyncio.Event()
            self._stop = asyncio.Event()
            self._set("starting")
            self._task = asyncio.create_task(self._main(), name=f"mcp:{self.config.name}")
        try:
            async with asyncio.timeout(timeout_s):
                await self._ready.wait()
        except TimeoutError:
            if not self.signing_in:
                await self.stop()
                self._set("failed", error=self._failure(
                    f"it did not start within {timeout_s:g} seconds"))
                return self.status
            await self._ready.wait()  # the sign-in has its own time limit (parley.core.mcp.oauth)
        return self.status

    def _waiting(self, on: bool) -> None:
        """The person is (no longer) expected to sign in in the browser."""
        self.signing_in = on
        if on:
            self._set("starting", error="waiting for you to sign in in your browser")

    async def stop(self) -> None:
        """Stop the server (the program is ended) and wait for it; status ``stopped``
        unless it had failed."""
        task, self._task = self._task, None
        if task is not None and not task.done():
            self._stop.set()
            try:
                async with asyncio.timeout(5):
                    await asyncio.shield(task)
            except (TimeoutError, Exception):
                task.cancel()
                with contextlib.suppress(BaseException):
                    await task
        self.session = None
        if self.status.state != "failed":
            self._set("stopped")

    def _transport(self) -> Any:
        c = self.config
        if c.command:
            from mcp import StdioServerParameters
            from mcp.client.stdio import stdio_client

            if self._errlog is not None:
                self._errlog.close()
            self._errlog = tempfile.TemporaryFile()  # noqa: SIM115 (lives with the process)
            params = StdioServerParameters(command=c.command, args=list(c.args),
                                           env=self.env or None, cwd=c.cwd,
                                           encoding_error_handler="replace")
            return stdio_client(params, errlog=self._errlog)
        from mcp.client.streamable_http import streamable_http_client
        from mcp.shared._httpx_utils import create_mcp_http_client

        auth = self.auth(self._waiting) if self.auth is not None else None
        client = create_mcp_http_client(headers=self.headers or None, auth=auth)
        return _owning(client, streamable_http_client(c.url or "", http_client=client))

    async def _main(self) -> None:
        from mcp import ClientSession

        ready = False
        try:
            async with self._transport() as (read, write), ClientSession(
                    read, write, message_handler=self._message) as session:
                await session.initialize()
                tools = await self._list(session)
                self.session = session
                ready = True
                self._set("ready", tools=tools)
                self._ready.set()
                await self._stop.wait()
        except asyncio.CancelledError:
            raise
        except BaseException as exc:  # the SDK raises exception groups from its task groups
            if not isinstance(exc, Exception | BaseExceptionGroup):
                raise
            log.info("MCP server %s failed: %r", self.config.name, exc)
            what = ("it stopped unexpectedly" if ready else "it could not be started") + \
                f" ({_words(exc, self.config.command)})"
            self._set("failed", error=self._failure(what))
        finally:
            self.session = None
            self._ready.set()

    async def _list(self, session: Any) -> tuple[ToolInfo, ...]:
        out: list[ToolInfo] = []
        cursor = None
        from mcp_types import PaginatedRequestParams

        while True:
            params = PaginatedRequestParams(cursor=cursor) if cursor else None
            page = await session.list_tools(params=params)
            for t in page.tools:
                title = t.title or (t.annotations.title if t.annotations else None) or ""
                out.append(ToolInfo(t.name, t.description or "", dict(t.input_schema), title))
            cursor = page.next_cursor
            if not cursor:
                return tuple(out)

    async def _message(self, message: Any) -> None:
        """Notifications from the server: a changed tool list is fetched again (the chats
        take it at their next compaction or "Refresh tools")."""
        method = getattr(getattr(message, "root", message), "method", None)
        if method == "notifications/tools/list_changed" and self.session is not None:
            try:
                tools = await self._list(self.session)
            except Exception as exc:
                log.info("MCP server %s: listing tools again failed: %r", self.config.name, exc)
                return
            self.tools_changed = True
            self._set("ready", tools=tools)

    async def refresh_tools(self) -> ServerStatus:
        """List the tools again (starting the server if needed)."""
        if self.status.state == "ready" and self.session is not None:
            self._set("ready", tools=await self._list(self.session))
            return self.status
        return await self.start()

    # --- calls ------------------------------------------------------------------

    async def call(self, tool: str, arguments: Mapping[str, Any], timeout_s: float) -> Any:
        """Call a tool and return the SDK's ``CallToolResult``.

        Raises:
            ServerFailed: the server is not running, or died during the call (it is
                marked failed with its stderr tail).
            TimeoutError: no answer within ``timeout_s`` seconds.
            mcp.MCPError: the server answered with a protocol error.
        """
        status = await self.start()
        session = self.session
        if status.state != "ready" or session is None:
            raise ServerFailed(self.config.name, f"The MCP server “{self.config.name}” is not "
                                                 f"running: {status.error or status.state}.")
        try:
            return await session.call_tool(tool, dict(arguments), read_timeout_seconds=timeout_s)
        except Exception as exc:
            if _timed_out(exc):
                raise TimeoutError from None
            if not _closed(exc):
                raise
        await asyncio.sleep(0.05)  # let the program's last stderr lines land
        message = self._failure(f"it stopped while running {tool}")
        self._stop.set()
        await self.stop()
        self._set("failed", error=message)
        raise ServerFailed(self.config.name,
                           f"The MCP server “{self.config.name}” failed: {message}.")


def _timed_out(exc: BaseException) -> bool:
    from mcp_types import REQUEST_TIMEOUT

    return getattr(getattr(exc, "error", None), "code", None) == REQUEST_TIMEOUT


@contextlib.asynccontextmanager
async def _owning(client: Any, transport: Any) -> Any:
    """Enter ``transport`` and close the HTTP ``client`` after it."""
    async with client, transport as streams:
        yield streams


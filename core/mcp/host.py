"""Every configured MCP server, on an event loop of their own.

:class:`McpHost` reads ``mcp.json`` (``parley.core.mcp.config``), keeps one
:class:`~parley.core.mcp.client.Connection` per server and runs them all on an
asyncio loop in a worker thread ("mcp"): a server that floods its output, a
slow handshake or a big result is parsed there, never on the window's loop.
Its coroutines are awaited from the caller's loop as usual (each is handed
to the MCP loop and its result handed back; cancelling the caller's await
cancels the work there too).

Servers start on first use (:meth:`McpHost.ensure`), each at most once at a
time, and all stop in :meth:`McpHost.close` (at quit). Status changes reach
:meth:`McpHost.on_change` listeners on the caller's loop.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import threading
import time
from collections.abc import Callable, Coroutine, Iterable, Mapping
from pathlib import Path
from typing import Any, TypeVar

from parley.core.mcp import config as cfg
from parley.core.mcp.client import Connection, ServerFailed, ServerStatus
from parley.core.mcp.config import KEYRING_MARK, McpConfigError, ServerConfig

log = logging.getLogger(__name__)
T = TypeVar("T")
#: A failed server is not started again for a chat's tool list for this long (seconds);
#: a call, Refresh or Start / restart tries at once.
RETRY_AFTER_S = 600.0
StatusListener = Callable[[ServerStatus], None]


class McpHost:
    """The MCP servers of ``mcp.json`` and their connections.

    Args:
        path: the ``mcp.json`` file (``parley.core.mcp.config.config_path``).
        keys: the ``parley.core.keys.KeyStore`` holding the servers' secrets (None: the
            values marked as kept in the keyring are sent empty).

    Attributes:
        configs: the servers as configured, by name, in the file's order.
        error: the problem with ``mcp.json`` when it could not be read (no servers then).
    """

    def __init__(self, path: Path, keys: Any = None, *, open_url: Any = None) -> None:
        self.path = Path(path)
        self.keys = keys
        self.open_url = open_url
        self.configs: dict[str, ServerConfig] = {}
        self.error: McpConfigError | None = None
        self._conns: dict[str, Connection] = {}
        self._starting: dict[str, asyncio.Future[ServerStatus]] = {}
        self._listeners: list[StatusListener] = []
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._caller: asyncio.AbstractEventLoop | None = None
        self._lock = threading.Lock()
        self._read_as: tuple[int, int, int] | None = None

    # --- configuration ---------------------------------------------------------------

    def _stamp(self) -> tuple[int, int, int] | None:
        """``mcp.json``'s (inode, mtime in ns, size), or None when it cannot be seen."""
        try:
            st = self.path.stat()
        except OSError:
            return None
        return (st.st_ino, st.st_mtime_ns, st.st_size)

    def load(self) -> None:
        """(Re)read ``mcp.json``; a bad file leaves no servers and :attr:`error` set."""
        self._read_as = self._stamp()
        try:
            self.configs = cfg.load(self.path)
            self.error = None
        except McpConfigError as exc:
            log.warning("%s", exc.message)
            self.configs, self.error = {}, exc

    async def save(self, servers: Mapping[str, ServerConfig]) -> None:
        """Write ``servers`` to ``mcp.json`` and use them; a server whose command, URL,
        environment or headers changed (or that was removed) is stopped, to start again as
        configured when next used.

        Raises:
            McpConfigError: the file could not be written (nothing changed).
        """
        await asyncio.to_thread(cfg.save, self.path, servers)
        self._read_as = self._stamp()
        await self._use(dict(servers), None)

    async def reload(self) -> bool:
        """Read ``mcp.json`` again (fixed, written or edited while Parley runs) and use
        what it holds: a server whose launch changed, or that is gone, is stopped (to start
        as configured when next used); a bad file leaves no servers and :attr:`error` set.

        Returns:
            True when the servers or the file's problem changed.
        """
        self._read_as = self._stamp()
        try:
            servers, error = await asyncio.to_thread(cfg.load, self.path), None
        except McpConfigError as exc:
            servers, error = {}, exc
        old_error = self.error.message if self.error is not None else None
        changed = servers != self.configs or \
            (error.message if error is not None else None) != old_error
        if error is not None and error.message != old_error:
            log.warning("%s", error.message)
        await self._use(servers, error)
        return changed

    async def reload_if_changed(self) -> bool:
        """:meth:`reload` when ``mcp.json`` is not the file last read (its inode, mtime or
        size differ: one ``stat``, no reading), so an edit of a server's command takes
        effect at the next call rather than when Settings → Tools next opens.

        Returns:
            True when the servers or the file's problem changed.
        """
        if self._stamp() == self._read_as:
            return False
        return await self.reload()

    async def _use(self, servers: dict[str, ServerConfig], error: McpConfigError | None
                   ) -> None:
        """Take ``servers`` as the configuration, stopping the servers changed or gone."""
        old, self.configs, self.error = self.configs, servers, error
        for name, conf in old.items():
            new = servers.get(name)
            if new is None or new.launch() != conf.launch():
                await self.stop(name)
            elif name in self._conns:
                self._conns[name].config = new

    # --- the MCP loop -----------------------------------------------------------------

    def _ensure_loop(self) -> asyncio.AbstractEventLoop:
        with self._lock:
            if self._loop is None:
                loop = asyncio.new_event_loop()
                started = threading.Event()

                def run() -> None:
                    asyncio.set_event_loop(loop)
                    loop.call_soon(started.set)
                    loop.run_forever()

                self._thread = threading.Thread(target=run, name="mcp", daemon=True)
                self._thread.start()
                started.wait()
                self._loop = loop
            return self._loop

    async def _on_mcp(self, coro: Coroutine[Any, Any, T]) -> T:
        """Run ``coro`` on the MCP loop and return its result (cancellation carries over)."""
        self._caller = asyncio.get_running_loop()
        future: concurrent.futures.Future[T] = asyncio.run_coroutine_threadsafe(
            coro, self._ensure_loop())
        return await asyncio.wrap_future(future)

    def on_change(self, listener: StatusListener) -> Callable[[], None]:
        """Call ``listener(status)`` (on the caller's loop) whenever a server's status
        changes; returns a function that removes it."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener) if listener in self._listeners else None

    def _changed(self, status: ServerStatus) -> None:  # on the MCP loop
        caller = self._caller
        if caller is None or caller.is_closed():
            return
        for listener in list(self._listeners):
            caller.call_soon_threadsafe(listener, status)

    # --- servers ------------------------------------------------------------------------

    def status(self, name: str) -> ServerStatus:
        """A server's status (``stopped`` before its first use)."""
        conn = self._conns.get(name)
        return conn.status if conn is not None else ServerStatus(name)

    def statuses(self) -> dict[str, ServerStatus]:
        """Every configured server's status, in the file's order."""
        return {name: self.status(name) for name in self.configs}

    def _secrets(self, conf: ServerConfig, where: str, values: Mapping[str, str]
                 ) -> dict[str, str]:
        out = dict(values)
        for key, value in values.items():
            if value == KEYRING_MARK:
                found = self.keys.get(cfg.secret_id(conf.name, where, key)) if self.keys else None
                out[key] = found.value if found is not None else ""
        return out

    def _connection(self, name: str) -> Connection:  # on the MCP loop
        conf = self.configs.get(name)
        if conf is None:
            raise ServerFailed(name, f"There is no MCP server called “{name}” any more "
                                     "(it was removed in Settings → Tools).")
        conn = self._conns.get(name)
        if conn is None or conn.config.launch() != conf.launch():
            conn = Connection(conf, env=self._secrets(conf, "env", conf.env),
                              headers=self._secrets(conf, "headers", conf.headers),
                              on_change=self._changed, auth=self._auth(conf))
            self._conns[name] = conn
        return conn

    def _auth(self, conf: ServerConfig) -> Any:
        """The sign-in maker of an HTTP server (None for a program)."""
        if conf.command:
            return None
        from parley.core.mcp import oauth

        open_url = self.open_url or oauth.open_in_browser
        return lambda on_wait: oauth.make_auth(conf, self.keys, open_url, on_wait)

    async def _start(self, name: str, *, retry_failed: bool = True) -> ServerStatus:
        # On the MCP loop. retry_failed=False: a server that failed within RETRY_AFTER_S
        # keeps its failure (a chat's tool list is not held up by it again and again).
        conn = self._conns.get(name)
        if (not retry_failed and conn is not None and conn.status.state == "failed"
                and conn.failed_at is not None
                and time.monotonic() - conn.failed_at < RETRY_AFTER_S):
            return conn.status
        pending = self._starting.get(name)
        if pending is not None:
            return await asyncio.shield(pending)
        future: asyncio.Future[ServerStatus] = asyncio.get_running_loop().create_future()
        self._starting[name] = future
        try:
            status = await self._connection(name).start()
            future.set_result(status)
            return status
        except BaseException as exc:
            future.set_exception(exc)
            future.exception()  # retrieved: a waiter may not exist
            raise
        finally:
            del self._starting[name]

    async def ensure(self, names: Iterable[str] | None = None, *,
                     retry_failed: bool = True) -> dict[str, ServerStatus]:
        """Start these servers (default: all) if not running, together, and wait for each
        to be ready or failed (at most ``parley.core.mcp.client.START_TIMEOUT_S``).

        Args:
            names: the servers (default: every configured one).
            retry_failed: False leaves a server that failed less than
                :data:`RETRY_AFTER_S` ago failed (its status is returned as it is).

        Returns:
            ``{name: status}`` of the servers asked for that are configured.
        """
        wanted = [n for n in (self.configs if names is None else names) if n in self.configs]
        if not wanted:
            return {}

        async def all_of() -> list[ServerStatus]:
            return list(await asyncio.gather(
                *(self._start(n, retry_failed=retry_failed) for n in wanted)))

        return dict(zip(wanted, await self._on_mcp(all_of()), strict=True))

    async def call(self, server: str, tool: str, arguments: Mapping[str, Any],
                   timeout_s: float) -> Any:
        """Call a tool of a server (starting it if needed); see ``Connection.call``."""
        async def run() -> Any:
            await self._start(server)
            return await self._connection(server).call(tool, arguments, timeout_s)

        return await self._on_mcp(run())

    async def stop(self, name: str) -> None:
        """Stop a server (no-op when not running)."""
        conn = self._conns.pop(name, None)
        if conn is not None and self._loop is not None:
            await self._on_mcp(conn.stop())

    async def restart(self, name: str) -> ServerStatus:
        """Stop a server and start it again (the "Restart" button)."""
        await self.stop(name)
        return (await self.ensure([name])).get(name, ServerStatus(name, "stopped"))

    async def refresh(self, name: str) -> ServerStatus:
        """Ask a running server for its tools again (starting it when needed)."""
        async def run() -> ServerStatus:
            await self._start(name)
            return await self._connection(name).refresh_tools()

        return await self._on_mcp(run())

    async def close(self) -> None:
        """Stop every server (their programs end) and the MCP loop; at quit."""
        loop = self._loop
        if loop is None:
            return
        conns, self._conns = list(self._conns.values()), {}

        async def stop_all() -> None:
            await asyncio.gather(*(c.stop() for c in conns), return_exceptions=True)

        try:
            await asyncio.wait_for(self._on_mcp(stop_all()), timeout=10)
        except (TimeoutError, RuntimeError) as exc:
            log.warning("MCP servers did not all stop: %r", exc)
        self.close_loop()

    def close_loop(self) -> None:
        """Stop the MCP loop's thread (after :meth:`close`, or when its caller loop is gone)."""
        with self._lock:
            loop, self._loop = self._loop, None
        if loop is None:
            return
        loop.call_soon_threadsafe(loop.stop)
        if self._thread is not None:
            self._thread.join(timeout=5)
        if not loop.is_running():
            loop.close()

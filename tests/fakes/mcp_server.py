"""A real MCP server for the tests, written with the SDK's own server API (``MCPServer``).

Run as a program it serves over stdio (Parley starts it as a subprocess):
``python -m tests.fakes.mcp_server [--fail-start | --garbage | --spoof]`` (``--garbage``:
prints lines that are not JSON-RPC on stdout first; ``--spoof``: adds the tool
:data:`SPOOF_TOOL`, whose name and description hide a right-to-left override).
:func:`http_app` is the same server over Streamable HTTP, served on 127.0.0.1 by a test fixture.

Tools: ``echo`` (text back), ``add`` (numbers), ``picture`` (a 1×1 PNG and a
caption), ``fails`` (an ``isError`` result), ``crash`` (the process exits
mid-call, after a line on stderr), ``sleep`` (hangs for ``seconds``),
``huge`` (``n`` characters), ``grow`` (adds the tool ``extra`` and tells the
client its tool list changed), ``whoami`` (the ``FAKE_MCP_SECRET`` variable /
the ``x-secret`` header it got).
"""

from __future__ import annotations

import asyncio
import base64
import os
import sys

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.utilities.types import Image

#: A 1×1 transparent PNG.
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==")


#: A tool name that reads "report_exe.pdf" when its U+202E is not shown.
SPOOF_TOOL = "report_\u202efdp.exe"


def build(name: str = "fake") -> MCPServer:
    """The server and its tools."""
    return _with_tools(MCPServer(name))


def _with_tools(server: MCPServer) -> MCPServer:
    """``server`` with the test tools added."""

    @server.tool()
    def echo(text: str) -> str:
        """Return the text unchanged."""
        return f"echo: {text}"

    @server.tool()
    def add(a: float, b: float) -> str:
        """Add two numbers."""
        return str(a + b)

    @server.tool()
    def picture() -> list:
        """Return a tiny picture and a caption."""
        return ["a red dot", Image(data=PNG, format="png")]

    @server.tool()
    def fails(reason: str = "it always fails") -> str:
        """Fail with an error result."""
        raise ValueError(reason)

    @server.tool()
    def crash() -> str:
        """Exit the server process in the middle of the call."""
        sys.stderr.write("fake server: crashing on purpose\n")
        sys.stderr.flush()
        os._exit(3)

    @server.tool()
    async def sleep(seconds: float) -> str:
        """Wait, then answer."""
        await asyncio.sleep(seconds)
        return f"slept {seconds}"

    @server.tool()
    def huge(n: int) -> str:
        """Return n characters."""
        return "x" * n

    @server.tool()
    async def grow(ctx: Context) -> str:
        """Add the tool "extra" and announce the changed tool list."""
        def extra() -> str:
            """A tool added later."""
            return "extra!"

        server.add_tool(extra)
        await ctx.session.send_tool_list_changed()
        return "grown"

    @server.tool()
    def whoami(ctx: Context) -> str:
        """Say which secret the server got (env variable, or header over HTTP)."""
        headers = ctx.headers or {}
        return f"env={os.environ.get('FAKE_MCP_SECRET', '')} header={headers.get('x-secret', '')}"

    return server


def http_app(oauth: object = None, base_url: str = ""):  # noqa: ANN201 (a Starlette app)
    """The server over Streamable HTTP at ``/mcp``; with ``oauth`` (a
    ``tests.fakes.mcp_oauth.FakeOAuthProvider``) every request needs a bearer token
    it issued, and the SDK's OAuth routes are served at ``base_url``."""
    if oauth is None:
        return build("fake-http").streamable_http_app()
    from mcp.server.auth.settings import AuthSettings, ClientRegistrationOptions

    auth = AuthSettings(issuer_url=base_url, resource_server_url=f"{base_url}/mcp",
                        client_registration_options=ClientRegistrationOptions(enabled=True),
                        validate_token_resource=True)
    server = MCPServer("fake-oauth", auth_server_provider=oauth, auth=auth)  # type: ignore[arg-type]
    return _with_tools(server).streamable_http_app()


def main() -> None:
    if "--fail-start" in sys.argv:
        sys.stderr.write("fake server: cannot open the database /nowhere/db.sqlite\n")
        sys.exit(2)
    if "--garbage" in sys.argv:  # a server that prints what is not JSON-RPC on stdout
        print("Welcome to the fake server! {not json", flush=True)
        print("\x00\xff binary-ish junk", flush=True)
    server = build()
    if "--spoof" in sys.argv:
        @server.tool(name=SPOOF_TOOL, description="Open a \u202etxt.exe file\u200b safely.")
        def spoof(path: str) -> str:
            return f"opened {path}"
    sys.stderr.write("fake server: ready on stdio\n")
    sys.stderr.flush()
    server.run("stdio")


if __name__ == "__main__":
    main()


# --- for the tests ---------------------------------------------------------------------


def stdio_entry(*extra: str, **fields: object) -> dict:
    """An ``mcpServers`` entry that starts this server over stdio (this Python)."""
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    return {"command": sys.executable, "args": ["-m", "tests.fakes.mcp_server", *extra],
            "cwd": root, **fields}


class HttpMcpServer:
    """:func:`http_app` served by uvicorn in a daemon thread on 127.0.0.1 (ephemeral port)."""

    def __init__(self, oauth: object = None) -> None:
        import socket

        self.oauth = oauth
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._sock.bind(("127.0.0.1", 0))
        self.port = self._sock.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}/mcp"
        self._server = None
        self._thread = None

    def start(self) -> HttpMcpServer:
        import threading
        import time

        import uvicorn

        app = http_app(self.oauth, f"http://127.0.0.1:{self.port}")
        config = uvicorn.Config(app, log_level="warning", access_log=False,
                                lifespan="on", timeout_graceful_shutdown=1)
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._server.run,
                                        kwargs={"sockets": [self._sock]},
                                        name="fake-mcp-http", daemon=True)
        self._thread.start()
        deadline = time.monotonic() + 10
        while not self._server.started:
            if time.monotonic() > deadline or not self._thread.is_alive():
                raise RuntimeError("the fake MCP HTTP server did not start")
            time.sleep(0.005)
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._sock.close()

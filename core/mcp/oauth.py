"""Signing in to an MCP server that asks for it: OAuth on the SDK's ``OAuthClientProvider``.

When a Streamable HTTP server answers 401 and publishes OAuth metadata, the
SDK's ``mcp.client.auth.OAuthClientProvider`` registers Parley as a client
(dynamic client registration), and the person signs in in their browser:
Parley opens the server's authorization page (``open_url``; the system
browser by default) and listens on 127.0.0.1 for the redirect back
(:class:`LoopbackCallback`), with PKCE. The tokens and the registration are
kept in the keyring like API keys (:class:`KeyringTokenStorage`, entries
``mcp:<server>:oauth:tokens`` and ``mcp:<server>:oauth:client``), so the next
start needs no browser while the tokens last (the SDK refreshes them).

A server that needs no sign-in never sees any of this: the provider only acts
on a 401.
"""

from __future__ import annotations

import asyncio
import logging
import socket
import webbrowser
from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import parse_qs, urlsplit

from parley.core.mcp.config import ServerConfig, secret_id

log = logging.getLogger(__name__)

#: How long Parley waits for the person to finish signing in (seconds).
SIGN_IN_TIMEOUT_S = 300.0
CALLBACK_PATH = "/callback"
OpenUrl = Callable[[str], Awaitable[None]]

_DONE_PAGE = ("<!doctype html><meta charset=utf-8><title>Parley</title>"
              "<p>Signed in. You can close this tab and go back to Parley.</p>")


async def open_in_browser(url: str) -> None:
    """Open ``url`` in the system browser (in a worker thread: it may block)."""
    await asyncio.to_thread(webbrowser.open, url)


class KeyringTokenStorage:
    """The SDK's ``TokenStorage`` in Parley's key store (``parley.core.keys.KeyStore``), or in
    memory when there is none.

    Args:
        keys: the key store (None: kept for this run only).
        server: the server's name.
    """

    def __init__(self, keys: Any, server: str) -> None:
        self.keys, self.server = keys, server
        self._memory: dict[str, str] = {}

    async def _get(self, what: str) -> str | None:
        if self.keys is None:
            return self._memory.get(what)
        found = await asyncio.to_thread(self.keys.get, secret_id(self.server, "oauth", what))
        return found.value if found is not None else None

    async def _set(self, what: str, text: str) -> None:
        if self.keys is None:
            self._memory[what] = text
            return
        await asyncio.to_thread(self.keys.set, secret_id(self.server, "oauth", what), text)

    async def get_tokens(self) -> Any:
        from mcp.shared.auth import OAuthToken

        text = await self._get("tokens")
        return OAuthToken.model_validate_json(text) if text else None

    async def set_tokens(self, tokens: Any) -> None:
        await self._set("tokens", tokens.model_dump_json())

    async def get_client_info(self) -> Any:
        from mcp.shared.auth import OAuthClientInformationFull

        text = await self._get("client")
        return OAuthClientInformationFull.model_validate_json(text) if text else None

    async def set_client_info(self, client_info: Any) -> None:
        await self._set("client", client_info.model_dump_json())


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


class LoopbackCallback:
    """The redirect back from the browser: a one-request HTTP listener on 127.0.0.1.

    Args:
        open_url: opens the authorization page.
        on_wait: called with True while the person is expected to sign in, False after.
    """

    def __init__(self, open_url: OpenUrl, on_wait: Callable[[bool], None] | None = None) -> None:
        self.open_url = open_url
        self.on_wait = on_wait
        self.port = _free_port()
        self.redirect_uri = f"http://127.0.0.1:{self.port}{CALLBACK_PATH}"
        self._server: asyncio.Server | None = None
        self._result: asyncio.Future[dict[str, str]] | None = None

    async def redirect(self, url: str) -> None:
        """Listen for the redirect, then open the authorization page."""
        self._result = asyncio.get_running_loop().create_future()
        self._server = await asyncio.start_server(self._answer, "127.0.0.1", self.port)
        if self.on_wait is not None:
            self.on_wait(True)
        await self.open_url(url)

    async def callback(self) -> Any:
        """Wait for the browser to come back; returns the code and state.

        Raises:
            TimeoutError: not signed in within :data:`SIGN_IN_TIMEOUT_S`.
            ValueError: the server sent an error instead of a code.
        """
        from mcp.shared.auth import AuthorizationCodeResult

        assert self._result is not None, "redirect() first"
        try:
            async with asyncio.timeout(SIGN_IN_TIMEOUT_S):
                query = await self._result
        finally:
            if self._server is not None:
                self._server.close()
            if self.on_wait is not None:
                self.on_wait(False)
        if "code" not in query:
            raise ValueError(f"the sign-in was refused ({query.get('error', 'no code')}: "
                             f"{query.get('error_description', '')})")
        return AuthorizationCodeResult(code=query["code"], state=query.get("state"),
                                       iss=query.get("iss"))

    async def _answer(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            line = (await reader.readline()).decode("latin-1")
            while (await reader.readline()) not in (b"\r\n", b"\n", b""):
                pass
            parts = line.split()
            target = urlsplit(parts[1] if len(parts) > 1 else "/")
            if target.path != CALLBACK_PATH:
                writer.write(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n")
                return
            query = {k: v[0] for k, v in parse_qs(target.query).items()}
            body = _DONE_PAGE.encode()
            writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\n"
                         b"Content-Length: " + str(len(body)).encode() + b"\r\n"
                         b"Connection: close\r\n\r\n" + body)
            if self._result is not None and not self._result.done():
                self._result.set_result(query)
        finally:
            await writer.drain()
            writer.close()


def make_auth(config: ServerConfig, keys: Any, open_url: OpenUrl,
              on_wait: Callable[[bool], None] | None = None) -> Any:
    """The ``httpx`` auth of an HTTP server's connection: the SDK's OAuth provider with
    Parley's storage, browser and loopback callback."""
    from mcp.client.auth import OAuthClientProvider
    from mcp.shared.auth import OAuthClientMetadata

    loopback = LoopbackCallback(open_url, on_wait)
    metadata = OAuthClientMetadata(
        client_name="Parley", redirect_uris=[loopback.redirect_uri],  # type: ignore[list-item]
        grant_types=["authorization_code", "refresh_token"], response_types=["code"],
        token_endpoint_auth_method="none")
    return OAuthClientProvider(server_url=config.url or "", client_metadata=metadata,
                               storage=KeyringTokenStorage(keys, config.name),
                               redirect_handler=loopback.redirect,
                               callback_handler=loopback.callback)

"""Pytest fixtures for the fake provider server (registered by tests/conftest.py).

- ``fake_provider_server``: one server for the whole test session.
- ``fake_provider``: the same server, reset for this test (empty script, no
  recorded requests, a cold prompt cache). Use ``fake_provider.script(...)``,
  ``.fail(...)``, ``.anthropic_base_url``, ``.openai_base_url`` (a compatible server),
  ``.openai_own_url`` (playing OpenAI itself), ``.requests``,
  ``.last_request``.
- ``closed_port_url``: ``http://127.0.0.1:PORT`` where nothing listens
  (network-down tests).
- ``postgres_server``: a real PostgreSQL server for the test session;
  ``postgres_url``: a new empty database on it (``postgresql://…``);
  ``postgres_own_server``: a server of the test's own, to stop and start.
"""

from __future__ import annotations

import socket
from collections.abc import Iterator

import pytest

from tests.fakes.postgres import PostgresServer, find_bin_dir
from tests.fakes.server import FakeProviderServer


@pytest.fixture(scope="session")
def fake_provider_server() -> Iterator[FakeProviderServer]:
    """Start the fake provider once per test session."""
    server = FakeProviderServer().start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def fake_provider(
    fake_provider_server: FakeProviderServer, monkeypatch: pytest.MonkeyPatch
) -> Iterator[FakeProviderServer]:
    """The session's fake provider, reset before and after this test; its
    ``openai_own_url`` counts as OpenAI's own API (``PARLEY_OPENAI_URLS``) and its
    ``anthropic_base_url`` as Anthropic's (``PARLEY_ANTHROPIC_URLS``), so messages name
    them as they name the vendors (a test of a proxy's naming removes the latter)."""
    monkeypatch.setenv("PARLEY_OPENAI_URLS",  # parley.core.providers.registry.ENV_OPENAI_URLS
                        fake_provider_server.openai_own_url)
    monkeypatch.setenv("PARLEY_ANTHROPIC_URLS",  # registry.ENV_ANTHROPIC_URLS
                       fake_provider_server.anthropic_base_url)
    fake_provider_server.reset()
    yield fake_provider_server
    fake_provider_server.reset()


@pytest.fixture
def closed_port_url() -> str:
    """A loopback URL whose port was just free (connection refused)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}"


@pytest.fixture(scope="session")
def mcp_http_server() -> Iterator[object]:
    """The fake MCP server (``tests.fakes.mcp_server``) over Streamable HTTP on
    127.0.0.1, once per test session; ``.url`` is its endpoint."""
    from tests.fakes.mcp_server import HttpMcpServer

    server = HttpMcpServer().start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    """A real PostgreSQL server on 127.0.0.1 for the whole test session (tests/fakes/postgres.py).

    Skipped only when no server binaries are installed (``.ci/run`` installs them).
    """
    bin_dir = find_bin_dir()
    if bin_dir is None:
        pytest.skip("no PostgreSQL server binaries (initdb, pg_ctl): install Debian's postgresql")
    server = PostgresServer(bin_dir).start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def postgres_url(postgres_server: PostgresServer) -> str:
    """The URL of a new, empty database on the test session's PostgreSQL server."""
    return postgres_server.new_database()


@pytest.fixture
def postgres_own_server() -> Iterator[PostgresServer]:
    """A PostgreSQL server of this test's own, to stop and start (``pause``/``resume``)."""
    bin_dir = find_bin_dir()
    if bin_dir is None:
        pytest.skip("no PostgreSQL server binaries (initdb, pg_ctl): install Debian's postgresql")
    server = PostgresServer(bin_dir).start()
    try:
        yield server
    finally:
        server.stop()

"""Fixtures shared by the core tests: a real sessions.db, and a chat over the fake server.

* ``store``: an :class:`~parley.core.store.async_store.AsyncStore` on a new
  ``sessions.db`` in the test's ``tmp_path``, opened and closed by a
  :class:`~parley.core.workspace.Workspace` as the window's is.
* ``db``: the synchronous :class:`~parley.core.store.store.Store` on the same path,
  for the store's own tests.
* ``any_db`` / ``any_store``: the same, once on a sessions.db file and once on a
  new PostgreSQL database (``postgres_url``): for tests of behaviour both
  backends share. A test module runs all its ``db`` tests on both by
  defining a ``db`` fixture that returns ``any_db`` (see test_store_sessions.py).
* ``any_target``: where such a store goes (a path, or a new database's URL), for
  tests that open and close it themselves.
* ``env``: :func:`tests.core.compaction_support.open_env`: a workspace's store,
  a hub with both fake providers set up, a runner and one session
  (``env.store``, ``env.hub``, ``env.runner``, ``env.sid``). A test file that
  needs another set-up defines its own ``env``, which takes precedence.
* ``any_env``: the same on each backend; a module runs all its ``env`` tests on
  both by defining an ``env`` fixture that returns ``any_env`` (test_compaction.py).
* ``chat``: ``await chat(path)`` opens a store there with a hub (the fake server's
  Anthropic API, no retries) and a runner: ``(store, runner)``, all closed after the test.
* ``tools_env``: a runner with tools (the skill "Bullets" in its library) on each
  backend (:class:`tests.core.tool_support.Env`); the tool tests' modules use it as
  their ``env`` (test_tools_run.py, test_space_documents.py).
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

from parley.core.chat.run import ChatRunner
from parley.core.keys import FileBackend, KeyStore
from parley.core.providers.hub import ProviderHub
from parley.core.providers.retry import RetryPolicy
from parley.core.store.async_store import AsyncStore
from parley.core.store.backends import open_store
from parley.core.store.errors import StoreError
from parley.core.store.store import Store
from parley.core.tools import ToolExecutor
from parley.core.tools.skills import SkillLibrary
from parley.core.workspace import Workspace
from tests.core.compaction_support import Env, open_env
from tests.core.hubs import fake_hub
from tests.core.tool_support import SKILL_BODY
from tests.core.tool_support import Env as ToolsEnv


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[AsyncStore]:
    async with Workspace(target=tmp_path / "sessions.db") as ws:
        yield await ws.open_store()


@pytest.fixture
def db(tmp_path: Path) -> Iterator[Store]:
    s = Store.open(tmp_path / "sessions.db")
    yield s
    s.close()


@pytest.fixture
def sqlite_db(tmp_path: Path) -> Iterator[Store]:
    """``db`` on a sessions.db file only, for a module whose ``db`` runs on both backends."""
    s = Store.open(tmp_path / "sessions.db")
    yield s
    s.close()


@pytest.fixture(params=["sqlite", "postgresql"])
def backend(request: pytest.FixtureRequest) -> str:
    """Which store backend a parametrized test runs on."""
    return str(request.param)


def _target(backend: str, tmp_path: Path, request: pytest.FixtureRequest) -> str | Path:
    if backend == "postgresql":
        return str(request.getfixturevalue("postgres_url"))
    return tmp_path / "sessions.db"


@pytest.fixture
def any_target(backend: str, tmp_path: Path, request: pytest.FixtureRequest) -> str | Path:
    """Where a new store goes on ``backend``: a sessions.db path, or a new database's URL."""
    return _target(backend, tmp_path, request)


@pytest.fixture
def any_db(backend: str, tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[Store]:
    s = open_store(_target(backend, tmp_path, request))
    yield s
    s.close()


@pytest.fixture
async def any_store(
    backend: str, tmp_path: Path, request: pytest.FixtureRequest
) -> AsyncIterator[AsyncStore]:
    async with Workspace(target=_target(backend, tmp_path, request)) as ws:
        yield await ws.open_store()


@pytest.fixture
async def env(tmp_path: Path, fake_provider: Any) -> AsyncIterator[Env]:
    async with open_env(tmp_path, fake_provider) as opened:
        yield opened


@pytest.fixture
async def any_env(tmp_path: Path, fake_provider: Any, any_target: Path | str
                  ) -> AsyncIterator[Env]:
    """``env`` once on each store backend."""
    async with open_env(tmp_path, fake_provider, at=any_target) as opened:
        yield opened


@pytest.fixture
async def chat(tmp_path: Path, fake_provider: Any) -> AsyncIterator[Any]:
    """``await chat(path, busy_timeout_ms=5000)`` -> ``(store, runner)``: a real store, hub and
    run loop against the fake provider (Anthropic, no retries), closed after the test."""

    async def make(path: Path, busy_timeout_ms: int = 5000) -> tuple[AsyncStore, ChatRunner]:
        store = await AsyncStore.open(path, busy_timeout_ms=busy_timeout_ms)
        keys = KeyStore(backend=FileBackend(tmp_path / "keys.json"), environ={})
        hub = ProviderHub(store, keys=keys, retry=RetryPolicy(max_retries=0), environ={})
        await hub.load()
        await hub.add_provider("anthropic", base_url=fake_provider.anthropic_base_url,
                               api_key="sk-test", default_model="claude-sonnet-4-6")
        runner = ChatRunner(store, hub, journal_interval_s=0.01, emit_interval_s=0.0)
        runner.saves.delays_s = (0.05,)
        opened.append((store, hub, runner))
        return store, runner

    opened: list[tuple[AsyncStore, ProviderHub, ChatRunner]] = []
    yield make
    for store, hub, runner in opened:
        await runner.saves.aclose()
        await hub.aclose()
        with contextlib.suppress(StoreError):
            await store.close()


@pytest.fixture
async def tools_env(tmp_path: Path, fake_provider: Any,
                    any_target: Any) -> AsyncIterator[ToolsEnv]:
    """A runner with tools (a skill "Bullets" in its library) over the fake server, on a
    sessions.db file and then on PostgreSQL (``any_target``)."""
    store = await AsyncStore.open(any_target)  # a sessions.db file, then PostgreSQL
    hub = await fake_hub(store, tmp_path, fake_provider, compatible={
        "name": "Local", "provider_id": "local", "default_model": "llama3.2"})
    skills = tmp_path / "skills"
    skills.mkdir()
    (skills / "bullets.md").write_text(
        f"---\nname: Bullets\ndescription: Answer in three bullets.\n---\n{SKILL_BODY}\n"
    )
    tools = ToolExecutor(store, library=SkillLibrary(user_dir=skills, bundled_dir=None))
    runner = ChatRunner(store, hub, journal_interval_s=0.02, emit_interval_s=0.0, tools=tools)
    yield ToolsEnv(store, hub, runner, fake_provider)
    await hub.aclose()
    await store.close()

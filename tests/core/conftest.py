"""Fixtures shared by the core tests: a real sessions.db, and a chat over the fake server.

* ``store``: an :class:`~parley.core.store.async_store.AsyncStore` on a new
  ``sessions.db`` in the test's ``tmp_path``, closed after the test.
* ``db``: the synchronous :class:`~parley.core.store.store.Store` on the same path,
  for the store's own tests.
* ``env``: :func:`tests.core.test_compaction_support.open_env`: that store,
  a hub with both fake providers set up, a runner and one session
  (``env.store``, ``env.hub``, ``env.runner``, ``env.sid``). A test file that
  needs another set-up defines its own ``env``, which takes precedence.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

from parley.core.store.async_store import AsyncStore
from parley.core.store.store import Store
from tests.core.test_compaction_support import Env, open_env


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[AsyncStore]:
    s = await AsyncStore.open(tmp_path / "sessions.db")
    yield s
    await s.close()


@pytest.fixture
def db(tmp_path: Path) -> Iterator[Store]:
    s = Store.open(tmp_path / "sessions.db")
    yield s
    s.close()


@pytest.fixture
async def env(tmp_path: Path, fake_provider: Any) -> AsyncIterator[Env]:
    async with open_env(tmp_path, fake_provider) as opened:
        yield opened

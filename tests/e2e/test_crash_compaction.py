"""A compaction is saved whole or not at all, usage included, whatever stops it.

``Compactor._save`` (core/compaction/compact.py) writes the summary turn and its
compactions row in one transaction (``Store.record_compaction``), then adds
the summary request's usage to the session in a second one
(``Store.add_usage``). A process death or a storage error between the two —
the crash test (tests/e2e/test_crash.py) kills there now and then — leaves the
compaction saved and its tokens and cost never counted. Here the second write
fails deterministically (as a full disk would make it) to show the gap.
"""

from __future__ import annotations

import contextlib
from typing import Any

from parley.core.chat.run import ChatRunner
from parley.core.content import TextBlock, Usage
from parley.core.keys import FileBackend, KeyStore
from parley.core.providers.hub import ProviderHub
from parley.core.providers.retry import RetryPolicy
from parley.core.store import AsyncStore
from parley.core.store.errors import DiskFull, StoreError

MODEL = "anthropic:claude-sonnet-4-6"


class FailingUsageStore:
    """The real store, except that ``add_usage`` fails once armed (a full disk there)."""

    def __init__(self, inner: AsyncStore) -> None:
        self._inner = inner
        self.armed = False

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    async def add_usage(self, session_id: str, usage: Usage) -> Any:
        if self.armed:
            raise DiskFull(self._inner.path)
        return await self._inner.add_usage(session_id, usage)


async def test_a_failure_after_saving_a_compaction_leaves_no_half_saved_compaction(
    tmp_path, fake_provider
):
    store = await AsyncStore.open(tmp_path / "sessions.db")
    keys = KeyStore(backend=FileBackend(tmp_path / "keys.json"), environ={})
    hub = ProviderHub(store, keys=keys, retry=RetryPolicy(max_retries=0), environ={})
    await hub.load()
    await hub.add_provider("anthropic", base_url=fake_provider.anthropic_base_url,
                           api_key="sk-test", default_model="claude-sonnet-4-6")
    failing = FailingUsageStore(store)
    runner = ChatRunner(failing, hub)
    try:
        sid = (await store.create_session()).id
        for i in range(4):
            fake_provider.script(f"Answer {i}.", usage={"output_tokens": 10})
            await runner.send(sid, [TextBlock(f"Question {i}?")], model_ref=MODEL)
        before = (await store.get_session(sid)).usage.output_tokens
        fake_provider.script("<summary>The user asked questions 0, 1 and 2; each got a short "
                             "answer (answers 0 to 2).</summary>", usage={"output_tokens": 7})
        failing.armed = True
        with contextlib.suppress(StoreError):  # once usage is saved with the row: no error
            await runner.compactor.compact(sid, keep_turns=2, model_ref=MODEL)
        failing.armed = False
        saved = await store.list_compactions(sid)
        after = (await store.get_session(sid)).usage.output_tokens
        # Whole (saved, its 7 tokens counted) or nothing (not saved, nothing counted).
        assert (len(saved), after) in ((0, before), (1, before + 7)), (len(saved), before, after)
    finally:
        await hub.aclose()
        await store.close()

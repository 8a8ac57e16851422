"""Measure: what one compaction's summary costs, by who writes it, at catalog prices.

A chat of about 150k tokens is built for real on Claude Sonnet 4.6 against the
fake provider server (its prompt cache simulated: the chat's last request is
warm), then compacted three ways on identical copies:

* automatic summary model: the chat's own model resends its last request with
  the summary note and reads the conversation from the prompt cache;
* ``compaction.model`` = Claude Haiku 4.5: one separate request (no cache);
* ``compaction.model`` = Claude Haiku 5.5: the same (listed by the fake here).

The summary is the same scripted ~1,900-token answer to every summary request
(parts, their combination); the cost is
the adapters' own, from ``parley.core.providers.catalog`` prices. Run with
``python -m tests.benchmarks.summary_cost``.
"""

from __future__ import annotations

import asyncio
import tempfile
from pathlib import Path

from parley.core.chat.run import ChatRunner
from parley.core.content import TextBlock
from parley.core.keys import FileBackend, KeyStore
from parley.core.providers.hub import ProviderHub
from parley.core.providers.retry import RetryPolicy
from parley.core.store.async_store import AsyncStore
from tests.fakes.server import FakeProviderServer

EXCHANGES = 20
WORDS_PER_MESSAGE = 5_000  # ~7,500 estimated tokens each
SUMMARY = "<summary>\n" + "\n".join(
    f"- Point {i}: the user and the assistant settled detail {i} of the plan." for i in range(110)
) + "\n</summary>"
WAYS = [("chat's model from the cache", None),
        ("Claude Haiku 4.5, separate", "anthropic:claude-haiku-4-5"),
        ("Claude Haiku 5.5, separate", "anthropic:claude-haiku-5-5")]


async def one(fake: FakeProviderServer, folder: Path, setting: str | None) -> str:
    fake.reset()
    fake.anthropic_models.append({"id": "claude-haiku-5-5", "display_name": "Claude Haiku 5.5",
                                  "max_input_tokens": 1_000_000, "max_tokens": 128_000})
    store = await AsyncStore.open(folder / "sessions.db")
    keys = KeyStore(backend=FileBackend(folder / "keys.json"), environ={})
    hub = ProviderHub(store, keys=keys, retry=RetryPolicy(max_retries=0), environ={})
    try:
        await hub.load()
        await hub.add_provider("anthropic", base_url=fake.anthropic_base_url,
                               api_key="sk-test", default_model="claude-sonnet-4-6")
        runner = ChatRunner(store, hub)
        sid = (await store.create_session()).id
        for i in range(EXCHANGES):
            fake.script(f"Noted, part {i}.")
            text = f"Part {i} of the plan: " + " ".join(f"w{i}x{k}" for k in range(
                WORDS_PER_MESSAGE))
            await runner.send(sid, [TextBlock(text)], model_ref="anthropic:claude-sonnet-4-6")
        if setting:
            await store.set_setting("compaction.model", setting)
        fake.script(SUMMARY, times=5)  # enough for parts and their combination
        result = await runner.compact(sid, keep_turns=2)
        u = result.usage
        assert result.compacted and u is not None
        return (f"{result.model:<28} parts {result.summary_parts}  reused cache: "
                f"{result.cache_reused!s:<5}  input "
                f"{u.input_tokens:>7,}  cache read {u.cache_read_tokens:>7,}  cache write "
                f"{u.cache_write_tokens:>6,}  output {u.output_tokens:>5,}  "
                f"cost ${u.cost_usd:.4f}  (before: ~{result.tokens_before:,} tokens)")
    finally:
        await hub.aclose()
        await store.close()


async def main() -> None:
    fake = FakeProviderServer().start()
    try:
        for label, setting in WAYS:
            with tempfile.TemporaryDirectory() as folder:
                print(f"{label:<30} {await one(fake, Path(folder), setting)}")
    finally:
        fake.stop()


if __name__ == "__main__":
    asyncio.run(main())

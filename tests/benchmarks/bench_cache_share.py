"""Benchmark: how much of a long, compacting chat's input is read from the prompt cache.

Runs the heavy chat of ``tests/core/test_window_from_provider.py`` (a provider that
lists a 200k window and counts twice Parley's estimate; the fake provider server on
127.0.0.1 models Anthropic's prompt cache) through the real runner, real SDK and a real
sessions.db, and prints, over every request the chat made (replies and summaries):

- ``requests-refused``: requests the provider refused as over its window (budget 0);
- ``compactions``: automatic compactions made;
- ``cache-read-share``: cache-read input tokens / all input tokens (read + written +
  uncached), as the provider reported them in each reply's usage.

Run: ``.venv/bin/python -m tests.benchmarks.bench_cache_share [--messages 12]``.
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
from pathlib import Path

from tests.core.compaction_support import open_env
from tests.core.heavy_chat import heavy_chat_provider, run_heavy_chat
from tests.fakes.server import FakeProviderServer


async def measure(messages: int) -> dict[str, float]:
    """Run the heavy chat once; return the figures named in the module docstring."""
    server = FakeProviderServer().start()
    try:
        heavy_chat_provider(server)
        with tempfile.TemporaryDirectory() as tmp:
            async with open_env(Path(tmp), server) as env:
                unanswered, _events = await run_heavy_chat(env, messages)
                rows = await env.store.list_compactions(env.sid)
                turns = await env.store.get_turns(env.sid)
        read = written = plain = 0
        for turn in turns:
            usage = turn.usage
            if turn.role != "assistant" or usage is None:
                continue
            read += usage.cache_read_tokens or 0
            written += usage.cache_write_tokens or 0
            plain += usage.input_tokens or 0
        total = read + written + plain
        return {
            "requests-refused": server.windows.refused,
            "unanswered": unanswered,
            "compactions": len(rows),
            "cache-read-share": read / total if total else 0.0,
        }
    finally:
        server.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--messages", type=int, default=12)
    args = parser.parse_args()
    figures = asyncio.run(measure(args.messages))
    for name, value in figures.items():
        print(f"{name} {value:.3f}" if isinstance(value, float) else f"{name} {value}")


if __name__ == "__main__":
    main()

"""Search as you type over a 1M-turn sessions.db: one ``Store.search`` per keystroke.

Usage::

    python -m tests.benchmarks.bench_search_typing                 # full: 10k sessions, 1M turns
    python -m tests.benchmarks.bench_search_typing --size small    # 1k sessions, 100k turns
    python -m tests.benchmarks.bench_search_typing --db PATH       # an existing v4 file
    python -m tests.benchmarks.bench_search_typing --via-thread    # through AsyncStore

Each query is typed one character at a time and ``store.search(prefix_so_far,
limit=50)`` is timed after every keystroke, as the sidebar's search box would
(no debounce). The first pass reads from a page cache that may be cold; the
figures of the later passes are on a warm cache (``--passes``). Budget:
full-text search over 1M turns ≤ 50 ms median. The file
comes from :func:`tests.benchmarks.gen_store.cached_store` (made once in
/tmp/parley-bench); nothing is written to it but the store's own upkeep.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import random
import statistics
import time
from collections.abc import Callable
from pathlib import Path

from parley.core.store import AsyncStore, Store
from parley.core.store.errors import InvalidSearchQuery
from tests.benchmarks.gen_store import SIZES, TextMaker, cached_store

BUDGET_MS = 50.0
LIMIT = 50


def queries(tm: TextMaker) -> list[str]:
    """Realistic searches: real words of the generated text, its made-up words, CJK, a phrase."""
    w = tm.words
    return [
        "python async error",
        "database index",
        "how to fix the bug",
        "explain the cache",
        f"{w[800]} {w[2000]}",
        w[17000],
        '"stream update"',
        "東京",
    ]


def pct(values: list[float], p: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, int(round(p / 100 * (len(s) - 1))))]


def keystrokes(query: str) -> list[str]:
    """What the search box holds after each keystroke."""
    return [query[: i + 1] for i in range(len(query))]


def type_query(search: Callable[[str], object], query: str) -> list[float]:
    """Type ``query``; return the search time after each keystroke (ms)."""
    out = []
    for prefix in keystrokes(query):
        t = time.perf_counter()
        with contextlib.suppress(InvalidSearchQuery):  # a lone quote: "nothing to search"
            search(prefix)
        out.append((time.perf_counter() - t) * 1000)
    return out


def run(search: Callable[[str], object], passes: int, slowest: int = 8) -> None:
    tm = TextMaker(random.Random(1))  # the generator's seed: the same vocabulary
    qs = queries(tm)
    first: list[float] = []
    warm: dict[str, list[float]] = {q: [] for q in qs}
    by_prefix: dict[str, list[float]] = {}
    for n in range(passes + 1):
        for q in qs:
            times = type_query(search, q)
            (first if n == 0 else warm[q]).extend(times)
            if n > 0:
                for prefix, t in zip(keystrokes(q), times, strict=True):
                    by_prefix.setdefault(prefix, []).append(t)
    print(f"{'query (typed one key at a time)':<34} {'keys':>4} {'median':>8} {'p95':>8} "
          f"{'max':>8} {'>50ms':>6}   (warm, ms)")
    every: list[float] = []
    for q, times in warm.items():
        every += times
        over = sum(1 for t in times if t > BUDGET_MS)
        print(f"{q!r:<34} {len(q):>4} {statistics.median(times):>8.2f} {pct(times, 95):>8.2f} "
              f"{max(times):>8.2f} {over:>6}")
    over = sum(1 for t in every if t > BUDGET_MS)
    print(f"{'all keystrokes, warm':<34} {len(every):>4} {statistics.median(every):>8.2f} "
          f"{pct(every, 95):>8.2f} {max(every):>8.2f} {over:>6}")
    print(f"{'all keystrokes, first pass':<34} {len(first):>4} {statistics.median(first):>8.2f} "
          f"{pct(first, 95):>8.2f} {max(first):>8.2f} "
          f"{sum(1 for t in first if t > BUDGET_MS):>6}")
    slow = sorted(by_prefix.items(), key=lambda kv: -statistics.median(kv[1]))[:slowest]
    if slow:
        print("slowest keystrokes (median of the warm passes, ms): " + ", ".join(
            f"{k!r} {statistics.median(v):.1f}" for k, v in slow))
    verdict = "within" if statistics.median(every) <= BUDGET_MS else "OVER"
    print(f"budget: median ≤ {BUDGET_MS:.0f} ms per search — {verdict} "
          f"(p95 {pct(every, 95):.1f} ms, {over}/{len(every)} keystrokes over {BUDGET_MS:.0f} ms)")


def run_sync(path: Path, passes: int) -> None:
    store = Store.open(path)
    try:
        run(lambda q: store.search(q, limit=LIMIT), passes)
    finally:
        store.close()


def run_async(path: Path, passes: int) -> None:
    """The same through AsyncStore (the GUI's path: one hop to the store's thread)."""

    async def main() -> None:
        store = await AsyncStore.open(path)
        loop = asyncio.get_running_loop()
        try:
            # type_query is synchronous: run each search to completion on the loop's thread.
            def search(q: str) -> object:
                return asyncio.run_coroutine_threadsafe(store.search(q, limit=LIMIT), loop).result()

            await loop.run_in_executor(None, run, search, passes)
        finally:
            await store.close()

    asyncio.run(main())


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--size", choices=sorted(SIZES), default="full")
    p.add_argument("--db", type=Path, help="benchmark this v4 file instead")
    p.add_argument("--passes", type=int, default=3, help="warm passes after the first")
    p.add_argument("--via-thread", action="store_true", help="search through AsyncStore")
    a = p.parse_args(argv)
    path = a.db or cached_store(*SIZES[a.size])
    print(f"sessions.db: {path} ({path.stat().st_size / 1e6:,.0f} MB), limit={LIMIT}, "
          f"{'AsyncStore' if a.via_thread else 'Store'}")
    (run_async if a.via_thread else run_sync)(path, a.passes)


if __name__ == "__main__":
    main()

"""Store benchmarks on a generated sessions.db (not part of the default test run).

Usage::

    python -m tests.benchmarks.bench_store                 # full: 10k sessions, 1M turns
    python -m tests.benchmarks.bench_store --size small    # 1k sessions, 100k turns
    python -m tests.benchmarks.bench_store --db PATH       # an existing v4 file

The file comes from :func:`tests.benchmarks.gen_store.cached_store` (generated
once into /tmp/parley-bench, ~3 min at full size). Figures are wall-clock on
a warm OS page cache (the second and later runs of each operation). Writes go
to a scratch session that is deleted at the end, so the cached file stays
usable. Prints a table of median / p99 and the budget.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from collections.abc import Callable
from pathlib import Path

from parley.core.content import TextBlock, Turn, Usage
from parley.core.store import Store
from tests.benchmarks.gen_store import SIZES, TextMaker, cached_store


def timed(fn: Callable[[], object], runs: int) -> list[float]:
    """Run ``fn`` ``runs`` times (after one warm-up); return durations in ms."""
    fn()
    out = []
    for _ in range(runs):
        t = time.perf_counter()
        fn()
        out.append((time.perf_counter() - t) * 1000)
    return out


def pct(values: list[float], p: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, int(round(p / 100 * (len(s) - 1))))]


def longest_session(store: Store) -> str:
    con = store._con  # noqa: SLF001 (benchmark set-up only)
    assert con is not None
    with con.begin():
        return str(
            con.exec_driver_sql(
                "SELECT session_id FROM turns GROUP BY session_id ORDER BY count(*) DESC LIMIT 1"
            ).scalar()
        )


def search_queries(tm: TextMaker) -> dict[str, list[str]]:
    w = tm.words
    return {
        "common word": [w[i] for i in (3, 8, 25)],
        "mid word": [w[i] for i in (200, 800, 2000)],
        "rare word": [w[i] for i in (9000, 17000, 26000)],
        "two words": [f"{w[30]} {w[400]}", f"{w[120]} {w[5000]}", f"{w[60]} {w[61]}"],
        "prefix typing": [w[500][:4], w[3000][:3], f"{w[50]} {w[1500][:3]}"],
        "phrase": [f'"{w[10]} {w[11]}"'],
        "CJK / Cyrillic": ["苹果", "東京", "ёлка"],
    }


def run(path: Path) -> list[tuple[str, float, float, str]]:
    rows: list[tuple[str, float, float, str]] = []
    opens = timed(lambda: Store.open(path).close(), 5)
    rows.append(("open store (Store.open + close)", statistics.median(opens), max(opens), "-"))
    store = Store.open(path)
    try:
        first_page = timed(lambda: store.list_sessions(limit=200), 20)
        rows.append(
            (
                "list sessions, first page (200)",
                statistics.median(first_page),
                pct(first_page, 99),
                "-",
            )
        )
        long_id = longest_session(store)
        n_long = store.count_turns(long_id)
        tail = timed(lambda: store.get_turns(long_id, last=200), 20)
        rows.append(
            (
                f"last 200 turns of a {n_long:,}-turn session",
                statistics.median(tail),
                pct(tail, 99),
                "≤ 150 ms first paint",
            )
        )

        tm = TextMaker(random.Random(1))  # the generator's seed: the same vocabulary
        scratch = store.create_session(title="bench scratch")
        saves: list[float] = []
        journal: list[float] = []
        for i in range(400):
            turn = (
                Turn("user", [TextBlock(tm.text(200))])
                if i % 2 == 0
                else Turn("assistant", [TextBlock(tm.reply(600))], model="m", usage=Usage(9, 9))
            )
            t = time.perf_counter()
            store.append_turn(scratch.id, turn)
            saves.append((time.perf_counter() - t) * 1000)
        reply = Turn("assistant", [TextBlock("")], aborted=True)
        text = ""
        for _ in range(200):
            text += tm.text(40) + " "
            reply = reply.with_blocks([TextBlock(text)])
            t = time.perf_counter()
            store.upsert_turn(scratch.id, reply)
            journal.append((time.perf_counter() - t) * 1000)
        rows.append(
            ("save a turn (append_turn)", statistics.median(saves), pct(saves, 99), "≤ 5 ms p99")
        )
        rows.append(
            (
                "journal a streaming reply (upsert)",
                statistics.median(journal),
                pct(journal, 99),
                "-",
            )
        )
        store.delete_session(scratch.id)
        steps = []
        while True:  # the idle-time upkeep AsyncStore runs after those writes
            t = time.perf_counter()
            more = store.maintain()
            steps.append((time.perf_counter() - t) * 1000)
            if not more:
                break
        rows.append((f"idle upkeep: {len(steps)} maintain() steps", statistics.median(steps),
                     max(steps), "off the save path"))

        per_query: list[float] = []
        for label, queries in search_queries(tm).items():
            medians = []
            for q in queries:
                medians.append(statistics.median(timed(lambda q=q: store.search(q), 5)))
            per_query += medians
            rows.append((f"  search: {label}", statistics.median(medians), max(medians), "-"))
        rows.append(
            (
                "search, median over all queries",
                statistics.median(per_query),
                max(per_query),
                "≤ 50 ms median",
            )
        )
        hits = store.search(search_queries(tm)["mid word"][0])
        rows.append((f"  (hits for a mid word: {len(hits)})", 0.0, 0.0, "-"))
    finally:
        store.close()
    return rows


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--size", choices=sorted(SIZES), default="full")
    p.add_argument("--db", type=Path, help="benchmark this v4 file instead")
    a = p.parse_args(argv)
    path = a.db or cached_store(*SIZES[a.size])
    size_mb = path.stat().st_size / 1e6
    print(f"sessions.db: {path} ({size_mb:,.0f} MB)")
    rows = run(path)
    print(f"{'what':<46} {'median ms':>10} {'p99/max ms':>11}  budget")
    for name, med, worst, budget in rows:
        print(f"{name:<46} {med:>10.2f} {worst:>11.2f}  {budget}")


if __name__ == "__main__":
    main()

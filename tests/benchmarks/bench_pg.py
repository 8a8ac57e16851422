"""PostgreSQL beside SQLite: save a turn, open a 10,000-turn chat, search (not in the test run).

Usage::

    python -m tests.benchmarks.bench_pg                  # 100k turns (200 chats + one of 10k)
    python -m tests.benchmarks.bench_pg --turns 1000000  # more (slow to generate)

Starts a local PostgreSQL server (Debian's binaries, ``tests/fakes/postgres.py``)
with durable commits (``fsync`` and ``synchronous_commit`` on, as a real server),
on 127.0.0.1: no network between Parley and the server, so the figures are a
floor for a server elsewhere (add a round trip per statement). The same
generated chats go into a sessions.db file and the database (``import_chats``).
Prints median and p99 per operation and backend.
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
from pathlib import Path

from parley.core.content import TextBlock, Turn
from parley.core.store.imports import NewChat
from parley.core.store.postgres.store import PgStore
from parley.core.store.store import Store
from tests.benchmarks.bench_store import pct, timed
from tests.benchmarks.gen_store import TextMaker
from tests.fakes.postgres import PostgresServer, find_bin_dir

LONG_TURNS = 10_000


def chats(total_turns: int, seed: int = 7) -> list[NewChat]:
    """One 10,000-turn chat, and chats of 500 turns up to ``total_turns``."""
    tm = TextMaker(random.Random(seed))
    out = []
    sizes = [LONG_TURNS] + [500] * max(0, (total_turns - LONG_TURNS) // 500)
    for i, n in enumerate(sizes):
        turns = [Turn("user" if k % 2 == 0 else "assistant",
                      [TextBlock(tm.text(200) if k % 2 == 0 else tm.reply(600))],
                      created_at=1_700_000_000_000 + i * 10_000_000 + k * 1000)
                 for k in range(n)]
        out.append(NewChat(f"Chat {i}", turns, source="bench", source_id=str(i)))
    return out


def measure(store: Store, long_id: str, words: list[str]) -> dict[str, tuple[float, float]]:
    rows: dict[str, tuple[float, float]] = {}
    scratch = store.create_session(title="scratch")
    n = [0]

    def save() -> None:
        n[0] += 1
        store.append_turn(scratch.id, Turn("user", [TextBlock(f"saved turn {n[0]} " * 20)]))

    saves = timed(save, 500)
    rows["save a turn (append_turn)"] = (statistics.median(saves), pct(saves, 99))
    opens = timed(lambda: store.transcript_window(long_id, last=200, hydrate=False), 20)
    rows["open a 10,000-turn chat (last 200 items)"] = (statistics.median(opens),
                                                        pct(opens, 99))
    whole = timed(lambda: store.get_turns(long_id, hydrate=False), 5)
    rows["read all 10,000 turns of it"] = (statistics.median(whole), max(whole))
    queries = [words[i] for i in (200, 800, 2000, 9000, 17000)] + [
        f"{words[30]} {words[400]}", words[500][:4], f'"{words[10]} {words[11]}"']
    per_query = []
    for q in queries:
        per_query.append(statistics.median(timed(lambda q=q: store.search(q, limit=50), 5)))
    rows[f"search ({len(queries)} queries, median of each)"] = (statistics.median(per_query),
                                                               max(per_query))
    store.delete_session(scratch.id)
    return rows


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--turns", type=int, default=100_000)
    args = p.parse_args(argv)
    bin_dir = find_bin_dir()
    if bin_dir is None:
        raise SystemExit("no PostgreSQL server binaries (initdb, pg_ctl): apt install postgresql")
    data = chats(args.turns)
    words = TextMaker(random.Random(7)).words
    server = PostgresServer(bin_dir, durable=True).start()
    results: dict[str, dict[str, tuple[float, float]]] = {}
    try:
        with tempfile.TemporaryDirectory() as tmp:
            for name, store in (("SQLite", Store.open(Path(tmp) / "sessions.db")),
                                ("PostgreSQL", PgStore.open_url(server.new_database()))):
                try:
                    written = store.import_chats(data)
                    results[name] = measure(store, written.session_ids[0], words)
                finally:
                    store.close()
    finally:
        server.stop()
    total = sum(len(c.turns) for c in data)
    print(f"{total:,} turns in {len(data)} chats; median / p99 (or max) in ms")
    print(f"{'what':<46} {'SQLite':>17} {'PostgreSQL':>17}")
    for what in results["SQLite"]:
        cells = [f"{results[b][what][0]:7.2f} / {results[b][what][1]:7.2f}"
                 for b in ("SQLite", "PostgreSQL")]
        print(f"{what:<46} {cells[0]:>17} {cells[1]:>17}")


if __name__ == "__main__":
    main()

"""PostgreSQL beside SQLite: save a turn, open a 10,000-turn chat, search, edit and regenerate
at its end (not in the test run).

Usage::

    python -m tests.benchmarks.bench_pg                  # 100k turns (200 chats + one of 10k)
    python -m tests.benchmarks.bench_pg --turns 1000000  # more (slow to generate)
    python -m tests.benchmarks.bench_pg --turns 1000000 --keep /tmp/pg1m  # keep, reuse

``--keep DIR`` keeps the generated data in DIR (the PostgreSQL cluster's folder and
sessions.db): a later run with the same DIR and ``--turns`` measures it again
without generating (each run adds and deletes a scratch chat).

Starts a local PostgreSQL server (Debian's binaries, ``tests/fakes/postgres.py``)
with durable commits (``fsync`` and ``synchronous_commit`` on, as a real server),
on 127.0.0.1: no network between Parley and the server, so the figures are a
floor for a server elsewhere (add a round trip per statement). The same
generated chats go into a sessions.db file and the database (``import_chats``;
into PostgreSQL without commits flushed and with the search index built after
the rows, then the server restarts durable and the tables are analyzed).
Prints median and p99 per operation and backend, each search query's median,
and the machine's load (the benchmark is only as quiet as the machine).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import tempfile
import time
from pathlib import Path

from parley.core.content import TextBlock, Turn
from parley.core.store.imports import NewChat
from parley.core.store.postgres.store import PgStore
from parley.core.store.store import Store
from tests.benchmarks.bench_store import pct, timed
from tests.benchmarks.gen_store import TextMaker
from tests.fakes.postgres import PostgresServer, find_bin_dir

LONG_TURNS = 10_000


def chats_sizes(total_turns: int) -> list[int]:
    """Turns of each generated chat."""
    return [LONG_TURNS] + [500] * max(0, (total_turns - LONG_TURNS) // 500)


def chats(total_turns: int, seed: int = 7) -> list[NewChat]:
    """One 10,000-turn chat, and chats of 500 turns up to ``total_turns``."""
    tm = TextMaker(random.Random(seed))
    out = []
    for i, n in enumerate(chats_sizes(total_turns)):
        turns = [Turn("user" if k % 2 == 0 else "assistant",
                      [TextBlock(tm.text(200) if k % 2 == 0 else tm.reply(600))],
                      created_at=1_700_000_000_000 + i * 10_000_000 + k * 1000)
                 for k in range(n)]
        out.append(NewChat(f"Chat {i}", turns, source="bench", source_id=str(i)))
    return out


def queries(words: list[str]) -> list[str]:
    """The searches timed: single words from common to rare, two words, a prefix, a phrase."""
    return [words[i] for i in (200, 800, 2000, 9000, 17000)] + [
        f"{words[30]} {words[400]}", words[500][:4], f'"{words[10]} {words[11]}"']


def measure(store: Store, long_id: str, words: list[str],
            per_query: dict[str, float]) -> dict[str, tuple[float, float]]:
    """Time each operation on ``store``; each search query's median goes into ``per_query``."""
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
    for q in queries(words):
        per_query[q] = statistics.median(timed(lambda q=q: store.search(q, limit=50), 5))
    times = list(per_query.values())
    rows[f"search ({len(times)} queries, median of each)"] = (statistics.median(times),
                                                             max(times))
    store.delete_session(scratch.id)
    rows.update(branch_ops(store, long_id))
    return rows


def branch_ops(store: Store, long_id: str, runs: int = 20) -> dict[str, tuple[float, float]]:
    """Edit and Regenerate at the end of the 10,000-turn chat, each followed by switching
    back to the first answer (as ``tests.benchmarks.bench_edit``, whose budget is 20 ms);
    the turns they added are deleted at the end, so a kept dataset stays as it was."""
    prompt, answer = store.get_turns(long_id, last=2, hydrate=False)
    added: list[str] = []
    edit_, regen_, back_ = ("edit at its end (edit_turn)",
                            "regenerate at its end (branch_before+append)",
                            "switch back there (show_branch)")
    times: dict[str, list[float]] = {edit_: [], regen_: [], back_: []}

    def edit() -> None:
        added.append(store.edit_turn(long_id, prompt.id,
                                     Turn("user", [TextBlock("Say it again, shorter.")])).id)

    def regenerate() -> None:
        store.branch_before(long_id, answer.id)
        added.append(store.append_turn(long_id, Turn("assistant", [TextBlock("Again. " * 100)])).id)

    for _ in range(runs):
        for label, op in ((edit_, edit), (regen_, regenerate)):
            for what, fn in ((label, op), (back_, lambda: store.show_branch(long_id, answer.id))):
                t = time.perf_counter()
                fn()
                times[what].append((time.perf_counter() - t) * 1000)
    store.delete_turns(long_id, added)
    assert store.get_turns(long_id, last=1, hydrate=False)[0].id == answer.id
    return {what: (statistics.median(v), pct(v, 99)) for what, v in times.items()}


SCHEMA = "bench"
BACKENDS = ("SQLite", "PostgreSQL")


def generate(server: PostgresServer, db: Path, turns: int,
             backends: list[str]) -> dict[str, str]:
    """Write the generated chats into ``db`` and/or a new store on ``server``.

    Returns:
        ``{"turns": …, backend: its long chat's id}`` for each of ``backends``.
    """
    import psycopg

    data = chats(turns)
    out: dict[str, str] = {"turns": str(turns)}
    if "SQLite" in backends:
        store = Store.open(db)
        try:
            out["SQLite"] = store.import_chats(data).session_ids[0]
        finally:
            store.close()
    if "PostgreSQL" not in backends:
        return out
    url = server.new_database(SCHEMA)
    pg = PgStore.open_url(url)
    try:
        with psycopg.connect(url, autocommit=True) as con:  # the index built once, after
            con.execute("DROP INDEX turns_search")
        out["PostgreSQL"] = pg.import_chats(data).session_ids[0]
    finally:
        pg.close()
    with psycopg.connect(url, autocommit=True) as con:
        con.execute("SET maintenance_work_mem = '256MB'")
        con.execute("CREATE INDEX turns_search ON turns USING gin (search_vec)")
        con.execute("VACUUM ANALYZE")
    return out


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--turns", type=int, default=100_000)
    p.add_argument("--keep", type=Path, metavar="DIR",
                   help="keep the generated data in DIR and reuse it when it is there")
    p.add_argument("--only", choices=BACKENDS, help="generate and measure one backend")
    args = p.parse_args(argv)
    backends = [args.only] if args.only else list(BACKENDS)
    bin_dir = find_bin_dir()
    if bin_dir is None:
        raise SystemExit("no PostgreSQL server binaries (initdb, pg_ctl): apt install postgresql")
    words = TextMaker(random.Random(7)).words
    load_before = os.getloadavg()
    results: dict[str, dict[str, tuple[float, float]]] = {}
    per_query: dict[str, dict[str, float]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        folder = args.keep.resolve() if args.keep else Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        made = folder / "dataset.json"
        dataset = json.loads(made.read_text()) if made.exists() else None
        if dataset is not None and dataset["turns"] != str(args.turns):
            raise SystemExit(f"{folder} holds {dataset['turns']} turns, not {args.turns}: "
                             "use another folder")
        if dataset is not None and not set(backends) <= set(dataset):
            raise SystemExit(f"{folder} holds no {' or '.join(set(backends) - set(dataset))} "
                             "data: use another folder")
        server = PostgresServer(bin_dir, durable=dataset is not None,
                                folder=folder / "pg" if args.keep else None).start()
        try:
            if dataset is None:
                dataset = generate(server, folder / "sessions.db", args.turns, backends)
                made.write_text(json.dumps(dataset))
                server.pause()
                server.durable = True
                server.resume()
            load_before = os.getloadavg()
            for name in backends:
                store = (Store.open(folder / "sessions.db") if name == "SQLite"
                         else PgStore.open_url(server.schema_url(SCHEMA)))
                try:
                    per_query[name] = {}
                    results[name] = measure(store, dataset[name], words, per_query[name])
                finally:
                    store.close()
        finally:
            server.stop()
    load_after = os.getloadavg()
    print(f"{args.turns:,} turns in {len(chats_sizes(args.turns))} chats; "
          "median / p99 (or max) in ms")
    print(f"{'what':<46}" + "".join(f" {b:>17}" for b in backends))
    for what in results[backends[0]]:
        print(f"{what:<46}" + "".join(
            f" {results[b][what][0]:7.2f} / {results[b][what][1]:7.2f}" for b in backends))
    for q in per_query[backends[0]]:
        print(f"  search {q!r:<37}" + "".join(f" {per_query[b][q]:17.2f}" for b in backends))
    print("load average (1 min) before / after: "
          f"{load_before[0]:.2f} / {load_after[0]:.2f} on {os.cpu_count()} CPUs")


if __name__ == "__main__":
    main()

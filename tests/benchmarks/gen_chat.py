"""Write one long chat (10,000 or 100,000 turns) into a sessions.db, fast, for benchmarks.

A chat that long has been compacted many times (its history could not fit any
model's context window otherwise), so the chat written here is shaped like one:
``every`` turns a compaction summary is saved the way
``parley.core.store.compactions.record`` saves it (a user turn holding a
``CompactSummaryBlock`` appended after the turns it replaces, plus its
``compactions`` row); each re-compaction's range starts at the chat's first turn
(``parley.core.compaction.plan``) and keeps the last ``keep`` turns verbatim. The
last ``live`` turns come after the last summary: what a request sends. Content is
:mod:`tests.benchmarks.gen_store`'s (Zipf words, markdown replies, tool calls with
their results, some thinking); each reply's usage reports about the input its request
held (the characters since the last summary / 4), as a provider's would.

Rows go in with raw ``sqlite3`` ``executemany`` in one transaction with the search
triggers dropped; the chat is one path in stored order (each turn's parent the one
before it: ``gen_store.link_in_order``) and the search index is rebuilt at the end
(``parley.core.store.schema``), as :mod:`tests.benchmarks.gen_store` does: 100,000 turns
take about half a minute.

Usage::

    python -m tests.benchmarks.gen_chat OUT.db --turns 100000
"""

from __future__ import annotations

import argparse
import json
import random
import sqlite3
import time
from pathlib import Path

from parley.core.content import CompactSummaryBlock, blocks_to_json_text
from parley.core.store import Store, schema
from parley.core.store.textindex import register_functions
from tests.benchmarks.gen_store import BASE_TIME_MS, TextMaker, _blocks, link_in_order

SESSION_ID = "c" * 32
MODEL_REF = "anthropic:claude-sonnet-4-6"


def _turn_id(n: int) -> str:
    return f"{n:032x}"


def write_long_chat(
    path: Path,
    turns: int,
    *,
    every: int = 200,
    live: int = 150,
    keep: int = 4,
    model_ref: str = MODEL_REF,
    seed: int = 1,
) -> str:
    """Add one chat of ``turns`` conversation turns (summary turns on top) to ``path``.

    Args:
        path: a sessions.db (created when missing).
        turns: user and assistant turns of the chat.
        every: a compaction summary after every ``every`` turns…
        live: …except the last ``live`` (or more) turns: none after those.
        keep: turns each compaction keeps verbatim (``compaction.keep_turns``).
        model_ref: the chat's model; its replies carry it.
        seed: random seed (the same arguments write the same chat).

    Returns:
        The chat's session id (:data:`SESSION_ID`).
    """
    Store.open(path).close()
    rng = random.Random(seed)
    tm = TextMaker(rng)
    con = sqlite3.connect(path, isolation_level=None)
    register_functions(con)
    con.execute("PRAGMA synchronous = OFF")
    con.execute("BEGIN")
    schema.drop_search_triggers(con)
    now = BASE_TIME_MS
    con.execute(
        "INSERT INTO sessions (id, space_id, title, title_source, model, created_at, updated_at) "
        "VALUES (?, ?, ?, 'user', ?, ?, ?)",
        (SESSION_ID, schema.DEFAULT_SPACE_ID, f"A chat of {turns:,} turns", model_ref, now, now),
    )
    rows: list[tuple[object, ...]] = []
    compactions: list[tuple[object, ...]] = []
    tool: str | None = None
    chars = 0  # of the turns sent since the last summary
    seq = 0
    for i in range(turns):
        role = "user" if i % 2 == 0 else "assistant"
        blocks, tool = _blocks(tm, role, tool)
        chars += len(blocks)
        now += rng.randint(2_000, 120_000)
        model = usage = None
        if role == "assistant":
            model = model_ref
            usage = json.dumps({"input_tokens": chars // 4, "output_tokens": len(blocks) // 4})
        rows.append((_turn_id(i), SESSION_ID, seq, role, blocks, 0, model, usage, now))
        seq += 1
        done = i + 1
        if done % every == 0 and done + live <= turns and done > keep:
            compaction_id = f"k{done:031x}"
            last = _turn_id(done - keep - 1)
            block = CompactSummaryBlock(tm.text(2_000), done - keep, _turn_id(0), last,
                                        compaction_id)
            summary_id = f"s{done:031x}"
            now += 1_000
            rows.append((summary_id, SESSION_ID, seq, "user", blocks_to_json_text([block]), 0,
                         None, None, now))
            seq += 1
            compactions.append((compaction_id, SESSION_ID, summary_id, _turn_id(0), last,
                                done - keep, "auto", now))
            chars = 2_000 + sum(len(r[4]) for r in rows[-keep - 1 : -1])  # type: ignore[arg-type]
        if len(rows) >= 20_000:
            _insert(con, rows)
            rows = []
    _insert(con, rows)
    con.executemany(
        "INSERT INTO compactions (id, session_id, summary_turn_id, first_turn_id, last_turn_id, "
        "replaced_count, reason, created_at) VALUES (?,?,?,?,?,?,?,?)",
        compactions,
    )
    link_in_order(con, SESSION_ID)
    schema.rebuild_search_index(con)
    con.execute("COMMIT")
    con.close()
    return SESSION_ID


def _insert(con: sqlite3.Connection, rows: list[tuple[object, ...]]) -> None:
    con.executemany(
        "INSERT INTO turns (id, session_id, seq, role, blocks, aborted, model, usage, "
        "created_at) VALUES (?,?,?,?,?,?,?,?,?)",
        rows,
    )


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("out", type=Path)
    p.add_argument("--turns", type=int, default=10_000)
    p.add_argument("--every", type=int, default=200)
    p.add_argument("--live", type=int, default=150)
    a = p.parse_args(argv)
    t0 = time.monotonic()
    write_long_chat(a.out, a.turns, every=a.every, live=a.live)
    print(f"{a.out}: {a.turns:,} turns in {time.monotonic() - t0:.1f} s")


if __name__ == "__main__":
    main()

"""Edit and Regenerate at the end of a long chat: time and file growth (issue 32's budget:
≤ 20 ms and ≤ 20 KB each, whatever the chat's length).

This version measures what Edit and Regenerate did before the conversation tree
(commit e73c920): each made a *version session* holding copies of the chat's turns.

* edit: ``Store.fork(chat, the turn before the last user message, kind="version")``
  then ``Store.append_turn(fork, the edited message)`` (``parley.core.chat.edit``);
* regenerate: ``Store.set_aside_reply(chat, prompt, reply_turn_ids=the last reply)``
  then ``Store.append_turn(chat, a new answer)`` (``parley.core.chat.regenerate``, the
  run saving its answer).

The chat is :mod:`tests.benchmarks.gen_chat`'s (compacted every 200 turns, as a chat
that long is), written into a new sessions.db per length. Each operation runs
``--runs`` times at the end of the chat; the time is the wall time of the store calls
(finding the last reply, the same before and after, is not in it). After each, the
idle-time upkeep runs as the store runs it (``Store.maintain`` until done: search-index
merges, then a PASSIVE WAL checkpoint), and the file is measured: *pages* = the WAL
frames the operation wrote (the WAL is empty before it), *grown* = how much sessions.db
grew, after the checkpoint. Printed: median and max time, mean and max growth, the
sizes of sessions.db and its -wal before and after, and the load average.

Run (at the commit measured)::

    .venv/bin/python -m tests.benchmarks.bench_edit                 # 1,000 and 10,000 turns
    .venv/bin/python -m tests.benchmarks.bench_edit --turns 10000 --runs 5
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from parley.core.chat.regenerate import reply_start
from parley.core.content import TextBlock, Turn, Usage, apply_compactions
from parley.core.store import Store
from parley.core.store.schema import dbapi_connection
from tests.benchmarks.gen_chat import write_long_chat

BUDGET_MS = 20.0
BUDGET_KB = 20.0
EDITED = "Say it again, shorter, and with an example."
ANSWER = "Here it is again, shorter. " * 40


@dataclass
class Figures:
    """One operation's runs at one chat length."""

    label: str
    ms: list[float] = field(default_factory=list)
    pages: list[int] = field(default_factory=list)
    grown: list[int] = field(default_factory=list)  # bytes

    def line(self) -> str:
        kb = [g / 1024 for g in self.grown]
        return (f"{self.label:<28} {statistics.median(self.ms):9.1f} {max(self.ms):9.1f} "
                f"{statistics.median(self.pages):7.0f} {statistics.mean(kb):10.1f} "
                f"{max(kb):9.1f}")

    def within_budget(self) -> bool:
        return (statistics.median(self.ms) <= BUDGET_MS
                and statistics.mean(self.grown) / 1024 <= BUDGET_KB)


def sizes(db: Path) -> tuple[int, int]:
    """Bytes of sessions.db and of its -wal (0 when there is none)."""
    wal = Path(f"{db}-wal")
    return db.stat().st_size, wal.stat().st_size if wal.exists() else 0


def wal_frames(store: Store) -> int:
    """Frames in the WAL now (a PASSIVE checkpoint's report; it copies them too)."""
    con = store._con  # noqa: SLF001 (benchmark measurement only)
    assert con is not None
    row = dbapi_connection(con).execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
    return int(row[1])  # (busy, frames in the WAL, frames copied)


def settle(store: Store) -> None:
    """The idle-time upkeep AsyncStore schedules after writes, until nothing is left."""
    while store.maintain():
        pass


def measure(store: Store, db: Path, figures: Figures, op: Callable[[], object]) -> None:
    """Run ``op`` once: its wall time, the WAL pages it wrote, how much the file grew."""
    settle(store)
    before = sizes(db)[0]
    t0 = time.perf_counter()
    op()
    figures.ms.append((time.perf_counter() - t0) * 1000)
    figures.pages.append(wal_frames(store))
    settle(store)
    figures.grown.append(sizes(db)[0] - before)


def last_reply(store: Store, session_id: str) -> tuple[Turn, tuple[str, ...]]:
    """The prompt of the chat's last reply and the reply's turn ids (conversation order)."""
    live = apply_compactions(store.context_turns(session_id, hydrate=False))
    start = reply_start(live)
    assert start is not None and start > 0, "the chat ends without a reply"
    return live[start - 1], tuple(t.id for t in live[start:])


def last_user_message(store: Store, session_id: str) -> tuple[Turn, Turn]:
    """The last user turn someone wrote (it has text) and the turn before it."""
    live = apply_compactions(store.context_turns(session_id, hydrate=False))
    i = max(i for i, t in enumerate(live)
            if t.role == "user" and any(isinstance(b, TextBlock) for b in t.blocks))
    return live[i - 1], live[i]


def run_length(turns: int, runs: int, folder: Path) -> list[Figures]:
    db = folder / f"chat-{turns}.db"
    sid = write_long_chat(db, turns)
    edit, regen = Figures(f"edit, {turns:,} turns"), Figures(f"regenerate, {turns:,} turns")
    store = Store.open(db)
    try:
        settle(store)
        start = sizes(db)
        for _ in range(runs):
            before, _user = last_user_message(store, sid)

            def edit_op(before: Turn = before) -> None:
                fork = store.fork(sid, before.id, title="bench (edited)", kind="version")
                store.append_turn(fork.id, Turn("user", [TextBlock(EDITED)]))

            measure(store, db, edit, edit_op)
            prompt, reply = last_reply(store, sid)

            def regen_op(prompt: Turn = prompt, reply: tuple[str, ...] = reply) -> None:
                store.set_aside_reply(sid, prompt.id, reply_turn_ids=reply)
                store.append_turn(sid, Turn("assistant", [TextBlock(ANSWER)], model="m",
                                            usage=Usage(9, 9)))

            measure(store, db, regen, regen_op)
        end = sizes(db)
    finally:
        store.close()
    print(f"{turns:,} turns: sessions.db {start[0] / 1e6:.2f} MB (-wal {start[1] / 1e6:.2f} MB) "
          f"→ {end[0] / 1e6:.2f} MB (-wal {end[1] / 1e6:.2f} MB) after {runs} edits and "
          f"{runs} regenerations; {load()}")
    return [edit, regen]


def load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.2f} {five:.2f} {fifteen:.2f} ({os.cpu_count()} cores)"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--turns", type=int, nargs="+", default=[1_000, 10_000])
    p.add_argument("--runs", type=int, default=7, help="runs of each operation per length")
    a = p.parse_args(argv)
    print(load())
    rows: list[Figures] = []
    with tempfile.TemporaryDirectory(prefix="parley-bench-edit-") as folder:
        for turns in a.turns:
            rows += run_length(turns, a.runs, Path(folder))
    print(f"{'operation':<28} {'median ms':>9} {'max ms':>9} {'pages':>7} {'mean KB':>10} "
          f"{'max KB':>9}")
    for row in rows:
        print(row.line())
    ok = all(row.within_budget() for row in rows)
    print(f"budget: median ≤ {BUDGET_MS:.0f} ms and ≤ {BUDGET_KB:.0f} KB per operation "
          f"(mean growth): {'OK' if ok else 'OVER'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

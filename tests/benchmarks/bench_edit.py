"""Edit and Regenerate at the end of a long chat: time and file growth (issue 32's budget:
≤ 20 ms and ≤ 20 KB each, whatever the chat's length).

A chat is a tree (``parley.core.store.tree``): Edit and Regenerate add a sibling and
move the path shown to it; nothing is copied. Measured, each at the end of the chat:

* edit: ``Store.edit_turn(chat, the last user message, the edited message)``
  (``branch_before`` + ``append_turn`` in one transaction);
* regenerate: ``Store.branch_before(chat, the first turn of the last reply)`` then
  ``Store.append_turn(chat, a new answer)`` (the run saving its answer);
* switch back: ``Store.show_branch(chat, the original leaf)`` after each (‹ › back to
  the first answer), so every run starts from the same chat;
* branch points: ``Store.branches(chat)`` (what ‹ n/m › reads; a read, not budgeted).

The chat is :mod:`tests.benchmarks.gen_chat`'s (compacted every 200 turns, as a chat
that long is), written into a new sessions.db per length. Each operation runs
``--runs`` times, after one warm-up round that is not counted (printed apart: the
first write after the generator's bulk load starts the search index's merges); the
time is the wall time of the store calls (finding the last reply is not in it).
Before and after each, the idle-time upkeep runs as the store runs it
(``Store.maintain`` until done: search-index merges, then a PASSIVE WAL checkpoint),
and the file is measured: *pages* = the WAL frames the operation wrote (the WAL is
empty before it: a writer starts it again), *grown* = how much sessions.db's pages
in use grew (page_count − freelist_count, in bytes) once the WAL is copied into it —
the file itself grows only when the free pages run out. Printed: median and max
time, mean and max growth, the sizes of sessions.db and its -wal before and after,
and the load average; the exit status is 1 when an edit, a regeneration or a switch
is over the budget (median time, mean growth over the runs).

Before the tree (commit e73c920) each edit and regeneration copied the chat into a
*version session*; that is measured by this file as committed in 3a877eb (the same
set-up calling ``Store.fork(..., kind="version")`` and ``Store.set_aside_reply``),
run in a worktree at e73c920.

Run::

    .venv/bin/python -m tests.benchmarks.bench_edit                 # 1,000 and 10,000 turns
    .venv/bin/python -m tests.benchmarks.bench_edit --turns 100000 --runs 5
"""

from __future__ import annotations

import argparse
import os
import sqlite3
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
    writes: bool = True  # False: a read, not budgeted
    ms: list[float] = field(default_factory=list)
    pages: list[int] = field(default_factory=list)  # WAL frames written
    grown: list[int] = field(default_factory=list)  # bytes of pages in use

    def line(self) -> str:
        kb = [g / 1024 for g in self.grown]
        pages = f"{statistics.median(self.pages):7.0f}" if self.writes else f"{'-':>7}"
        return (f"{self.label:<37} {statistics.median(self.ms):9.1f} {max(self.ms):9.1f} "
                f"{pages} {statistics.mean(kb):10.1f} {max(kb):9.1f}")

    def within_budget(self) -> bool:
        return (statistics.median(self.ms) <= BUDGET_MS
                and statistics.mean(self.grown) / 1024 <= BUDGET_KB)


def sizes(db: Path) -> tuple[int, int]:
    """Bytes of sessions.db and of its -wal (0 when there is none)."""
    wal = Path(f"{db}-wal")
    return db.stat().st_size, wal.stat().st_size if wal.exists() else 0


def _raw(store: Store) -> sqlite3.Connection:
    con = store._con  # noqa: SLF001 (benchmark measurement only)
    assert con is not None
    return dbapi_connection(con)


def wal_frames(store: Store) -> int:
    """Frames in the WAL now (a PASSIVE checkpoint's report; it copies them too)."""
    row = _raw(store).execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
    return int(row[1])  # (busy, frames in the WAL, frames copied)


def in_use(store: Store) -> int:
    """Bytes of sessions.db's pages in use (its size without the free pages SQLite reuses
    before it grows the file)."""
    raw = _raw(store)
    pages = raw.execute("PRAGMA page_count").fetchone()[0]
    free = raw.execute("PRAGMA freelist_count").fetchone()[0]
    return int((pages - free) * raw.execute("PRAGMA page_size").fetchone()[0])


def settle(store: Store) -> None:
    """The idle-time upkeep AsyncStore schedules after writes, until nothing is left."""
    while store.maintain():
        pass


def measure(store: Store, figures: Figures, op: Callable[[], object]) -> None:
    """Run ``op`` once: its wall time, the WAL pages it wrote, and how much the pages in
    use grew once the upkeep ran (the WAL copied into sessions.db)."""
    settle(store)
    before = in_use(store)
    t0 = time.perf_counter()
    op()
    figures.ms.append((time.perf_counter() - t0) * 1000)
    figures.pages.append(wal_frames(store))  # the WAL was empty: a writer starts it again
    settle(store)
    figures.grown.append(in_use(store) - before)


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


def path_ids(store: Store, session_id: str) -> list[str]:
    """Ids of the path shown, root first (the whole tree is read: checks only)."""
    return [t.turn.id for t in store.get_tree(session_id) if t.on_path]


def run_length(turns: int, runs: int, folder: Path) -> list[Figures]:
    db = folder / f"chat-{turns}.db"
    sid = write_long_chat(db, turns)
    n = f"{turns:,} turns"
    edit, regen = Figures(f"edit, {n}"), Figures(f"regenerate, {n}")
    back, points = Figures(f"switch back, {n}"), Figures(f"branch points (a read), {n}", False)
    store = Store.open(db)
    try:
        settle(store)
        start = sizes(db), in_use(store)
        shown = path_ids(store, sid)
        _before, user = last_user_message(store, sid)
        _prompt, reply = last_reply(store, sid)

        def edit_op() -> None:
            store.edit_turn(sid, user.id, Turn("user", [TextBlock(EDITED)]))

        def regen_op() -> None:
            store.branch_before(sid, reply[0])
            store.append_turn(sid, Turn("assistant", [TextBlock(ANSWER)], model="m",
                                        usage=Usage(9, 9)))

        def back_op() -> None:
            store.show_branch(sid, shown[-1])

        ops = [(edit, edit_op), (back, back_op), (regen, regen_op), (back, back_op)]
        warm = [Figures(f"{f.label.split(',')[0]}") for f, _ in ops]
        for what, (_, op) in zip(warm, ops, strict=True):
            measure(store, what, op)
        for _ in range(runs):
            for what, op in ops:
                measure(store, what, op)
            measure(store, points, lambda: store.branches(sid))
        print(f"{n}, warm-up round (not counted: the search index's first merges after the "
              "generator built it whole): " + ", ".join(
                  f"{w.label} {w.ms[0]:.1f} ms +{w.grown[0] / 1024:.0f} KB" for w in warm))
        end = sizes(db), in_use(store)
        assert path_ids(store, sid) == shown, "switching back did not show the first answer"
        found = store.branches(sid).points
        assert found[user.id].total == found[reply[0]].total == runs + 2, found
    finally:
        store.close()
    (db0, wal0), used0 = start
    (db1, wal1), used1 = end
    print(f"{n}: sessions.db {db0 / 1e6:.3f} MB (-wal {wal0 / 1e6:.3f} MB, in use "
          f"{used0 / 1e6:.3f} MB) → {db1 / 1e6:.3f} MB (-wal {wal1 / 1e6:.3f} MB, in use "
          f"{used1 / 1e6:.3f} MB) after {runs + 1} edits and {runs + 1} regenerations; {load()}")
    return [edit, regen, back, points]


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
    print(f"{'operation':<37} {'median ms':>9} {'max ms':>9} {'pages':>7} {'mean KB':>10} "
          f"{'max KB':>9}")
    for row in rows:
        print(row.line())
    ok = all(row.within_budget() for row in rows if row.writes)
    print(f"budget: median ≤ {BUDGET_MS:.0f} ms and ≤ {BUDGET_KB:.0f} KB per operation "
          f"(mean growth): {'OK' if ok else 'OVER'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

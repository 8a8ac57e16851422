"""Benchmark: the conversation tree added to a file written before it (issue 32), backup included.

    .venv/bin/python -m tests.benchmarks.bench_tree_convert [--size small|full] [--versions 200]

Takes the generated store of that size (``tests.benchmarks.gen_store``, cached), and
makes of a copy a file as Parley wrote it before the tree: ``turn_links`` and
``turn_path`` dropped, and ``--versions`` version sessions added, as Edit and
Regenerate made them (a copy of a chat up to a turn, the edited message and a
reply, ``meta.fork_kind = "version"``) on chats of every length, the longest
included. Prints the time of ``Store.open`` (the backup, the fill of both tables,
the versions folded) and how many sessions remain. The machine must be otherwise
idle for the figure to mean anything.
"""

from __future__ import annotations

import argparse
import random
import shutil
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from parley.core.content import new_id  # noqa: E402
from parley.core.store.store import Store  # noqa: E402
from parley.core.store.textindex import register_functions  # noqa: E402
from tests.benchmarks.gen_store import SIZES, cached_store  # noqa: E402


def make_older(path: Path, versions: int, seed: int = 1) -> None:
    """Drop the tree's tables and add version sessions (copies, as e73c920's fork made)."""
    con = sqlite3.connect(path, isolation_level=None)
    register_functions(con)
    con.execute("BEGIN")
    con.execute("DROP TABLE turn_path")
    con.execute("DROP TABLE turn_links")
    rng = random.Random(seed)
    chats = con.execute("SELECT s.id, count(t.id) FROM sessions s JOIN turns t "
                        "ON t.session_id = s.id GROUP BY s.id ORDER BY count(t.id) DESC").fetchall()
    picks = chats[: max(1, versions // 10)] + rng.sample(chats, min(len(chats), versions))
    for sid, n in picks[:versions]:
        at = rng.randrange(max(1, n - 1))
        vid = new_id()
        con.execute(
            "INSERT INTO sessions (id, space_id, title, title_source, parent_session_id, "
            "forked_from_turn_id, model, created_at, updated_at, meta) "
            "SELECT ?, space_id, title || ' (edited)', 'auto', id, "
            "(SELECT id FROM turns WHERE session_id = ? ORDER BY seq LIMIT 1 OFFSET ?), "
            "model, updated_at + 1, updated_at + 1, '{\"fork_kind\":\"version\"}' "
            "FROM sessions WHERE id = ?", (vid, sid, at, sid))
        con.execute(
            "INSERT INTO turns (id, session_id, seq, role, blocks, aborted, model, usage, "
            "created_at) SELECT lower(hex(randomblob(16))), ?, seq, role, blocks, aborted, "
            "model, usage, created_at FROM turns WHERE session_id = ? ORDER BY seq LIMIT ?",
            (vid, sid, at + 1))
        # The edit is made after the chat's last message (its time), as a person makes it.
        last = con.execute("SELECT (SELECT max(seq) FROM turns WHERE session_id = ?), "
                           "(SELECT max(created_at) FROM turns WHERE session_id = ?)",
                           (vid, sid)).fetchone()
        for k, role in enumerate(("user", "assistant")):
            con.execute(
                "INSERT INTO turns (id, session_id, seq, role, blocks, created_at) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                (new_id(), vid, last[0] + 1 + k, role,
                 '[{"type":"text","text":"an edit of the benchmark"}]', last[1] + 1 + k))
    con.execute("COMMIT")
    con.close()


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--size", choices=sorted(SIZES), default="small")
    p.add_argument("--versions", type=int, default=200)
    args = p.parse_args(argv)
    sessions, turns = SIZES[args.size]
    source = cached_store(sessions, turns)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "sessions.db"
        shutil.copy(source, path)
        make_older(path, args.versions)
        before = sqlite3.connect(path).execute("SELECT count(*) FROM sessions").fetchone()[0]
        size = path.stat().st_size / 1e6
        started = time.monotonic()
        Store.open(path).close()
        took = time.monotonic() - started
        after = sqlite3.connect(path).execute("SELECT count(*) FROM sessions").fetchone()[0]
        print(f"{args.size}: {turns:,} turns, {before:,} sessions ({args.versions} versions), "
              f"{size:.0f} MB: converted in {took:.2f} s (backup included); "
              f"{after:,} sessions after")


if __name__ == "__main__":
    main()

"""Two processes writing one sessions.db, a third searching it: no write lost, never "locked".

Two writer processes (``tests/e2e/two_process_worker.py write``) append 300
turns each to one shared session, interleaved as fast as they can, and stream
a reply into their own session every fifth turn (journal upserts, then
``finish_turn``); a reader process searches, lists and reads all along. They
start together on a ``go`` line. Then: no process met any error ("database
is locked" included), the shared session holds exactly the 600 turns in each
writer's order with positions 0…599, every reply is whole with its usage
counted once, search finds every writer's last word, and the file passes
``PRAGMA integrity_check``.
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from parley.core.store import Store
from tests.e2e.two_process_worker import token

ROOT = Path(__file__).resolve().parents[2]
COUNT = 300
JOURNAL_EVERY = 5


def spawn(*argv: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "tests.e2e.two_process_worker", *argv],
        cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True,
    )


def result_of(proc: subprocess.Popen[str], timeout: float) -> dict:
    out, err = proc.communicate(timeout=timeout)
    assert proc.returncode == 0, err[-3000:]
    return json.loads(out.strip().splitlines()[-1])


@pytest.mark.slow
def test_two_writers_and_a_reader_lose_nothing_and_never_see_locked(tmp_path):
    db = tmp_path / "sessions.db"
    with Store.open(db) as store:
        shared = store.create_session(title="shared").id
        own = {tag: store.create_session(title=f"own {tag}").id for tag in "AB"}
    writers = {
        tag: spawn("write", "--db", str(db), "--shared", shared, "--own", own[tag],
                   "--tag", tag, "--count", str(COUNT), "--journal-every", str(JOURNAL_EVERY))
        for tag in "AB"
    }
    reader = spawn("read", "--db", str(db), "--shared", shared)
    procs = [*writers.values(), reader]
    try:
        for p in procs:
            assert p.stdout is not None and p.stdout.readline().strip() == "ready"
        t0 = time.monotonic()
        for p in procs:
            assert p.stdin is not None
            p.stdin.write("go\n")
            p.stdin.flush()
        results = {tag: result_of(p, 120) for tag, p in writers.items()}
        elapsed = time.monotonic() - t0
        assert reader.stdin is not None
        reader.stdin.write("stop\n")
        reader.stdin.flush()
        read = result_of(reader, 60)
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()

    print(f"\ntwo processes: {2 * COUNT} appends + replies in {elapsed:.2f} s; writers "
          + "; ".join(f"{t}: {r['ops']} writes, p99 {r['p99_ms']} ms, max {r['max_ms']} ms, "
                      f"{r['over_1s']} over 1 s" for t, r in results.items())
          + f"; reader: {read['ops']} reads, p99 {read['p99_ms']} ms, max {read['max_ms']} ms")
    for tag, r in results.items():
        assert r["errors"] == [], f"writer {tag}: {r['errors'][:3]}"
        assert len(r["shared"]) == COUNT
        assert len(r["own"]) == COUNT // JOURNAL_EVERY
    assert read["errors"] == [], read["errors"][:3]
    assert read["ops"] > 0

    with Store.open(db) as store:
        turns = store.get_turns(shared)
        assert len(turns) == 2 * COUNT
        ids = [t.id for t in turns]
        for tag, r in results.items():
            mine = [i for i in ids if i in set(r["shared"])]
            assert mine == r["shared"], f"writer {tag}'s turns out of order or missing"
            assert [t.text() for t in turns if t.id in set(mine)] == [
                f"{tag} {i} {token(tag, i)}" for i in range(COUNT)
            ]
            replies = store.get_turns(own[tag])
            assert [t.id for t in replies] == r["own"]
            assert all(not t.aborted and t.text().startswith(f"{tag} reply") for t in replies)
            assert store.get_session(own[tag]).usage.output_tokens == 3 * len(replies)
            hits = store.search(token(tag, COUNT - 1))
            assert [h.turn_id for h in hits] == [r["shared"][-1]]
    con = sqlite3.connect(db)
    try:
        positions = [s for (s,) in con.execute(
            "SELECT seq FROM turns WHERE session_id = ? ORDER BY seq", (shared,))]
        assert positions == list(range(2 * COUNT))
        assert con.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
    finally:
        con.close()

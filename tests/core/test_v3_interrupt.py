"""All or nothing (point 7 of parley.core.store.upgrade.v3): an upgrade killed at any point.

A child process upgrades a copy of a generated v3 file and is SIGKILLed: right
after each step (inside the transaction), just after the commit, at the n-th
progress report (backup copy steps and turn batches), or after a random delay.
After every kill the file must pass ``PRAGMA integrity_check`` and be either
the untouched v3 file or a complete v4 file; a later upgrade must then finish
with every session, turn and block there, and every backup left behind must be
a full v3 copy.

SQLite only: the v3 upgrade works on files only.
"""

from __future__ import annotations

import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from parley.core.store.schema import V4_TABLES
from parley.core.store.store import Store
from parley.core.store.upgrade import steps as v3_steps
from parley.core.store.upgrade.v3 import upgrade_file
from tests.v3gen import GeneratedV3, check_everything, generate, read_v3

ROOT = Path(__file__).resolve().parents[2]

CHILD = textwrap.dedent("""
    import os, signal, sys
    sys.path.insert(0, {root!r})
    from pathlib import Path
    from parley.core.store.upgrade import v3
    from parley.core.store.upgrade import backup as v3_backup
    from parley.core.store.upgrade import steps as v3_steps
    from parley.core.store.upgrade import turns as v3_turns

    path, mode, arg = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3])
    v3_turns.BATCH = 40  # many batches, many places to die at
    v3_backup.PAGES_PER_STEP = 64  # several backup steps too

    def die():
        os.kill(os.getpid(), signal.SIGKILL)

    if mode == "step":  # die right after step number `arg`, inside the transaction
        def wrap(i, fn):
            def run(m):
                fn(m)
                if i == arg:
                    die()
            return run
        v3_steps.STEPS[:] = [v3_steps.Step(s.name, wrap(i, s.fn))
                             for i, s in enumerate(v3_steps.STEPS)]
    if mode == "commit":  # die once committed, before the journal mode is set back
        v3._set_journal_mode = lambda raw, mode: die() if mode == "WAL" else None
    calls = [0]

    def progress(done, total):
        calls[0] += 1
        if mode == "progress" and calls[0] == arg:
            die()

    print("ready", flush=True)  # the parent's clock for "delay" starts here
    v3.upgrade_file(path, progress)
    print("done", flush=True)
""").format(root=str(ROOT))


def kill_points(seed: int, run_ms: int) -> list[tuple[str, int]]:
    """Where to kill: after each step, after the commit, at progress reports, at random."""
    rng = random.Random(seed)
    points = [("step", i) for i in range(len(v3_steps.STEPS))] + [("commit", 0)]
    points += [("progress", n) for n in (1, 2, 3, 5, 8, 13, 21, 34)]
    points += [("delay", rng.randint(0, run_ms * 4 // 5)) for _ in range(18)]
    return points


def run_child(path: Path, mode: str, arg: int) -> tuple[str, float]:
    """Run the child; return its outcome and the seconds from "ready" to its end."""
    child = subprocess.Popen([sys.executable, "-c", CHILD, str(path), mode, str(arg)],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert child.stdout is not None
    assert child.stdout.readline().strip() == "ready"
    started = time.monotonic()
    if mode == "delay":
        time.sleep(arg / 1000)
        child.send_signal(signal.SIGKILL)
    out, err = child.communicate(timeout=60)
    seconds = time.monotonic() - started
    if child.returncode == 0:
        return "finished", seconds
    assert child.returncode == -signal.SIGKILL, err
    return "killed", seconds


def check_state(path: Path, gen: GeneratedV3) -> int:
    """The file after a kill: intact, and wholly v3 (unchanged) or wholly v4."""
    con = sqlite3.connect(path)  # a read-write open rolls a hot journal back, as the app's would
    try:
        assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        version = con.execute("PRAGMA user_version").fetchone()[0]
        tables = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    finally:
        con.close()
    if version == 3:
        assert tables == {"sessions", "turns", "app_state"}
        assert read_v3(path) == gen.expected
    else:
        assert version == 4 and tables >= V4_TABLES
        assert not {t for t in tables if t.startswith("v3_")}
    return version


@pytest.mark.slow
def test_upgrade_killed_anywhere_leaves_v3_or_v4(tmp_path: Path) -> None:
    pristine = tmp_path / "pristine"
    pristine.mkdir()
    gen = generate(pristine / "sessions.db", seed=21, sessions=15, turns_per_session=40)
    assert gen.expected is not None
    shutil.copytree(pristine, tmp_path / "timing")
    outcome, seconds = run_child(tmp_path / "timing" / "sessions.db", "none", 0)
    assert outcome == "finished"
    run_ms = int(seconds * 1000)  # an uninterrupted upgrade: random kills land within it
    outcomes: dict[str, int] = {}
    for i, (mode, arg) in enumerate(kill_points(seed=7, run_ms=run_ms)):
        work = tmp_path / f"run{i}"
        shutil.copytree(pristine, work)
        path = work / "sessions.db"
        outcome, _ = run_child(path, mode, arg)
        version = check_state(path, gen)
        outcomes[f"{outcome}-v{version}"] = outcomes.get(f"{outcome}-v{version}", 0) + 1
        upgrade_file(path)  # the next start completes the upgrade
        with Store.open(path) as store:
            check_everything(store, gen.expected)
            assert store.search("walonlyplatypus")
        for backup in work.glob("sessions.db.parley-pre-v4*.bak"):
            assert read_v3(backup) == gen.expected, (mode, arg, backup.name)
        assert not list(work.glob("*.partial")) and not list(work.glob("*index.tmp"))
        shutil.rmtree(work)
    print(f"kills: {outcomes} (an uninterrupted run took {run_ms} ms)")
    # at least 30 kills, landing both before and after the commit
    assert outcomes.get("killed-v3", 0) + outcomes.get("killed-v4", 0) >= 30, outcomes
    assert outcomes.get("killed-v3", 0) >= 20 and outcomes.get("killed-v4", 0) >= 1, outcomes

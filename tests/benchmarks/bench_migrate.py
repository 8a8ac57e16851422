"""Benchmark: upgrade a ~1 GB v3 sessions.db to v4, backup included (budget: 30 s).

    .venv/bin/python -m tests.benchmarks.bench_migrate [--sessions 10000] [--turns 100] [--runs 1]

The v3 file (10,000 sessions x 100 turns, ~1 GB, every quirk of
tests.v3gen, the last rows still in -wal) is generated once and cached in
/tmp/parley-bench-v3/. Each run upgrades a fresh copy (the copy is not timed,
and is flushed to disk first, as a user's file would be) and prints the wall
time of ``parley.core.store.upgrade.v3.upgrade_file`` with its phases, the CPU time of each of
its two threads during the turns step (the step takes as long as the busier
one), the CPU time, peak memory, and the budget. The
machine must be otherwise idle for the figure to mean anything: the upgrade
uses both cores. The calibration loop printed before each run shows how fast
the machine was at that moment (0.32-0.34 s when quiet on the 2-core box).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from parley.core.store.store import Store  # noqa: E402
from parley.core.store.upgrade import steps as v3_steps  # noqa: E402
from parley.core.store.upgrade import turns as v3_turns  # noqa: E402
from parley.core.store.upgrade import v3  # noqa: E402
from tests.v3gen import BIG_MARKER, WAL_MARKER, generate  # noqa: E402

CACHE = Path("/tmp/parley-bench-v3")
BUDGET_S = 30.0


def cached_v3(sessions: int, turns: int) -> Path:
    """Return the cached v3 file for this size, generating it when missing."""
    path = CACHE / f"sessions-{sessions}x{turns}.db"
    stamp = path.with_suffix(".json")
    want = {"sessions": sessions, "turns": turns, "seed": 1, "generator": 2}
    if path.exists() and stamp.exists() and json.loads(stamp.read_text()) == want:
        return path
    CACHE.mkdir(parents=True, exist_ok=True)
    print(f"generating {sessions} x {turns} turns into {path} (once) …", flush=True)
    started = time.monotonic()
    generate(path, seed=1, sessions=sessions, turns_per_session=turns, keep_expected=False)
    stamp.write_text(json.dumps(want))
    print(f"  generated in {time.monotonic() - started:.1f} s", flush=True)
    return path


def size_mb(path: Path) -> float:
    return sum(os.path.getsize(f"{path}{s}") for s in ("", "-wal")
               if os.path.exists(f"{path}{s}")) / 1e6


def timed_steps(phases: dict[str, float]) -> None:
    """Record each step's and the backup's wall time in ``phases`` (reporting only)."""

    def wrap(name: str, fn):  # type: ignore[no-untyped-def]
        def run(*args, **kwargs):  # type: ignore[no-untyped-def]
            t = time.monotonic()
            try:
                return fn(*args, **kwargs)
            finally:
                phases[name] = phases.get(name, 0.0) + time.monotonic() - t
        return run

    v3.copy_backup = wrap("backup (copied; on disk by the commit)", v3.copy_backup)
    v3.CopiedBackup.place = wrap("backup named (waits for its flush)", v3.CopiedBackup.place)
    v3_steps.STEPS[:] = [v3_steps.Step(s.name, wrap(s.name, s.fn)) for s in v3_steps.STEPS]
    enter = v3_turns.TurnPipeline.__exit__

    def exit_(self, *exc):  # type: ignore[no-untyped-def]
        for thread, seconds in self.waited.items():
            phases[f"[{thread}: waited on the other thread]"] = seconds
        return enter(self, *exc)
    v3_turns.TurnPipeline.__exit__ = exit_
    for name in ("_index",):  # CPU time of the indexer thread
        fn = getattr(v3_turns.TurnPipeline, name)

        def cpu(self, fn=fn, name=name):  # type: ignore[no-untyped-def]
            t = time.thread_time()
            try:
                return fn(self)
            finally:
                phases[f"[thread {name[1:]}: CPU]"] = time.thread_time() - t
        setattr(v3_turns.TurnPipeline, name, cpu)
    turns = v3_turns.TurnPipeline.turns

    def turns_cpu(self, *args):  # type: ignore[no-untyped-def]
        t = time.thread_time()
        try:
            yield from turns(self, *args)
        finally:
            phases["[upgrade thread: turns CPU]"] = time.thread_time() - t
    v3_turns.TurnPipeline.turns = turns_cpu


def calibrate() -> float:
    """CPU seconds of a fixed pure-Python loop: how fast this machine is right now."""
    t = time.thread_time()
    total = 0
    for i in range(10_000_000):
        total += i
    return time.thread_time() - t


def run_once(source: Path, phases: dict[str, float]) -> float:
    work = CACHE / "run"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir()
    target = work / "sessions.db"
    for suffix in ("", "-wal"):
        if os.path.exists(f"{source}{suffix}"):
            shutil.copyfile(f"{source}{suffix}", f"{target}{suffix}")
            # On disk before the clock starts, as a user's file is: else the upgrade's
            # first fsync pays for writing this copy out (~0.4 s per GB here).
            fd = os.open(f"{target}{suffix}", os.O_RDONLY)
            os.fsync(fd)
            os.close(fd)
    phases.clear()
    print(f"  machine: load average {os.getloadavg()[0]:.1f}, calibration loop "
          f"{calibrate():.2f} s CPU (lower is faster)")
    calls: list[tuple[float, int, int]] = []
    cpu = time.process_time()
    started = time.monotonic()
    report = v3.upgrade_file(target, lambda d, t: calls.append((time.monotonic(), d, t)))
    wall = time.monotonic() - started
    cpu = time.process_time() - cpu
    print(f"  upgrade_file: {wall:.1f} s wall, {cpu:.1f} s CPU (both cores), budget "
          f"{BUDGET_S:.0f} s -> {'WITHIN' if wall <= BUDGET_S else 'OVER'} budget")
    print(f"  report: {report.sessions} sessions, {report.turns} turns, "
          f"{report.recovered_turns} recovered, {report.spaces} spaces")
    for name, seconds in phases.items():
        print(f"    {name:<55} {seconds:6.2f} s")
    rest = wall - sum(v for k, v in phases.items() if not k.startswith("["))
    print(f"    {'commit, journal mode back to WAL, the rest':<55} {rest:6.2f} s")
    gaps = [b[0] - a[0] for a, b in zip(calls, calls[1:], strict=False)]
    print(f"  progress: {len(calls)} calls, longest gap {max(gaps, default=0):.2f} s")
    print(f"  file after: {size_mb(target):.0f} MB (v3 pages kept as free space), "
          f"backup {os.path.getsize(report.backup_path or target) / 1e6:.0f} MB")
    with Store.open(target) as store:
        t = time.monotonic()
        found = len(store.search(WAL_MARKER)) and len(store.search(BIG_MARKER))
        print(f"  search right after: {'found' if found else 'NOT FOUND'} "
              f"({(time.monotonic() - t) * 1000:.0f} ms for two queries)")
    shutil.rmtree(work)
    return wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sessions", type=int, default=10_000)
    parser.add_argument("--turns", type=int, default=100, help="turns per session")
    parser.add_argument("--runs", type=int, default=1)
    args = parser.parse_args()
    source = cached_v3(args.sessions, args.turns)
    print(f"v3 file: {size_mb(source):.0f} MB ({args.sessions} sessions x {args.turns} turns)"
          f"; {os.cpu_count()} CPUs")
    phases: dict[str, float] = {}
    timed_steps(phases)
    walls = [run_once(source, phases) for _ in range(args.runs)]
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"migrate {size_mb(source):.0f} MB v3 file, backup included: best {min(walls):.1f} s "
          f"(budget {BUDGET_S:.0f} s); peak RSS {peak:.0f} MB")


if __name__ == "__main__":
    main()

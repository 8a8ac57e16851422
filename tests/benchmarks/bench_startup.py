"""Start to first painted window with a large sessions.db (budget: ≤ 1.0 s).

Runs ``python -m gui.app --home DIR`` in a subprocess (``PARLEY_PROBE=quit``):
the app prints ``parley-probe <event> <epoch s>`` at its first paint, when
the sidebar lists the sessions, and when the providers are ready, then
closes. Times are from just before the process is spawned (interpreter start
and imports included). A bare PySide6 window is measured the same way as the
floor. The store is generated once by ``tests.benchmarks.gen_store`` (10k
sessions, 1M turns, ~1.2 GB) and copied into a benchmark home.

Run: ``.venv/bin/python -m tests.benchmarks.bench_startup [--runs 5] [--size full|small]``
(offscreen by default; with ``DISPLAY`` set and ``--xcb`` it uses the X server.)
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

from tests.benchmarks.gen_store import SIZES, cached_store

BUDGET_S = 1.0
ROOT = Path(__file__).resolve().parents[2]

BARE = """
import time, sys
from PySide6.QtCore import QEvent, QObject, QTimer
from PySide6.QtWidgets import QApplication, QMainWindow
app = QApplication(sys.argv)
w = QMainWindow(); w.resize(1180, 780)
class F(QObject):
    def eventFilter(self, o, e):
        if e.type() == QEvent.Type.Paint:
            print(f"parley-probe first-paint {time.time():.6f}", flush=True)
            QTimer.singleShot(0, app.quit)
            o.removeEventFilter(self)
        return False
f = F(); w.installEventFilter(f); w.show(); app.exec()
"""


def run_once(cmd: list[str], env: dict[str, str]) -> dict[str, float]:
    """Spawn ``cmd``; return {probe event: seconds after spawn}."""
    t0 = time.time()
    proc = subprocess.Popen(cmd, env=env, cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True)
    out, _ = proc.communicate(timeout=120)
    events: dict[str, float] = {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[0] == "parley-probe":
            events[parts[1]] = float(parts[2]) - t0
    if proc.returncode != 0:
        raise RuntimeError(f"{cmd} exited with {proc.returncode}")
    return events


def summary(name: str, values: list[float]) -> str:
    return (f"{name:<16} median {statistics.median(values):.3f} s  "
            f"min {min(values):.3f}  max {max(values):.3f}")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--size", choices=sorted(SIZES), default="full")
    p.add_argument("--xcb", action="store_true", help="use the X server in DISPLAY")
    args = p.parse_args(argv)

    sessions, turns = SIZES[args.size]
    print(f"preparing a store of {sessions:,} sessions / {turns:,} turns …", flush=True)
    source = cached_store(sessions, turns)
    home = source.parent / f"home-startup-{args.size}"
    db = home / "sessions.db"
    if not db.exists() or db.stat().st_size != source.stat().st_size:
        home.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, db)
    size_mb = db.stat().st_size / 1e6

    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.update(PARLEY_PROBE="quit", PARLEY_KEYRING="file")
    env.pop("PARLEY_HOME", None)
    if not args.xcb:
        env["QT_QPA_PLATFORM"] = "offscreen"
    app_cmd = [sys.executable, "-m", "gui.app", "--home", str(home)]
    bare_cmd = [sys.executable, "-c", BARE]

    run_once(app_cmd, env)  # warm the OS file cache and .pyc files once
    bare = [run_once(bare_cmd, env)["first-paint"] for _ in range(args.runs)]
    runs = [run_once(app_cmd, env) for _ in range(args.runs)]
    paint = [r["first-paint"] for r in runs]
    listed = [r["sessions-listed"] for r in runs]
    ready = [r["ready"] for r in runs]

    print(f"sessions.db: {size_mb:,.0f} MB ({sessions:,} sessions, {turns:,} turns); "
          f"{args.runs} runs, warm file cache, {'xcb' if args.xcb else 'offscreen'}")
    print(summary("bare PySide6", bare))
    print(summary("first paint", paint))
    print(summary("sessions listed", listed))
    print(summary("providers ready", ready))
    verdict = "OK" if statistics.median(paint) <= BUDGET_S else "OVER"
    print(f"budget first paint <= {BUDGET_S:.1f} s: {verdict}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

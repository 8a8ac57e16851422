"""An automatic backup of the 1 GB store while chatting: GUI stall (budget ≤ 50 ms) and time.

The Qt event loop (qasync, offscreen) runs what the window runs during a
backup: the backup itself on a thread of its own (``parley.core.store.sqlite.backups.make_backup``,
what ``BackupScheduler`` calls), and a chat saving a turn every 100 ms through
the window's ``AsyncStore`` on the same file. A 5 ms QTimer records how late it
fires (the stall a person would feel); every save's latency is recorded too.
The store is :func:`tests.benchmarks.gen_store.cached_store`'s (10k sessions,
1M turns, ~1.2 GB); the backup goes to a temporary folder, deleted after; the
scratch chat is deleted at the end.

Run: ``QT_QPA_PLATFORM=offscreen .venv/bin/python -m tests.benchmarks.bench_backup [--db PATH]``
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

BUDGET_MS = 50.0
TICK_MS = 5


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


async def measure(db: Path, folder: Path) -> dict[str, float]:
    from PySide6.QtCore import QTimer

    from parley.core.content import TextBlock, Turn
    from parley.core.store import AsyncStore
    from parley.core.store.sqlite.backups import make_backup

    store = await AsyncStore.open(db)
    lags: list[float] = []
    last = [time.perf_counter()]

    def tick() -> None:
        now = time.perf_counter()
        lags.append((now - last[0]) * 1000 - TICK_MS)
        last[0] = now

    timer = QTimer()
    timer.setInterval(TICK_MS)
    timer.timeout.connect(tick)
    saves: list[float] = []
    chat = await store.create_session(title="bench backup scratch")
    done = asyncio.Event()

    async def chatting() -> None:
        i = 0
        while not done.is_set():
            t = time.perf_counter()
            await store.append_turn(chat.id, Turn("user", [TextBlock(f"message {i} " * 40)]))
            saves.append((time.perf_counter() - t) * 1000)
            i += 1
            await asyncio.sleep(0.1)

    try:
        timer.start()
        talker = asyncio.ensure_future(chatting())
        await asyncio.sleep(0.5)
        lags.clear()
        saves.clear()
        t0 = time.perf_counter()
        made = await asyncio.to_thread(make_backup, db, folder)
        took = time.perf_counter() - t0
        done.set()
        await talker
        timer.stop()
    finally:
        await store.delete_session(chat.id)
        await store.close()
    return {
        "took_s": took,
        "size_mb": made.size / 1e6,
        "turns": float(made.turns or 0),
        "stall_max_ms": max(lags),
        "stall_p99_ms": percentile(lags, 99),
        "saves": float(len(saves)),
        "save_p50_ms": statistics.median(saves),
        "save_max_ms": max(saves),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--db", type=Path, help="an existing v4 sessions.db")
    args = parser.parse_args(argv)
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

    import qasync
    from PySide6.QtWidgets import QApplication

    from tests.benchmarks.gen_store import SIZES, cached_store

    db = args.db or cached_store(*SIZES["full"])
    folder = Path(tempfile.mkdtemp(prefix="parley-bench-backups-"))
    app = QApplication.instance() or QApplication([])
    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)
    try:
        with loop:
            r = loop.run_until_complete(measure(db, folder))
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    print(f"backup of {db.name} ({r['size_mb']:.0f} MB, {r['turns']:.0f} turns): "
          f"{r['took_s']:.1f} s")
    print(f"GUI stall while it ran: max {r['stall_max_ms']:.1f} ms, p99 "
          f"{r['stall_p99_ms']:.1f} ms (budget {BUDGET_MS:.0f} ms)")
    print(f"saves meanwhile: {r['saves']:.0f}, median {r['save_p50_ms']:.2f} ms, "
          f"max {r['save_max_ms']:.1f} ms")
    return 0 if r["stall_max_ms"] <= BUDGET_MS else 1


if __name__ == "__main__":
    sys.exit(main())

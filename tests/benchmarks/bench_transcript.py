"""Transcript benchmark: open a 10,000-turn session, stream a reply, scroll.

    QT_QPA_PLATFORM=offscreen python -m tests.benchmarks.bench_transcript [--turns 10000]

Prints, against the budgets (README, Performance):

* first paint: ``show_turns`` of a 10,000-turn session until the viewport has
  been painted (synchronous ``repaint``), median and worst of fresh views —
  budget 150 ms;
* memory growth: resident set size after the first open minus before it
  (the turns themselves exist before) — budget 60 MB;
* a compacted session: the same turns with a summary of the first 90 % of
  them, given with their stored positions and compaction span (as the chat
  controller does), until painted (the card first) — budget 150 ms as for any
  open; then opening the card (its 9,000 turns inserted) until painted;
* streaming: cost of one ``update_turn`` + repaint while a reply grows to
  ~20 KB of markdown with code (p50 / p99 / max, ms);
* scrolling: one page step, and one wheel step (120 px), + repaint through
  the session, 30 ms apart like a person's wheel events (p50 / p99, ms).

Times are wall clock; first paint also shows CPU time of this process, which
stays meaningful when other work shares the machine (the load average is
printed: on a busy machine wall times grow, CPU times much less).
"""

from __future__ import annotations

import argparse
import gc
import os
import statistics
import time

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtWidgets import QApplication  # noqa: E402

from parley.core.content import (  # noqa: E402
    CompactSummaryBlock,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    Turn,
)
from parley.core.store.outline import Span  # noqa: E402
from parley.gui.transcript import TranscriptView  # noqa: E402
from tests.gui.transcript_reading import show_turns

FIRST_PAINT_BUDGET_MS = 150.0
MEMORY_BUDGET_MB = 60.0
IDLE_BETWEEN_STEPS_S = 0.03  # between scroll steps, as between a person's wheel events

ANSWER = """Here is how item {i} works.

1. It reads the **input** and checks `limits`.
2. It writes the result.

```python
def step_{i}(x: int) -> int:
    return x * {i}  # scaled
```

See [the docs](https://example.com/{i}) for details.
"""


def make_session(n: int) -> list[Turn]:
    """A session of ``n`` turns: questions, markdown answers, every 10th with a tool call."""
    turns: list[Turn] = []
    i = 0
    while len(turns) < n:
        turns.append(Turn("user", [TextBlock(f"Question {i}: how does item {i} work? " * 2)],
                          id=f"u{i}"))
        if i % 10 == 5 and len(turns) + 2 < n:
            turns.append(Turn("assistant", [TextBlock("Let me check."),
                                            ToolUseBlock(f"t{i}", "search", {"q": f"item {i}"})],
                              id=f"c{i}", model="anthropic:claude-sonnet-4-5"))
            turns.append(Turn("user", [ToolResultBlock(f"t{i}", (TextBlock("found it " * 20),))],
                              id=f"r{i}"))
        turns.append(Turn("assistant", [TextBlock(ANSWER.format(i=i))], id=f"a{i}",
                          model="anthropic:claude-sonnet-4-5"))
        i += 1
    return turns[:n]


def rss_mb() -> float:
    """Resident set size of this process, MB."""
    with open("/proc/self/statm") as f:
        pages = int(f.read().split()[1])
    return pages * os.sysconf("SC_PAGE_SIZE") / 2**20


def new_view(app: QApplication) -> TranscriptView:
    view = TranscriptView()
    view.resize(1000, 800)
    view.show()
    app.processEvents()
    return view


def first_paint(app: QApplication, turns: list[Turn]) -> tuple[float, float, float]:
    """(wall ms, CPU ms from show_turns to painted, RSS growth MB) for a fresh view."""
    view = new_view(app)
    gc.collect()
    before = rss_mb()
    start, cpu = time.perf_counter(), time.process_time()
    show_turns(view, turns)
    view.list_view.viewport().repaint()
    ms = (time.perf_counter() - start) * 1000
    cpu_ms = (time.process_time() - cpu) * 1000
    app.processEvents()
    grown = rss_mb() - before
    view.close()
    view.deleteLater()
    app.processEvents()
    return ms, cpu_ms, grown


def compacted_open(app: QApplication, turns: list[Turn]) -> tuple[float, float, float]:
    """(CPU ms, wall ms) from show_turns to painted for a session whose first 90 % is
    compacted, and wall ms to open its card and paint."""
    last = len(turns) * 9 // 10 - 1
    summary = Turn("user", [CompactSummaryBlock("Summary of the start.", last + 1,
                                                turns[0].id, turns[last].id)], id="summary")
    session = [*turns, summary]
    seqs = {t.id: i for i, t in enumerate(session)}
    spans = {"summary": Span("summary", len(turns), 0, last, last + 1, last + 1)}
    view = new_view(app)
    gc.collect()
    start, cpu = time.perf_counter(), time.process_time()
    show_turns(view, session, seqs=seqs, spans=spans)
    view.list_view.viewport().repaint()
    ms = (time.perf_counter() - start) * 1000
    cpu_ms = (time.process_time() - cpu) * 1000
    assert view.model.rows[0].kind == "card"
    app.processEvents()
    start = time.perf_counter()
    view.model.set_expanded(0, True)
    view.list_view.viewport().repaint()
    open_ms = (time.perf_counter() - start) * 1000
    view.close()
    view.deleteLater()
    app.processEvents()
    return cpu_ms, ms, open_ms


def streaming(app: QApplication) -> list[float]:
    """Per-update cost (ms) of a reply growing ~25 characters at a time to ~20 KB."""
    view = new_view(app)
    show_turns(view, make_session(200))
    view.list_view.viewport().repaint()
    full = "".join(ANSWER.format(i=i) + "\n" for i in range(80))
    times: list[float] = []
    for end in range(25, len(full), 25):
        turn = Turn("assistant", [TextBlock(full[:end])], id="live")
        start = time.perf_counter()
        view.update_turn(turn)
        view.list_view.viewport().repaint()
        times.append((time.perf_counter() - start) * 1000)
    view.close()
    return times


def scrolling(app: QApplication, turns: list[Turn], step: int | None, steps: int = 150
              ) -> list[float]:
    """Per-step cost (ms) of scrolling up through the session (``step`` px; None: a page)."""
    view = new_view(app)
    show_turns(view, turns)
    view.list_view.viewport().repaint()
    bar = view.list_view.verticalScrollBar()
    times: list[float] = []
    for _ in range(steps):
        idle_until = time.perf_counter() + IDLE_BETWEEN_STEPS_S
        while time.perf_counter() < idle_until:  # the user's pace: idle work may run
            app.processEvents()
            time.sleep(0.002)
        start = time.perf_counter()
        bar.setValue(bar.value() - (step or bar.pageStep()))
        view.list_view.viewport().repaint()
        times.append((time.perf_counter() - start) * 1000)
    view.close()
    return times


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * p))]


def main() -> int:
    parser = argparse.ArgumentParser(description="Transcript benchmark")
    parser.add_argument("--turns", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    app = QApplication.instance() or QApplication([])
    turns = make_session(args.turns)
    warm = new_view(app)  # fonts, styles, Pygments lexers: loaded once per process
    show_turns(warm, make_session(20))
    warm.list_view.viewport().repaint()
    warm.close()
    app.processEvents()

    print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs")
    runs = [first_paint(app, turns) for _ in range(args.runs)]
    paint_ms = [r[0] for r in runs]
    cpu_ms = [r[1] for r in runs]
    grown = runs[0][2]
    print(f"open {args.turns:,} turns, first paint: median {statistics.median(paint_ms):.1f} ms, "
          f"worst {max(paint_ms):.1f} ms; CPU median {statistics.median(cpu_ms):.1f} ms "
          f"(budget {FIRST_PAINT_BUDGET_MS:.0f} ms)")
    print(f"memory growth on first open: {grown:.1f} MB (budget {MEMORY_BUDGET_MB:.0f} MB)")
    compacted = [compacted_open(app, turns) for _ in range(args.runs)]
    compacted_cpu = statistics.median(c[0] for c in compacted)
    print(f"open {args.turns:,} turns, 90 % compacted (card first): CPU median "
          f"{compacted_cpu:.1f} ms, wall median {statistics.median(c[1] for c in compacted):.1f}"
          f" ms (budget {FIRST_PAINT_BUDGET_MS:.0f} ms); opening the card + paint: median "
          f"{statistics.median(c[2] for c in compacted):.1f} ms")

    stream = streaming(app)
    print(f"streaming update_turn + repaint, {len(stream)} updates to "
          f"~20 KB: p50 {pct(stream, 0.5):.2f} ms, p99 {pct(stream, 0.99):.2f} ms, "
          f"max {max(stream):.2f} ms")

    for label, step in (("one page", None), ("120 px (a wheel notch)", 120)):
        scroll = scrolling(app, turns, step)
        print(f"scroll {label} + repaint: p50 {pct(scroll, 0.5):.2f} ms, "
              f"p99 {pct(scroll, 0.99):.2f} ms, max {max(scroll):.2f} ms")
    print(f"load average {os.getloadavg()[0]:.2f}")
    ok = (statistics.median(cpu_ms) <= FIRST_PAINT_BUDGET_MS and grown <= MEMORY_BUDGET_MB
          and compacted_cpu <= FIRST_PAINT_BUDGET_MS)
    print("within budget" if ok else "OVER BUDGET")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

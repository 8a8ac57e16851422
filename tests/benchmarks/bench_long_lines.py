"""Long-lines benchmark: how long the GUI thread is blocked by huge unbroken text.

    QT_QPA_PLATFORM=offscreen python -m tests.benchmarks.bench_long_lines

Prints the wall time of each GUI-thread step (the stall a person would feel):

* showing an imported chat with two ~10 MB unbroken lines (the report: minutes
  before ``parley.gui.text.long_text``), until the viewport has been painted;
* showing a 150,000-character unbroken line (under the fold: shown whole,
  with break chances);
* pasting a 300,000-character unbroken line into the composer, and clearing it.

The load average is printed: on a shared machine wall times grow.
"""

from __future__ import annotations

import os
import time

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtCore import QMimeData  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from parley.core.content import TextBlock, Turn  # noqa: E402
from tests.gui.transcript_reading import show_turns


def _ms(start: float) -> str:
    return f"{(time.perf_counter() - start) * 1000:,.0f} ms"


def main() -> None:
    app = QApplication.instance() or QApplication([])
    from parley.gui.composer.widget import Composer
    from parley.gui.transcript import TranscriptView

    print(f"load average: {os.getloadavg()[0]:.1f}")
    view = TranscriptView()
    view.resize(900, 700)
    view.show()
    app.processEvents()
    turns = [Turn("user", [TextBlock("a" * 10_000_000)]),
             Turn("assistant", [TextBlock("b" * 10_000_000)], model="anthropic:claude-x")]
    start = time.perf_counter()
    show_turns(view, turns)
    view.repaint()
    app.processEvents()
    print(f"two 10 MB unbroken lines shown: {_ms(start)}")
    start = time.perf_counter()
    show_turns(view, [Turn("user", [TextBlock("c" * 150_000)])])
    view.repaint()
    app.processEvents()
    print(f"one 150,000-character line shown whole: {_ms(start)}")

    composer = Composer()
    composer.resize(700, 120)
    composer.show()
    app.processEvents()
    mime = QMimeData()
    mime.setText("y" * 300_000)
    start = time.perf_counter()
    composer.insertFromMimeData(mime)
    app.processEvents()
    print(f"paste of a 300,000-character line: {_ms(start)}")
    start = time.perf_counter()
    composer.set_text("")
    app.processEvents()
    print(f"composer cleared: {_ms(start)}")


if __name__ == "__main__":
    main()

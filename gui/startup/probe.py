"""``PARLEY_PROBE``: the start-up timing lines the benchmark and the e2e tests read.

With ``PARLEY_PROBE`` set, Parley prints ``parley-probe <event> <epoch s>`` on stdout
at ``first-paint``, ``sessions-listed`` and ``ready``, ``typed`` when the message box
first holds text, ``startup-error`` when a message box says why Parley cannot start;
once ready and idle, ``parley-stat gui-stall-max <s>`` (see ``parley.gui.app``'s
docstring). ``PARLEY_PROBE=quit`` closes the window then.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from PySide6.QtCore import QTimer

    from parley.core.tasks import TaskSet
    from parley.gui.composer.widget import Composer


class ProbedWindow(Protocol):
    """What the probe watches of the window (``parley.gui.main_window.MainWindow``)."""

    @property
    def composer(self) -> Composer: ...

    @property
    def tasks(self) -> TaskSet: ...


class StartupProbe:
    """Prints timing lines for the start-up benchmark (see the module docstring)."""

    TICK_MS = 5

    def __init__(self, mode: str) -> None:
        self.mode = mode
        self.seen: set[str] = set()
        self.window: ProbedWindow | None = None
        self.stall_max = 0.0
        self._last_tick = 0.0
        self._timer: QTimer | None = None  # the stall meter's

    def watch(self, window: ProbedWindow) -> None:
        """Mark ``typed`` when ``window``'s message box first holds text; wait for it to be
        idle once ready (see the module docstring)."""
        self.window = window
        composer = window.composer

        def changed() -> None:
            if composer.text():
                self.mark("typed")

        composer.textChanged.connect(changed)

    def mark(self, event: str) -> None:
        """Print ``parley-probe <event> <epoch seconds>`` once per event."""
        if event in self.seen:
            return
        self.seen.add(event)
        print(f"parley-probe {event} {time.time():.6f}", flush=True)
        if event == "first-paint" and self.window is not None:
            self._start_stall_meter()
        if event == "ready":
            self._when_idle()

    def _start_stall_meter(self) -> None:
        from PySide6.QtCore import Qt, QTimer

        self._timer = QTimer()
        self._timer.setTimerType(Qt.TimerType.PreciseTimer)
        self._timer.setInterval(self.TICK_MS)
        self._timer.timeout.connect(self._tick)
        self._last_tick = time.monotonic()
        self._timer.start()

    def _tick(self) -> None:
        now = time.monotonic()
        self.stall_max = max(self.stall_max, now - self._last_tick - self.TICK_MS / 1000)
        self._last_tick = now

    def _when_idle(self) -> None:
        """Once the window has no task left: print the stall figure; close if asked."""
        from PySide6.QtCore import QTimer

        window = self.window
        if window is not None and window.tasks.pending:
            QTimer.singleShot(20, self._when_idle)
            return
        if self._timer is not None:
            self._timer.stop()
        print(f"parley-stat gui-stall-max {max(0.0, self.stall_max):.6f}", flush=True)
        if self.mode == "quit":
            from PySide6.QtWidgets import QApplication

            for top in QApplication.topLevelWidgets():
                top.close()

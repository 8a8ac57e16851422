"""Several models' answers side by side say "Waiting for Parley's connection process…"
while their requests wait on a connection process that stopped answering, as a single
reply's bar does, and go back to writing when it answers again (real window, store, SDK
and provider process against the fake provider server; the process stopped with
SIGSTOP, as a deadlock looks from outside).
"""

from __future__ import annotations

import contextlib
import os
import signal
from collections.abc import Iterator
from typing import Any

import pytest
from PySide6.QtCore import Qt

from parley.core.providers.process import client
from parley.gui.notices.retry_notice import SILENT
from parley.gui.transcript.compare import STREAMING

pytestmark = pytest.mark.timeout(90)
CTRL_SHIFT = Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier
#: The watchdog's patience here (s): past SILENT_AFTER_S, with time to see the hint.
HUNG_HERE_S = 8.0


@pytest.fixture
def quick_watchdog(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The shared provider process made anew, with :data:`HUNG_HERE_S`; ended after."""
    client.close_shared()
    monkeypatch.setattr(client, "HUNG_AFTER_S", HUNG_HERE_S)
    yield
    client.close_shared()  # the next test's is made with the product's patience


def test_answers_side_by_side_say_when_the_connection_process_is_silent(
        quick_watchdog: None, driver: Any) -> None:
    names = ["claude-sonnet-4-6", "claude-opus-4-6"]
    for name in names:
        driver.fake.script(f"{name} says: " + "word " * 200, model=name, token_delay_ms=40,
                           chunk_size=5)
    w = driver.configured()
    proc = client.shared_process()._proc  # noqa: SLF001 - the process to stop
    assert proc is not None and proc.poll() is None
    driver.until(lambda: len(w.model_picker.choices) >= 2, timeout=10)
    w.composer.setFocus()
    driver.qtbot.keyClicks(w.composer, "Where to?")
    driver.qtbot.keyClick(w.composer, Qt.Key.Key_Return, CTRL_SHIFT)
    several = w.chat.several
    driver.until(lambda: getattr(several, "picker", None) is not None
                 and several.picker.isVisible())
    for key in (Qt.Key.Key_1, Qt.Key.Key_2):
        driver.qtbot.keyClick(several.picker.models, key)
    driver.qtbot.keyClick(several.picker.models, Qt.Key.Key_Return)
    driver.until(lambda: several.view is not None and len(several.view.columns) == 2)
    view = several.view
    driver.until(lambda: all("word word" in c.text for c in view.columns), timeout=15)

    os.kill(proc.pid, signal.SIGSTOP)
    try:
        driver.until(lambda: all(c.footer.text() == SILENT for c in view.columns),
                     timeout=HUNG_HERE_S)
        assert all("has not answered" in c.footer.toolTip() for c in view.columns)
        os.kill(proc.pid, signal.SIGCONT)  # it answers again: the columns write on
        driver.until(lambda: all(c.footer.text() == STREAMING or c.usable
                                 for c in view.columns), timeout=5)
        assert not any(c.footer.text() == SILENT for c in view.columns)
        driver.until(lambda: all(c.usable for c in view.columns), timeout=30)
        assert all("tokens in" in c.footer.text() and c.footer.toolTip() == ""
                   for c in view.columns)
        driver.settle(w)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(proc.pid, signal.SIGCONT)

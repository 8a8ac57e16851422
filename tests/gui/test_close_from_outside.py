"""SIGTERM while a dialog is open over the window: the dialog is cancelled and the window
shuts down as File → Quit does (``WindowShutdown.close_from_outside``), instead of the
dialog keeping Parley running after its window had closed."""

from __future__ import annotations

import os
import signal
import sys

import pytest
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication, QMessageBox

from parley.gui.startup import quit_signals

pytestmark = [pytest.mark.timeout(90),
              pytest.mark.skipif(sys.platform == "win32", reason="no SIGTERM on Windows")]


def test_sigterm_with_a_dialog_open_cancels_it_and_shuts_the_window_down(driver, qapp):
    w = driver.open()
    assert w.store is not None
    before = signal.getsignal(signal.SIGTERM)
    watch = quit_signals.install(w.quitting.close_from_outside,
                                 lambda: w.quitting.closing or w.quitting.closed, qapp)
    assert watch is not None
    answered: list[int] = []
    modal_when_signalled: list[object] = []
    box = QMessageBox(QMessageBox.Icon.Question, "Delete the chat?", "Delete the chat?",
                      QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No, w)

    def signal_now() -> None:  # runs in the dialog's own event loop, as a signal would
        modal_when_signalled.append(QApplication.activeModalWidget())
        os.kill(os.getpid(), signal.SIGTERM)

    left_open: list[bool] = []
    failsafe = QTimer()  # the dialog still open long after: closed, so that the test fails
    failsafe.setSingleShot(True)  # instead of hanging in its loop (pytest-timeout cannot end it)
    failsafe.timeout.connect(lambda: box.isVisible() and (left_open.append(True), box.done(0)))
    try:
        QTimer.singleShot(300, box, signal_now)
        failsafe.start(15_000)
        QTimer.singleShot(0, box, lambda: answered.append(box.exec()))  # as the app's questions
        driver.until(lambda: bool(answered) and w.quitting.closed and not w.isVisible(),
                     timeout=30)
    finally:
        failsafe.stop()
        watch.uninstall()
    assert modal_when_signalled == [box]
    assert not left_open, "the dialog kept Parley running after SIGTERM"
    assert answered != [QMessageBox.StandardButton.Yes]  # cancelled: not taken as a yes
    assert not box.isVisible()
    assert signal.getsignal(signal.SIGTERM) == before

"""A notice (the toast) never covers the bars shown above the message box: the queue of
messages waiting for a reply — as after a restart, where "Parley was closed before the
reply came" was drawn over "Queued before Parley closed · send them now?"."""

from __future__ import annotations

from typing import Any

import pytest
from PySide6.QtCore import QPoint, QRect

from tests.gui.queue_helpers import queued, stream_slowly

pytestmark = pytest.mark.timeout(120)


def _rect(widget: Any, w: Any) -> QRect:
    return QRect(widget.mapTo(w, QPoint(0, 0)), widget.size())


def test_a_notice_sits_above_the_queue_and_moves_up_when_the_queue_shows(driver: Any) -> None:
    w = driver.configured()
    w.resize(1100, 750)
    sid = stream_slowly(driver, w, "first question")
    w.undo.notice("Shown before anything was queued: it sits above the message box.")
    driver.until(lambda: w.toast.isVisible())
    view = w.chat.runs.queue.view
    assert not view.isVisible()

    for text in ("queued one", "queued two"):
        driver.send(text, w)  # Enter while the reply streams: queued
    driver.until(lambda: queued(w, sid) == ["queued one", "queued two"] and view.isVisible())
    # The queue appeared under the toast: the toast moved up, above it.
    driver.until(lambda: not w.toast.geometry().intersects(_rect(view, w)))
    assert w.toast.isVisible()
    assert w.toast.geometry().bottom() < _rect(view, w).top()

    w.undo.notice("Shown while the queue is there.")
    driver.until(lambda: w.toast.message == "Shown while the queue is there.")
    assert not w.toast.geometry().intersects(_rect(view, w))
    assert not w.toast.geometry().intersects(_rect(w.composer_bar, w))
    w.window_commands.stop_run()
    driver.settle(w)

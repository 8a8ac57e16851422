"""A status-bar message too long for one line is shown whole (wrapped), not cut off."""

from __future__ import annotations

from typing import Any

LONG = ("This chat is being compacted: your message stays here; send it when that is done. "
        "If it takes long, another program may hold sessions.db: close the other taker.")


def test_a_long_refusal_wraps_and_is_the_tooltip(driver: Any) -> None:
    w = driver.open()
    w.resize(600, 760)
    bar = w.statusBar()
    driver.qtbot.wait(50)
    one_line = bar.height()
    bar.showMessage(LONG, 8_000)
    driver.until(lambda: bar.height() > one_line * 1.5
                 and bar.geometry().bottom() < w.height() and bar.y() < w.height() - one_line * 1.5)
    assert bar.wraps() and bar.toolTip() == LONG
    room = bar.width() - 12
    lines = bar.fontMetrics().boundingRect(0, 0, room, 10_000, 0x1000, LONG).height()
    assert bar.height() >= lines  # every line fits: the end ("taker.") is shown
    bar.showMessage("Saved.", 8_000)
    driver.until(lambda: bar.height() <= one_line + 1)
    assert not bar.wraps()

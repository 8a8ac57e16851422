"""A message stopped (Esc) before any reply came says so after a restart too: the grey
note "Stopped before any reply came…" with Retry, not the red "Not sent" of a message a
crash or a quit left (real window, real sessions.db, real SDK against the fake server)."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt

from parley.gui.chat.run_events import STOPPED_BEFORE_REPLY
from tests.gui.transcript_reading import error_text, notice_text


def test_a_message_stopped_before_any_reply_says_so_after_a_restart(driver: Any) -> None:
    w = driver.configured()
    driver.fake.fail("hang", seconds=30)  # no reply comes: Esc stops the wait
    driver.send("Plan a trip to Lisbon", w)
    driver.until(lambda: w.composer_bar.busy and w.chat.session_id is not None
                 and driver.fake.model_requests, timeout=10)
    sid = w.chat.session_id
    driver.qtbot.keyClick(w.composer, Qt.Key.Key_Escape)
    driver.until(lambda: not w.chat.runs.running(sid) and w.tasks.pending == 0, timeout=10)
    assert notice_text(w.transcript) == STOPPED_BEFORE_REPLY
    driver.fake.reset()  # the server lets the stopped request go
    driver.close(w)

    w = driver.open()
    driver.until(lambda: w.chat.session_id == sid and w.transcript.last_turn() is not None
                 and w.tasks.pending == 0)
    assert error_text(w.transcript) is None
    assert notice_text(w.transcript) == STOPPED_BEFORE_REPLY
    assert w.transcript.error_bar.retry_button.text() == "Retry"

    driver.fake.script("Lisbon in three days.")  # its Retry sends it
    driver.qtbot.mouseClick(w.transcript.error_bar.retry_button, Qt.MouseButton.LeftButton)
    driver.until(lambda: driver.last_text(w) == "Lisbon in three days."
                 and w.tasks.pending == 0, timeout=10)

"""Esc soon after Enter, and a queued line's text (fresh-user trial findings 3 and 6,
session 14).

Finding 3 (a): Enter then Esc 50 ms later stopped the run before its request, silently:
the message saved, no reply, no "Stopped" mark, no Retry (only Ctrl+R, unsaid, sent it).
(b): a long message sent, a second queued behind it, then Esc meant to pause the queue
(as the README says: Esc in the empty box pauses the queue) stopped the first message's
run before its request, and the queue bar still said "Queued".
Finding 6: a short queued message showed cut to its first word ("SECOND …", "QUEUED …") with
plenty of room: its line was cut to the width of the list before the list was laid out (100
pixels, never shown), and nothing cut it again (a chat opened with its queue, at start).
"""

from __future__ import annotations

from typing import Any

import pytest
from PySide6.QtCore import QEvent, QObject, Qt

from parley.gui.chat.queue_view import PAUSED
from tests.gui.helpers import type_and_enter
from tests.gui.queue_helpers import SLOW, queued, stream_slowly, user_texts

pytestmark = pytest.mark.timeout(120)



def test_esc_right_after_enter_leaves_a_stopped_note_with_retry_that_sends_it(
        driver: Any, problems: list[str]) -> None:
    w = driver.configured()
    driver.send("hello", w, wait=True)
    sid = w.chat.session_id
    asked = len(driver.fake.model_requests)
    w.composer.setFocus()
    type_and_enter(driver, w, "one")
    driver.qtbot.keyClick(w.composer, Qt.Key.Key_Escape)  # at once
    driver.until(lambda: not w.chat.runs.running(sid) and w.tasks.pending == 0, timeout=30)
    assert len(driver.fake.model_requests) == asked  # stopped before its request
    bar = w.transcript.error_bar
    driver.until(lambda: bar.isVisible(), timeout=5)  # it says so, under the message
    assert bar.message.startswith("Stopped")
    assert bar.retry_button.isVisible() and bar.retry_button.text() == "Retry"
    driver.fake.script("here it is")
    driver.qtbot.mouseClick(bar.retry_button, Qt.MouseButton.LeftButton)
    driver.until(lambda: not w.chat.runs.running(sid) and w.tasks.pending == 0
                 and not w.composer_bar.busy, timeout=30)
    turns = driver.run(w.store.get_turns(sid))
    assert [t.role for t in turns] == ["user", "assistant", "user", "assistant"]
    assert turns[-1].text() == "here it is" and not turns[-1].aborted
    assert user_texts(driver, w, sid) == ["hello", "one"]  # sent again, not saved twice
    assert len(driver.fake.model_requests) == asked + 1
    assert not bar.isVisible() and problems == []


def test_esc_with_a_message_just_queued_pauses_the_queue_and_the_reply_completes(
        driver: Any, problems: list[str]) -> None:
    w = driver.configured()
    driver.send("hello", w, wait=True)
    sid = w.chat.session_id
    asked = len(driver.fake.model_requests)
    driver.fake.script(SLOW, token_delay_ms=10, chunk_size=5)
    w.composer.setFocus()
    type_and_enter(driver, w, "a long answer please")
    type_and_enter(driver, w, "ESC-QUEUED msg")  # queued behind it
    driver.qtbot.keyClick(w.composer, Qt.Key.Key_Escape)  # meant: pause the queue
    driver.until(lambda: w.chat.runs.queue.view.isVisible(), timeout=15)
    assert w.chat.runs.queue.view.heading.text() == PAUSED
    assert w.composer_bar.busy  # the reply goes on
    driver.until(lambda: not w.chat.runs.running(sid) and w.tasks.pending == 0, timeout=60)
    turns = driver.run(w.store.get_turns(sid))
    assert [t.role for t in turns] == ["user", "assistant", "user", "assistant"]
    assert turns[-1].text() == SLOW and not turns[-1].aborted  # the reply completed
    assert len(driver.fake.model_requests) == asked + 1
    assert queued(w, sid) == ["ESC-QUEUED msg"]  # waiting, paused, as Esc asked
    assert w.chat.runs.queue.view.heading.text() == PAUSED
    assert problems == []


class _Painted(QObject):
    """Records the first line's text each time the queue's list is painted."""

    def __init__(self, lines: Any) -> None:
        super().__init__()
        self.lines, self.texts = lines, []

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 (Qt name)
        if event.type() == QEvent.Type.Paint and self.lines.count():
            self.texts.append(self.lines.item(0).text())
        return False


def test_a_short_queued_message_shows_whole_from_its_first_paint(driver: Any) -> None:
    w = driver.configured()
    sid = stream_slowly(driver, w, "a question")
    lines = w.chat.runs.queue.view.lines
    painted = _Painted(lines)
    lines.viewport().installEventFilter(painted)
    driver.send("SECOND msg", w)
    driver.until(lambda: queued(w, sid) == ["SECOND msg"])
    driver.until(lambda: lines.isVisible() and bool(painted.texts))
    driver.qtbot.wait(50)  # laid out
    assert lines.item(0).text() == "1.  SECOND msg"
    assert set(painted.texts) == {"1.  SECOND msg"}  # never shown cut ("1.  SECOND …")
    lines.viewport().removeEventFilter(painted)
    driver.qtbot.keyClick(w.composer, Qt.Key.Key_Escape)  # pause
    driver.qtbot.keyClick(w.composer, Qt.Key.Key_Escape)  # stop the reply
    driver.settle(w)



def test_a_queue_shown_at_start_shows_its_short_lines_whole(driver: Any) -> None:
    w = driver.configured()
    sid = stream_slowly(driver, w, "before closing")
    driver.send("QUEUED before kill", w)
    driver.until(lambda: queued(w, sid) == ["QUEUED before kill"])
    driver.close(w)  # quit while the reply streams: the queue is kept

    w = driver.open()
    driver.until(lambda: w.chat.session_id == sid and queued(w, sid) == ["QUEUED before kill"],
                 timeout=20)
    lines = w.chat.runs.queue.view.lines
    driver.until(lambda: lines.isVisible())
    driver.qtbot.wait(50)  # laid out
    assert lines.item(0).text() == "1.  QUEUED before kill"

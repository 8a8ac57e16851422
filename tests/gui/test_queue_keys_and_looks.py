"""The queue bar from a person's side (trial findings Q8, Q9, Q10): the hint under the
box says what Esc does, a chat deleted with a queue says so and Undo brings it back,
and a very long queued message is cut to the bar's width, not scrolled sideways.
"""

from __future__ import annotations

from typing import Any

import pytest
from PySide6.QtCore import Qt

from parley.gui import dialogs
from parley.gui.chat.queue_view import PAUSED
from tests.gui.queue_helpers import queued, stream_slowly, user_texts

pytestmark = pytest.mark.timeout(120)


def test_the_hint_says_esc_pauses_the_queue_then_stops_the_reply(driver: Any) -> None:
    w = driver.configured()
    hint = w.composer_bar.hint
    sid = stream_slowly(driver, w, "a long answer please")
    assert hint.text().endswith("Esc to stop")
    driver.send("then this", w)
    driver.until(lambda: queued(w, sid) == ["then this"])
    assert hint.text().endswith("Esc to pause the queue")
    driver.qtbot.keyClicks(w.composer, "x")  # with text in the box Esc stops the reply
    assert hint.text().endswith("Esc to stop")
    driver.qtbot.keyClick(w.composer, Qt.Key.Key_Backspace)
    assert hint.text().endswith("Esc to pause the queue")
    driver.qtbot.keyClick(w.composer, Qt.Key.Key_Escape)  # as the hint said
    assert w.chat.runs.queue.view.heading.text() == PAUSED and w.composer_bar.busy
    assert hint.text().endswith("Esc to stop")
    driver.qtbot.keyClick(w.composer, Qt.Key.Key_Escape)  # as the hint says now
    driver.until(lambda: not w.composer_bar.busy and w.tasks.pending == 0, timeout=20)
    assert queued(w, sid) == ["then this"]  # still waiting, paused


def test_deleting_a_chat_with_a_queue_says_so_and_undo_brings_it_back(
        driver: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    w = driver.configured()
    sid = stream_slowly(driver, w, "a question")
    for text in ("one more", "and another"):
        driver.send(text, w)
    driver.until(lambda: queued(w, sid) == ["one more", "and another"])
    asked: list[str] = []

    def confirm(parent: Any, title: str, text: str, **_: Any) -> bool:
        asked.append(text)
        return True

    monkeypatch.setattr(dialogs, "confirm", confirm)
    w.window_commands.delete_current_session()
    assert "2 queued messages" in asked[0]
    driver.until(lambda: not w.sidebar.model.has(sid) and w.undo.pending, timeout=20)
    driver.qtbot.mouseClick(w.toast.undo_button, Qt.MouseButton.LeftButton)
    driver.until(lambda: w.session_id == sid and w.chat.runs.queue.view.isVisible(), timeout=20)
    assert queued(w, sid) == ["one more", "and another"]
    assert [m.text for m in driver.run(w.chat.store.queued_messages(sid))] == [
        "one more", "and another"]
    assert w.chat.runs.queue.view.heading.text() == PAUSED  # nothing sent meanwhile
    assert not w.chat.runs.running(sid)


def test_a_very_long_queued_message_is_cut_to_the_width(driver: Any) -> None:
    w = driver.configured()
    sid = stream_slowly(driver, w, "a question")
    long = "word " * 400
    w.composer.insertPlainText(long)  # pasted
    driver.qtbot.keyClick(w.composer, Qt.Key.Key_Return)
    driver.until(lambda: len(queued(w, sid)) == 1)
    driver.qtbot.keyClick(w.composer, Qt.Key.Key_Escape)  # paused: it stays while we look
    lines = w.chat.runs.queue.view.lines
    driver.until(lambda: lines.isVisible())
    driver.qtbot.wait(50)  # laid out
    shown = lines.item(0).text()
    assert shown.startswith("1.  word word") and shown.endswith("…")
    assert lines.fontMetrics().horizontalAdvance(shown) <= lines.viewport().width()
    assert not lines.horizontalScrollBar().isVisible()
    assert lines.item(0).toolTip().startswith(long[:100])
    driver.qtbot.keyClick(w.composer, Qt.Key.Key_Escape)  # stop the reply
    driver.settle(w)


def test_alt_shift_p_pauses_and_alt_shift_q_sends_the_queue(driver: Any) -> None:
    w = driver.configured()
    sid = stream_slowly(driver, w, "a question")
    driver.send("queued", w)
    driver.until(lambda: queued(w, sid) == ["queued"])
    shift_alt = Qt.KeyboardModifier.AltModifier | Qt.KeyboardModifier.ShiftModifier
    driver.qtbot.keyClick(w.composer, Qt.Key.Key_P, shift_alt)
    assert w.chat.runs.queue.view.heading.text() == PAUSED
    driver.until(lambda: not w.composer_bar.busy and w.tasks.pending == 0, timeout=40)
    assert queued(w, sid) == ["queued"]
    driver.qtbot.keyClick(w.composer, Qt.Key.Key_Q, shift_alt)
    driver.until(lambda: user_texts(driver, w, sid) == ["a question", "queued"], timeout=20)
    driver.settle(w)

"""Messages sent while a reply streams wait in a queue under it, and go in order.

Driven like a person: typing and Enter in the message box, Up to edit the last queued
message, Alt+Q then Delete to take one back, Esc to pause, Enter to send on, against
the fake provider server (which echoes a message when no reply is scripted).
"""

from __future__ import annotations

from typing import Any

import pytest
from PySide6.QtCore import Qt

from parley.gui.chat.queue_view import GOING, PAUSED, RESTORED

pytestmark = pytest.mark.timeout(120)

SLOW = "slow " * 100  # 250 chunks of 2 characters, 20 ms apart: about 5 s of streaming


def user_texts(driver: Any, w: Any, sid: str) -> list[str]:
    turns = driver.run(w.chat.store.history(sid))
    return [t.text() for t in turns if t.role == "user"]


def queued(w: Any, sid: str) -> list[str]:
    return [m.text for m in w.chat.runs.queue.messages(sid)]


def stream_slowly(driver: Any, w: Any, text: str) -> str:
    """Send ``text`` with a slow reply scripted; return the chat once its reply streams."""
    driver.fake.script(SLOW, token_delay_ms=20, chunk_size=2)
    driver.send(text, w)
    driver.until(lambda: w.composer_bar.busy and bool(w.chat.partial), timeout=15)
    sid = w.chat.session_id
    assert sid is not None
    return str(sid)


def test_three_queued_go_in_order_one_taken_back_one_edited(driver: Any) -> None:
    w = driver.configured()
    sid = stream_slowly(driver, w, "first question")
    for text in ("queued one", "queued two", "queued three"):
        driver.send(text, w)  # Enter while the reply streams: queued, not refused
    driver.until(lambda: queued(w, sid) == ["queued one", "queued two", "queued three"])
    view = w.chat.runs.queue.view
    assert view.isVisible() and view.heading.text() == GOING
    assert view.texts() == ["1.  queued one", "2.  queued two", "3.  queued three"]
    assert w.composer.text() == ""
    saved = driver.run(w.chat.store.queued_messages(sid))
    assert [m.text for m in saved] == ["queued one", "queued two", "queued three"]

    # Up in the empty box: the last queued message is edited there, in its place.
    driver.qtbot.keyClick(w.composer, Qt.Key.Key_Up)
    assert w.composer.text() == "queued three" and w.composer_bar.banner.isVisible()
    driver.qtbot.keyClicks(w.composer, ", edited")
    driver.qtbot.keyClick(w.composer, Qt.Key.Key_Return)
    assert queued(w, sid) == ["queued one", "queued two", "queued three, edited"]
    assert w.composer.text() == "" and not w.composer_bar.banner.isVisible()

    # Alt+Q goes to the queue (its last line), Up selects the second, Delete takes it back.
    driver.qtbot.keyClick(w.composer, Qt.Key.Key_Q, Qt.KeyboardModifier.AltModifier)
    assert view.lines.hasFocus()
    driver.qtbot.keyClick(view.lines, Qt.Key.Key_Up)
    driver.qtbot.keyClick(view.lines, Qt.Key.Key_Delete)
    assert queued(w, sid) == ["queued one", "queued three, edited"]

    # The reply ends and is saved: the queue goes, one message per saved reply.
    driver.until(lambda: user_texts(driver, w, sid)[-1:] == ["queued three, edited"]
                 and not w.composer_bar.busy and w.tasks.pending == 0, timeout=40)
    assert user_texts(driver, w, sid) == ["first question", "queued one", "queued three, edited"]
    turns = driver.run(w.chat.store.history(sid))
    assert [t.role for t in turns] == ["user", "assistant"] * 3
    assert turns[-1].text() == "You said: queued three, edited"  # the fake echoes it
    assert not view.isVisible()
    assert driver.run(w.chat.store.queued_sessions()) == {}


def test_esc_pauses_the_queue_and_enter_sends_it_on(driver: Any) -> None:
    w = driver.configured()
    sid = stream_slowly(driver, w, "a long answer please")
    driver.send("then this", w)
    driver.until(lambda: queued(w, sid) == ["then this"])
    w.composer.setFocus()
    driver.qtbot.keyClick(w.composer, Qt.Key.Key_Escape)  # pauses; the reply goes on
    view = w.chat.runs.queue.view
    assert view.heading.text() == PAUSED and w.composer_bar.busy
    driver.until(lambda: not w.composer_bar.busy and w.tasks.pending == 0, timeout=40)
    turns = driver.run(w.chat.store.history(sid))
    assert not turns[-1].aborted and turns[-1].role == "assistant"
    assert user_texts(driver, w, sid) == ["a long answer please"]  # held, not sent
    assert queued(w, sid) == ["then this"]
    driver.qtbot.keyClick(w.composer, Qt.Key.Key_Return)  # Enter in the empty box: on
    driver.until(lambda: user_texts(driver, w, sid) == ["a long answer please", "then this"],
                 timeout=20)
    driver.settle(w)
    assert queued(w, sid) == [] and not view.isVisible()


def test_two_chats_streaming_at_once_each_keep_their_order(driver: Any) -> None:
    w = driver.configured()
    first = stream_slowly(driver, w, "chat one, first")
    for text in ("chat one, second", "chat one, third"):
        driver.send(text, w)
    driver.until(lambda: len(queued(w, first)) == 2)
    driver.qtbot.keyClick(w.composer, Qt.Key.Key_N, Qt.KeyboardModifier.ControlModifier)
    driver.until(lambda: w.chat.session_id is None and not w.chat.runs.queue.view.isVisible())
    second = stream_slowly(driver, w, "chat two, first")
    assert second != first and first in w.chat.runs.active
    for text in ("chat two, second", "chat two, third"):
        driver.send(text, w)
    driver.until(lambda: len(queued(w, second)) == 2)
    assert w.chat.runs.queue.view.texts() == ["1.  chat two, second", "2.  chat two, third"]
    driver.until(lambda: len(user_texts(driver, w, first)) == 3
                 and len(user_texts(driver, w, second)) == 3, timeout=60)
    driver.settle(w)
    driver.until(lambda: not w.chat.runs.active, timeout=20)
    assert user_texts(driver, w, first) == ["chat one, first", "chat one, second",
                                            "chat one, third"]
    assert user_texts(driver, w, second) == ["chat two, first", "chat two, second",
                                             "chat two, third"]


def test_after_a_restart_the_queue_waits_and_asks(driver: Any) -> None:
    w = driver.configured()
    sid = stream_slowly(driver, w, "before closing")
    for text in ("kept one", "kept two"):
        driver.send(text, w)
    driver.until(lambda: len(queued(w, sid)) == 2)
    driver.close(w)  # quit while the reply streams: it is stopped, the queue kept

    w = driver.open()
    driver.until(lambda: w.chat.session_id == sid and queued(w, sid) == ["kept one", "kept two"],
                 timeout=20)
    view = w.chat.runs.queue.view
    assert view.isVisible() and view.heading.text() == RESTORED
    assert view.send_button.isVisible()
    asked = len(driver.fake.model_requests)
    driver.settle(w)
    assert len(driver.fake.model_requests) == asked  # nothing sent by itself
    assert user_texts(driver, w, sid) == ["before closing"]
    driver.qtbot.mouseClick(view.send_button, Qt.MouseButton.LeftButton)  # "send them now?"
    driver.until(lambda: user_texts(driver, w, sid) == ["before closing", "kept one",
                                                        "kept two"], timeout=30)
    driver.settle(w)
    assert driver.run(w.chat.store.queued_sessions()) == {}


def test_leaving_the_chat_while_editing_a_queued_message_keeps_it_as_it_was(driver: Any) -> None:
    w = driver.configured()
    sid = stream_slowly(driver, w, "a question")
    driver.send("queued, then edited", w)
    driver.until(lambda: queued(w, sid) == ["queued, then edited"])
    w.composer.setFocus()
    driver.qtbot.keyClick(w.composer, Qt.Key.Key_Escape)  # paused: it waits while we look
    driver.qtbot.keyClick(w.composer, Qt.Key.Key_Up)
    driver.qtbot.keyClicks(w.composer, " and changed")
    driver.qtbot.keyClick(w.composer, Qt.Key.Key_N, Qt.KeyboardModifier.ControlModifier)
    driver.until(lambda: w.chat.session_id is None)
    assert w.composer.text() == "" and not w.composer_bar.banner.isVisible()
    driver.qtbot.keyClick(w.composer, Qt.Key.Key_1, Qt.KeyboardModifier.ControlModifier)
    driver.until(lambda: w.chat.session_id == sid and w.tasks.pending <= 1)
    driver.until(lambda: w.chat.runs.queue.view.isVisible())
    assert w.composer.text() == ""  # not left behind as the chat's draft
    assert queued(w, sid) == ["queued, then edited"]
    assert [m.text for m in driver.run(w.chat.store.queued_messages(sid))] == [
        "queued, then edited"]
    driver.qtbot.keyClick(w.composer, Qt.Key.Key_Escape)  # stop the reply
    driver.settle(w)


def test_at_start_the_status_bar_names_other_chats_with_a_queue(driver: Any) -> None:
    w = driver.configured()
    first = stream_slowly(driver, w, "a slow one")
    driver.send("waits in the first chat", w)
    driver.until(lambda: queued(w, first) == ["waits in the first chat"])
    driver.qtbot.keyClick(w.composer, Qt.Key.Key_N, Qt.KeyboardModifier.ControlModifier)
    driver.until(lambda: w.chat.session_id is None)
    driver.fake.script("Hello.")
    driver.send("a quick one", w)
    driver.until(lambda: w.chat.session_id not in (None, first)
                 and driver.last_text(w) == "Hello.", timeout=20)
    second = w.chat.session_id
    driver.close(w)

    w = driver.open()
    driver.until(lambda: w.chat.session_id == second
                 and "wait in 1 other chat" in w.statusBar().currentMessage(), timeout=20)
    assert not w.chat.runs.queue.view.isVisible()  # the chat shown has none
    w.chat.open_session(first)
    driver.until(lambda: queued(w, first) == ["waits in the first chat"])
    assert w.chat.runs.queue.view.heading.text() == RESTORED

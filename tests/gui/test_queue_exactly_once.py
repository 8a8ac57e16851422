"""A queued message is sent exactly once, and nothing typed later overtakes the queue.

Trial finding Q1: Enter in the empty box sent the paused queue, and "K1" typed and
sent at once (before the queued message's run had started) went directly, ahead of
the rest; after a crash the message already sent was still queued and went again.
Driven like a person, against the fake provider server (it echoes what it is sent).
"""

from __future__ import annotations

from typing import Any

import pytest
from PySide6.QtCore import Qt

from parley.core.content import TextBlock, Turn
from parley.gui.chat.queue_view import RESTORED
from tests.gui.queue_helpers import queued, stream_slowly, user_texts

pytestmark = pytest.mark.timeout(120)


def roles(driver: Any, w: Any, sid: str) -> list[str]:
    return [t.role for t in driver.run(w.chat.store.history(sid))]


def type_and_enter(driver: Any, w: Any, text: str) -> None:
    """Keys only: no event loop turn in between (a fast typist, or a paste and Enter)."""
    driver.qtbot.keyClicks(w.composer, text)
    driver.qtbot.keyClick(w.composer, Qt.Key.Key_Return)


def test_enter_right_after_sending_the_queue_goes_behind_it(driver: Any) -> None:
    w = driver.configured()
    sid = stream_slowly(driver, w, "first")
    driver.send("then this", w)
    driver.until(lambda: queued(w, sid) == ["then this"])
    w.composer.setFocus()
    driver.qtbot.keyClick(w.composer, Qt.Key.Key_Escape)  # paused
    driver.until(lambda: not w.composer_bar.busy and w.tasks.pending == 0, timeout=40)
    driver.qtbot.keyClick(w.composer, Qt.Key.Key_Return)  # the queue goes on...
    type_and_enter(driver, w, "K1")  # ...and this, at once, before its run has started
    assert w.composer.text() == ""
    driver.until(lambda: user_texts(driver, w, sid) == ["first", "then this", "K1"]
                 and not w.chat.runs.running(sid) and w.tasks.pending == 0, timeout=30)
    assert roles(driver, w, sid) == ["user", "assistant"] * 3  # each answered, in order
    assert driver.run(w.chat.store.queued_sessions()) == {}


def test_after_a_crash_a_sent_message_is_not_queued_again(driver: Any) -> None:
    w = driver.configured()
    sid = stream_slowly(driver, w, "before closing")
    driver.send("R2", w)
    driver.until(lambda: queued(w, sid) == ["R2"])
    # What a SIGKILL left in the trial: R2's user turn saved (as the turn of its queued
    # id), its queued row not deleted yet.
    r2 = driver.run(w.chat.store.queued_messages(sid))[0]
    driver.close(w)
    w = driver.open()
    driver.until(lambda: w.chat.session_id == sid and queued(w, sid) == ["R2"], timeout=20)
    driver.run(w.chat.store.append_turn(sid, Turn("user", [TextBlock("R2")], id=r2.id)))
    driver.close(w)

    w = driver.open()
    driver.until(lambda: w.chat.session_id == sid and w.tasks.pending == 0, timeout=20)
    driver.settle(w)
    assert queued(w, sid) == [] and not w.chat.runs.queue.view.isVisible()
    assert user_texts(driver, w, sid) == ["before closing", "R2"]


def test_after_a_restart_enter_at_once_goes_behind_the_queue_sent(driver: Any) -> None:
    w = driver.configured()
    sid = stream_slowly(driver, w, "before closing")
    driver.send("R2", w)
    driver.until(lambda: queued(w, sid) == ["R2"])
    driver.close(w)  # quit while it streams: the queue is kept

    w = driver.open()
    driver.until(lambda: w.chat.session_id == sid and queued(w, sid) == ["R2"], timeout=20)
    assert w.chat.runs.queue.view.heading.text() == RESTORED
    w.composer.setFocus()
    type_and_enter(driver, w, "typed after")  # behind the restored queue
    driver.until(lambda: queued(w, sid) == ["R2", "typed after"])
    driver.qtbot.keyClick(w.composer, Qt.Key.Key_Return)  # "send them now?": yes
    type_and_enter(driver, w, "K1")  # at once
    driver.until(lambda: len(user_texts(driver, w, sid)) == 4
                 and not w.chat.runs.running(sid) and w.tasks.pending == 0, timeout=40)
    assert user_texts(driver, w, sid) == ["before closing", "R2", "typed after", "K1"]
    assert roles(driver, w, sid)[-6:] == ["user", "assistant"] * 3
    driver.close(w)

    w = driver.open()  # nothing is queued again, nothing sent twice
    driver.until(lambda: w.chat.session_id == sid and w.tasks.pending == 0, timeout=20)
    driver.settle(w)
    assert queued(w, sid) == []
    assert user_texts(driver, w, sid) == ["before closing", "R2", "typed after", "K1"]

"""A reply cut off by a failure (the connection broke) is marked as cut off, with why,
not as stopped; the mark comes from what is stored, so a restart shows it the same.
Retry after it keeps the cut reply as version 1 of the answer (‹ 1/2 ›), as Regenerate
keeps the answer it replaces. After a restart the cut reply offers the same buttons as
before it: Continue on the reply and Retry under it. Esc still says "Stopped"
(test_restart_after_kill), with no Retry under it after a restart.

Real window, real sessions.db, real Anthropic SDK against the fake provider server.
"""

from __future__ import annotations

from typing import Any

import pytest
from PySide6.QtCore import Qt

from parley.gui.transcript.specs import BRANCH_NEXT_HREF, BRANCH_PREV_HREF, STOPPED_MARK
from tests.gui.answers import branches_shown, click_anchor, until_answered
from tests.gui.transcript_reading import error_text, text_of_last

pytestmark = pytest.mark.timeout(90)
LEFT = Qt.MouseButton.LeftButton
CUT_MARK = "Cut off — connection lost · reply incomplete"
STORY = "Once upon a time, in a land far far away, there lived a fox"


def _cut_reply(driver: Any) -> Any:
    """A window whose first reply the connection cut after a few words."""
    w = driver.configured()
    driver.fake.fail("cut", reply=STORY, after_chars=20)
    driver.send("Tell me a story", w)
    driver.until(lambda: error_text(w.transcript) and w.tasks.pending == 0
                 and not w.composer_bar.busy, timeout=10)
    return w


def _reopened(driver: Any, w: Any) -> Any:
    """``w`` closed, Parley started again, and ``w``'s chat opened in the new window."""
    sid = w.chat.session_id
    driver.close(w)
    again = driver.open()
    again.chat.open_session(sid)
    driver.until(lambda: again.session_id == sid and again.transcript.last_turn() is not None
                 and again.tasks.pending == 0)
    return again


def test_a_reply_cut_by_the_connection_says_so_after_a_restart_too(driver: Any) -> None:
    w = _cut_reply(driver)
    shown = text_of_last(w.transcript)
    assert CUT_MARK in shown and "Continue" in shown and STOPPED_MARK not in shown
    assert w.transcript.error_bar.retry_button.isVisible()  # Retry offered, as before
    assert "broke off in the middle of the reply" in (error_text(w.transcript) or "")

    again = _reopened(driver, w)
    shown = text_of_last(again.transcript)
    assert CUT_MARK in shown and "Continue" in shown and STOPPED_MARK not in shown
    bar = again.transcript.error_bar
    driver.until(lambda: bar.retry_button.isVisible())  # the same buttons as before
    assert bar.retry_button.text() == "Retry"
    assert "cut off — connection lost" in (error_text(again.transcript) or "")


def test_retry_after_a_restart_keeps_the_cut_reply_as_version_one(driver: Any) -> None:
    w = _cut_reply(driver)
    cut = w.chat.turns[-1]
    again = _reopened(driver, w)
    bar = again.transcript.error_bar
    driver.until(lambda: bar.retry_button.isVisible())

    driver.fake.script("A whole story.")
    driver.qtbot.mouseClick(bar.retry_button, LEFT)
    until_answered(driver, again, "A whole story.")
    driver.until(lambda: branches_shown(again) == [None, (2, 2)] and again.tasks.pending == 0)
    assert error_text(again.transcript) is None
    new = again.chat.turns[-1]
    click_anchor(driver, again, new.id, BRANCH_PREV_HREF)  # ‹: the cut reply, as it was
    driver.until(lambda: again.chat.turns[-1].id == cut.id and again.tasks.pending == 0)
    assert CUT_MARK in text_of_last(again.transcript)


def _stopped_with_esc(driver: Any) -> Any:
    """A window whose reply to "Tell me a story" was stopped with Esc as it came."""
    w = driver.configured()
    driver.fake.script("slow " * 400, token_delay_ms=20, chunk_size=2)
    driver.send("Tell me a story", w)
    driver.until(lambda: w.composer_bar.busy and w.chat.partial, timeout=10)
    driver.qtbot.keyClick(w.composer, Qt.Key.Key_Escape)
    driver.until(lambda: not w.composer_bar.busy and w.tasks.pending == 0, timeout=10)
    return w


def test_a_stopped_reply_offers_no_retry_after_a_restart(driver: Any) -> None:
    w = _stopped_with_esc(driver)

    again = _reopened(driver, w)
    driver.settle(again)
    assert STOPPED_MARK in text_of_last(again.transcript) and "Continue" in text_of_last(
        again.transcript)
    assert error_text(again.transcript) is None  # nothing failed: no error, as before


def test_retry_after_a_cut_reply_keeps_it_as_version_one(driver: Any) -> None:
    w = _cut_reply(driver)
    sid = w.chat.session_id
    cut = w.chat.turns[-1]
    assert cut.aborted

    driver.fake.script("A whole story.")
    driver.qtbot.mouseClick(w.transcript.error_bar.retry_button, LEFT)  # Retry
    until_answered(driver, w, "A whole story.")
    driver.until(lambda: branches_shown(w) == [None, (2, 2)] and w.tasks.pending == 0)
    assert [t.text() for t in w.chat.turns] == ["Tell me a story", "A whole story."]
    assert "‹ › under the new one" in w.statusBar().currentMessage()

    new = w.chat.turns[-1]
    click_anchor(driver, w, new.id, BRANCH_PREV_HREF)  # ‹: the cut reply, as it was
    driver.until(lambda: w.chat.turns[-1].id == cut.id and w.tasks.pending == 0)
    assert branches_shown(w) == [None, (1, 2)]
    assert CUT_MARK in text_of_last(w.transcript)
    click_anchor(driver, w, cut.id, BRANCH_NEXT_HREF)  # ›: the retried one again
    driver.until(lambda: w.chat.turns[-1].id == new.id and w.tasks.pending == 0)
    stored = driver.run(w.store.get_turns(sid))
    assert [t.text() for t in stored] == ["Tell me a story", "A whole story."]


def test_retry_after_a_stopped_reply_keeps_it_too(driver: Any) -> None:
    w = _stopped_with_esc(driver)
    assert STOPPED_MARK in text_of_last(w.transcript)  # Esc: "Stopped", not "Cut off"

    driver.fake.script("Once upon a time.")
    assert w.window_commands.retry_run()
    until_answered(driver, w, "Once upon a time.")
    driver.until(lambda: branches_shown(w) == [None, (2, 2)] and w.tasks.pending == 0)

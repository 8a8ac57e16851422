"""The window never shows a reply as saved before it is in sessions.db.

A real window on a real file: the disk fills up (``PRAGMA max_page_count`` on
the store's own connection: SQLite's real SQLITE_FULL path) or another process
holds the write lock. The window says so in one bar, marks the reply "not saved
yet", holds new messages, shows a message waiting for the lock as "Saving…",
writes everything once the fault clears, and asks before quitting with
something unsaved (offering a rescue copy elsewhere).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from parley.core.store import Store
from parley.gui.composer.drafts import draft_key
from tests.core.faults import BIG, Locker, page_limit
from tests.gui.disk_full import answer_question, disk_full_reply, on_disk, saving_window
from tests.gui.transcript_reading import save_mark, text_of_last

pytestmark = pytest.mark.timeout(90)


def test_full_disk_reply_is_marked_not_saved_sending_is_held_and_all_is_written_later(
    driver, problems
):
    w = saving_window(driver)
    reply = disk_full_reply(driver, w)
    bar = w.chat.save_status.bar
    assert reply.text() == BIG
    assert save_mark(w.transcript, reply.id) == "unsaved"
    assert w.chat.turns[-1].text() == BIG  # shown whole…
    assert (BIG, False) not in on_disk(w, driver)  # …but not on disk yet: it says so
    assert "not saved yet: the disk is full" in bar.text()
    row = w.transcript.model.row_of(reply.id)
    shown = "".join(p.piece.doc.toPlainText()
                    for p in w.transcript.list_view.layout_of(row, fresh=True).pieces)
    assert "Not saved yet — Parley keeps trying" in shown and "Regenerate" not in shown
    sent = len(driver.fake.model_requests)

    driver.send("third question")  # held: stays in the box, nothing sent
    driver.until(lambda: w.tasks.pending == 0)
    assert w.composer.text() == "third question"
    assert "not saved yet" in w.statusBar().currentMessage()
    assert len(driver.fake.model_requests) == sent
    assert problems == []  # no dialog per failure: the bar says it

    driver.run(page_limit(w.store, None))  # space freed
    driver.until(lambda: not w.runner.saves.pending(), timeout=10)
    driver.until(lambda: bar.text() == "")
    assert save_mark(w.transcript, reply.id) is None
    shown = "".join(p.piece.doc.toPlainText()
                    for p in w.transcript.list_view.layout_of(row, fresh=True).pieces)
    assert "Not saved yet" not in shown and "Regenerate" in shown
    assert on_disk(w, driver)[-1] == (BIG, False)
    assert len(driver.fake.model_requests) == sent  # written, not asked again

    w.composer.clear()
    driver.fake.script("Third answer.")
    driver.send("third question", wait=True)
    assert on_disk(w, driver)[-2:] == [("third question", False), ("Third answer.", False)]


def test_reply_kept_in_memory_shows_whole_when_its_chat_is_opened_again(driver, problems):
    w = saving_window(driver)
    reply = disk_full_reply(driver, w)
    sid = w.chat.session_id
    driver.run(w.chat.opener.show_new_chat())
    driver.run(w.chat.opener.open(sid))  # noqa: SLF001 - the file holds a prefix at most
    assert w.chat.turns[-1].text() == BIG and text_of_last(w.transcript).startswith("Every")
    assert save_mark(w.transcript, reply.id) == "unsaved"
    driver.run(page_limit(w.store, None))
    driver.until(lambda: save_mark(w.transcript, reply.id) is None, timeout=10)


@pytest.mark.parametrize("new_chat", [False, True])
def test_message_waiting_for_a_locked_file_shows_as_saving(driver, problems, new_chat):
    w = saving_window(driver)
    driver.fake.script("First answer.")
    driver.send("first question", wait=True)
    if new_chat:  # its session row waits for the lock too
        driver.run(w.chat.opener.show_new_chat())
    locker = Locker(w.store.path)
    try:
        driver.fake.script("Second answer.")
        driver.send("held by the lock")
        assert w.composer.text() == ""  # it left the box…

        def shown_turns() -> list:
            return [t for t in w.transcript.model.transcript.turns
                    if t.text() == "held by the lock"]

        driver.until(lambda: len(shown_turns()) == 1, timeout=1)  # …and shows at once
        shown = shown_turns()
        driver.until(lambda: save_mark(w.transcript, shown[0].id) == "saving", timeout=3)
    finally:
        locker.release()
    driver.until(lambda: save_mark(w.transcript, shown[0].id) is None, timeout=10)
    driver.settle(w)
    assert on_disk(w, driver)[-2:] == [("held by the lock", False), ("Second answer.", False)]
    assert problems == []


def test_quit_with_a_reply_not_saved_asks_and_saves_a_rescue_copy_with_it(
    driver, problems, tmp_path: Path
):
    w = saving_window(driver)
    reply = disk_full_reply(driver, w)
    sid = w.chat.session_id
    w.qactions["app.quit"].trigger()
    text = answer_question(driver, w, "Keep Parley open")
    assert "Not saved yet: your last reply (the disk is full)" in text
    assert "rescue copy" in text
    driver.until(lambda: not w.quitting.closing)
    assert w.isVisible() and not w.quitting.closed
    assert w.runner.saves.holds(reply.id)

    copy = tmp_path / "elsewhere" / "rescued.db"
    copy.parent.mkdir()
    w.qactions["app.quit"].trigger()
    answer_question(driver, w, "Save a rescue copy…", save_as=copy)
    # closed once shut down (the store closed, the quit's backup made)
    driver.until(lambda: w.quitting.closed and not w.isVisible(), timeout=15)
    with Store.open(copy) as rescued:
        last = rescued.get_turns(sid)[-1]
        assert (last.id, last.text(), last.aborted) == (reply.id, BIG, False)


def test_message_that_meets_a_full_disk_goes_back_to_the_box_and_is_told_in_the_bar(
    driver, problems
):
    w = saving_window(driver)
    driver.fake.script("First answer.")
    driver.send("first question", wait=True)
    driver.settle(w)
    sent = len(driver.fake.model_requests)  # the answer, and the chat's title
    driver.run(page_limit(w.store, 0))  # not even the question fits now
    question = "a long question " * 2000
    w.composer.set_text(question)
    w.window_commands.send_from_composer()
    driver.until(lambda: w.tasks.pending == 0 and w.composer.text() == question, timeout=10)
    assert "Not saved: the disk is full" in w.chat.save_status.bar.text()
    assert "stays in the box" in w.chat.save_status.bar.text()
    assert problems == []  # the bar, not a dialog
    assert w.transcript.model.transcript.turns[-1].text() == "First answer."  # not shown
    assert on_disk(w, driver)[-1] == ("First answer.", False)
    assert len(driver.fake.model_requests) == sent  # never sent
    driver.run(page_limit(w.store, None))  # space freed: quitting has nothing to ask


def test_quit_with_unsent_text_the_disk_refused_asks_and_keeps_it_in_the_rescue_copy(
    driver, problems, tmp_path: Path
):
    w = saving_window(driver)
    driver.fake.script("First answer.")
    driver.send("first question", wait=True)
    sid = w.chat.session_id
    driver.settle(w)
    driver.run(page_limit(w.store, 0))
    draft = "unsent words " * 3000
    w.composer.set_text(draft)
    w.qactions["app.quit"].trigger()
    copy = tmp_path / "elsewhere" / "rescued.db"
    copy.parent.mkdir()
    text = answer_question(driver, w, "Save a rescue copy…", save_as=copy)
    assert "Not saved yet: your unsent text (the disk is full)" in text
    driver.until(lambda: w.quitting.closed and not w.isVisible(), timeout=15)
    with Store.open(copy) as rescued:
        assert rescued.get_state(draft_key(sid)) == draft
        assert [t.text() for t in rescued.get_turns(sid)] == ["first question", "First answer."]


def test_quit_again_after_keep_parley_open_on_a_failed_save_quits(driver, problems):
    """The question about unsent text the disk refused, answered "Keep Parley open": the
    window is active again, so the next Ctrl+Q (space freed) quits at once (no window
    was active after the question closed: Ctrl+Q did nothing until a click)."""
    from PySide6.QtCore import Qt
    from PySide6.QtWidgets import QApplication

    w = saving_window(driver)
    # A window an earlier test left shown would take the focus when the question closes
    # (the window then rightly leaves it there): this test is about Parley's window alone.
    for other in QApplication.topLevelWidgets():
        if other is not w and other.parentWidget() is None and other.isVisible():
            other.hide()
    w.activateWindow()
    driver.until(w.isActiveWindow)
    driver.fake.script("First answer.")
    driver.send("first question", wait=True)
    driver.settle(w)
    driver.run(page_limit(w.store, 0))
    w.composer.set_text("unsent words " * 3000)
    w.composer.setFocus()
    driver.qtbot.keyClick(w.composer, Qt.Key.Key_Q, Qt.KeyboardModifier.ControlModifier)
    answer_question(driver, w, "Keep Parley open")
    driver.until(lambda: not w.quitting.closing and w.isEnabled())
    driver.until(w.isActiveWindow, timeout=2)
    assert QApplication.focusWidget() is w.composer

    driver.run(page_limit(w.store, None))  # space freed
    driver.qtbot.keyClick(QApplication.focusWidget(), Qt.Key.Key_Q,
                          Qt.KeyboardModifier.ControlModifier)
    driver.until(lambda: w.quitting.closed and not w.isVisible(), timeout=15)

"""Parley killed while a sent message is being edited (before Enter): the next start
brings the edit back in edit mode, banner and all, so Enter makes a branch and not a
new message; when the message it edited is no longer on the path shown, the text
comes back as a plain draft and the status bar says why. The kill is played as
``test_restart_after_kill`` does: the file as it is at that moment becomes sessions.db.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt

from parley.gui.chat.edit import EDIT_BANNER, EDIT_NOT_SHOWN
from parley.gui.composer.drafts import draft_key
from tests.gui.damage import as_if_killed

pytestmark = pytest.mark.timeout(120)


def _answered(driver: Any, w: Any, text: str) -> None:
    driver.until(lambda: driver.last_text(w) == text and not w.composer_bar.busy
                 and w.tasks.pending == 0, timeout=10)


def _edit_last_then_kill(driver: Any, w: Any, home: Path, text: str) -> str:
    """Up, replace the box's text by ``text``, wait until it is in the file, kill;
    returns the id of the turn edited."""
    driver.qtbot.keyClick(w.composer, Qt.Key.Key_Up)
    editing = w.chat.editor.editing
    assert editing is not None
    w.composer.clear()
    driver.qtbot.keyClicks(w.composer, text)
    sid = w.chat.session_id
    driver.until(lambda: driver.run(w.store.get_state(draft_key(sid))) == {
        "text": text, "edits": editing.id}, timeout=10)
    as_if_killed(driver, w, home)
    return str(editing.id)


def test_an_edit_cut_off_by_a_kill_comes_back_as_an_edit(driver: Any, home: Path) -> None:
    w = driver.configured()
    driver.fake.script("An answer.")
    driver.send("the first wording", w, wait=True)
    sid = w.chat.session_id
    _edit_last_then_kill(driver, w, home, "the second wording")

    again = driver.open()  # start-up reopens the last chat
    driver.until(lambda: again.session_id == sid and again.tasks.pending == 0, timeout=10)
    assert again.composer.text() == "the second wording"
    assert again.chat.editor.editing is not None
    assert again.chat.editor.editing.text() == "the first wording"
    assert again.composer_bar.banner.isVisible()
    assert again.composer_bar.banner.text() == EDIT_BANNER

    driver.fake.script("A second answer.")
    driver.qtbot.keyClick(again.composer, Qt.Key.Key_Return)
    _answered(driver, again, "A second answer.")
    assert [t.text() for t in again.chat.turns] == ["the second wording", "A second answer."]
    assert again.transcript.branch_of(again.chat.turns[0].id) == (2, 2)  # ‹ 2/2 ›
    assert again.session_id == sid and again.composer.text() == ""
    assert driver.run(again.store.get_state(draft_key(sid))) is None


def test_switching_chats_keeps_the_edit_in_edit_mode(driver: Any) -> None:
    w = driver.configured()
    driver.fake.script("An answer.")
    driver.send("to be edited", w, wait=True)
    sid = w.chat.session_id
    driver.qtbot.keyClick(w.composer, Qt.Key.Key_Up)
    w.composer.clear()
    driver.qtbot.keyClicks(w.composer, "edited, then away")
    w.chat.new_session()
    driver.until(lambda: w.session_id is None and w.tasks.pending == 0, timeout=10)
    assert w.chat.editor.editing is None and w.composer.text() == ""
    w.chat.open_session(sid)
    driver.until(lambda: w.session_id == sid and w.tasks.pending == 0, timeout=10)
    assert w.composer.text() == "edited, then away"
    assert w.chat.editor.editing is not None and w.composer_bar.banner.isVisible()
    w.composer.setFocus()
    driver.qtbot.keyClick(w.composer, Qt.Key.Key_Escape)  # Esc: as before, the box empties
    assert w.chat.editor.editing is None and w.composer.text() == ""
    driver.until(lambda: driver.run(w.store.get_state(draft_key(sid))) is None, timeout=10)


def test_an_edit_of_a_message_on_another_branch_comes_back_as_a_plain_draft(
    driver: Any, home: Path,
) -> None:
    from parley.core.store.store import Store

    w = driver.configured()
    driver.fake.script("An answer.")
    driver.send("original", w, wait=True)
    sid = w.chat.session_id
    original = w.chat.turns[0].id
    w.transcript.editRequested.emit(original)  # a branch: ‹ 2/2 › on "edited once"
    w.composer.set_text("edited once")
    driver.fake.script("Another answer.")
    driver.qtbot.keyClick(w.composer, Qt.Key.Key_Return)
    _answered(driver, w, "Another answer.")
    _edit_last_then_kill(driver, w, home, "edited twice")
    with Store.open(w.store.path) as store:  # another branch chosen elsewhere
        store.show_branch(sid, original)

    again = driver.open()
    driver.until(lambda: again.session_id == sid and again.tasks.pending == 0, timeout=10)
    assert [t.text() for t in again.chat.turns][0] == "original"
    assert again.composer.text() == "edited twice"  # nothing lost
    assert again.chat.editor.editing is None and not again.composer_bar.banner.isVisible()
    assert again.statusBar().currentMessage() == EDIT_NOT_SHOWN
    driver.until(lambda: driver.run(again.store.get_state(draft_key(sid))) == "edited twice",
                 timeout=10)


def test_a_plain_draft_stored_by_an_older_parley_still_loads(driver: Any) -> None:
    w = driver.configured()
    driver.fake.script("An answer.")
    driver.send("a message", w, wait=True)
    sid = w.chat.session_id
    driver.close(w)
    from parley.core.store.store import Store

    with Store.open(w.store.path) as store:
        store.set_state(draft_key(sid), "typed before an update")

    again = driver.open()
    driver.until(lambda: again.session_id == sid and again.tasks.pending == 0, timeout=10)
    assert again.composer.text() == "typed before an update"
    assert again.chat.editor.editing is None and not again.composer_bar.banner.isVisible()


def test_an_edit_of_a_message_under_a_summary_card_stays_an_edit_after_switching(
        driver: Any) -> None:
    """Trial 15b: a message inside a compaction card (the card opened, its pencil), then
    another chat and back: the edit came back as a plain draft ("not shown"), and Enter
    sent it as a new last message. The message is read as a search hit is: still an edit."""
    from tests.gui.long_chats import rows

    w = driver.configured()
    for n in range(3):  # replies long enough that a summary makes the context smaller
        driver.fake.script(f"Reply {n}. " + "It goes on at some length. " * 12)
        driver.send(f"more {n}", w, wait=True)
    sid = w.chat.session_id
    first = next(t for t in driver.run(w.chat.store.history(sid)) if t.role == "user")
    driver.fake.script("<summary>The user said more 0 to 2; each was answered at some "
                       "length, and nothing else was said.</summary>")
    assert w.window_commands.compact_now() is True
    driver.until(lambda: rows(w)[0].kind == "card" and w.tasks.pending == 0, timeout=30)
    w.transcript.model.set_expanded(0, True)  # the card's turns are read as it opens
    driver.until(lambda: w.chat.state.holds(first.id), timeout=10)
    w.chat.editor.edit_message(first.id)
    assert w.chat.editor.editing is not None and w.chat.editor.editing.id == first.id
    driver.qtbot.keyClicks(w.composer, " and more")
    w.chat.new_session()
    driver.until(lambda: w.session_id is None and w.tasks.pending == 0, timeout=10)
    w.chat.open_session(sid)
    driver.until(lambda: w.session_id == sid and w.tasks.pending == 0, timeout=10)
    assert w.composer.text() == "more 0 and more"
    assert w.chat.editor.editing is not None and w.chat.editor.editing.id == first.id
    assert w.composer_bar.banner.isVisible()
    assert EDIT_NOT_SHOWN not in w.statusBar().currentMessage()

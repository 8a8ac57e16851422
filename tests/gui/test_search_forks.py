"""The search popup lists a message copied into forks once, in the chat where it was
written, with a quiet "also in N forks"; Enter opens that chat at the message; while
the original's delete can still be undone, a fork holding the message stands for it."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QTextDocument

from parley.core.content import TextBlock, Turn
from parley.gui.dialogs.search import hit_html

pytestmark = pytest.mark.timeout(60)


def _forked_chat(driver, w, forks: int):
    """A chat whose first message mentions Zanzibar, forked ``forks`` times after it."""
    s = driver.run(w.store.create_session(title="Trip planning"))
    texts = ["Let's plan the Zanzibar trip", "Sure, flights first.", "And the ferry?", "Hourly."]

    async def fill() -> list[Turn]:
        out = []
        for i, t in enumerate(texts):
            role = "user" if i % 2 == 0 else "assistant"
            out.append(await w.store.append_turn(s.id, Turn(role, [TextBlock(t)])))
        return out

    turns = driver.run(fill(), timeout=20)
    made = [driver.run(w.store.fork(s.id, turns[1 + 2 * (i % 2)].id)) for i in range(forks)]
    driver.run(w.chat.load_sidebar())
    return s.id, turns, made


def _search(driver, w, qtbot, text):
    assert w.window_commands.open_search()
    popup = w.search_popup
    popup.edit.clear()
    qtbot.keyClicks(popup.edit, text)
    driver.until(lambda: popup.search.settled)
    return popup


def _row_text(popup, row: int) -> str:
    doc = QTextDocument()
    doc.setHtml(hit_html(popup.model.item(row).data(Qt.ItemDataRole.UserRole + 1)))
    return doc.toPlainText()


def test_one_row_for_a_message_copied_into_forks_with_the_hint(driver, qtbot):
    w = driver.configured()
    sid, turns, forks = _forked_chat(driver, w, 3)
    w.chat.open_session(forks[-1].id)  # searching from inside a fork
    driver.until(lambda: w.session_id == forks[-1].id)
    popup = _search(driver, w, qtbot, "zanzibar")
    assert popup.model.rowCount() == 1
    [hit] = popup.hits
    assert (hit.session_id, hit.turn_id, hit.fork_copies) == (sid, turns[0].id, 3)
    assert "Trip planning · also in 3 forks" in " ".join(_row_text(popup, 0).split())
    label = popup.model.item(0).data(Qt.ItemDataRole.AccessibleTextRole)
    assert label.startswith("Trip planning (also in 3 forks): ")
    assert popup.status.text() == "1 match"
    assert not popup.results.grab().isNull()  # the row paints with its hint
    qtbot.keyClick(popup.edit, Qt.Key.Key_Return)  # opens the original at the message
    driver.until(lambda: w.session_id == sid and not popup.isVisible())
    driver.until(lambda: w.transcript.focused_turn_id() == turns[0].id)


def test_a_message_found_once_has_no_hint(driver, qtbot):
    w = driver.configured()
    _forked_chat(driver, w, 1)  # forked after the second message
    popup = _search(driver, w, qtbot, "hourly")  # the fourth: only in the original
    [hit] = popup.hits
    assert hit.fork_copies == 0
    assert "also in" not in _row_text(popup, 0)
    label = popup.model.item(0).data(Qt.ItemDataRole.AccessibleTextRole)
    assert label.startswith("Trip planning: ")


def test_while_the_originals_delete_can_be_undone_a_fork_stands_for_it(driver, qtbot):
    from parley.gui import dialogs

    w = driver.configured()
    sid, _turns, forks = _forked_chat(driver, w, 3)
    dialogs.answers.append(True)
    w.chat.organizer.delete_session(sid)
    driver.until(lambda: w.undo.pending)
    popup = _search(driver, w, qtbot, "zanzibar")
    [hit] = popup.hits
    assert hit.session_id == forks[0].id  # the oldest surviving copy
    assert hit.fork_copies == 2
    assert "also in 2 forks" in _row_text(popup, 0)

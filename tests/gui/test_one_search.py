"""One message search behind both entry points (the search popup, the command palette):
a message on a branch of its chat other than the one shown says "another branch" in
both (a regenerated reply's first answer had no label), and opening it from either
shows that branch with the message focused and its match highlighted.

Real window, real sessions.db, real Anthropic SDK against the fake provider server.
"""

from __future__ import annotations

from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QTextDocument

from parley.gui.commands.message_search import BRANCH_LABEL
from parley.gui.commands.palette import open_palette
from parley.gui.dialogs.search import HIT, hit_html

pytestmark = pytest.mark.timeout(90)


def _regenerated(driver: Any) -> tuple[Any, str, str, str]:
    """A chat whose reply was regenerated (the new answer shown), then another chat
    open; returns the window, the chat, the first answer's id and the second's."""
    w = driver.configured()
    driver.fake.script("Castles and trams.")
    driver.send("What to see in Lisbon?", w, wait=True)
    chat, first = w.session_id, w.chat.turns[1].id
    driver.fake.script("Tiles and viewpoints.")
    assert w.window_commands.regenerate_reply()
    driver.until(lambda: w.transcript.branch_of(w.chat.turns[-1].id) == (2, 2)
                 and not w.composer_bar.busy and w.tasks.pending == 0, timeout=10)
    second = w.chat.turns[-1].id
    w.chat.new_session()
    driver.until(lambda: w.session_id is None and w.tasks.pending == 0)
    driver.fake.script("Sure.")
    driver.send("Something else entirely", w, wait=True)
    return w, str(chat), first, second


def _opened_at(driver: Any, w: Any, chat: str, turn_id: str) -> None:
    """The chat shows the branch through ``turn_id``, focused and marked, the transcript
    holding the keyboard focus."""
    driver.until(lambda: w.session_id == chat and w.tasks.pending == 0
                 and w.transcript.focused_turn_id() == turn_id
                 and w.transcript.list_view.delegate.highlight == (turn_id, "Castles")
                 and w.transcript.list_view.hasFocus())
    assert [t.text() for t in w.chat.turns] == ["What to see in Lisbon?", "Castles and trams."]
    assert w.transcript.branch_of(turn_id) == (1, 2)


def test_the_search_popup_labels_a_hit_on_another_branch_and_opens_it(driver: Any) -> None:
    w, chat, first, second = _regenerated(driver)
    assert w.window_commands.open_search()
    popup = w.search_popup

    def search(text: str) -> list[str]:
        popup.edit.clear()
        driver.qtbot.keyClicks(popup.edit, text)
        driver.until(lambda: popup.search.settled and popup.model.rowCount() > 0)
        rows = []
        for row in range(popup.model.rowCount()):
            doc = QTextDocument()
            doc.setHtml(hit_html(popup.model.item(row).data(HIT)))
            rows.append(doc.toPlainText())
        return rows

    [shown] = search("viewpoints")  # the answer shown: no label
    assert BRANCH_LABEL not in shown and popup.hits[0].turn_id == second
    [other] = search("castles")  # the first answer, on the branch not shown
    assert f"· {BRANCH_LABEL}" in other and popup.hits[0].turn_id == first
    spoken = popup.model.item(0).data(Qt.ItemDataRole.AccessibleTextRole)
    assert f"({BRANCH_LABEL}): " in spoken
    driver.qtbot.keyClick(popup.edit, Qt.Key.Key_Return)
    _opened_at(driver, w, chat, first)
    [again] = search("castles")  # now on the path shown: the label is gone
    assert BRANCH_LABEL not in again
    popup.close_popup()


def test_the_palette_labels_a_hit_on_another_branch_and_opens_it(driver: Any) -> None:
    w, chat, first, _second = _regenerated(driver)
    palette = open_palette(w, w)
    driver.qtbot.keyClicks(palette.input, "castles")
    driver.until(lambda: palette.search.settled
                 and any(e.kind == "message" for e in palette.entries()), timeout=10)
    [row] = [i for i, e in enumerate(palette.entries()) if e.kind == "message"]
    entry = palette.entries()[row]
    assert entry.ref == first and entry.detail.endswith(f" · {BRANCH_LABEL}")
    palette.input.setText("viewpoints")
    driver.until(lambda: palette.search.settled
                 and any(e.kind == "message" for e in palette.entries()), timeout=10)
    assert all(BRANCH_LABEL not in e.detail for e in palette.entries())
    palette.input.setText("castles")
    driver.until(lambda: palette.search.settled
                 and any(e.kind == "message" for e in palette.entries()), timeout=10)
    palette.activate(next(i for i, e in enumerate(palette.entries()) if e.kind == "message"))
    _opened_at(driver, w, chat, first)

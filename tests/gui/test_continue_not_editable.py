"""Continue's message (the user turn Parley sends, shown as a quiet "continued" line) is
Parley's, not the person's: no Edit button, menu entry or key acts on it, and Up in an
empty message box brings back the person's own last message instead (real window)."""

from __future__ import annotations

from typing import Any

import pytest
from PySide6.QtCore import Qt

from parley.gui.transcript.menu import message_menu
from parley.gui.transcript.specs import CONTINUE_MESSAGE
from tests.gui.answers import continue_a_stopped_reply, type_on_focus

pytestmark = pytest.mark.timeout(60)


def test_continues_message_cannot_be_edited(driver: Any) -> None:
    w = driver.configured()
    continue_a_stopped_reply(driver, w)
    hidden = next(t for t in w.chat.turns if t.role == "user" and t.text() == CONTINUE_MESSAGE)

    view = w.transcript
    row = view.model.row_of(hidden.id)
    assert row is not None
    node = view.model.rows[row]
    assert not view.editable(node)
    assert view.editable(view.model.rows[0])  # the person's own message stays editable
    assert view.actions_row._applies("edit", row, node) is None  # no Edit button
    labels = [a.text().split("\t")[0] for a in message_menu(view, row, None).actions()]
    assert not any(label.startswith("Edit") for label in labels), labels
    assert view.message_action("edit", row) is False  # the key E and the palette
    w.chat.editor.edit_message(hidden.id)  # asked for directly: nothing starts
    assert w.chat.editor.editing is None and w.composer.toPlainText() == ""

    # The key E on it, with the focus frame: no edit starts.
    lv = view.list_view
    lv.setFocus(Qt.FocusReason.ShortcutFocusReason)
    lv.set_current_row(row)
    type_on_focus(driver, "e")
    driver.qtbot.wait(100)
    assert w.chat.editor.editing is None

    # Up in the empty box brings back the person's last message, not Continue's.
    w.composer.clear()
    w.composer.setFocus()
    driver.qtbot.keyClick(w.composer, Qt.Key.Key_Up)
    driver.until(lambda: w.chat.editor.editing is not None)
    assert w.composer.toPlainText() == "Long story please"

"""One action, one name (issue 35, item 3, the clearest cases): "Fork from here" and
"Regenerate" in the Chat menu, the Message menu and the message's buttons alike; a reply's
tooltip names its model as the rest of the window does, not by its raw ``provider:model``."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QPoint
from PySide6.QtGui import QAction, QHelpEvent
from PySide6.QtWidgets import QApplication, QToolTip

from parley.gui.commands.actions import by_id
from parley.gui.transcript.actions_row import BUTTONS


def test_the_chat_and_message_actions_share_their_names():
    assert by_id("session.fork").label == by_id("message.fork").label == "Fork from here"
    assert by_id("run.regenerate").label == by_id("message.regenerate").label == "Regenerate"
    buttons = {action: label for _name, _icon, label, action in BUTTONS}
    assert buttons["message.fork"] == "Fork from here"
    assert buttons["message.regenerate"] == "Regenerate"


def test_the_window_menus_use_those_names(driver):
    w = driver.configured()
    texts = {a.text().replace("&", "") for a in w.findChildren(QAction)}
    assert "Fork from here" in texts and "Regenerate" in texts
    assert not texts & {"Fork here", "Regenerate reply"}


def test_a_replys_tooltip_names_its_model_by_its_display_name(driver, fake_provider, qtbot):
    w = driver.configured()
    fake_provider.script("An answer.")
    driver.send("Hello", wait=True)
    turn = w.chat.turns[-1]
    ref = turn.model
    assert ref and ":" in ref
    name = w.model_picker.label_of(ref)
    assert name != ref
    lv = w.transcript.list_view
    row = w.transcript.model.row_of(turn.id)
    rect = lv.visualRect(lv.model().index(row, 0))
    pos = QPoint(rect.right() - 4, rect.top() + 2)  # the row, not its text or a link
    QApplication.sendEvent(lv.viewport(),
                           QHelpEvent(QEvent.Type.ToolTip, pos, lv.viewport().mapToGlobal(pos)))
    driver.until(lambda: QToolTip.text() != "")
    shown = QToolTip.text()
    assert shown.startswith(f"{name} · "), shown
    assert ref not in shown
    QToolTip.hideText()

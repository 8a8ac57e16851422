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


def test_retry_and_unfold_have_one_name_each():
    """The key R's command is "Retry" as the error's button and Ctrl+R are; Space's is
    "Unfold" as the context menu and the fold line's tooltip say (not "Retry or continue",
    "Expand or collapse")."""
    assert by_id("message.retry").label == by_id("run.retry").label == "Retry"
    assert by_id("message.toggle").label == "Unfold"


def test_the_window_says_retry_and_unfold_everywhere(driver):
    from parley.core.content import TextBlock, ThinkingBlock, Turn
    from parley.gui.commands.shortcut_help import open_shortcut_help
    from parley.gui.transcript.menu import message_menu
    from tests.gui.transcript_reading import error_text

    w = driver.configured()
    old = {"Retry or continue", "Expand or collapse"}

    def menu_labels(row):
        return [a.text().split("\t")[0] for a in message_menu(w.transcript, row, None).actions()]

    # The menu bar and the shortcut help.
    texts = {a.text().split("\t")[0].replace("&", "") for a in w.findChildren(QAction)}
    assert {"Retry", "Unfold"} <= texts and not texts & old
    help_ = open_shortcut_help(w, w)
    shown = [help_.tree.topLevelItem(g).child(i).text(0)
             for g in range(help_.tree.topLevelItemCount())
             for i in range(help_.tree.topLevelItem(g).childCount())]
    help_.close()
    assert "Retry" in shown and "Unfold" in shown and not set(shown) & old

    # A reply with thinking: its menu's toggle says "Unfold", then "Fold" once open.
    s = driver.run(w.store.create_session(title="Folds", model=w.chat.current_model()))
    driver.run(w.store.append_turn(s.id, Turn("user", [TextBlock("Why?")])))
    driver.run(w.store.append_turn(s.id, Turn(
        "assistant", [ThinkingBlock("Let me think."), TextBlock("Because.")],
        model=w.chat.current_model())))
    driver.run(w.chat.load_sidebar())
    w.chat.open_session(s.id)
    driver.until(lambda: w.session_id == s.id and len(w.chat.turns) == 2
                 and w.tasks.pending == 0)
    row = w.transcript.model.rowCount() - 1
    assert "Unfold" in menu_labels(row) and not set(menu_labels(row)) & old

    # A failed request: the error's button, its accessible name and the menu say "Retry".
    driver.fake.fail("bad_request")
    driver.send("Again?", w)
    driver.until(lambda: error_text(w.transcript) and w.tasks.pending == 0
                 and not w.composer_bar.busy, timeout=10)
    button = w.transcript.error_bar.retry_button
    assert button.text() == button.accessibleName() == "Retry"
    row = w.transcript.model.rowCount() - 1
    assert "Retry" in menu_labels(row) and not set(menu_labels(row)) & old

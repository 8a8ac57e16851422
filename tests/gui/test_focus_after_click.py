"""Typing after a click in the conversation goes to the message box (real window).

A click on a link or a button of a message (Continue, ↻ Regenerate, ‹ ›, the
buttons over a message) is for that action: the focus goes back to the message
box, so what is typed next lands there. A click on a message itself leaves the
message focused (no focus frame): printable keys then go to the message box
too, never to the one-letter message keys (``e`` would edit that message).
Those keys act only while the focus frame shows (the focus came by the keyboard).
"""

from __future__ import annotations

from typing import Any

import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtWidgets import QApplication

from parley.core.content import TextBlock, Turn
from parley.gui.transcript.specs import REGENERATE_HREF
from tests.gui.answers import (
    click_anchor,
    continue_a_stopped_reply,
    open_chat,
    type_on_focus,
    until_answered,
)
from tests.gui.helpers import show_section

pytestmark = pytest.mark.timeout(60)
LEFT = Qt.MouseButton.LeftButton


def _click_first_message(driver: Any, w: Any) -> Any:
    """Open a two-message chat and click its first message; returns the list view."""
    open_chat(driver, w, [Turn("user", [TextBlock("Name a colour")]),
                      Turn("assistant", [TextBlock("Teal.")])])
    lv = w.transcript.list_view
    rect = lv.visualRect(w.transcript.model.index(0, 0))
    driver.qtbot.mouseClick(lv.viewport(), LEFT, pos=QPoint(rect.center().x(), rect.top() + 8))
    return lv


def test_typing_after_clicking_continue_goes_to_the_message_box(driver: Any) -> None:
    w = driver.configured()
    continue_a_stopped_reply(driver, w)

    assert QApplication.focusWidget() is w.composer
    type_on_focus(driver, "hello there")
    assert w.composer.toPlainText() == "hello there"
    assert w.chat.editor.editing is None  # "e" edited nothing

    w.composer.clear()
    driver.qtbot.keyClick(QApplication.focusWidget(), Qt.Key.Key_N,
                          Qt.KeyboardModifier.ControlModifier)
    driver.until(lambda: w.session_id is None and w.tasks.pending == 0)  # a new chat


def test_typing_after_clicking_regenerate_goes_to_the_message_box(driver: Any) -> None:
    w = driver.configured()
    driver.fake.script("The first answer.")
    driver.send("Name a colour", w, wait=True)
    w.transcript.list_view.setFocus(Qt.FocusReason.ShortcutFocusReason)  # the frame shows
    driver.fake.script("The second answer.")
    click_anchor(driver, w, w.chat.turns[-1].id, REGENERATE_HREF)
    assert QApplication.focusWidget() is w.composer
    type_on_focus(driver, "zq")
    until_answered(driver, w, "The second answer.")
    assert w.composer.toPlainText() == "zq"


def test_letters_typed_on_a_clicked_message_go_to_the_message_box(driver: Any) -> None:
    w = driver.configured()
    lv = _click_first_message(driver, w)
    assert QApplication.focusWidget() is lv  # the message was picked on purpose

    type_on_focus(driver, "every")
    assert w.composer.toPlainText() == "every" and QApplication.focusWidget() is w.composer
    assert w.chat.editor.editing is None

    # From the keyboard the message keys still act on the focused message.
    w.composer.clear()
    lv.setFocus(Qt.FocusReason.ShortcutFocusReason)
    lv.set_current_row(0)
    type_on_focus(driver, "e")
    driver.until(lambda: w.chat.editor.editing is not None)
    assert w.composer.toPlainText() == "Name a colour"


def test_clicking_a_button_over_a_message_gives_the_focus_back(driver: Any) -> None:
    w = driver.configured()
    open_chat(driver, w, [Turn("user", [TextBlock("Name a colour")]),
                      Turn("assistant", [TextBlock("Teal.")])])
    lv, bar = w.transcript.list_view, w.transcript.actions_row
    rect = lv.visualRect(w.transcript.model.index(1, 0))
    driver.qtbot.mouseClick(lv.viewport(), LEFT, pos=QPoint(rect.center().x(), rect.top() + 8))
    driver.qtbot.mouseMove(lv.viewport(), rect.center())
    driver.until(lambda: bar.isVisible() and bar.row == 1)
    driver.qtbot.mouseClick(bar.buttons["copy"], LEFT)
    assert QApplication.focusWidget() is w.composer
    type_on_focus(driver, "fine")
    assert w.composer.toPlainText() == "fine"


def test_letters_stay_out_of_message_keys_after_the_window_is_activated_again(
    driver: Any,
) -> None:
    """A dialog closed with Esc gives the focus back to a clicked message: still no frame,
    so typing still goes to the message box (it started an edit of the first message)."""
    w = driver.configured()
    lv = _click_first_message(driver, w)
    lv.clearFocus()
    lv.setFocus(Qt.FocusReason.ActiveWindowFocusReason)
    type_on_focus(driver, "egg")
    assert w.composer.toPlainText() == "egg" and w.chat.editor.editing is None


def test_ctrl_n_and_typing_work_after_a_dialog_closed_with_esc(driver: Any) -> None:
    """Settings closed with Esc after a click on a message: the window is active again (no
    window was, so Ctrl+N did nothing), and letters still go to the message box."""
    from PySide6.QtWidgets import QDialog

    w = driver.configured()
    _click_first_message(driver, w)
    w.qactions["app.settings"].trigger()
    driver.until(lambda: any(d.isVisible() for d in w.findChildren(QDialog)), timeout=10)
    dialog = next(d for d in w.findChildren(QDialog) if d.isVisible())
    driver.until(lambda: w.tasks.pending == 0, timeout=10)  # its settings read
    driver.qtbot.wait(200)
    driver.qtbot.keyClick(dialog, Qt.Key.Key_Escape)
    driver.until(lambda: not dialog.isVisible())
    driver.until(w.isActiveWindow, timeout=2)

    type_on_focus(driver, "egg")
    assert w.composer.toPlainText() == "egg" and w.chat.editor.editing is None
    w.composer.clear()
    driver.qtbot.keyClick(QApplication.focusWidget(), Qt.Key.Key_N,
                          Qt.KeyboardModifier.ControlModifier)
    driver.until(lambda: w.session_id is None and w.tasks.pending == 0)


def test_settings_closed_at_once_leaves_no_error_behind(driver: Any) -> None:
    """Esc right after Settings opens: its reads stop (they filled fields already deleted)."""
    from PySide6.QtWidgets import QDialog

    w = driver.configured()
    for section in ("Providers", "Backups"):
        w.qactions["app.settings"].trigger()
        dialog = next(d for d in w.findChildren(QDialog) if d.isVisible())
        show_section(dialog, section)
        driver.qtbot.keyClick(dialog, Qt.Key.Key_Escape)
        driver.until(lambda: w.tasks.pending == 0)
        driver.qtbot.wait(300)  # the reads would have ended meanwhile


def test_letters_reach_the_box_after_settings_opened_by_its_keys_and_closed_with_esc(
    driver: Any,
) -> None:
    """Click a message, Ctrl+, (the Ctrl key alone reaches the message first), Esc: the
    message got no focus frame from the Ctrl key, and letters go to the message box."""
    from PySide6.QtWidgets import QDialog

    w = driver.configured()
    open_chat(driver, w, [Turn("user", [TextBlock("Name a colour")]),
                      Turn("assistant", [TextBlock("Teal.")])])
    lv = w.transcript.list_view
    rect = lv.visualRect(w.transcript.model.index(1, 0))
    driver.qtbot.mouseClick(lv.viewport(), LEFT, pos=QPoint(rect.center().x(), rect.top() + 8))
    assert QApplication.focusWidget() is lv
    driver.qtbot.keyClick(lv, Qt.Key.Key_Comma, Qt.KeyboardModifier.ControlModifier)
    driver.until(lambda: any(d.isVisible() for d in w.findChildren(QDialog)), timeout=10)
    dialog = next(d for d in w.findChildren(QDialog) if d.isVisible())
    driver.until(lambda: w.tasks.pending == 0, timeout=10)
    driver.qtbot.keyClick(dialog, Qt.Key.Key_Escape)
    driver.until(lambda: not dialog.isVisible())
    driver.until(w.isActiveWindow, timeout=2)

    type_on_focus(driver, "seventh")
    assert w.composer.toPlainText() == "seventh" and w.chat.editor.editing is None


def test_a_key_that_is_no_message_key_is_typed_in_the_box_even_with_the_frame(
    driver: Any,
) -> None:
    """With the focus frame, a letter that is no message key (or one that can't act on
    this message) is typed in the message box, never dropped."""
    w = driver.configured()
    open_chat(driver, w, [Turn("user", [TextBlock("Name a colour")]),
                      Turn("assistant", [TextBlock("Teal.")])])
    lv = w.transcript.list_view
    lv.setFocus(Qt.FocusReason.ShortcutFocusReason)
    lv.set_current_row(1)
    type_on_focus(driver, "z")
    assert w.composer.toPlainText() == "z" and QApplication.focusWidget() is w.composer


def test_a_click_on_the_message_box_frame_focuses_its_editor(driver: Any) -> None:
    w = driver.configured()
    bar = w.composer_bar
    w.transcript.list_view.setFocus(Qt.FocusReason.ShortcutFocusReason)
    frame = bar.frame
    driver.qtbot.mouseClick(frame, LEFT, pos=QPoint(frame.width() // 2, 3))  # its top margin
    assert QApplication.focusWidget() is w.composer

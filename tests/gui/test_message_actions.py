"""The buttons over a message (copy, edit, regenerate, fork, continue, ‹ ›) in the real
window: shown on hover and on the focused message, reachable with Tab, tooltips naming
the keys, icons drawn from the app's SVGs."""

from __future__ import annotations

from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication

from parley.core.content import TextBlock, Turn

pytestmark = pytest.mark.timeout(60)


def _chat(driver: Any, w: Any, turns: list[Turn]) -> str:
    session = driver.run(w.store.create_session(title="Colours", model=w.chat.current_model()))
    for turn in turns:
        driver.run(w.store.append_turn(session.id, turn))
    driver.run(w.chat.load_sidebar())
    w.chat.open_session(session.id)
    driver.until(lambda: w.session_id == session.id and len(w.chat.turns) == len(turns)
                 and w.tasks.pending == 0)
    return session.id


def _shown(w: Any) -> list[str]:
    bar = w.transcript.actions_row
    return [n for n, b in bar.buttons.items() if not b.isHidden()] if bar.isVisible() else []


def _hover(driver: Any, w: Any, row: int) -> None:
    lv = w.transcript.list_view
    rect = lv.visualRect(w.transcript.model.index(row, 0))
    driver.qtbot.mouseMove(lv.viewport(), rect.topLeft() + rect.center() - rect.topLeft())
    driver.until(lambda: w.transcript.actions_row.row == row and w.transcript.actions_row
                 .isVisible())


def _exchange(*texts: str) -> list[Turn]:
    return [Turn("user" if i % 2 == 0 else "assistant", [TextBlock(t)])  # type: ignore[arg-type]
            for i, t in enumerate(texts)]


def test_hover_shows_the_actions_that_apply_with_their_keys(driver: Any) -> None:
    w = driver.configured()
    _chat(driver, w, _exchange("Name a colour", "Teal.", "Another one", "Ochre."))
    bar = w.transcript.actions_row

    _hover(driver, w, 0)
    assert _shown(w) == ["copy", "edit", "fork"]
    assert bar.buttons["edit"].toolTip() == "Edit message (E)"
    assert bar.buttons["fork"].toolTip() == "Fork from here (F)"
    assert bar.buttons["copy"].toolTip().startswith("Copy message (C")
    for button in bar.buttons.values():  # drawn icons, no text (no emoji font needed)
        assert button.text() == "" and not button.icon().isNull()

    _hover(driver, w, 3)
    assert _shown(w) == ["copy", "regenerate", "fork"]
    assert bar.buttons["regenerate"].toolTip() == "Regenerate (Shift+R)"
    driver.qtbot.mouseClick(bar.buttons["copy"], Qt.MouseButton.LeftButton)
    assert QGuiApplication.clipboard().text() == "Ochre."

    # The keymap in force names the keys: rebinding shows at once.
    w.keymap = w.keymap.bind("message.fork", ["Alt+F"])
    _hover(driver, w, 0)
    _hover(driver, w, 3)
    assert bar.buttons["fork"].toolTip() == "Fork from here (Alt+F)"


def test_tab_from_the_focused_message_reaches_its_actions(driver: Any) -> None:
    w = driver.configured()
    _chat(driver, w, _exchange("Name a colour", "Teal.", "Another one", "Ochre."))
    lv, bar = w.transcript.list_view, w.transcript.actions_row
    lv.setFocus(Qt.FocusReason.TabFocusReason)
    lv.set_current_row(2)
    driver.until(lambda: bar.isVisible() and bar.row == 2)
    assert _shown(w) == ["copy", "edit", "fork"]

    driver.qtbot.keyClick(lv, Qt.Key.Key_Tab)
    assert QGuiApplication.focusObject() is bar.buttons["copy"]
    focused = QGuiApplication.focusObject()
    driver.qtbot.keyClick(focused, Qt.Key.Key_Tab)
    assert QGuiApplication.focusObject() is bar.buttons["edit"]
    assert bar.isVisible() and bar.row == 2  # stays on the message while its buttons have focus
    driver.qtbot.keyClick(bar.buttons["edit"], Qt.Key.Key_Backtab)
    assert QGuiApplication.focusObject() is bar.buttons["copy"]
    driver.qtbot.keyClick(bar.buttons["copy"], Qt.Key.Key_Escape)
    assert QGuiApplication.focusObject() is lv

    driver.qtbot.keyClick(lv, Qt.Key.Key_Tab)
    driver.qtbot.keyClick(bar.buttons["copy"], Qt.Key.Key_Right)
    driver.qtbot.keyClick(bar.buttons["edit"], Qt.Key.Key_Space)  # press the focused button
    driver.until(lambda: w.composer.text() == "Another one")
    assert w.chat.editor.editing is not None and w.chat.editor.editing.id == w.chat.turns[2].id

    # Tab on the last button leaves the transcript, as Tab would.
    lv.setFocus(Qt.FocusReason.TabFocusReason)
    lv.set_current_row(2)
    driver.qtbot.keyClick(lv, Qt.Key.Key_Tab)
    driver.qtbot.keyClick(bar.buttons["copy"], Qt.Key.Key_Tab)
    driver.qtbot.keyClick(bar.buttons["edit"], Qt.Key.Key_Tab)
    driver.qtbot.keyClick(bar.buttons["fork"], Qt.Key.Key_Tab)
    focus = QGuiApplication.focusObject()
    assert focus is not None and not w.transcript.isAncestorOf(focus)


def test_a_stopped_reply_offers_continue(driver: Any) -> None:
    w = driver.configured()
    stopped = Turn("assistant", [TextBlock("Teal, ochre and")], aborted=True)
    _chat(driver, w, [*_exchange("Name three colours"), stopped])
    bar = w.transcript.actions_row
    _hover(driver, w, 1)
    assert "continue" in _shown(w)
    assert bar.buttons["continue"].toolTip() == "Continue reply (R)"
    driver.fake.script("Teal, ochre and plum.")
    driver.qtbot.mouseClick(bar.buttons["continue"], Qt.MouseButton.LeftButton)
    driver.until(lambda: "plum" in driver.last_text(w) and w.tasks.pending == 0
                 and not w.composer_bar.busy, timeout=10)

"""Settings → Keyboard on its own: set, add, remove, reset, refuse a taken or reserved key."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt

from parley.gui import dialogs
from parley.gui.commands.keymap import Keymap
from parley.gui.settings.keyboard import KeymapEditor

CTRL = Qt.KeyboardModifier.ControlModifier
ALT = Qt.KeyboardModifier.AltModifier


@pytest.fixture
def editor(qtbot):
    commits: list[Keymap] = []
    e = KeymapEditor(commits.append)
    e.commits = commits
    qtbot.addWidget(e)
    e.show()
    return e


def row_keys(editor: KeymapEditor, action_id: str) -> tuple[str, bool]:
    """(keys as shown, shown in bold = changed) of an action's row."""
    for row in range(editor.table.rowCount()):
        if editor.table.item(row, 0).data(Qt.ItemDataRole.UserRole) == action_id:
            item = editor.table.item(row, 1)
            return item.text(), item.font().bold()
    raise KeyError(action_id)


def test_set_add_remove_and_reset_one_action(editor, qtbot):
    editor.select("session.pin")
    assert row_keys(editor, "session.pin") == ("", False)
    qtbot.keyClick(editor.capture, Qt.Key.Key_P, CTRL | ALT)
    qtbot.mouseClick(editor.set_button, Qt.MouseButton.LeftButton)
    assert row_keys(editor, "session.pin") == ("Ctrl+Alt+P", True)
    assert editor.commits[-1].overrides() == {"session.pin": ["Ctrl+Alt+P"]}
    assert editor.capture.keySequence().isEmpty()  # ready for the next key

    qtbot.keyClick(editor.capture, Qt.Key.Key_F9)
    qtbot.mouseClick(editor.add_button, Qt.MouseButton.LeftButton)
    assert row_keys(editor, "session.pin") == ("Ctrl+Alt+P, F9", True)
    assert "F9" in editor.message.text()

    editor.select("session.new")
    qtbot.mouseClick(editor.clear_button, Qt.MouseButton.LeftButton)
    assert row_keys(editor, "session.new") == ("", True)
    assert editor.reset_button.isEnabled()
    qtbot.mouseClick(editor.reset_button, Qt.MouseButton.LeftButton)
    assert row_keys(editor, "session.new") == ("Ctrl+N", False)
    assert editor.commits[-1].overrides() == {"session.pin": ["Ctrl+Alt+P", "F9"]}


def test_a_taken_or_reserved_key_is_refused_with_a_reason(editor, qtbot):
    editor.select("session.pin")
    qtbot.keyClick(editor.capture, Qt.Key.Key_N, CTRL)
    assert not editor.assign(replace=True)
    assert "already runs “New chat”" in editor.message.text()
    qtbot.keyClick(editor.capture, Qt.Key.Key_V, CTRL)
    assert not editor.assign(replace=True)
    assert "editing" in editor.message.text()
    assert editor.commits == [] and editor.keymap == Keymap()
    editor.capture.clear()
    assert not editor.assign(replace=True)
    assert "press a key" in editor.message.text()


def test_reset_is_refused_when_the_default_key_went_elsewhere(editor, qtbot):
    editor.set_keymap(Keymap().bind("session.new", []).bind("session.pin", ["Ctrl+N"]))
    editor.select("session.new")
    editor.reset_selected()
    assert "Cannot reset" in editor.message.text() and "Pin or unpin chat" in editor.message.text()
    assert editor.keymap.keys("session.new") == ()


def test_reset_all_asks_first(editor, qtbot):
    editor.set_keymap(Keymap().bind("session.new", ["Ctrl+J"]))
    dialogs.answers.append(False)
    editor.reset_all()
    assert editor.keymap.keys("session.new") == ("Ctrl+J",) and editor.commits == []
    dialogs.answers.append(True)
    editor.reset_all()
    assert editor.keymap == Keymap() and editor.commits[-1].overrides() == {}


def test_filter_narrows_the_rows_and_problems_are_shown(editor, qtbot):
    qtbot.keyClicks(editor.filter, "ctrl+shift+f")
    shown = [editor.table.item(r, 0).text() for r in range(editor.table.rowCount())
             if not editor.table.isRowHidden(r)]
    assert shown == ["Fork from here"]  # the Message menu's word too (issue 35)
    assert not editor.problems.isVisible()
    editor.set_keymap(Keymap({"session.pin": ["Ctrl+N"]}))  # e.g. from an older file
    assert editor.problems.isVisible() and "Ctrl+N" in editor.problems.text()

"""The action list: every action reachable from the keyboard, default keys free of
conflicts, and the keymap's rules (bind, refuse, reset, persist, tolerate junk)."""

from __future__ import annotations

from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QKeySequence
from PySide6.QtWidgets import QApplication

from parley.core.settings import Settings
from parley.gui.commands import actions as actions_mod
from parley.gui.commands import install as install_mod
from parley.gui.commands import palette as palette_mod
from parley.gui.commands.actions import ACTIONS, available
from parley.gui.commands.keymap import Keymap, KeymapError, normalize, reserved_reason

pytestmark = pytest.mark.timeout(60)

# -- the defaults -----------------------------------------------------------------------
def test_default_shortcuts_do_not_conflict(qapp):
    keymap = Keymap()
    assert keymap.conflicts() == [], [c.message() for c in keymap.conflicts()]
    assert keymap.problems() == []  # no global key that typing or text editing needs
    ids = [a.id for a in ACTIONS]
    assert len(ids) == len(set(ids))
    labels = [a.label for a in ACTIONS if a.palette]
    assert len(labels) == len(set(labels)), "two palette entries would read the same"


def test_shift_tab_and_backtab_are_one_key_so_previous_chat_fires(qapp):
    # Shift+Tab sends Key_Backtab, and X11's key mapper matches a press of Ctrl+Shift+Tab
    # against "Ctrl+Shift+Tab" AND "Ctrl+Backtab": an action holding both is an ambiguous
    # overload and does nothing (trial 17: Previous chat never fired under X11).
    assert normalize("Ctrl+Backtab") == normalize("Ctrl+Shift+Backtab") == "Ctrl+Shift+Tab"
    assert normalize("Backtab") == "Shift+Tab"
    keymap = Keymap()
    assert keymap.keys("session.previous") == ("Ctrl+Shift+Tab",)
    for action in ACTIONS:  # no action holds the same press twice
        keys = [normalize(k) for k in keymap.keys(action.id)]
        assert len(keys) == len(set(keys)), (action.id, keys)
    both = keymap.bind("session.previous", ["Ctrl+Shift+Tab", "Ctrl+Backtab"])
    assert both.keys("session.previous") == ("Ctrl+Shift+Tab",)
    with pytest.raises(KeymapError, match="Previous chat"):  # Backtab is Shift+Tab: taken
        keymap.bind("session.next", ["Ctrl+Backtab"])


def test_conflict_detection_sees_overlapping_contexts(qapp):
    base = Keymap()
    # A global key clashes with a key of any context: the shortcut would win everywhere.
    clash = Keymap({"session.pin": ["Ctrl+Shift+F"], "message.toggle": ["F6", "Space"]})
    found = {(c.key, c.first.id, c.second.id) for c in clash.conflicts()}
    assert ("Ctrl+Shift+F", "session.fork", "session.pin") in found
    assert ("F6", "focus.next_pane", "message.toggle") in found
    # The same key in two focus contexts is fine: only one of them has the focus.
    assert base.keys("composer.edit_last") == ("Up",) and "Up" in base.keys("message.previous")
    assert not [c for c in base.conflicts() if c.key == "Up"]


def test_every_action_has_a_description_and_a_home(qapp):
    for action in ACTIONS:
        assert action.description.endswith("."), action.id
        assert action.shortcuts or action.palette, f"{action.id}: no key and not in the palette"
        assert action.menu in (None, *actions_mod.MENUS)


# -- the keymap's rules -----------------------------------------------------------------
def test_bind_refuses_taken_and_reserved_keys_and_names_the_other_action(qapp):
    keymap = Keymap()
    with pytest.raises(KeymapError, match="already runs “New chat”"):
        keymap.bind("session.pin", ["Ctrl+N"])
    with pytest.raises(KeymapError, match="used for typing"):
        keymap.bind("session.pin", ["P"])
    with pytest.raises(KeymapError, match="editing"):
        keymap.bind("session.pin", ["Ctrl+V"])
    with pytest.raises(KeymapError, match="not a key combination"):
        keymap.bind("session.pin", ["Ctrl+K, Ctrl+S"])
    assert keymap.keys("session.pin") == ()  # unchanged: Keymap is immutable
    pinned = keymap.bind("session.pin", ["ctrl+alt+p"])
    assert pinned.keys("session.pin") == ("Ctrl+Alt+P",)
    # Letters are fine where they cannot be typed: on a focused message.
    moved = keymap.bind("message.fork", ["B"]).add_key("message.fork", "Shift+F")
    assert moved.keys("message.fork") == ("B", "Shift+F")
    assert moved.message_keys()["B"] == "fork" and "F" not in moved.message_keys()


def test_overrides_hold_only_changes_and_reset_restores_defaults(qapp):
    keymap = Keymap().bind("session.new", ["Ctrl+J"]).bind("session.rename", [])
    assert keymap.overrides() == {"session.new": ["Ctrl+J"], "session.rename": []}
    assert Keymap(keymap.overrides()) == keymap
    assert keymap.reset("session.new").overrides() == {"session.rename": []}
    assert keymap.reset() == Keymap()
    back = keymap.bind("session.new", ["Ctrl+N"])
    assert back.is_default("session.new") and "session.new" not in back.overrides()


def test_stored_junk_is_ignored(qapp):
    keymap = Keymap({"no.such.action": ["Ctrl+J"], "session.new": ["Ctrl+", "", "Ctrl+J"],
                     "session.rename": "F2"})  # type: ignore[dict-item]
    assert keymap.keys("session.new") == ("Ctrl+J",)
    assert keymap.keys("session.rename") == ("F2",)  # not a list: default kept
    assert normalize(" shift+f6 ") == "Shift+F6"
    assert reserved_reason("Shift+Esc") is None and reserved_reason("Esc") is not None


# -- the walk ---------------------------------------------------------------------------
def _press(qtbot: Any, widget: Any, text: str) -> None:
    combo = QKeySequence(text)[0]
    qtbot.keyClick(widget, combo.key(), combo.keyboardModifiers())


def _context_widget(w: Any, context: str) -> Any:
    return {"global": w.composer, "composer": w.composer, "sidebar": w.sidebar.tree,
            "transcript": w.transcript.list_view}[context]


def test_every_action_can_be_reached_from_the_keyboard(driver, fake_provider, qtbot,
                                                      monkeypatch, capsys):
    """Each action's first key, pressed where it works, reaches that action; each palette
    action is found by typing its name in the palette (opened with its key) and Enter."""
    w = driver.open(env={"ANTHROPIC_API_KEY": "sk-ant-test",
                         "ANTHROPIC_BASE_URL": fake_provider.anthropic_base_url})
    driver.send("hello", wait=True)  # a session with messages: every context has content
    w.activateWindow()
    driver.until(w.isActiveWindow)

    assert w.commands.missing() == set()  # every declared action has a handler
    unavailable = {a.id for a in ACTIONS if not available(a, w)}
    # "Unarchive chat" is offered only while the open chat is archived (test_glossary),
    # "Undo" only while the toast offers Undo (test_keyboard_list).
    assert unavailable <= {"session.archive", "edit.undo"}, \
        f"actions that cannot run: {sorted(unavailable)}"

    reached: list[str] = []

    def record(_window: Any, action: Any) -> bool:
        reached.append(action.id)
        return True

    # 1. By key, in the widget where the key works.
    monkeypatch.setattr(install_mod, "run", record)  # what the QActions call
    monkeypatch.setattr(w.composer, "on_action", lambda action: record(w, action))
    lv = w.transcript.list_view
    monkeypatch.setattr(lv, "message_key",
                        lambda name: reached.append(f"message.{name}") or True)
    lv.setCurrentIndex(w.transcript.model.index(1))
    w.composer.clear()
    by_key = 0
    for action in ACTIONS:
        if action.id in unavailable or not w.keymap.keys(action.id):
            continue
        widget = _context_widget(w, action.context)
        widget.setFocus()
        driver.until(widget.hasFocus)
        reached.clear()
        _press(qtbot, widget, w.keymap.keys(action.id)[0])
        assert reached == [action.id], f"{w.keymap.keys(action.id)[0]} ran {reached}"
        by_key += 1
    monkeypatch.undo()

    # 2. From the palette, opened with its own key, by typing the action's name.
    monkeypatch.setattr(palette_mod, "run", record)
    by_palette = 0
    for action in ACTIONS:
        if not action.palette or action.id in unavailable:
            continue
        w.composer.setFocus()
        driver.until(w.composer.hasFocus)
        _press(qtbot, w.composer, "Ctrl+Shift+P")
        palette = w.command_palette
        assert palette.isVisible() and QApplication.focusWidget() is palette.input
        qtbot.keyClicks(palette.input, action.label.rstrip("…"))
        reached.clear()
        qtbot.keyClick(palette.input, Qt.Key.Key_Return)
        assert reached == [action.id], f"typing “{action.label}” ran {reached}"
        assert not palette.isVisible()
        by_palette += 1
    with capsys.disabled():
        print(f"reached by key: {by_key}, from the palette: {by_palette}, of {len(ACTIONS)}")
    assert by_key + by_palette >= len(ACTIONS) - len(unavailable)


def test_bindings_load_from_the_store_when_the_window_opens(driver, fake_provider, run):
    w = driver.open(env={"ANTHROPIC_API_KEY": "sk-ant-test",
                         "ANTHROPIC_BASE_URL": fake_provider.anthropic_base_url})
    run(Settings.of(w.store).set("keyboard.bindings", {"sidebar.toggle": ["Ctrl+Alt+B"]}))
    driver.until(lambda: w.keymap.keys("sidebar.toggle") == ("Ctrl+Alt+B",))  # live
    qa = w.qactions["sidebar.toggle"]
    assert [s.toString() for s in qa.shortcuts()] == ["Ctrl+Alt+B"]
    assert w.qactions["message.edit"].text() == "Edit message\tE"  # menus show the key


def test_no_default_key_of_the_message_box_types_text(qapp):
    """The message box lets keys that type text straight through until a keymap is in force
    (``types_text``, issue 33): none of its default keys may be one of them."""
    from PySide6.QtCore import QEvent
    from PySide6.QtGui import QKeyEvent

    from parley.gui.composer.widget import types_text

    command = Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.AltModifier \
        | Qt.KeyboardModifier.MetaModifier
    for action in actions_mod.ACTIONS:
        if action.context != "composer":
            continue
        for shortcut in action.shortcuts:
            combo = actions_mod.first_combo(QKeySequence(shortcut))
            assert combo.key().value >= Qt.Key.Key_Escape.value \
                or combo.keyboardModifiers() & command, (action.id, shortcut)
    typed = QKeyEvent(QEvent.Type.KeyPress, Qt.Key.Key_A, Qt.KeyboardModifier.ShiftModifier, "A")
    enter = QKeyEvent(QEvent.Type.KeyPress, Qt.Key.Key_Return, Qt.KeyboardModifier.NoModifier,
                      "\r")
    ctrl_a = QKeyEvent(QEvent.Type.KeyPress, Qt.Key.Key_A, Qt.KeyboardModifier.ControlModifier,
                       "\x01")
    assert types_text(typed) and not types_text(enter) and not types_text(ctrl_a)

"""No widget of Parley's windows depends on an emoji font: every text, tooltip, accessible
name, menu entry, list row and icon name of the main window, its menus, the command
palette, the model menu and every Settings page is walked (real window, real store, the
fake provider). The transcript's own painting is checked by test_transcript_glyphs."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from PySide6.QtCore import QAbstractItemModel, QModelIndex, Qt
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QApplication, QComboBox, QMenu, QWidget

from tests.gui.chats import long_chat
from tests.gui.helpers import emoji_in
from tests.gui.keyboard import chat_window

pytestmark = pytest.mark.timeout(120)

TEXTS = ("text", "toolTip", "windowTitle", "accessibleName", "accessibleDescription",
         "placeholderText", "statusTip", "whatsThis", "title")
ROLES = (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.ToolTipRole,
         Qt.ItemDataRole.AccessibleTextRole)


def _strings(obj: Any) -> Iterator[tuple[str, str]]:
    for name in TEXTS:
        getter = getattr(obj, name, None)
        if not callable(getter):
            continue
        try:
            value = getter()
        except TypeError:  # a method of that name that needs arguments
            continue
        if isinstance(value, str) and value:
            yield name, value
    icon = getattr(obj, "icon", None)
    if callable(icon):
        try:
            name = icon().name()
        except TypeError:
            name = ""
        if name:
            yield "icon name", name


def _rows(model: QAbstractItemModel, parent: QModelIndex | None = None) -> Iterator[str]:
    parent = parent or QModelIndex()
    try:
        columns = model.columnCount(parent)
    except TypeError:  # a list model (its columnCount is private in PySide)
        columns = 1
    for row in range(min(model.rowCount(parent), 500)):
        for col in range(columns):
            index = model.index(row, col, parent)
            for role in ROLES:
                value = model.data(index, role)
                if isinstance(value, str) and value:
                    yield value
            yield from _rows(model, index)


def emoji_found(*roots: QWidget) -> list[str]:
    """``"<class> <what>: <text>"`` for every string with an emoji under ``roots``."""
    found: list[str] = []
    seen: set[int] = set()

    def check(where: str, text: str) -> None:
        if emoji_in(text):
            found.append(f"{where}: {text!r}")

    for root in roots:
        widgets = [root, *root.findChildren(QWidget)]
        actions = root.findChildren(QAction)
        for widget in widgets:
            if id(widget) in seen:
                continue
            seen.add(id(widget))
            for what, text in _strings(widget):
                check(f"{type(widget).__name__}({widget.objectName()}) {what}", text)
            actions += widget.actions()
            if isinstance(widget, QComboBox):
                for i in range(widget.count()):
                    check(f"QComboBox({widget.objectName()}) item", widget.itemText(i))
            model = getattr(widget, "model", None)
            if callable(model) and isinstance(widget, QWidget):
                m = model()
                if isinstance(m, QAbstractItemModel):
                    for text in _rows(m):
                        check(f"{type(widget).__name__}({widget.objectName()}) row", text)
        for action in actions:
            for what, text in _strings(action):
                check(f"QAction({action.objectName()}) {what}", text)
            menu = action.menu()
            if isinstance(menu, QMenu) and id(menu) not in seen:
                found += emoji_found(menu)
                seen.add(id(menu))
    return found


def test_emoji_in_finds_what_an_emoji_font_is_needed_for() -> None:
    assert emoji_in("Thinking 💭 done 🔧 📄 🗂") == ["💭", "🔧", "📄", "🗂"]
    assert emoji_in("Remove (×) · ‹ 2/3 › — ünïcødé … “quotes”") == []


def test_the_walk_finds_an_emoji_in_a_label_a_tooltip_a_menu_and_a_list(qtbot: Any) -> None:
    from PySide6.QtWidgets import QLabel, QListWidget, QPushButton, QVBoxLayout

    root = QWidget()
    qtbot.addWidget(root)
    col = QVBoxLayout(root)
    col.addWidget(QLabel("📄 notes.txt"))
    button = QPushButton("Files")
    button.setToolTip("Open 🗂")
    menu = QMenu(button)
    menu.addAction("Think 💭")
    button.setMenu(menu)
    col.addWidget(button)
    rows = QListWidget()
    rows.addItem("Tool 🔧")
    col.addWidget(rows)
    found = "\n".join(emoji_found(root))
    assert all(e in found for e in ("📄", "🗂", "💭", "🔧")), found


def test_no_widget_of_the_window_settings_palette_or_menus_uses_an_emoji(
    driver: Any, fake_provider: Any, until: Any
) -> None:
    w = chat_window(driver, fake_provider)
    w.startup.finish_build()
    sid, _ = long_chat(driver, w, 4, title="A chat to look at")
    w.chat.open_session(sid)
    driver.until(lambda: w.chat.session_id == sid)
    roots: list[QWidget] = [w]
    roots += [a.menu() for a in w.menuBar().actions() if a.menu() is not None]
    roots.append(w.model_picker.menu())

    dialog = w.window_commands.open_settings()
    until(lambda: dialog.ready and dialog.tasks.pending == 0, timeout=20)
    for row in range(dialog.nav.count()):  # every page shown once (some fill in when shown)
        dialog.nav.setCurrentRow(row)
        QApplication.processEvents()
    roots.append(dialog)

    from parley.gui.commands.palette import open_palette

    open_palette(w, w)
    driver.qtbot.keyClicks(w.command_palette.input, "chat")
    QApplication.processEvents()
    roots.append(w.command_palette)

    found = emoji_found(*roots)
    assert found == [], "\n".join(found)
    dialog.close()

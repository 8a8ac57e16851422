"""The shortcut help (Ctrl+/): every command and its keys, grouped by where they work.

Built from the window's keymap (``parley.gui.commands.keymap``), so a key changed in
Settings → Keyboard shows here at once. A filter box narrows the list by
command or key ("fork", "ctrl+k"); commands the window cannot run yet are
listed greyed out.
"""

from __future__ import annotations

from typing import Protocol

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QLabel,
    QLineEdit,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from parley.gui.commands.actions import CONTEXTS, CommandsWindow, available
from parley.gui.commands.keymap import WHERE, Keymap, keymap_for
from parley.gui.look import appearance

HEADINGS = {"global": "Anywhere in the window", "composer": "In the message box",
            "transcript": "On a focused message (Ctrl+Shift+M or F6 to get there)",
            "sidebar": "In the chat list"}
FOOTER = "Change any of these in Settings → Keyboard. Esc closes this window."


class ShortcutHelp(QDialog):
    """A non-modal list of every action and its keys.

    Args:
        state: the window's state (which actions can run now).
        window: the main window, the dialog's parent (its ``keymap``).
    """

    def __init__(self, state: CommandsWindow, window: QWidget) -> None:
        super().__init__(window)
        self.state = state
        self.window_ = window
        self.setObjectName("ShortcutHelp")
        self.setWindowTitle("Keyboard shortcuts")
        self.setAccessibleName("Keyboard shortcuts")
        self.resize(640, 620)
        self.filter = QLineEdit(self)
        self.filter.setAccessibleName("Filter shortcuts")
        self.filter.setPlaceholderText("Filter by command or key…")
        self.filter.setClearButtonEnabled(True)
        self.filter.textChanged.connect(self._filter)
        self.tree = QTreeWidget(self)
        self.tree.setObjectName("ShortcutTree")
        self.tree.setAccessibleName("Shortcuts")
        self.tree.setColumnCount(2)
        self.tree.setHeaderLabels(["Command", "Keys"])
        self.tree.setRootIsDecorated(False)
        self.tree.setUniformRowHeights(True)
        self.tree.setAlternatingRowColors(True)
        t = appearance.current()
        self.tree.setStyleSheet(
            f"QTreeWidget {{ border: 1px solid {t.border}; border-radius: 6px; }}"
            "QTreeWidget::item { padding: 3px 6px; }")
        footer = QLabel(FOOTER, self)
        footer.setWordWrap(True)
        footer.setStyleSheet(f"color: {appearance.current().muted};")
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, self)
        buttons.rejected.connect(self.reject)
        for button in buttons.buttons():
            button.setAccessibleName(button.text().replace("&", ""))
        lay = QVBoxLayout(self)
        lay.addWidget(self.filter)
        lay.addWidget(self.tree, 1)
        lay.addWidget(footer)
        lay.addWidget(buttons)
        self.refresh()

    def refresh(self) -> None:
        """Rebuild the list from the window's keymap."""
        keymap: Keymap = keymap_for(self.window_)
        self.tree.clear()
        for context in CONTEXTS:
            group = QTreeWidgetItem(self.tree, [HEADINGS[context], ""])
            group.setFirstColumnSpanned(True)
            font = group.font(0)
            font.setBold(True)
            group.setFont(0, font)
            group.setFlags(Qt.ItemFlag.ItemIsEnabled)
            group.setData(0, Qt.ItemDataRole.AccessibleTextRole, WHERE[context])
            for action in keymap.actions:
                if action.context != context:
                    continue
                keys = keymap.shown(action.id) or "—"
                item = QTreeWidgetItem(group, [action.label, keys])
                item.setData(0, Qt.ItemDataRole.UserRole, action.id)
                item.setToolTip(0, action.description)
                item.setData(0, Qt.ItemDataRole.AccessibleTextRole,
                             f"{action.label}: {keys if keys != '—' else 'no key'}")
                if not available(action, self.state):
                    item.setDisabled(True)
                    item.setToolTip(0, f"{action.description} (not available yet)")
        self.tree.expandAll()
        self.tree.resizeColumnToContents(0)
        self._filter(self.filter.text())

    def _groups(self) -> list[tuple[QTreeWidgetItem, list[QTreeWidgetItem]]]:
        """Each context's group row with its action rows."""
        out = []
        for g in range(self.tree.topLevelItemCount()):
            group = self.tree.topLevelItem(g)
            if group is not None:
                out.append((group, [item for i in range(group.childCount())
                                    if (item := group.child(i)) is not None]))
        return out

    def _filter(self, text: str) -> None:
        needle = text.casefold().replace(" ", "")
        for group, items in self._groups():
            shown = 0
            for item in items:
                hay = (item.text(0) + "|" + item.text(1)).casefold().replace(" ", "")
                item.setHidden(bool(needle) and needle not in hay)
                shown += not item.isHidden()
            group.setHidden(shown == 0)


class HelpWindow(CommandsWindow, Protocol):
    """What the shortcut help uses of the window's state (``WindowState``): the
    commands, and where the dialog is kept once made."""

    shortcut_help: ShortcutHelp | None


def open_shortcut_help(state: HelpWindow, window: QWidget) -> ShortcutHelp:
    """Show (creating once) the shortcut help of ``window``, whose state is ``state``,
    refreshed; returns it."""
    dialog = getattr(state, "shortcut_help", None)
    if not isinstance(dialog, ShortcutHelp):
        dialog = ShortcutHelp(state, window)
        state.shortcut_help = dialog
    dialog.refresh()
    dialog.filter.clear()
    dialog.show()
    dialog.raise_()
    dialog.activateWindow()
    dialog.filter.setFocus()
    return dialog

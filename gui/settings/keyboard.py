"""Settings → Keyboard: rebind any action, see conflicts, reset to the defaults.

The table lists every action of ``parley.gui.commands.actions`` (command, keys, where they
work). Choose a row, press the new key in the "New key" box, then **Set**
(replace the keys) or **Add** (one more key). A key that another action
already answers at the same time, or a typing/editing key for a command
that works anywhere, is refused with a sentence naming the other action —
nothing changes until the key is free (:meth:`parley.gui.commands.keymap.Keymap.bind`).
**Remove keys**, **Reset** (this action) and **Reset all** do what they say.
Every change is handed to ``commit`` at once; the Settings dialog stores it
as ``keyboard.bindings`` and the window applies it live.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import Qt
from PySide6.QtGui import QFont, QKeySequence
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QKeySequenceEdit,
    QLabel,
    QLineEdit,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from parley.gui import dialogs
from parley.gui.commands.actions import PORTABLE, first_combo
from parley.gui.commands.keymap import WHERE, Keymap, KeymapError
from parley.gui.look import appearance

INTRO = ("Choose a command, press the new key in “New key”, then Set (replace its keys) or "
         "Add (one more). Changes apply at once and are kept.")


class KeymapEditor(QWidget):
    """The Keyboard page.

    Args:
        commit: called with the new :class:`Keymap` after every change.
        parent: the parent widget.

    Attributes:
        keymap: the keymap shown.
        table: one row per action (Command, Keys, Where), read-only cells.
        capture: the "New key" recorder (one key combination).
        message: the line saying what happened, or why a key was refused.
    """

    def __init__(self, commit: Callable[[Keymap], None], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._commit = commit
        self.keymap = Keymap()
        scheme = appearance.current()
        intro = QLabel(INTRO, self)
        intro.setWordWrap(True)
        intro.setStyleSheet(f"color: {scheme.muted};")
        self.problems = QLabel(self)
        self.problems.setWordWrap(True)
        self.problems.setStyleSheet(f"color: {scheme.danger};")
        self.filter = QLineEdit(self)
        self.filter.setAccessibleName("Filter commands")
        self.filter.setPlaceholderText("Filter by command or key…")
        self.filter.setClearButtonEnabled(True)
        self.filter.textChanged.connect(self._filter)
        self.table = QTableWidget(len(self.keymap.actions), 3, self)
        self.table.setAccessibleName("Keyboard shortcuts")
        self.table.setHorizontalHeaderLabels(["Command", "Keys", "Where"])
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.verticalHeader().setVisible(False)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        for col in (1, 2):
            header.setSectionResizeMode(col, QHeaderView.ResizeMode.ResizeToContents)
        self.table.setTabKeyNavigation(False)
        self.table.itemSelectionChanged.connect(self._selected)
        self.capture = QKeySequenceEdit(self)
        self.table.activated.connect(lambda _i: self.capture.setFocus())
        self.capture.setAccessibleName("New key")
        self.capture.setMaximumSequenceLength(1)
        self.capture.setClearButtonEnabled(True)
        for inner in self.capture.findChildren(QLineEdit):
            inner.setAccessibleName("New key")
        label = QLabel("&New key:", self)
        label.setBuddy(self.capture)
        self.set_button = self._button("&Set", "Replace the command's keys with the new key",
                                       lambda: self.assign(replace=True))
        self.add_button = self._button("&Add", "Add the new key to the command's keys",
                                       lambda: self.assign(replace=False))
        self.clear_button = self._button("Remove keys", "Leave the command without a key",
                                         self.remove_keys)
        self.reset_button = self._button("&Reset", "Give the command its default keys back",
                                         self.reset_selected)
        self.reset_all_button = self._button("Reset all", "Every command gets its default keys",
                                             self.reset_all)
        self.message = QLabel(self)
        self.message.setWordWrap(True)
        self.message.setAccessibleName("Keyboard message")
        row = QHBoxLayout()
        row.addWidget(label)
        row.addWidget(self.capture, 1)
        for button in (self.set_button, self.add_button):
            row.addWidget(button)
        row2 = QHBoxLayout()
        for button in (self.clear_button, self.reset_button):
            row2.addWidget(button)
        row2.addStretch(1)
        row2.addWidget(self.reset_all_button)
        lay = QVBoxLayout(self)
        lay.addWidget(intro)
        lay.addWidget(self.problems)
        lay.addWidget(self.filter)
        lay.addWidget(self.table, 1)
        lay.addLayout(row)
        lay.addLayout(row2)
        lay.addWidget(self.message)
        self.set_keymap(self.keymap)
        self.table.selectRow(0)

    def _button(self, text: str, description: str, slot: Callable[[], object]) -> QPushButton:
        button = QPushButton(text, self)
        button.setAccessibleName(text.replace("&", ""))
        button.setAccessibleDescription(description)
        button.setToolTip(description)
        button.setAutoDefault(False)
        button.clicked.connect(slot)
        return button

    # -- showing ----------------------------------------------------------------------
    def set_keymap(self, keymap: Keymap) -> None:
        """Show ``keymap`` (without committing it)."""
        self.keymap = keymap
        for row, action in enumerate(keymap.actions):
            keys = keymap.shown(action.id)
            cells = (action.label, keys, WHERE[action.context])
            items: list[QTableWidgetItem] = []
            for col, text in enumerate(cells):
                item = self.table.item(row, col)
                if item is None:
                    item = QTableWidgetItem()
                    self.table.setItem(row, col, item)
                item.setText(text)
                item.setToolTip(action.description)
                item.setData(Qt.ItemDataRole.UserRole, action.id)
                items.append(item)
            changed = not keymap.is_default(action.id)
            keys_item = items[1]
            font = QFont(keys_item.font())
            font.setBold(changed)
            keys_item.setFont(font)
            keys_item.setData(Qt.ItemDataRole.AccessibleTextRole,
                              (keys or "no key") + (" (changed)" if changed else ""))
        problems = keymap.problems()
        self.problems.setText("\n".join(problems))
        self.problems.setVisible(bool(problems))
        self._filter(self.filter.text())
        self._selected()

    def selected_id(self) -> str | None:
        """The action id of the chosen row."""
        row = self.table.currentRow()
        item = self.table.item(row, 0) if row >= 0 else None
        return item.data(Qt.ItemDataRole.UserRole) if item is not None else None

    def select(self, action_id: str) -> None:
        """Choose the row of ``action_id``."""
        for row, action in enumerate(self.keymap.actions):
            if action.id == action_id:
                self.table.selectRow(row)
                item = self.table.item(row, 0)
                if item is not None:
                    self.table.scrollToItem(item)

    def _selected(self) -> None:
        action_id = self.selected_id()
        self.reset_button.setEnabled(action_id is not None
                                     and not self.keymap.is_default(action_id))

    def _filter(self, text: str) -> None:
        needle = text.casefold().replace(" ", "")
        for row in range(self.table.rowCount()):
            hay = "|".join(item.text() for c in (0, 1)
                           if (item := self.table.item(row, c)) is not None).casefold()
            self.table.setRowHidden(row, bool(needle) and needle not in hay.replace(" ", ""))

    def _say(self, text: str, *, error: bool = False) -> None:
        scheme = appearance.current()
        self.message.setStyleSheet(f"color: {scheme.danger if error else scheme.muted};")
        self.message.setText(text)

    # -- changing ---------------------------------------------------------------------
    def assign(self, *, replace: bool) -> bool:
        """Bind the recorded key to the chosen action (instead of, or besides, its keys)."""
        action_id = self.selected_id()
        seq: QKeySequence = self.capture.keySequence()
        if action_id is None or seq.isEmpty():
            self._say("Choose a command, then press a key in “New key”.", error=True)
            return False
        key = QKeySequence(first_combo(seq)).toString(PORTABLE)
        try:
            new = (self.keymap.bind(action_id, [key]) if replace
                   else self.keymap.add_key(action_id, key))
        except KeymapError as exc:
            self._say(exc.message, error=True)
            return False
        self.capture.clear()
        self._apply(new, f"“{new.action(action_id).label}”: {new.shown(action_id)}.")
        return True

    def remove_keys(self) -> None:
        action_id = self.selected_id()
        if action_id is not None:
            label = self.keymap.action(action_id).label
            self._apply(self.keymap.bind(action_id, []), f"“{label}” has no key now.")

    def reset_selected(self) -> None:
        action_id = self.selected_id()
        if action_id is None:
            return
        new = self.keymap.reset(action_id)
        taken = [c for c in new.conflicts() if action_id in (c.first.id, c.second.id)]
        if taken:
            self._say(f"Cannot reset: {taken[0].message()} Change the other command first.",
                      error=True)
            return
        keys = new.shown(action_id) or "no key"
        self._apply(new, f"“{new.action(action_id).label}”: back to {keys}.")

    def reset_all(self) -> None:
        if dialogs.confirm(self, "Reset keyboard shortcuts",
                           "Give every command its default keys back?", action="Reset all"):
            self._apply(self.keymap.reset(), "Every command has its default keys again.")

    def _apply(self, keymap: Keymap, said: str) -> None:
        current = self.selected_id()
        self.set_keymap(keymap)
        if current is not None:
            self.select(current)
        self._say(said)
        self._commit(keymap)

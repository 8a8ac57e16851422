"""The small picker of "Ask several models": which 2–4 models answer one message.

A list of the model picker's models, each with a check box; the models chosen last
time are checked already (``parley.core.app_state.SEVERAL_MODELS``). Keyboard first:
Up / Down move, Space (or the model's number, 1–9) checks and unchecks, Enter asks
the models checked, Esc calls it off. Fewer than two or more than four checked: Enter
says so and the picker stays.
"""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import QEvent, QObject, Qt, Signal
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QVBoxLayout,
    QWidget,
)

from parley.core.chat.several_events import MAX_MODELS, MIN_MODELS

HINT = (f"Check {MIN_MODELS} to {MAX_MODELS} models: Space or a model's number checks it, "
        "Enter asks them, Esc cancels.")
REF = Qt.ItemDataRole.UserRole


class SeveralPicker(QDialog):
    """Choose the models (see the module doc).

    Args:
        parent: the main window.
        choices: ``[(label, provider:model)]`` in the order shown (the model picker's).
        last: the models checked at first (the last choice), ``provider:model``.
        title: the dialog's title ("Ask several models").

    Signals:
        chosen(list): the ``provider:model`` references checked, in list order, once
            Enter (or Ask) is pressed with 2–4 checked.
    """

    chosen = Signal(list)

    def __init__(self, parent: QWidget, choices: Sequence[tuple[str, str]],
                 last: Sequence[str], title: str = "Ask several models") -> None:
        super().__init__(parent)
        self.setWindowTitle(title)
        self.setObjectName("SeveralPicker")
        box = QVBoxLayout(self)
        self.hint = QLabel(HINT, self)
        self.hint.setWordWrap(True)
        box.addWidget(self.hint)
        self.models = QListWidget(self)
        self.models.setAccessibleName("Models to ask")
        for n, (label, ref) in enumerate(choices, start=1):
            item = QListWidgetItem(f"{n}. {label}" if n <= 9 else label, self.models)
            item.setData(REF, ref)
            item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
            item.setCheckState(Qt.CheckState.Checked if ref in last
                               else Qt.CheckState.Unchecked)
        self.models.setCurrentRow(0)
        self.models.installEventFilter(self)
        self._fit_names(parent)
        box.addWidget(self.models)
        buttons = QDialogButtonBox(self)
        self.ask_button = buttons.addButton("Ask", QDialogButtonBox.ButtonRole.AcceptRole)
        buttons.addButton(QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        box.addWidget(buttons)
        self.ask_button.setDefault(True)
        self.models.setFocus()

    def _fit_names(self, parent: QWidget | None) -> None:
        """Make the list as wide as its longest name ("3. Claude … · Anthropic (Second)"),
        at most 90% of the screen; a longer one is cut at its end (whole in its tooltip),
        never scrolled sideways."""
        view = self.models
        for i in range(view.count()):
            item = view.item(i)
            item.setToolTip(item.text())
        wanted = (view.sizeHintForColumn(0) + 2 * view.frameWidth()
                  + view.verticalScrollBar().sizeHint().width() + 4)
        screen = (parent or self).screen()
        room = int(screen.availableGeometry().width() * 0.9) if screen is not None else wanted
        view.setMinimumWidth(min(wanted, room))
        view.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        view.setTextElideMode(Qt.TextElideMode.ElideRight)

    def checked(self) -> list[str]:
        """The models checked now, in list order."""
        out: list[str] = []
        for i in range(self.models.count()):
            item = self.models.item(i)
            if item.checkState() == Qt.CheckState.Checked:
                out.append(str(item.data(REF)))
        return out

    def toggle(self, row: int) -> None:
        """Check or uncheck the model of ``row`` (0-based; out of range: nothing)."""
        item = self.models.item(row)
        if item is None:
            return
        self.models.setCurrentRow(row)
        checked = item.checkState() == Qt.CheckState.Checked
        item.setCheckState(Qt.CheckState.Unchecked if checked else Qt.CheckState.Checked)

    def accept(self) -> None:
        """Ask the checked models, or say why not and stay open."""
        refs = self.checked()
        if not MIN_MODELS <= len(refs) <= MAX_MODELS:
            self.hint.setText(f"{len(refs)} checked. {HINT}")
            return
        self.chosen.emit(refs)
        super().accept()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 (Qt)
        """Space and the number keys check models in the list (Enter and Esc are the
        dialog's)."""
        if watched is self.models and isinstance(event, QKeyEvent) \
                and event.type() == QEvent.Type.KeyPress:
            key = event.key()
            if key == Qt.Key.Key_Space:
                self.toggle(self.models.currentRow())
                return True
            if Qt.Key.Key_1 <= key <= Qt.Key.Key_9:
                self.toggle(int(key) - int(Qt.Key.Key_1))
                return True
        return super().eventFilter(watched, event)

"""Dialogs about spaces: create or edit one (name, system prompt, default model), and
what to do with a deleted space's chats.

A space's system prompt and default model are what its *new* sessions take
(``Store.create_session`` copies them); existing sessions keep theirs.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QLabel,
    QLineEdit,
    QMessageBox,
    QPlainTextEdit,
    QVBoxLayout,
    QWidget,
)

from gui import dialogs
from gui.model_picker import ModelChoice

DeleteChoice = Literal["move", "delete"]


@dataclass(frozen=True, slots=True)
class SpaceValues:
    """What the dialog asks for.

    Attributes:
        name: the space's name (stripped, not empty).
        system_prompt: for its new chats, or None for none.
        default_model: ``provider:model`` for its new chats, or None for Parley's default.
    """

    name: str
    system_prompt: str | None
    default_model: str | None


class SpaceDialog(QDialog):
    """Create a space, or edit one's name, system prompt and default model.

    Args:
        parent: the main window.
        models: the models to offer (the model picker's choices).
        space: the space to edit (``core.store.models.Space``), None to create one.

    Open it with ``open()`` and read :meth:`values` when ``accepted`` fires.
    """

    def __init__(self, parent: QWidget | None, models: Sequence[ModelChoice],
                 space: Any = None) -> None:
        super().__init__(parent)
        self.setObjectName("SpaceDialog")
        self.setWindowTitle("Edit space" if space is not None else "New space")
        self.setAccessibleName(self.windowTitle())
        self.space = space
        self.name_edit = QLineEdit(self)
        self.name_edit.setAccessibleName("Space name")
        self.name_edit.setPlaceholderText("Work, Research, Personal…")
        self.prompt_edit = QPlainTextEdit(self)
        self.prompt_edit.setAccessibleName("System prompt for new chats")
        self.prompt_edit.setPlaceholderText("Optional: instructions every new chat here starts "
                                            "with.")
        self.prompt_edit.setTabChangesFocus(True)
        self.prompt_edit.setMinimumHeight(110)
        self.model_combo = QComboBox(self)
        self.model_combo.setAccessibleName("Default model for new chats")
        self.model_combo.addItem("Parley's default model", None)
        for choice in models:
            self.model_combo.addItem(f"{choice.label}  ({choice.group})", choice.ref)
        if space is not None:
            self.name_edit.setText(space.name)
            self.prompt_edit.setPlainText(space.system_prompt or "")
            self._select_model(space.default_model)
        note = QLabel("New chats in this space start with this system prompt and model; "
                      "existing chats keep theirs.", self)
        note.setWordWrap(True)
        note.setObjectName("DialogNote")
        self.buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel, self)
        self.ok_button = self.buttons.button(QDialogButtonBox.StandardButton.Ok)
        self.ok_button.setText("Save" if space is not None else "Create space")
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        self.name_edit.textChanged.connect(
            lambda text: self.ok_button.setEnabled(bool(text.strip())))
        self.ok_button.setEnabled(bool(self.name_edit.text().strip()))
        form = QFormLayout()
        form.addRow("Name", self.name_edit)
        form.addRow("System prompt", self.prompt_edit)
        form.addRow("Model", self.model_combo)
        lay = QVBoxLayout(self)
        lay.addLayout(form)
        lay.addWidget(note)
        lay.addWidget(self.buttons)
        self.resize(520, 360)
        self.name_edit.setFocus()

    def _select_model(self, ref: str | None) -> None:
        i = self.model_combo.findData(ref)
        if i < 0 and ref:  # a model not offered now (provider removed): keep it visible
            self.model_combo.addItem(ref.split(":", 1)[-1], ref)
            i = self.model_combo.count() - 1
        self.model_combo.setCurrentIndex(max(0, i))

    def values(self) -> SpaceValues:
        """The name, system prompt (None when blank) and default model (None: Parley's)."""
        prompt = self.prompt_edit.toPlainText().strip()
        return SpaceValues(self.name_edit.text().strip(), prompt or None,
                           self.model_combo.currentData())


def ask_delete_space(parent: QWidget | None, name: str, chats: int,
                     default_name: str) -> DeleteChoice | None:
    """Ask what becomes of a deleted space's chats.

    Args:
        parent: the main window.
        name: the space's name.
        chats: how many chats it holds (archived ones included).
        default_name: the default space's name (where moved chats go).

    Returns:
        ``"move"`` (to the default space), ``"delete"`` (with the space), or
        None (cancelled). A space without chats asks a plain yes/no question.
        Tests script the answer through ``gui.dialogs.answers``.
    """
    if dialogs.answers:
        answer = dialogs.answers.popleft()
        return answer if answer in ("move", "delete") else None
    if chats == 0:
        box = QMessageBox(QMessageBox.Icon.Question, "Delete space",
                          f"Delete the empty space “{name}”?", parent=parent)
        ok = box.addButton("Delete space", QMessageBox.ButtonRole.DestructiveRole)
        cancel = box.addButton(QMessageBox.StandardButton.Cancel)
        box.setDefaultButton(cancel)
        box.exec()
        return "move" if box.clickedButton() is ok else None
    plural = "chat" if chats == 1 else "chats"
    box = QMessageBox(QMessageBox.Icon.Warning, "Delete space",
                      f"Delete the space “{name}”? It holds {chats} {plural}.", parent=parent)
    box.setInformativeText(f"Move them to “{default_name}”, or delete them for good "
                           "with the space.")
    move = box.addButton(f"Move {plural} to “{default_name}”", QMessageBox.ButtonRole.AcceptRole)
    delete = box.addButton(f"Delete {plural}", QMessageBox.ButtonRole.DestructiveRole)
    cancel = box.addButton(QMessageBox.StandardButton.Cancel)
    box.setDefaultButton(move)
    box.setEscapeButton(cancel)
    box.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    box.exec()
    clicked = box.clickedButton()
    return "move" if clicked is move else "delete" if clicked is delete else None

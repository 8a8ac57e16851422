"""Dialogs about spaces: create or edit one (name, system prompt, default model, its
documents, the model's memory, whether it may use tools there and which MCP servers'
tools), and what to do with a deleted space's chats.

A space's system prompt and default model are what its *new* sessions take
(``Store.create_session`` copies them); existing sessions keep theirs.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QCheckBox,
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

from parley.core.context.tokens import text_tokens
from parley.core.store.errors import SpaceNameTaken
from parley.core.store.spaces import same_name
from parley.core.tools.memory import DEFAULT_LIMIT_TOKENS, MemoryTooLong
from parley.gui import dialogs
from parley.gui.header.model_picker import ModelChoice, selectable
from parley.gui.text.names import add_named_item, bound_combo

DeleteChoice = Literal["move", "delete"]


@dataclass(frozen=True, slots=True)
class SpaceValues:
    """What the dialog asks for.

    Attributes:
        name: the space's name (stripped, not empty).
        system_prompt: for its new chats, or None for none.
        default_model: ``provider:model`` for its new chats, or None for Parley's default.
        memory: the memory's new text (stripped; '' empties it), or None when the
            user did not change it (or it was never shown).
        tools_enabled: the tools switch as the user set it, or None when left as shown.
        mcp_off: the MCP servers turned off in this space, or None when left as shown.
    """

    name: str
    system_prompt: str | None
    default_model: str | None
    memory: str | None = None
    tools_enabled: bool | None = None
    mcp_off: list[str] | None = None


def name_taken(name: str, taken: Sequence[str]) -> str | None:
    """What to say when ``name`` is one of ``taken`` (trimmed, any case), else None."""
    same = next((t for t in taken if same_name(t, name)), None)
    return None if same is None else str(SpaceNameTaken(same))


class SpaceDialog(QDialog):
    """Create a space, or edit one's name, system prompt, default model, memory and
    tools switch.

    Args:
        parent: the main window.
        models: the models to offer (the model picker's choices).
        space: the space to edit (``parley.core.store.models.Space``), None to create one.
        with_tools: show the memory and tools fields (False: the window runs without
            Parley's tools).
        taken: the other spaces' names: OK refuses one of them (trimmed, any case) and
            says so in the dialog.

    Open it with ``open()``, fill the memory and switch with :meth:`set_memory` and
    :meth:`set_tools_enabled` (until then they are read-only and :meth:`values` reports
    them unchanged), and read :meth:`values` when ``accepted`` fires. OK refuses a
    memory over its token limit (the ``MemoryTooLong`` message shows in the dialog,
    which stays open with the text as typed).
    """

    def __init__(self, parent: QWidget | None, models: Sequence[ModelChoice],
                 space: Any = None, *, with_tools: bool = True,
                 taken: Sequence[str] = ()) -> None:
        super().__init__(parent)
        self.setObjectName("SpaceDialog")
        self.setWindowTitle("Edit space" if space is not None else "New space")
        self.setAccessibleName(self.windowTitle())
        self.space = space
        self.taken = list(taken)
        self.documents: QWidget | None = None  # add_documents (an existing space)
        self.name_edit = QLineEdit(self)
        self.name_edit.setAccessibleName("Space name")
        self.name_edit.setPlaceholderText("Work, Research, Personal…")
        self.prompt_edit = QPlainTextEdit(self)
        self.prompt_edit.setAccessibleName("System prompt for new chats")
        self.prompt_edit.setPlaceholderText("Optional: instructions every new chat here starts "
                                            "with.")
        self.prompt_edit.setTabChangesFocus(True)
        self.prompt_edit.setMinimumHeight(110)
        self.model_combo = bound_combo(QComboBox(self))  # a long model name never widens it
        self.model_combo.setAccessibleName("Default model for new chats")
        self.model_combo.addItem("Parley's default model", None)
        for choice in selectable(models):
            add_named_item(self.model_combo, f"{choice.label}  ({choice.group})", choice.ref)
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
        self._build_tools_fields(form, with_tools)
        self.error_label = QLabel(self)
        self.error_label.setObjectName("DialogError")
        self.error_label.setWordWrap(True)
        self.error_label.setAccessibleName("Problem")
        self.error_label.setVisible(False)
        lay = QVBoxLayout(self)
        lay.addLayout(form)
        lay.addWidget(note)
        lay.addWidget(self.error_label)
        lay.addWidget(self.buttons)
        self.setMinimumWidth(dialogs.TEXT_MIN_WIDTH)
        self.resize(520, 520 if with_tools else 360)
        self.name_edit.setFocus()

    def _build_tools_fields(self, form: QFormLayout, with_tools: bool) -> None:
        self.memory_limit = DEFAULT_LIMIT_TOKENS
        self._memory_shown: str | None = None  # the text set_memory showed
        self._tools_shown: bool | None = None
        self.memory_edit = QPlainTextEdit(self)
        self.memory_edit.setAccessibleName("Memory")
        self.memory_edit.setPlaceholderText(
            "What the model keeps about you across the chats of this space. It writes "
            "here itself; you can edit it.")
        self.memory_edit.setTabChangesFocus(True)
        self.memory_edit.setMinimumHeight(110)
        self.memory_edit.setReadOnly(True)  # until set_memory
        self.memory_hint = QLabel(self)
        self.memory_hint.setObjectName("DialogNote")
        self.memory_edit.textChanged.connect(self._update_hint)
        self.tools_check = QCheckBox("Let the model use tools here (memory, skills, search)",
                                     self)
        self.tools_check.setEnabled(False)  # until set_tools_enabled
        self._update_hint()
        self.mcp_checks: dict[str, QCheckBox] = {}
        self._mcp_shown: list[str] | None = None
        self.mcp_box = QWidget(self)
        self.mcp_layout = QVBoxLayout(self.mcp_box)
        self.mcp_layout.setContentsMargins(0, 0, 0, 0)
        self.mcp_box.setVisible(False)  # until set_mcp_servers (when there are servers)
        self._form = form
        if with_tools:
            form.addRow("Memory", self.memory_edit)
            form.addRow("", self.memory_hint)
            form.addRow("", self.tools_check)
            form.addRow("MCP servers", self.mcp_box)
            form.setRowVisible(self.mcp_box, False)  # no label beside nothing
        else:
            for widget in (self.memory_edit, self.memory_hint, self.tools_check):
                widget.setVisible(False)

    def add_documents(self, panel: QWidget) -> None:
        """Show a space's documents (``parley.gui.sidebar.space_documents``) under its model."""
        self.documents = panel
        self._form.insertRow(3, "Documents", panel)
        self.resize(self.width(), self.height() + 200)

    def set_memory(self, text: str, limit: int = DEFAULT_LIMIT_TOKENS) -> None:
        """Show the space's memory (``text``) and its limit (tokens); makes it editable."""
        self.memory_limit = limit
        self._memory_shown = text
        self.memory_edit.setPlainText(text)
        self.memory_edit.setReadOnly(False)
        self._update_hint()

    def set_tools_enabled(self, on: bool) -> None:
        """Show the space's tools switch as ``on``; makes it changeable."""
        self._tools_shown = on
        self.tools_check.setChecked(on)
        self.tools_check.setEnabled(True)

    def set_mcp_servers(self, servers: Sequence[str], off: Sequence[str]) -> None:
        """Offer one box per configured MCP server, ticked unless turned off in this space
        (every server is available in every space until a space turns it off)."""
        self._mcp_shown = sorted(off)
        for name in servers:
            box = QCheckBox(f"Offer the tools of “{name}”", self.mcp_box)
            box.setAccessibleName(f"MCP server {name}")
            box.setChecked(name not in off)
            self.mcp_layout.addWidget(box)
            self.mcp_checks[name] = box
        if self._form.indexOf(self.mcp_box) >= 0:  # the row, its label with it
            self._form.setRowVisible(self.mcp_box, bool(servers))
        self.mcp_box.setVisible(bool(servers))

    def memory_tokens(self) -> int:
        """The memory field's size (tokens, ``parley.core.context.tokens.text_tokens`` of the
        stripped text)."""
        return text_tokens(self.memory_edit.toPlainText().strip())

    def _update_hint(self) -> None:
        tokens = self.memory_tokens()
        over = " — over the limit" if tokens > self.memory_limit else ""
        self.memory_hint.setText(f"{tokens:,} / {self.memory_limit:,} tokens{over}")

    def show_error(self, message: str) -> None:
        """Show a problem in the dialog (it stays open)."""
        self.error_label.setText(message)
        self.error_label.setVisible(True)

    def accept(self) -> None:
        """Close with OK, unless the name is another space's or the memory is over its
        limit (then say so and stay)."""
        taken = name_taken(self.name_edit.text(), self.taken)
        if taken is not None:
            self.show_error(taken)
            self.name_edit.setFocus()
            self.name_edit.selectAll()
            return
        tokens = self.memory_tokens()
        if self._memory_shown is not None and tokens > self.memory_limit:
            self.show_error(str(MemoryTooLong(tokens, self.memory_limit)))
            self.memory_edit.setFocus()
            return
        super().accept()

    def _select_model(self, ref: str | None) -> None:
        i = self.model_combo.findData(ref)
        if i < 0 and ref:  # a model not offered now (provider removed): keep it visible
            add_named_item(self.model_combo, ref.split(":", 1)[-1], ref)
            i = self.model_combo.count() - 1
        self.model_combo.setCurrentIndex(max(0, i))

    def values(self) -> SpaceValues:
        """The name, system prompt (None when blank), default model (None: Parley's), and
        the memory and tools switch when the user changed them (else None)."""
        prompt = self.prompt_edit.toPlainText().strip()
        memory: str | None = self.memory_edit.toPlainText().strip()
        if self._memory_shown is None or memory == self._memory_shown.strip():
            memory = None
        tools: bool | None = self.tools_check.isChecked()
        if self._tools_shown is None or tools == self._tools_shown:
            tools = None
        mcp_off: list[str] | None = sorted(
            name for name, box in self.mcp_checks.items() if not box.isChecked())
        if self._mcp_shown is None or mcp_off == self._mcp_shown:
            mcp_off = None
        return SpaceValues(self.name_edit.text().strip(), prompt or None,
                           self.model_combo.currentData(), memory, tools, mcp_off)


def chats_held(chats: int, archived: int) -> str:
    """"2 chats (1 archived)": how many chats a space holds, the archived ones (not
    listed unless archived chats are shown) said apart."""
    held = f"{chats} chat{'' if chats == 1 else 's'}"
    if archived == chats == 1:
        return "1 archived chat"
    if archived == chats and chats:
        return f"{held} (all archived)"
    return f"{held} ({archived} archived)" if archived else held


def move_or_delete(chats: int, default_name: str) -> str:
    """The delete-space question's second line, for one chat or several."""
    them = "it" if chats == 1 else "them"
    return f"Move {them} to “{default_name}”, or delete {them} for good with the space."


def ask_delete_space(parent: QWidget | None, name: str, chats: int,
                     default_name: str, archived: int = 0) -> DeleteChoice | None:
    """Ask what becomes of a deleted space's chats.

    Args:
        parent: the main window.
        name: the space's name.
        chats: how many chats it holds (archived ones included).
        default_name: the default space's name (where moved chats go).
        archived: how many of ``chats`` are archived (said: :func:`chats_held`).

    Returns:
        ``"move"`` (to the default space), ``"delete"`` (with the space), or
        None (cancelled). A space without chats asks a plain yes/no question.
        Tests script the answer through ``parley.gui.dialogs.answers``.
    """
    if dialogs.answers:
        answer = dialogs.answers.popleft()
        return answer if answer in ("move", "delete") else None
    if chats == 0:
        box = dialogs.readable(QMessageBox(QMessageBox.Icon.Question, "Delete space",
                                           f"Delete the empty space “{name}”?", parent=parent))
        ok = box.addButton("Delete space", QMessageBox.ButtonRole.DestructiveRole)
        cancel = box.addButton(QMessageBox.StandardButton.Cancel)
        box.setDefaultButton(cancel)
        box.exec()
        return "move" if box.clickedButton() is ok else None
    plural = "chat" if chats == 1 else "chats"
    box = dialogs.readable(QMessageBox(
        QMessageBox.Icon.Warning, "Delete space",
        f"Delete the space “{name}”? It holds {chats_held(chats, archived)}.", parent=parent))
    box.setInformativeText(move_or_delete(chats, default_name))
    move = box.addButton(f"Move {plural} to “{default_name}”", QMessageBox.ButtonRole.AcceptRole)
    delete = box.addButton(f"Delete {plural}", QMessageBox.ButtonRole.DestructiveRole)
    cancel = box.addButton(QMessageBox.StandardButton.Cancel)
    box.setDefaultButton(move)
    box.setEscapeButton(cancel)
    box.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    box.exec()
    clicked = box.clickedButton()
    return "move" if clicked is move else "delete" if clicked is delete else None

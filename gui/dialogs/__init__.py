"""Small standard dialogs: confirm, rename, report a problem, report a crash.

Each returns what the person chose; none of them does any work itself. The
``confirm``/``ask_text`` functions go through module-level hooks
(:data:`answers`) so tests can answer a dialog the way a person would
without a nested modal loop.

None of them is a tiny default box: a one-line question (:class:`TextDialog`)
is at least :data:`TEXT_MIN_WIDTH` wide and wider for a longer value, so a
typical chat title shows whole, and a message box is at least
:data:`MESSAGE_MIN_WIDTH` wide, so its window title ("Remove provider —
Parley") is not cut either. Their look (fields, buttons, focus) comes from the
application's style sheet (``parley.gui.look.appearance``).
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QGridLayout,
    QLabel,
    QLineEdit,
    QMessageBox,
    QSizePolicy,
    QSpacerItem,
    QVBoxLayout,
    QWidget,
)

#: The narrowest a one-line text dialog is (px): room for a typical chat title.
TEXT_MIN_WIDTH = 420
#: The widest it grows to show a long value whole (px; less on a small screen).
TEXT_MAX_WIDTH = 720
#: The narrowest a message box is (px).
MESSAGE_MIN_WIDTH = 420

#: Scripted answers for the next dialogs (tests): each entry is what the
#: next confirm()/ask_text() returns instead of opening a modal dialog.
answers: deque[Any] = deque()


def confirm(parent: QWidget | None, title: str, text: str, *, action: str,
            destructive: bool = False) -> bool:
    """Ask a yes/no question; returns True when the person chose ``action``.

    Args:
        parent: the window the dialog belongs to.
        title: the window title.
        text: the question, one or two sentences.
        action: the label of the confirming button ("Delete").
        destructive: style the confirming button as dangerous and make
            Cancel the default button (Enter does not destroy).
    """
    if answers:
        return bool(answers.popleft())
    box = QMessageBox(QMessageBox.Icon.Warning if destructive else QMessageBox.Icon.Question,
                      title, text, parent=parent)
    readable(box)
    ok = box.addButton(action, QMessageBox.ButtonRole.DestructiveRole if destructive
                       else QMessageBox.ButtonRole.AcceptRole)
    cancel = box.addButton(QMessageBox.StandardButton.Cancel)
    box.setDefaultButton(cancel if destructive else ok)
    box.setEscapeButton(cancel)
    box.exec()
    return box.clickedButton() is ok


class TextDialog(QDialog):
    """Ask for one line of text (rename a chat or a space).

    Args:
        parent: the window it belongs to.
        title: the window title ("Rename chat").
        label: what to type ("Title:").
        value: the current text: shown whole (the dialog is wide enough, up to
            :data:`TEXT_MAX_WIDTH`) and selected, so typing replaces it.

        refuse: given the stripped text on OK, what to say when it is not acceptable
            (the dialog says it and stays open), or None to accept it.

    OK is enabled only while the field holds more than spaces.
    """

    def __init__(self, parent: QWidget | None, title: str, label: str, value: str = "", *,
                 refuse: Callable[[str], str | None] | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("TextDialog")
        self.setWindowTitle(title)
        self.setAccessibleName(title)
        self.label = QLabel(label, self)
        self.edit = QLineEdit(value, self)
        self.edit.setAccessibleName(label.rstrip(":") or title)
        self.label.setBuddy(self.edit)
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel, self)
        self.ok_button = buttons.button(QDialogButtonBox.StandardButton.Ok)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        self.edit.textChanged.connect(lambda t: self.ok_button.setEnabled(bool(t.strip())))
        self.ok_button.setEnabled(bool(value.strip()))
        self.refuse = refuse
        self.error_label = QLabel(self)
        self.error_label.setObjectName("DialogError")
        self.error_label.setWordWrap(True)
        self.error_label.setAccessibleName("Problem")
        self.error_label.setVisible(False)
        self._layout = lay = QVBoxLayout(self)
        lay.setContentsMargins(18, 16, 18, 14)
        lay.setSpacing(8)
        lay.addWidget(self.label)
        lay.addWidget(self.edit)
        lay.addWidget(self.error_label)
        lay.addSpacing(6)
        lay.addWidget(buttons)
        self.setMinimumWidth(TEXT_MIN_WIDTH)
        self.resize(self._width_for(value), self.sizeHint().height())
        # All selected, the cursor at the start: a long value shows its beginning.
        self.edit.setSelection(len(value), -len(value))
        self.edit.setFocus()

    def _width_for(self, value: str) -> int:
        """Wide enough for ``value`` on one line, within the limits and the screen."""
        margins = self.contentsMargins() + self._layout.contentsMargins()
        frame = 28  # the field's frame and padding (px)
        wanted = (self.edit.fontMetrics().horizontalAdvance(value) + frame
                  + margins.left() + margins.right())
        limit = TEXT_MAX_WIDTH
        parent = self.parentWidget()
        screen = parent.screen() if parent is not None else QGuiApplication.primaryScreen()
        if screen is not None:
            limit = min(limit, int(screen.availableGeometry().width() * 0.8))
        return max(TEXT_MIN_WIDTH, min(wanted, limit))

    def text(self) -> str:
        """The text typed, stripped."""
        return self.edit.text().strip()

    def accept(self) -> None:
        """Close with OK, unless ``refuse`` objects to the text (then say why and stay)."""
        problem = self.refuse(self.text()) if self.refuse is not None else None
        if problem:
            self.error_label.setText(problem)
            self.error_label.setVisible(True)
            self._fit_height()
            self.edit.setFocus()
            self.edit.selectAll()
            return
        super().accept()

    def _fit_height(self) -> None:
        """Grow to hold the wrapped problem and still show the buttons whole (a top-level
        dialog's layout does not grow it for a label's height-for-width by itself)."""
        lay = self._layout
        lay.activate()
        needed = lay.totalHeightForWidth(self.width()) if lay.hasHeightForWidth() \
            else lay.totalSizeHint().height()
        if needed > self.height():
            self.resize(self.width(), needed)


def ask_text(parent: QWidget | None, title: str, label: str, value: str = "", *,
             refuse: Callable[[str], str | None] | None = None) -> str | None:
    """Ask for one line of text (:class:`TextDialog`); returns it stripped, or None when
    cancelled or empty. ``refuse``: :class:`TextDialog`'s (an answer from
    :data:`answers` it refuses is None: nothing changes)."""
    if answers:
        answer = answers.popleft()
        text = str(answer).strip() or None if answer is not None else None
        return None if text is None or (refuse is not None and refuse(text)) else text
    dialog = TextDialog(parent, title, label, value, refuse=refuse)
    try:
        return dialog.text() or None if dialog.exec() == QDialog.DialogCode.Accepted else None
    finally:
        dialog.deleteLater()


def readable(box: QMessageBox) -> QMessageBox:
    """Make a message box at least :data:`MESSAGE_MIN_WIDTH` px wide, so a short question
    does not make a box too narrow for its own title; returns ``box``.

    ``QMessageBox`` sizes itself from its text and ignores ``setMinimumWidth``; a
    minimum width on its label would stop the label from growing (a longer text is
    then cut), so an empty spacer row of that width is added to its grid instead.
    """
    grid = box.layout()
    if isinstance(grid, QGridLayout):
        grid.addItem(QSpacerItem(MESSAGE_MIN_WIDTH, 0, QSizePolicy.Policy.Minimum,
                                 QSizePolicy.Policy.Minimum),
                     grid.rowCount(), 0, 1, grid.columnCount())
    return box


def show_problem(parent: QWidget | None, title: str, text: str) -> None:
    """Tell the person about an error they can act on (returns at once): one dialog per
    window, modal to it, Return closes it; a problem arriving while it is open joins its
    list (``parley.gui.dialogs.problem_box``)."""
    from parley.gui.dialogs.problem_box import show_problem as show

    show(parent, title, text)


def show_crash(parent: QWidget | None, summary: str, details: str, log_path: str) -> QMessageBox:
    """Show the crash report dialog (non-modal) and return it.

    Args:
        parent: the main window, if any.
        summary: one line: the exception type and message.
        details: the traceback (shown under "Show Details…").
        log_path: where the full log is, so a person can send it.
    """
    box = readable(QMessageBox(parent))
    box.setIcon(QMessageBox.Icon.Critical)
    box.setWindowTitle("Parley hit a bug")
    box.setText("Something went wrong inside Parley. Your conversations are saved; "
                "you can keep working, or restart Parley if things look wrong.")
    box.setInformativeText(f"{summary}\n\nThe log with the details is at:\n{log_path}")
    box.setDetailedText(details)
    box.setModal(False)
    box.setAccessibleName("Parley hit a bug")
    box.show()
    return box


async def ask(parent: QWidget | None, icon: QMessageBox.Icon, title: str, text: str,
              buttons: list[tuple[str, QMessageBox.ButtonRole, str]], *, default: str) -> str:
    """Ask with a window-modal message box; returns the chosen button's value.

    Esc and closing the box choose the last button. A test answers through
    ``parley.gui.dialogs.answers`` (the value).
    """
    if answers:
        return str(answers.popleft())
    box = readable(QMessageBox(icon, title, text, parent=parent))
    box.setAccessibleName(title)
    made = {value: box.addButton(label, role) for label, role, value in buttons}
    box.setDefaultButton(made[default])
    box.setEscapeButton(made[buttons[-1][2]])
    box.setWindowModality(Qt.WindowModality.WindowModal)
    answered: asyncio.Future[str] = asyncio.get_running_loop().create_future()

    def finished(_result: int) -> None:
        clicked = box.clickedButton()
        value = next((v for v, b in made.items() if b is clicked), buttons[-1][2])
        if not answered.done():
            answered.set_result(value)

    box.finished.connect(finished)
    box.open()
    try:
        return await answered
    finally:
        box.deleteLater()


async def ask_new_db_file(parent: QWidget, title: str, folder: Path, name: str,
                          *, object_name: str = "") -> Path | None:
    """Ask where to write a new sessions file with a window-modal Save dialog (the
    event loop keeps running); the path chosen, or None when cancelled.

    Args:
        parent: the dialog's parent.
        title: the dialog's title.
        folder: where it opens (used when it is a folder).
        name: the file name suggested.
        object_name: the dialog's object name (tests find the dialog by it).

    An existing file is not confirmed for overwrite here: the callers never replace
    one and say so themselves.
    """
    dlg = QFileDialog(parent, title)
    if object_name:
        dlg.setObjectName(object_name)
    dlg.setAcceptMode(QFileDialog.AcceptMode.AcceptSave)
    dlg.setOption(QFileDialog.Option.DontConfirmOverwrite)
    dlg.setNameFilters(["Parley chats (*.db)", "All files (*)"])
    if folder.is_dir():
        dlg.setDirectory(str(folder))
    dlg.selectFile(name)
    dlg.setWindowModality(Qt.WindowModality.WindowModal)
    answered: asyncio.Future[Path | None] = asyncio.get_running_loop().create_future()

    def finished(result: int) -> None:
        files = dlg.selectedFiles()
        ok = int(result) == QDialog.DialogCode.Accepted.value and files
        if not answered.done():
            answered.set_result(Path(files[0]) if ok else None)

    dlg.finished.connect(finished)
    dlg.open()
    try:
        return await answered
    finally:
        dlg.deleteLater()

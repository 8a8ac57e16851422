"""Small standard dialogs: confirm, rename, report a problem, report a crash.

Each returns what the person chose; none of them does any work itself. The
``confirm``/``ask_text`` functions go through module-level hooks
(:data:`answers`) so tests can answer a dialog the way a person would
without a nested modal loop.
"""

from __future__ import annotations

from collections import deque
from typing import Any

from PySide6.QtWidgets import QInputDialog, QLineEdit, QMessageBox, QWidget

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
    ok = box.addButton(action, QMessageBox.ButtonRole.DestructiveRole if destructive
                       else QMessageBox.ButtonRole.AcceptRole)
    cancel = box.addButton(QMessageBox.StandardButton.Cancel)
    box.setDefaultButton(cancel if destructive else ok)
    box.setEscapeButton(cancel)
    box.exec()
    return box.clickedButton() is ok


def ask_text(parent: QWidget | None, title: str, label: str, value: str = "") -> str | None:
    """Ask for one line of text; returns it stripped, or None when cancelled or empty."""
    if answers:
        answer = answers.popleft()
        return str(answer).strip() or None if answer is not None else None
    text, ok = QInputDialog.getText(parent, title, label, QLineEdit.EchoMode.Normal, value)
    return text.strip() or None if ok else None


def show_problem(parent: QWidget | None, title: str, text: str) -> None:
    """Tell the person about an error they can act on (non-modal, returns at once)."""
    box = QMessageBox(QMessageBox.Icon.Warning, title, text, QMessageBox.StandardButton.Ok,
                      parent)
    box.setModal(False)
    box.setAccessibleName(title)
    box.show()


def show_crash(parent: QWidget | None, summary: str, details: str, log_path: str) -> QMessageBox:
    """Show the crash report dialog (non-modal) and return it.

    Args:
        parent: the main window, if any.
        summary: one line: the exception type and message.
        details: the traceback (shown under "Show Details…").
        log_path: where the full log is, so a person can send it.
    """
    box = QMessageBox(parent)
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

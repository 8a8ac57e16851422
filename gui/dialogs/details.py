"""The Details of a one-line notice: what a failure said in full, in a modal dialog.

A failure is told in one line (the status bar, ``parley.gui.notices.status_line``);
what stands behind it — each attempt, the models by their display names, what was
kept and what to do — is here, one line each, opened by the notice's "Details"
link. The dialog is modal to its window and Return or Esc closes it.
"""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QLabel, QVBoxLayout, QWidget

#: The dialog's width (px): lines of about 80 characters wrap as little as possible.
DETAILS_WIDTH = 560


@dataclass(frozen=True)
class Details:
    """What a notice's Details dialog shows.

    Attributes:
        title: the dialog's title and heading ("Couldn't summarize this chat").
        lines: the paragraphs under it, in order (each one or two sentences).
    """

    title: str
    lines: tuple[str, ...] = ()


class DetailsDialog(QDialog):
    """A modal dialog with a heading and a few lines; one Close button (Return, Esc).

    Attributes:
        heading: the heading label.
        labels: one label per line of :attr:`Details.lines`.
    """

    def __init__(self, parent: QWidget | None, details: Details) -> None:
        super().__init__(parent)
        self.setObjectName("DetailsDialog")
        self.setWindowTitle(details.title)
        self.setAccessibleName(details.title)
        self.setWindowModality(Qt.WindowModality.WindowModal)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(18, 16, 18, 14)
        lay.setSpacing(8)
        self.heading = QLabel(f"<b>{_escape(details.title)}</b>", self)
        lay.addWidget(self.heading)
        self.labels: list[QLabel] = []
        for line in details.lines:
            label = QLabel(line, self)
            label.setTextFormat(Qt.TextFormat.PlainText)
            label.setWordWrap(True)
            label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
            lay.addWidget(label)
            self.labels.append(label)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, self)
        self.close_button = buttons.button(QDialogButtonBox.StandardButton.Close)
        self.close_button.setDefault(True)  # Return closes it
        buttons.rejected.connect(self.reject)
        lay.addStretch(1)  # room the dialog is given goes under the lines, not between
        lay.addSpacing(4)
        lay.addWidget(buttons)
        self.setMinimumWidth(DETAILS_WIDTH)
        # As tall as its lines wrapped at that width (a dialog opened at Qt's default
        # size leaves a blank half under them).
        height = lay.totalHeightForWidth(DETAILS_WIDTH) if lay.hasHeightForWidth() else -1
        self.resize(DETAILS_WIDTH, height if height > 0 else self.sizeHint().height())
        self.close_button.setFocus()

    def text(self) -> str:
        """Every line shown, heading first, one per line (for tests and copying)."""
        return "\n".join([self.windowTitle(), *(label.text() for label in self.labels)])


def open_details(parent: QWidget | None, details: Details) -> DetailsDialog:
    """Open ``details`` in a modal dialog (not blocking: the window's loop goes on) and
    return it; it deletes itself once closed."""
    dialog = DetailsDialog(parent, details)
    dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose, True)
    dialog.open()
    return dialog


def _escape(text: str) -> str:
    import html

    return html.escape(text)

"""The message box at the bottom of the window, with its Send/Stop button.

:class:`Composer` is the text editor itself (tests type into it). Its keys
(Enter sends, Shift+Enter adds a line, Esc stops, Up in an empty box edits
the last message) come from :func:`gui.actions.composer_keymap`; the
composer only reports which action a key means, through ``on_action``.
:class:`ComposerBar` frames it with the Send/Stop button, a banner shown
while editing the last message, and a one-line hint.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QSize, Qt, Signal
from PySide6.QtGui import QKeyEvent, QTextOption
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QSizePolicy,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from gui import actions, appearance
from gui.actions import Action

MAX_LINES = 12


class Composer(QPlainTextEdit):
    """A plain-text editor that grows with its text (1 to ``MAX_LINES`` lines).

    Attributes:
        on_action: called with the :class:`Action` a key press means; when it
            returns False the key goes to the editor as usual.
    """

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.on_action: Callable[[Action], Any] | None = None
        self._keymap = actions.composer_keymap()
        self.setObjectName("Composer")
        self.setAccessibleName("Message")
        self.setAccessibleDescription("Type a message. Enter sends, Shift+Enter adds a line.")
        self.setPlaceholderText("Message Parley…")
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setTabChangesFocus(True)
        self.setWordWrapMode(QTextOption.WrapMode.WrapAtWordBoundaryOrAnywhere)
        self.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAsNeeded)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.document().setDocumentMargin(2)
        self.document().documentLayout().documentSizeChanged.connect(self._fit)
        self._fit()

    def text(self) -> str:
        """Return the text typed so far."""
        return self.toPlainText()

    def set_text(self, text: str) -> None:
        """Replace the text and put the cursor at its end."""
        self.setPlainText(text)
        self.moveCursor(self.textCursor().MoveOperation.End)

    def keyPressEvent(self, event: QKeyEvent) -> None:  # noqa: N802 (Qt name)
        action = self._keymap.get(actions.key_text(event.key(), event.modifiers()))
        handler = self.on_action
        if action is not None and handler is not None and handler(action) is not False:
            event.accept()
            return
        super().keyPressEvent(event)

    def _fit(self, *_args: object) -> None:
        line = self.fontMetrics().lineSpacing()
        lines = max(1, min(MAX_LINES, int(self.document().size().height())))
        margins = self.contentsMargins()
        height = lines * line + 2 * int(self.document().documentMargin()) + margins.top() \
            + margins.bottom() + 4
        if height != self.height():
            self.setFixedHeight(height)

    def sizeHint(self) -> QSize:  # noqa: N802
        return QSize(400, self.height())


class ComposerBar(QWidget):
    """The composer inside its rounded frame, with the Send/Stop button.

    Signals:
        send_clicked: the Send button was pressed.
        stop_clicked: the Stop button was pressed.
    """

    send_clicked = Signal()
    stop_clicked = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("ComposerBar")
        self.editor = Composer(self)
        self._busy = False

        self.frame = QFrame(self)
        self.frame.setObjectName("ComposerFrame")
        self.banner = QLabel(self.frame)
        self.banner.setObjectName("ComposerBanner")
        self.banner.setAccessibleName("Editing notice")
        self.banner.hide()

        self.button = QToolButton(self.frame)
        self.button.setObjectName("SendButton")
        self.button.setIconSize(QSize(18, 18))
        self.button.setFixedSize(34, 34)
        self.button.setCursor(Qt.CursorShape.PointingHandCursor)
        self.button.clicked.connect(self._clicked)

        row = QHBoxLayout()
        row.setContentsMargins(0, 0, 0, 0)
        row.setSpacing(8)
        row.addWidget(self.editor, 1, Qt.AlignmentFlag.AlignBottom)
        row.addWidget(self.button, 0, Qt.AlignmentFlag.AlignBottom)
        inner = QVBoxLayout(self.frame)
        inner.setContentsMargins(16, 10, 10, 10)
        inner.setSpacing(6)
        inner.addWidget(self.banner)
        inner.addLayout(row)

        self.hint = QLabel("Enter to send  ·  Shift+Enter for a new line  ·  Esc to stop", self)
        self.hint.setObjectName("ComposerHint")
        self.hint.setAlignment(Qt.AlignmentFlag.AlignCenter)
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        outer.setSpacing(6)
        outer.addWidget(self.frame)
        outer.addWidget(self.hint)

        self.editor.textChanged.connect(self._refresh_button)
        self._refresh_button()

    @property
    def busy(self) -> bool:
        """True while a reply streams: the button shows Stop."""
        return self._busy

    def set_busy(self, busy: bool) -> None:
        """Switch the button between Send and Stop."""
        self._busy = busy
        self._refresh_button()

    def set_editing(self, editing: bool) -> None:
        """Show or hide the "editing your last message" banner."""
        self.banner.setText("Editing your last message  ·  Enter to resend, Esc to cancel")
        self.banner.setVisible(editing)

    def _refresh_button(self) -> None:
        t = appearance.current()
        if self._busy:
            self.button.setIcon(appearance.icon("stop", t.accent_text, 18))
            self.button.setToolTip("Stop the reply (Esc)")
            self.button.setAccessibleName("Stop")
            self.button.setEnabled(True)
        else:
            self.button.setIcon(appearance.icon("send", t.accent_text, 18))
            self.button.setToolTip("Send (Enter)")
            self.button.setAccessibleName("Send")
            self.button.setEnabled(bool(self.editor.text().strip()))
        self.button.setProperty("busy", self._busy)
        self.button.style().unpolish(self.button)
        self.button.style().polish(self.button)

    def _clicked(self) -> None:
        (self.stop_clicked if self._busy else self.send_clicked).emit()

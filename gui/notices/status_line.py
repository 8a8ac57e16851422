"""The window's status bar, with messages too long for one line shown whole.

``QStatusBar`` draws a temporary message on one line and cuts what does not
fit ("…the other taker"): a refusal that explains what to do loses its end.
:class:`WrappingStatusBar` wraps such a message over as many lines as it
needs (the bar grows while it shows, and shrinks back after) and gives it as
the bar's tooltip too. Short messages look as before.

A message belongs to the chat open when it was shown (:meth:`set_chat` says
which one is open): when another chat opens, it is cleared, so a message
about one chat is never read as being about the next.
"""

from __future__ import annotations

from PySide6.QtCore import QRect, Qt
from PySide6.QtGui import QPainter, QPaintEvent
from PySide6.QtWidgets import QStatusBar, QStyleOption, QWidget

#: Left/right and top/bottom room around a wrapped message (px).
PAD_X, PAD_Y = 6, 3


class WrappingStatusBar(QStatusBar):
    """A status bar whose temporary messages wrap instead of being cut off."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._one_line = 0  # the bar's height for one line, once known
        self._chat: str | None = None  # the chat open now
        self._shown_for: str | None = None  # the chat open when the message was shown
        self.messageChanged.connect(self._changed)

    def set_chat(self, chat_id: str | None) -> None:
        """Say which chat is open (None: a new chat); a message shown while another
        chat was open is cleared."""
        if chat_id != self._chat and self.currentMessage() and self._shown_for != chat_id:
            self.clearMessage()
        self._chat = chat_id

    def chat_created(self, chat_id: str) -> None:
        """The new chat open now got its id (its first message was sent): its message stays."""
        if self._chat is None:
            if self._shown_for is None:
                self._shown_for = chat_id
            self._chat = chat_id

    def wraps(self) -> bool:
        """True while the message shown does not fit on one line (it is wrapped)."""
        text = self.currentMessage()
        return bool(text) and self.fontMetrics().horizontalAdvance(text) > self._room()

    def _room(self) -> int:
        return max(50, self.width() - 2 * PAD_X)

    def _changed(self, text: str) -> None:
        self._shown_for = self._chat
        self.setToolTip(text)
        if not self._one_line:
            self._one_line = self.sizeHint().height()
        if text and self.wraps():
            box = self.fontMetrics().boundingRect(
                QRect(0, 0, self._room(), 10_000), int(Qt.TextFlag.TextWordWrap), text)
            self.setMinimumHeight(max(self._one_line, box.height() + 2 * PAD_Y))
        else:
            self.setMinimumHeight(0)
        self.updateGeometry()  # the window's layout gives the bar its new height
        self.update()

    def resizeEvent(self, event):  # type: ignore[no-untyped-def]  # noqa: N802 - Qt's name
        super().resizeEvent(event)
        if self.currentMessage() and event.oldSize().width() != event.size().width():
            self._changed(self.currentMessage())

    def paintEvent(self, event: QPaintEvent) -> None:  # noqa: N802 - Qt's name
        if not self.wraps():
            super().paintEvent(event)
            return
        from PySide6.QtWidgets import QStyle  # its ~600 enum values: not for the first paint

        painter = QPainter(self)
        opt = QStyleOption()
        opt.initFrom(self)
        self.style().drawPrimitive(QStyle.PrimitiveElement.PE_PanelStatusBar, opt, painter, self)
        painter.setPen(self.palette().windowText().color())
        painter.drawText(self.rect().adjusted(PAD_X, PAD_Y, -PAD_X, -PAD_Y),
                         int(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter
                             | Qt.TextFlag.TextWordWrap), self.currentMessage())
        painter.end()

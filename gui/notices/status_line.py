"""The window's status bar: one line at most, the rest behind "Details".

A message is drawn on one line; what does not fit is cut with "…" at the end, and
a "Details" link beside it opens the whole text in a dialog
(``parley.gui.dialogs.details``); the full message is the bar's tooltip too. A
message may come with details of its own (:meth:`OneLineStatusBar.show_notice`: a
failure's attempts, the models by name): then "Details" shows them, however short
the line. The bar never grows taller than one line.

A message belongs to the chat open when it was shown (:meth:`set_chat` says
which one is open): when another chat opens, it is cleared, so a message
about one chat is never read as being about the next. A lasting text shown by a
widget on the bar (:meth:`OneLineStatusBar.show_lasting`) gives way to a message
and comes back after it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtGui import QPainter, QPaintEvent
from PySide6.QtWidgets import QPushButton, QStatusBar, QStyleOption, QWidget

if TYPE_CHECKING:
    from parley.gui.dialogs.details import Details, DetailsDialog

#: Left/right room around the message (px).
PAD_X = 6
#: The link that opens a message's details.
DETAILS_LINK = "Details"


class OneLineStatusBar(QStatusBar):
    """A status bar whose messages take one line, with "Details" for the rest.

    Attributes:
        details_button: the "Details" link (made when first needed; None before).
        dialog: the Details dialog open now (None when none is).
    """

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._chat: str | None = None  # the chat open now
        self._shown_for: str | None = None  # the chat open when the message was shown
        self._details: tuple[str, Details] | None = None  # (its message, its details)
        self.details_button: QPushButton | None = None
        self.dialog: DetailsDialog | None = None
        self.messageChanged.connect(self._changed)

    # -- which chat ---------------------------------------------------------------
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

    # -- messages -------------------------------------------------------------------
    def show_lasting(self, widget: QWidget) -> None:
        """Show ``widget``, one of the bar's normal (left) widgets saying something
        lasting (a compaction's progress), unless a message is on the line now: then
        it shows once the message goes, so one line never has two texts drawn on it.

        ``QStatusBar`` hides its normal widgets while a message is shown and shows
        again those it hid itself (not those hidden by a call to ``hide``), which is
        why the widget is hidden here as the bar would.
        """
        if not self.currentMessage():
            widget.show()
            return
        widget.hide()
        widget.setAttribute(Qt.WidgetAttribute.WA_WState_ExplicitShowHide, False)

    def show_notice(self, text: str, timeout_ms: int = 0, details: Details | None = None) -> None:
        """Show ``text`` (one line) for ``timeout_ms`` (0: until replaced), with a
        "Details" link opening ``details`` (default: the whole text when it is cut)."""
        self._details = (text, details) if details is not None else None
        self.showMessage(text, timeout_ms)
        self._changed(text)  # the same text again emits no messageChanged

    def details(self) -> Details | None:
        """What "Details" opens for the message shown now (None: no link)."""
        text = self.currentMessage()
        if not text:
            return None
        if self._details is not None and self._details[0] == text:
            return self._details[1]
        if self.elided():
            from parley.gui.dialogs.details import Details

            return Details("Parley", (text,))
        return None

    def elided(self) -> bool:
        """True while the message shown does not fit on its line (it ends in "…")."""
        text = self.currentMessage()
        return bool(text) and self.fontMetrics().horizontalAdvance(_one_line(text)) > self._room()

    def shown_text(self) -> str:
        """The message as drawn: one line, cut with "…" where it does not fit."""
        text = _one_line(self.currentMessage())
        return self.fontMetrics().elidedText(text, Qt.TextElideMode.ElideRight, self._room())

    def open_details(self) -> DetailsDialog | None:
        """Open the message's details in a modal dialog (the "Details" link)."""
        from parley.gui.dialogs.details import open_details

        details = self.details()
        if details is None:
            return None
        if self.dialog is not None:
            self.dialog.close()
        self.dialog = dialog = open_details(self.window(), details)
        dialog.finished.connect(lambda _r: self._dialog_closed(dialog))
        return dialog

    def _dialog_closed(self, dialog: DetailsDialog) -> None:
        if self.dialog is dialog:
            self.dialog = None

    def _room(self) -> int:
        """Width (px) the message may take: up to the widgets kept on the right."""
        right = self.width() - PAD_X
        for child in self.children():
            if isinstance(child, QWidget) and child.isVisible() and child.x() > PAD_X:
                right = min(right, child.x() - PAD_X)
        return max(30, right - PAD_X)

    def _button(self) -> QPushButton:
        if self.details_button is None:
            button = QPushButton(DETAILS_LINK, self)
            button.setObjectName("StatusDetails")
            button.setAccessibleName("Details of the message")
            button.setFlat(True)
            button.setCursor(Qt.CursorShape.PointingHandCursor)
            button.setStyleSheet("QPushButton#StatusDetails { text-decoration: underline;"
                                 " color: palette(link); border: none; padding: 0 6px; }")
            button.clicked.connect(self.open_details)
            self.addPermanentWidget(button)
            self.details_button = button
        return self.details_button

    def _changed(self, text: str) -> None:
        self._shown_for = self._chat
        self.setToolTip(text)
        if self._details is not None and self._details[0] != text:
            self._details = None
        self._sync_button()
        self.update()

    def _sync_button(self) -> None:
        if self.details_button is not None:
            self.details_button.hide()  # the room it leaves decides whether the text fits
        if self.details() is not None:
            self._button().show()

    def resizeEvent(self, event):  # type: ignore[no-untyped-def]  # noqa: N802 - Qt's name
        super().resizeEvent(event)
        if self.currentMessage() and event.oldSize().width() != event.size().width():
            self._sync_button()

    def paintEvent(self, event: QPaintEvent) -> None:  # noqa: N802 - Qt's name
        if not self.currentMessage():
            super().paintEvent(event)
            return
        from PySide6.QtWidgets import QStyle  # its ~600 enum values: not for the first paint

        painter = QPainter(self)
        opt = QStyleOption()
        opt.initFrom(self)
        self.style().drawPrimitive(QStyle.PrimitiveElement.PE_PanelStatusBar, opt, painter, self)
        painter.setPen(self.palette().windowText().color())
        rect = self.rect().adjusted(PAD_X, 0, 0, 0)
        rect.setWidth(self._room())
        painter.drawText(rect, int(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter
                                   | Qt.TextFlag.TextSingleLine), self.shown_text())
        painter.end()


def _one_line(text: str) -> str:
    """``text`` with its line breaks as spaces."""
    return " ".join(text.split()) if "\n" in text else text

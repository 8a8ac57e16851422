"""The note that a message sent before the chats were open is kept (trial 21a).

Enter before the chats are shown empties the message box and queues the message
(``parley.gui.startup.state.PendingQueue``); until the transcript shows it, this note
says it is kept. Before the transcript is made the note is the placeholder's text;
once it is made (the chat is still being read, the message not yet in it) the note
covers the transcript until the queue is done (``Startup.start`` calls :meth:`KeptNote.hide`
after ``replay``), so the message is on screen all the way: in the box, in the note or
in the transcript.
"""

from __future__ import annotations

from typing import Protocol

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtWidgets import QLabel, QWidget

#: The placeholder's text while the chats open.
OPENING = "Opening your chats…"
#: Added below it while a message sent meanwhile waits.
KEPT = "Your message is kept and will be sent in a moment."


class NoteWindow(Protocol):
    """What the note uses of the main window (``parley.gui.window.base.WindowBase``; not
    imported here: the window's modules import the start-up's)."""

    @property
    def transcript(self) -> QWidget | None: ...

    @property
    def _transcript_slot(self) -> QLabel: ...


class KeptNote(QObject):
    """The "Your message is kept" note of one window (see the module docstring).

    Args:
        window: the main window (its placeholder ``_transcript_slot``, its transcript).
        parent: the note's QObject parent (the window).
    """

    def __init__(self, window: NoteWindow, parent: QObject) -> None:
        super().__init__(parent)
        self.window = window
        #: True while a message sent before the chats were open waits to be shown.
        self.shown = False
        self._cover: QLabel | None = None  # over the transcript, once it is made

    def with_note(self, text: str) -> str:
        """``text`` (the placeholder's: opening, upgrading…) with the note while shown."""
        return f"{text}\n\n{KEPT}" if self.shown else text

    def show(self) -> None:
        """A message was queued: say it is kept (on the placeholder, or over the
        transcript when it is already made)."""
        self.shown = True
        self._place()

    def hide(self) -> None:
        """The message is in the transcript (or back in the box): the note goes."""
        self.shown = False
        self._place()

    def transcript_made(self) -> None:
        """The transcript took the placeholder's place: the note, if shown, covers it
        (called in the same step, before anything is painted)."""
        self._place()

    def _place(self) -> None:
        w = self.window
        view = w.transcript
        if view is None:
            w._transcript_slot.setText(self.with_note(OPENING))
            return
        if not self.shown:
            if self._cover is not None:
                self._cover.hide()
                self._cover.deleteLater()
                self._cover = None
            return
        if self._cover is None or self._cover.parent() is not view:
            self._cover = _cover(view, f"{OPENING}\n\n{KEPT}")
            view.installEventFilter(self)
        self._cover.setGeometry(view.rect())
        self._cover.show()
        self._cover.raise_()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt's name
        """The transcript resized: the note still covers it."""
        if event.type() == QEvent.Type.Resize and self._cover is not None \
                and watched is self._cover.parent() and isinstance(watched, QWidget):
            self._cover.setGeometry(watched.rect())
        return False


def _cover(view: QWidget, text: str) -> QLabel:
    """A label looking like the placeholder, filling ``view``."""
    label = QLabel(text, view)
    label.setObjectName("LoadingLabel")
    label.setAccessibleName("Message kept")
    label.setAlignment(Qt.AlignmentFlag.AlignCenter)
    label.setWordWrap(True)
    label.setAutoFillBackground(True)  # the empty transcript does not show through
    return label

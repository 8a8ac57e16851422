"""Undo for a few seconds: a toast with an Undo button, and the pending change behind it.

A change offered for undo (pin, archive, delete a chat) is shown at once;
:class:`UndoManager` keeps how to take it back (``undo``) and, for a delete,
how to make it final (``commit``) once the undo window has passed. At most one
change is pending: offering a new one makes the previous one final first.
:meth:`UndoManager.flush` makes the pending one final now (the window calls
it when it closes, so a delete the person saw happen does happen).
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import QObject, QRect, Qt, QTimer, Signal
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QPushButton, QToolButton, QWidget

from gui import appearance
from gui.async_bridge import TaskSet

UNDO_WINDOW_MS = 6000
NOTICE_MS = 8000

Step = Callable[[], Coroutine[Any, Any, None]]


class Toast(QFrame):
    """A small bar floating at the bottom-left of its parent: a message, maybe Undo, ×.

    Signals:
        undo_clicked(): the Undo button was pressed.
    """

    undo_clicked = Signal()

    def __init__(self, parent: QWidget, anchor: Callable[[], QRect | None] | None = None
                 ) -> None:
        super().__init__(parent)
        #: returns the rect (parent coordinates) the toast sits above, centred (the
        #: composer); None or no anchor: the bottom-left corner.
        self.anchor = anchor
        self.setObjectName("Toast")
        self.setAccessibleName("Notice")
        self.setAttribute(Qt.WidgetAttribute.WA_StyledBackground, True)
        self.label = QLabel(self)
        self.label.setWordWrap(True)
        self.label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.undo_button = QPushButton("Undo", self)
        self.undo_button.setAccessibleName("Undo")
        self.undo_button.setCursor(Qt.CursorShape.PointingHandCursor)
        self.undo_button.clicked.connect(self.undo_clicked)
        self.close_button = QToolButton(self)
        self.close_button.setText("×")
        self.close_button.setAccessibleName("Dismiss")
        self.close_button.clicked.connect(self.hide)
        row = QHBoxLayout(self)
        row.setContentsMargins(14, 8, 8, 8)
        row.setSpacing(10)
        row.addWidget(self.label, 1)
        row.addWidget(self.undo_button)
        row.addWidget(self.close_button)
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.timeout.connect(self.hide)
        self.hide()

    def restyle(self) -> None:
        t = appearance.current()
        self.setStyleSheet(
            f"#Toast {{ background: {t.text}; border-radius: 10px; }}"
            f"#Toast QLabel {{ color: {t.base}; }}"
            f"#Toast QPushButton {{ color: {t.accent}; background: transparent; border: none;"
            f" font-weight: 600; padding: 4px 8px; }}"
            f"#Toast QToolButton {{ color: {t.faint}; background: transparent; border: none; }}"
        )

    def show_message(self, text: str, *, undo: bool, timeout_ms: int) -> None:
        """Show ``text`` (with Undo when ``undo``) for ``timeout_ms`` ms."""
        self.restyle()
        self.label.setText(text)
        self.undo_button.setVisible(undo)
        self.place()
        self.show()
        self.raise_()
        self._timer.start(timeout_ms)

    @property
    def message(self) -> str:
        """The text shown ('' when hidden)."""
        return self.label.text() if self.isVisible() else ""

    def place(self) -> None:
        """Sit just above the anchor, centred on it, else at the bottom-left corner
        (call on the parent's resize)."""
        parent = self.parentWidget()
        if parent is None:
            return
        width = min(520, max(260, parent.width() - 40))
        self.setFixedWidth(width)
        self.adjustSize()
        rect = self.anchor() if self.anchor is not None else None
        if rect is not None and rect.width() > 0:
            x = max(8, min(rect.center().x() - width // 2, parent.width() - width - 8))
            self.move(x, max(8, rect.top() - self.height() - 10))
        else:
            self.move(20, parent.height() - self.height() - 20)


@dataclass
class _Pending:
    message: str
    undo: Step
    commit: Step | None


class UndoManager(QObject):
    """Offers the last change for undo during :data:`UNDO_WINDOW_MS`.

    Args:
        toast: where the message and the Undo button show.
        tasks: runs the undo and commit coroutines (errors reach the window).
        window_ms: how long Undo is offered (ms).
    """

    def __init__(self, toast: Toast, tasks: TaskSet, window_ms: int = UNDO_WINDOW_MS) -> None:
        super().__init__(toast)
        self.toast = toast
        self.tasks = tasks
        self.window_ms = window_ms
        self._pending: _Pending | None = None
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.timeout.connect(self._expire)
        toast.undo_clicked.connect(self.undo)

    @property
    def pending(self) -> bool:
        """True while a change can still be undone."""
        return self._pending is not None

    def offer(self, message: str, *, undo: Step, commit: Step | None = None) -> None:
        """Show ``message`` with Undo; a change already pending becomes final first.

        Args:
            message: what happened ("Chat deleted").
            undo: takes the change back (shown state and stored state).
            commit: makes it final when the window passes (None: it already is).
        """
        self._finish()
        self._pending = _Pending(message, undo, commit)
        self._timer.start(self.window_ms)
        self.toast.show_message(message, undo=True, timeout_ms=self.window_ms)

    def notice(self, message: str, timeout_ms: int = NOTICE_MS) -> None:
        """Show a message without Undo (a pending change stays pending)."""
        self.toast.show_message(message, undo=False, timeout_ms=timeout_ms)

    def undo(self) -> bool:
        """Take the pending change back; False when there is none."""
        pending, self._pending = self._pending, None
        self._timer.stop()
        self.toast.hide()
        if pending is None:
            return False
        self.tasks.spawn(pending.undo(), name="undo")
        return True

    def _expire(self) -> None:
        self._finish()

    def _finish(self) -> None:
        pending, self._pending = self._pending, None
        self._timer.stop()
        if pending is not None and pending.commit is not None:
            self.tasks.spawn(pending.commit(), name="commit")

    async def flush(self) -> None:
        """Make the pending change final now (at close)."""
        pending, self._pending = self._pending, None
        self._timer.stop()
        if pending is not None and pending.commit is not None:
            await pending.commit()

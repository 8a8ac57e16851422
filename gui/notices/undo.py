"""Undo for a few seconds: a toast with an Undo button, and the pending change behind it.

A change offered for undo (pin, archive, delete a chat) is shown at once;
:class:`UndoManager` keeps how to take it back (``undo``) and, for a delete,
how to make it final (``commit``) once the undo window has passed. At most one
change is pending: offering a new one makes the previous one final first.
:meth:`UndoManager.flush` makes the pending one final now (the window calls
it when it closes, so a delete the person saw happen does happen).

While a change is pending, the window's Undo command takes it back too (``edit.undo``:
Ctrl+Z, unless the message box has typing of its own to undo; "Undo" in the command
palette); the Undo button names its key ("Undo (Ctrl+Z)", :meth:`Toast.set_undo_key`).

The toast (:class:`Toast`) stays only as long as needed: Undo for
:data:`UNDO_WINDOW_MS`, a plain notice for its reading time
(:func:`reading_ms`, shorter). While the pointer rests on it, it stays (and so
does Undo); it goes :data:`HOLD_GRACE_MS` after the pointer leaves. × (or Esc
on it) dismisses it — for an Undo toast that declines Undo, so the change is
final at once. It sits just above the composer, and the window keeps the
transcript's end clear of it (``TranscriptView.keep_clear_of`` with the rect
of :attr:`Toast.covers`): the last message, its Resume / Regenerate links and
an inline error move up instead of being hidden (like the toasts of the
Claude and ChatGPT desktop apps, it never covers what you may need to click).
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import QEvent, QObject, QRect, Qt, QTimer, Signal
from PySide6.QtGui import QEnterEvent, QHideEvent, QKeyEvent
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QPushButton, QToolButton, QWidget

from parley.core.tasks import TaskSet
from parley.gui.look import appearance

UNDO_WINDOW_MS = 5000  # how long Undo is offered (Material, Apple HIG: 4-10 s; we take 5)
NOTICE_MIN_MS = 3000  # a short notice without Undo (shorter than Undo's window)
NOTICE_MAX_MS = 6000  # a long one: enough to read two lines
READING_MS_PER_CHAR = 40  # ~25 characters a second, plus a second and a half to notice it
HOLD_GRACE_MS = 1500  # the toast stays this long after the pointer leaves it
GAP = 10  # px between the toast and the composer under it

Step = Callable[[], Coroutine[Any, Any, None]]


def reading_ms(text: str) -> int:
    """How long a notice without Undo stays (ms): its reading time, from
    :data:`NOTICE_MIN_MS` (a few words) to :data:`NOTICE_MAX_MS` (two lines)."""
    return max(NOTICE_MIN_MS, min(NOTICE_MAX_MS, 1500 + READING_MS_PER_CHAR * len(text)))


class Countdown(QObject):
    """A single-shot timer that can be held (paused) and let go.

    Args:
        parent: owner.
        on_expired: called when the time ran out (never while held).
    """

    def __init__(self, parent: QObject, on_expired: Callable[[], None]) -> None:
        super().__init__(parent)
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.timeout.connect(on_expired)
        self._held = False
        self._left: int | None = None  # ms left, while held

    def start(self, ms: int) -> None:
        """Count ``ms`` ms down (from when it is let go, if held now)."""
        self._timer.stop()
        if self._held:
            self._left = ms
        else:
            self._left = None
            self._timer.start(ms)

    def stop(self) -> None:
        self._timer.stop()
        self._left = None

    def hold(self) -> None:
        """Pause the countdown (the pointer rests on the toast)."""
        if self._held:
            return
        self._held = True
        if self._timer.isActive():
            self._left = max(0, self._timer.remainingTime())
            self._timer.stop()

    def release(self, grace_ms: int) -> None:
        """Go on counting, with at least ``grace_ms`` ms left."""
        if not self._held:
            return
        self._held = False
        if self._left is not None:
            self._timer.start(max(self._left, grace_ms))
            self._left = None

    @property
    def active(self) -> bool:
        """True while counting down or held with time left."""
        return self._timer.isActive() or self._left is not None

    @property
    def remaining_ms(self) -> int:
        """ms left (0 when not counting)."""
        if self._left is not None:
            return self._left
        return max(0, self._timer.remainingTime()) if self._timer.isActive() else 0


class Toast(QFrame):
    """A small bar floating just above the composer: a message, maybe Undo, ×.

    Args:
        parent: the window it floats in.
        anchor: returns the rect (parent coordinates) the toast sits above,
            centred (the composer); None, or no anchor: the bottom-left corner.
        follow: a widget whose showing, hiding, moving or resizing moves the
            anchor (the composer): the toast follows it.

    Signals:
        undo_clicked(): the Undo button was pressed.
        dismissed(): × (or Esc on the toast) closed it.
        held(bool): the pointer came onto the toast (True) or left it (False).
        covers(QRect): the rect (parent coordinates) the toast now covers; an
            empty rect once it is hidden.
    """

    undo_clicked = Signal()
    dismissed = Signal()
    held = Signal(bool)
    covers = Signal(QRect)

    def __init__(self, parent: QWidget, anchor: Callable[[], QRect | None] | None = None,
                 *, follow: QWidget | None = None) -> None:
        super().__init__(parent)
        self.anchor = anchor
        self.setObjectName("Toast")
        self.setAccessibleName("Notice")
        self.setAttribute(Qt.WidgetAttribute.WA_StyledBackground, True)
        self.label = QLabel(self)
        self.label.setWordWrap(True)
        self.label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        #: The key that takes the change back, named on the Undo button ("Ctrl+Z").
        self.undo_key = ""
        self.undo_button = QPushButton("Undo", self)
        self.undo_button.setAccessibleName("Undo")
        self.undo_button.setCursor(Qt.CursorShape.PointingHandCursor)
        self.undo_button.clicked.connect(self.undo_clicked)
        self.close_button = QToolButton(self)
        self.close_button.setText("×")
        self.close_button.setAccessibleName("Dismiss")
        self.close_button.setToolTip("Dismiss")
        self.close_button.setCursor(Qt.CursorShape.PointingHandCursor)
        self.close_button.clicked.connect(self.dismiss)
        row = QHBoxLayout(self)
        row.setContentsMargins(14, 8, 8, 8)
        row.setSpacing(10)
        row.addWidget(self.label, 1)
        row.addWidget(self.undo_button)
        row.addWidget(self.close_button)
        self._countdown = Countdown(self, self.hide)
        self._hovered = False
        if follow is not None:
            self.follow(follow)
        self.hide()

    def follow(self, widget: QWidget) -> None:
        """Move with ``widget`` too: its showing, hiding, moving or resizing places the
        toast again (the anchor's rect may have changed with it)."""
        widget.installEventFilter(self)

    def set_undo_key(self, key: str) -> None:
        """Name ``key`` (native text, "" for none) on the Undo button: "Undo (Ctrl+Z)"."""
        self.undo_key = key
        self.undo_button.setText(f"Undo ({key})" if key else "Undo")
        if self.isVisible():
            self.place()

    def restyle(self) -> None:
        t = appearance.current()
        self.setStyleSheet(
            f"#Toast {{ background: {t.text}; border-radius: 10px; }}"
            f"#Toast QLabel {{ color: {t.base}; }}"
            f"#Toast QPushButton {{ color: {t.accent}; background: transparent; border: none;"
            f" font-weight: 600; padding: 4px 8px; }}"
            f"#Toast QToolButton {{ color: {t.faint}; background: transparent; border: none;"
            f" font-size: 15px; padding: 0 4px; }}"
        )

    def show_message(self, text: str, *, undo: bool, timeout_ms: int) -> None:
        """Show ``text`` (with Undo when ``undo``) for ``timeout_ms`` ms (longer while
        the pointer rests on it)."""
        self.restyle()
        self.label.setText(text)
        self.undo_button.setVisible(undo)
        self.place()
        self.show()
        self.raise_()
        self.covers.emit(self.geometry())
        self._countdown.start(timeout_ms)

    @property
    def message(self) -> str:
        """The text shown ('' when hidden)."""
        return self.label.text() if self.isVisible() else ""

    @property
    def offers_undo(self) -> bool:
        """True when the message shown (or last shown) has the Undo button."""
        return not self.undo_button.isHidden()

    @property
    def remaining_ms(self) -> int:
        """ms until the toast goes by itself (0 when hidden)."""
        return self._countdown.remaining_ms if self.isVisible() else 0

    def dismiss(self) -> None:
        """Close the toast now (× or Esc) and say so (``dismissed``)."""
        if self.isVisible():
            self.hide()
            self.dismissed.emit()

    def place(self) -> None:
        """Sit just above the anchor, centred on it, else at the bottom-left corner
        (call on the parent's resize; the followed widget's moves are followed)."""
        parent = self.parentWidget()
        if parent is None:
            return
        width = min(520, max(260, parent.width() - 40))
        self.setFixedWidth(width)
        height = self.heightForWidth(width)  # the wrapped text's height, not the label's hint
        self.setFixedHeight(height if height > 0 else self.sizeHint().height())
        rect = self.anchor() if self.anchor is not None else None
        if rect is not None and rect.width() > 0:
            x = max(8, min(rect.center().x() - width // 2, parent.width() - width - 8))
            self.move(x, max(8, rect.top() - self.height() - GAP))
        else:
            self.move(20, parent.height() - self.height() - 20)
        if self.isVisible():
            self.covers.emit(self.geometry())

    # -- holding, following, hiding ------------------------------------------------
    def hold(self) -> None:
        """Keep the toast while the pointer rests on it."""
        if not self._hovered:
            self._hovered = True
            self._countdown.hold()
            self.held.emit(True)

    def release(self) -> None:
        """The pointer left: go :data:`HOLD_GRACE_MS` ms later at the earliest."""
        if self._hovered:
            self._hovered = False
            self._countdown.release(HOLD_GRACE_MS)
            self.held.emit(False)

    def enterEvent(self, event: QEnterEvent) -> None:  # noqa: N802
        self.hold()
        super().enterEvent(event)

    def leaveEvent(self, event: QEvent) -> None:  # noqa: N802
        self.release()
        super().leaveEvent(event)

    def keyPressEvent(self, event: QKeyEvent) -> None:  # noqa: N802
        if event.key() == Qt.Key.Key_Escape:
            self.dismiss()
            return
        super().keyPressEvent(event)

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:  # noqa: N802
        kinds = (QEvent.Type.Show, QEvent.Type.Hide, QEvent.Type.Move, QEvent.Type.Resize)
        if event.type() in kinds and self.isVisible():
            self.place()
        return False

    def hideEvent(self, event: QHideEvent) -> None:  # noqa: N802
        super().hideEvent(event)
        if not event.spontaneous():
            self._countdown.stop()
            self.release()
            self.covers.emit(QRect())


@dataclass
class _Pending:
    message: str
    undo: Step
    commit: Step | None


class UndoManager(QObject):
    """Offers the last change for undo during :data:`UNDO_WINDOW_MS` (longer while the
    pointer rests on its toast); dismissing the toast makes the change final at once.

    Args:
        toast: where the message and the Undo button show.
        tasks: runs the undo and commit coroutines (errors reach the window).
        window_ms: how long Undo is offered (ms).

    Signals:
        pending_changed(bool): a change became undoable (True) or stopped being so
            (False): the window's Undo command (Ctrl+Z, the palette) follows it.
    """

    pending_changed = Signal(bool)

    def __init__(self, toast: Toast, tasks: TaskSet, window_ms: int = UNDO_WINDOW_MS) -> None:
        super().__init__(toast)
        self.toast = toast
        self.tasks = tasks
        self.window_ms = window_ms
        self._pending: _Pending | None = None
        self._window = Countdown(self, self._expire)
        toast.undo_clicked.connect(self.undo)
        toast.dismissed.connect(self._dismissed)
        toast.held.connect(self._held)

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
        self._window.start(self.window_ms)
        self.toast.show_message(message, undo=True, timeout_ms=self.window_ms)
        self.pending_changed.emit(True)

    def notice(self, message: str, timeout_ms: int | None = None) -> None:
        """Show a message without Undo for ``timeout_ms`` ms (None: its reading time,
        :func:`reading_ms`); a pending change stays pending."""
        ms = reading_ms(message) if timeout_ms is None else timeout_ms
        self.toast.show_message(message, undo=False, timeout_ms=ms)

    def undo(self) -> bool:
        """Take the pending change back; False when there is none."""
        pending, self._pending = self._pending, None
        self._window.stop()
        self.toast.hide()
        if pending is None:
            return False
        self.pending_changed.emit(False)
        self.tasks.spawn(pending.undo(), name="undo")
        return True

    def _held(self, on: bool) -> None:
        """The pointer rests on the toast: while it shows Undo, Undo stays offered."""
        if on and self._pending is not None and self.toast.offers_undo:
            self._window.hold()
        elif not on:
            self._window.release(HOLD_GRACE_MS)

    def _dismissed(self) -> None:
        if self.toast.offers_undo:  # Undo declined: final now
            self._finish()

    def _expire(self) -> None:
        self._finish()
        if self.toast.offers_undo:
            self.toast.hide()  # Undo is never shown for a change that is final

    def _finish(self) -> None:
        pending, self._pending = self._pending, None
        self._window.stop()
        if pending is not None:
            self.pending_changed.emit(False)
        if pending is not None and pending.commit is not None:
            self.tasks.spawn(pending.commit(), name="commit")

    async def flush(self) -> None:
        """Make the pending change final now (at close)."""
        pending, self._pending = self._pending, None
        self._window.stop()
        if pending is not None:
            self.pending_changed.emit(False)
        if pending is not None and pending.commit is not None:
            await pending.commit()

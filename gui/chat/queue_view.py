"""The open chat's queued messages, shown one line each between the reply and the box.

:class:`QueueView` only shows and reports: a heading that says what happens next
(sent when the reply is saved, or paused), one line per queued message in the order
they go, and the buttons Send now and Pause. Keys on a selected line: Delete,
Backspace or Esc take it back, F2 (or a double-click) edits it, Enter sends the
queue on. :class:`parley.gui.chat.queue.ChatQueue` does what they ask.
"""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import QEvent, Qt, Signal
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from parley.core.store.queued import QueuedMessage
from parley.gui.chat.queue_files import files_note

#: The heading while the queue goes out by itself, one message per saved reply.
GOING = "Queued · sent when the reply is saved · Esc pauses"
#: The heading while the chat is being compacted (Compact now, the cache idle-timer).
GOING_AFTER_SUMMARY = "Queued · sent when the summary is saved · Esc pauses"
#: The heading once paused (Esc, a stopped or failed reply).
PAUSED = "Queue paused · nothing is sent until you press Enter or Send now"
#: The heading after a restart: asked, never sent by itself.
RESTORED = "Queued before Parley closed · send them now?"
#: Characters of a message shown on its line (the rest is elided).
LINE_CHARS = 140
#: Lines shown before the list scrolls.
MAX_ROWS = 5
#: Item data: a line's whole text, before it is cut to the list's width.
_WHOLE = Qt.ItemDataRole.UserRole + 1


def one_line(text: str, limit: int = LINE_CHARS) -> str:
    """``text`` on one line: whitespace runs folded to a space, cut at ``limit`` characters
    with "…"."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


class _Lines(QListWidget):
    """The list of queued lines; reports the keys it handles (see the module docstring)."""

    take_back = Signal(str)
    edit_asked = Signal(str)
    send = Signal()
    #: The width the lines are shown in changed (the list laid out or resized, its
    #: scrollbar shown or hidden): they are cut to it again.
    width_changed = Signal()

    def viewportEvent(self, event: QEvent) -> bool:  # noqa: N802 (Qt name)
        if event.type() == QEvent.Type.Resize:
            self.width_changed.emit()
        return super().viewportEvent(event)

    def keyPressEvent(self, event: QKeyEvent) -> None:  # noqa: N802 (Qt name)
        item = self.currentItem()
        key = event.key()
        if key in (Qt.Key.Key_Return, Qt.Key.Key_Enter) and not event.modifiers():
            self.send.emit()
            return
        if item is not None and key in (Qt.Key.Key_Delete, Qt.Key.Key_Backspace,
                                        Qt.Key.Key_Escape):
            self.take_back.emit(str(item.data(Qt.ItemDataRole.UserRole)))
            return
        if item is not None and key == Qt.Key.Key_F2:
            self.edit_asked.emit(str(item.data(Qt.ItemDataRole.UserRole)))
            return
        super().keyPressEvent(event)


class QueueView(QFrame):
    """The queue bar (hidden while the open chat has no queued message).

    Signals:
        send_clicked: Send now (or Enter on the list): send the queue on.
        pause_clicked: Pause: hold the queue.
        take_back(str): take back the queued message of this id.
        edit(str): edit the queued message of this id in the message box.
    """

    send_clicked = Signal()
    pause_clicked = Signal()
    take_back = Signal(str)
    edit = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("QueueView")
        self.setAccessibleName("Queued messages")
        self.heading = QLabel(self)
        self.heading.setObjectName("QueueHeading")
        self.heading.setTextFormat(Qt.TextFormat.PlainText)
        self.send_button = QPushButton("Send now", self)
        self.send_button.setAccessibleName("Send the queued messages")
        self.send_button.setToolTip("Send the queued messages, one after each reply (Enter)")
        self.pause_button = QPushButton("Pause", self)
        self.pause_button.setAccessibleName("Pause the queue")
        self.pause_button.setToolTip("Hold the queued messages until you send them (Esc)")
        for b in (self.send_button, self.pause_button):
            b.setCursor(Qt.CursorShape.PointingHandCursor)
            b.setAutoDefault(False)
        self.send_button.clicked.connect(self.send_clicked)
        self.pause_button.clicked.connect(self.pause_clicked)
        self.lines = _Lines(self)
        self.lines.setObjectName("QueueLines")
        self.lines.setAccessibleName("Queued messages, in the order they are sent")
        self.lines.setToolTip("Delete takes a message back · F2 or a double-click edits it · "
                              "Enter sends the queue")
        self.lines.setUniformItemSizes(True)
        # A long message is cut to the width with "…" (its whole text is the tooltip and
        # F2 edits it): never a line wider than the bar under a scrollbar.
        self.lines.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.lines.setTextElideMode(Qt.TextElideMode.ElideRight)
        self.lines.take_back.connect(self.take_back)
        self.lines.edit_asked.connect(self.edit)
        self.lines.send.connect(self.send_clicked)
        # Cut to the width the list has once laid out: lines set while the bar is hidden
        # (a chat opened with a queue, the first message queued) are cut again then.
        self.lines.width_changed.connect(self._fit)
        self.lines.itemDoubleClicked.connect(
            lambda item: self.edit.emit(str(item.data(Qt.ItemDataRole.UserRole))))
        top = QHBoxLayout()
        top.setContentsMargins(0, 0, 0, 0)
        top.addWidget(self.heading, 1)
        top.addWidget(self.pause_button)
        top.addWidget(self.send_button)
        col = QVBoxLayout(self)
        col.setContentsMargins(12, 6, 8, 6)
        col.setSpacing(4)
        col.addLayout(top)
        col.addWidget(self.lines)
        self.setStyleSheet(
            "#QueueView { border: 1px solid palette(mid); border-radius: 8px;"
            " background: palette(alternate-base); }"
            " #QueueLines { border: none; background: transparent; }")
        self.hide()

    def show_queue(self, messages: Sequence[QueuedMessage], *, paused: bool,
                   restored: bool, compacting: bool = False) -> None:
        """Show ``messages`` (in order) with the heading for their state; hide when empty.

        Args:
            messages: the open chat's queue, first to go first.
            paused: nothing goes until the person says so.
            restored: they were queued before this start (asked before sending).
            compacting: they wait for the chat's compaction to end, not for a reply.
        """
        current = self.lines.currentItem()
        keep = current.data(Qt.ItemDataRole.UserRole) if current is not None else None
        self.lines.clear()
        for n, m in enumerate(messages, 1):
            note = files_note(m)  # "[2 files]" before the words
            words = "  ".join(w for w in (note, one_line(m.text)) if w)
            item = QListWidgetItem(f"{n}.  {words}")
            item.setData(Qt.ItemDataRole.UserRole, m.id)
            item.setData(_WHOLE, item.text())
            names = "\n".join(f"Attached: {f.name}" for f in m.files)
            item.setToolTip("\n\n".join(t for t in (m.text[:2000], names) if t))
            self.lines.addItem(item)
            if m.id == keep:
                self.lines.setCurrentItem(item)
        if not messages:
            self.hide()
            return
        going = GOING_AFTER_SUMMARY if compacting else GOING
        self.heading.setText(RESTORED if restored else PAUSED if paused else going)
        self.pause_button.setVisible(not paused)
        self.send_button.setVisible(paused)
        self._fit()
        rows = min(len(messages), MAX_ROWS)
        row_height = max(self.lines.sizeHintForRow(0), 1)
        self.lines.setFixedHeight(rows * row_height + 2 * self.lines.frameWidth() + 2)
        self.show()

    def _fit(self) -> None:
        """Cut each line to the list's width (in pixels), ending it with "…". Called again
        whenever that width changes (:attr:`_Lines.width_changed`): the width read while
        the list is hidden is a stale one (100 pixels before it was ever shown)."""
        metrics = self.lines.fontMetrics()
        width = self.lines.viewport().width() - 8  # the item's own margins
        for i in range(self.lines.count()):
            item = self.lines.item(i)
            whole = str(item.data(_WHOLE))
            item.setText(metrics.elidedText(whole, Qt.TextElideMode.ElideRight, width))

    def texts(self) -> list[str]:
        """The lines, in order, whole (before a long one is cut to the width)."""
        return [str(self.lines.item(i).data(_WHOLE)) for i in range(self.lines.count())]

    def focus_lines(self) -> bool:
        """Put the keyboard on the list (its last line selected); False when hidden."""
        if self.isHidden() or self.lines.count() == 0:
            return False
        if self.lines.currentItem() is None:
            self.lines.setCurrentRow(self.lines.count() - 1)
        self.lines.setFocus(Qt.FocusReason.ShortcutFocusReason)
        return True

"""The "jump to latest" button floating over the transcript while it is scrolled up."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtWidgets import QToolButton

if TYPE_CHECKING:
    from parley.gui.transcript.listview import TranscriptListView

MARGIN = 14  # px between the button and the bottom-right corner of the viewport
SLACK = 4  # px: closer than this to the bottom counts as at the bottom


class JumpButton(QToolButton):
    """A round "↓ Latest" button over the bottom-right corner of the transcript.

    Shown while the list is not scrolled to the bottom; hidden at the bottom.
    Clicking it emits ``clicked`` (the transcript scrolls to the end). It is a
    child of the list view, not of its viewport, so scrolling does not move it,
    and it stays above what floats over the view's bottom (a toast).

    Args:
        area: the transcript's list view.
    """

    def __init__(self, area: TranscriptListView) -> None:
        super().__init__(area)
        self._area = area
        self.setObjectName("JumpToLatest")
        self.setText("↓ Latest")
        self.setAccessibleName("Jump to latest")
        self.setToolTip("Jump to the latest message (End)")
        self.setCursor(Qt.CursorShape.PointingHandCursor)
        self.setFocusPolicy(Qt.FocusPolicy.NoFocus)  # the keyboard stays on the messages
        self.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextOnly)
        self.setStyleSheet(
            "#JumpToLatest { border-radius: 14px; padding: 5px 12px;"
            " border: 1px solid palette(mid); background: palette(button); }"
        )
        self.hide()
        bar = area.verticalScrollBar()
        bar.valueChanged.connect(self.update_shown)
        bar.rangeChanged.connect(self.update_shown)
        area.viewport().installEventFilter(self)
        area.clearOfChanged.connect(self.update_shown)

    def at_bottom(self) -> bool:
        """True when the list shows its end (or has nothing to scroll)."""
        bar = self._area.verticalScrollBar()
        return bar.value() >= bar.maximum() - SLACK

    def update_shown(self, *_args: object) -> None:
        """Show the button when scrolled up, hide it at the bottom; keep it in its corner."""
        self.setVisible(not self.at_bottom())
        if self.isVisible():
            self.place()

    def place(self) -> None:
        """Put the button in the viewport's bottom-right corner, above what floats there."""
        self.adjustSize()
        viewport = self._area.viewport().geometry()
        inset = self._area.floating_inset()
        x = viewport.right() - self.width() - MARGIN
        y = viewport.bottom() - inset - self.height() - MARGIN
        self.move(max(0, x), max(0, y))
        self.raise_()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802
        if event.type() == QEvent.Type.Resize and self.isVisible():
            self.place()
        return False

"""The "jump to latest" button floating over the transcript while it is scrolled up."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QEvent, QObject, QRect, Qt
from PySide6.QtWidgets import QToolButton

if TYPE_CHECKING:
    from parley.gui.transcript.listview import TranscriptListView

MARGIN = 14  # px between the button and the right edge of the viewport
STRIP_PAD = 5  # px above and below the button in the strip kept for it
SLACK = 4  # px: closer than this to the bottom counts as at the bottom


class JumpButton(QToolButton):
    """A round "↓ Latest" button at the bottom-right corner of the transcript.

    Shown while the list is not scrolled to the bottom; hidden at the bottom. While it
    shows, the list keeps a strip under its rows for it (``reserve_bottom``), so it
    covers no message line.
    Clicking it emits ``clicked`` (the transcript scrolls to the end). It is a
    child of the list view, not of its viewport, so scrolling does not move it,
    and it stays above what floats over the view's bottom (a toast).

    Args:
        area: the transcript's list view.
    """

    def __init__(self, area: TranscriptListView) -> None:
        super().__init__(area)
        self._area = area
        self._updating = False
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
        """True when the list shows its end (or has nothing to scroll), or follows it: a
        growing reply sets the range before the value, and the strip must not come and
        go (a resize of the viewport) on each update of the reply."""
        if self._area.sticks_to_bottom:
            return True
        bar = self._area.verticalScrollBar()
        return bar.value() >= bar.maximum() - SLACK

    def strip(self) -> int:
        """px of the strip the button sits in."""
        return self.sizeHint().height() + 2 * STRIP_PAD

    def update_shown(self, *_args: object) -> None:
        """Show the button when scrolled up (with its strip), hide it at the bottom (the
        strip given back); keep it in its corner."""
        if self._updating:  # the strip's own change of the range: the loop below sees it
            return
        self._updating = True
        try:
            shown = not self.at_bottom()
            for _ in range(3):  # the strip changes the range: settle on where that lands
                self._area.reserve_bottom(self.strip() if shown else 0)
                now = not self.at_bottom()
                if now == shown:
                    break
                shown = now
        finally:
            self._updating = False
        self.setVisible(shown)
        if shown:
            self.place()

    def place(self) -> None:
        """Put the button in its strip under the viewport, at the right; above what
        floats over the view's bottom (a toast) while that reaches it."""
        self.adjustSize()
        viewport = self._area.viewport().geometry()
        x = viewport.right() - self.width() - MARGIN
        y = viewport.bottom() + 1 + STRIP_PAD
        floating = self._area.floating_rect()
        if floating.isValid() and floating.intersects(QRect(x, y, self.width(), self.height())):
            y = floating.top() - self.height() - MARGIN
        self.move(max(0, x), max(0, y))
        self.raise_()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802
        if event.type() == QEvent.Type.Resize and self.isVisible():
            self.place()
        return False

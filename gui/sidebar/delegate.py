"""Painting of the sidebar rows: space headings, session pills, nested forks.

While the list has the keyboard focus its current row is outlined in the accent
colour (as a drop target is), so the arrow keys' place shows.
"""

from __future__ import annotations

from PySide6.QtCore import QModelIndex, QPoint, QPointF, QRect, QSize, Qt
from PySide6.QtGui import QColor, QFont, QPainter, QPainterPath, QPen
from PySide6.QtWidgets import QStyle, QStyledItemDelegate, QStyleOptionViewItem

from parley.gui.look import appearance
from parley.gui.sidebar.model import (
    ARCHIVED,
    FORK_LABEL,
    FORK_POINT,
    KIND,
    PARENT,
    PARENT_GONE,
    PINNED,
    RUNNING,
    Index,
)
from parley.gui.text.names import elided_title

ROW_H = 34
FORK_H = 44  # a fork shows its fork point on a second line
SPACE_H = 30
SPACE_TEXT_TOP = 6  # px above a space's name in its row (its focus outline starts there)
INDENT = 16  # px per nesting level of forks
CHEVRON_W = 16


def depth(index: Index) -> int:
    """Nesting level of a session row: 0 for a row of its space, 1 for a fork under it …"""
    level, parent = 0, index.parent()
    while parent.isValid() and parent.data(KIND) == "session":
        level += 1
        parent = parent.parent()
    return level


def chevron_rect(row: QRect, index: Index) -> QRect:
    """Where a row's expand/collapse arrow is (session rows with forks, space headings)."""
    if index.data(KIND) == "space":
        return QRect(row.right() - 8 - CHEVRON_W - 6, row.top(), CHEVRON_W + 6, row.height())
    left = row.left() + 8 + INDENT * depth(index)
    return QRect(left, row.top(), CHEVRON_W, ROW_H)


class RowDelegate(QStyledItemDelegate):
    """Paints session rows as rounded pills, forks indented with their fork point,
    space headings as small titles."""

    def __init__(self, view: object) -> None:
        super().__init__(view)  # type: ignore[arg-type]
        self.view = view
        #: index of the row a drag would drop on (painted with an outline), or None.
        self.drop_target: QModelIndex | None = None

    def sizeHint(self, option: QStyleOptionViewItem, index: Index) -> QSize:  # noqa: N802
        kind = index.data(KIND)
        if kind == "space":
            return QSize(option.rect.width(), SPACE_H)
        if kind == "session" and index.data(PARENT):
            return QSize(option.rect.width(), FORK_H)
        return QSize(option.rect.width(), ROW_H)

    def paint(self, p: QPainter, option: QStyleOptionViewItem, index: Index) -> None:
        p.save()
        p.setRenderHint(QPainter.RenderHint.Antialiasing)
        try:
            if index.data(KIND) == "space":
                self._paint_space(p, option, index)
            else:
                self._paint_session(p, option, index)
        finally:
            p.restore()

    def _expanded(self, index: Index) -> bool:
        return bool(self.view.isExpanded(index))  # type: ignore[attr-defined]

    def _paint_chevron(self, p: QPainter, rect: QRect, expanded: bool, color: str) -> None:
        c = QPointF(rect.center())
        pen = QPen(QColor(color), 1.4)
        pen.setCapStyle(Qt.PenCapStyle.RoundCap)
        p.setPen(pen)
        if expanded:
            pts = [c + QPointF(-3.5, -1.5), c + QPointF(0, 2), c + QPointF(3.5, -1.5)]
        else:
            pts = [c + QPointF(-1.5, -3.5), c + QPointF(2, 0), c + QPointF(-1.5, 3.5)]
        p.drawPolyline(pts)

    def _paint_space(self, p: QPainter, option: QStyleOptionViewItem,
                     index: Index) -> None:
        t = appearance.current()
        rect = option.rect.adjusted(8, 1, -8, -1)
        # The outline goes round the name as it sits, low in its row (the room above
        # sets the space apart from the chats over it), not round the whole row.
        ring = rect.adjusted(0, SPACE_TEXT_TOP - 1, 0, 0)
        if (self.drop_target is not None and self.drop_target == index) or \
                option.state & QStyle.StateFlag.State_HasFocus:  # the list's current row
            self._outline(p, ring, t.accent)
        font = QFont(option.font)
        font.setPointSizeF(font.pointSizeF() * 0.85)
        font.setWeight(QFont.Weight.DemiBold)
        p.setFont(font)
        p.setPen(QColor(t.muted))
        p.drawText(rect.adjusted(10, SPACE_TEXT_TOP, -30, 0),
                   Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter, str(index.data()))
        has_rows = self.view.model().hasChildren(index)  # type: ignore[attr-defined]
        hovered = bool(option.state & QStyle.StateFlag.State_MouseOver)
        if has_rows and (hovered or not self._expanded(index)):
            self._paint_chevron(p, chevron_rect(option.rect, index), self._expanded(index),
                                t.faint)

    @staticmethod
    def _outline(p: QPainter, rect: QRect, color: str) -> None:
        path = QPainterPath()
        path.addRoundedRect(rect.adjusted(1, 1, -1, -1), 8, 8)
        p.setPen(QPen(QColor(color), 1.5))
        p.setBrush(Qt.BrushStyle.NoBrush)
        p.drawPath(path)

    def _paint_session(self, p: QPainter, option: QStyleOptionViewItem,
                       index: Index) -> None:
        t = appearance.current()
        kind = index.data(KIND)
        level = depth(index) if kind == "session" else 0
        rect = option.rect.adjusted(8 + INDENT * level, 1, -8, -1)
        selected = bool(option.state & QStyle.StateFlag.State_Selected)
        hovered = bool(option.state & QStyle.StateFlag.State_MouseOver)
        if selected or hovered:
            path = QPainterPath()
            path.addRoundedRect(rect, 8, 8)
            p.fillPath(path, QColor(t.selected if selected else t.hover))
        if (self.drop_target is not None and self.drop_target == index) or \
                option.state & QStyle.StateFlag.State_HasFocus:  # the list's current row
            self._outline(p, rect, t.accent)
        line = QRect(rect.left(), rect.top(), rect.width(), ROW_H - 2)
        text_rect = line.adjusted(CHEVRON_W + 4, 0, -10, 0)
        if kind == "session" and self.view.model().hasChildren(index):  # type: ignore[attr-defined]
            self._paint_chevron(p, chevron_rect(option.rect, index), self._expanded(index),
                                t.muted)
        font = QFont(option.font)
        muted = kind in ("more", "start") or bool(index.data(ARCHIVED))
        if kind == "session":
            text_rect = self._paint_marks(p, index, text_rect)
        if selected:
            font.setWeight(QFont.Weight.Medium)
        p.setFont(font)
        p.setPen(QColor(t.muted if muted else t.text))
        title = str(index.data())
        if index.data(PARENT):
            title = "↳ " + title
        elided = elided_title(title, option.fontMetrics, text_rect.width())
        p.drawText(text_rect, Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter, elided)
        if kind == "session" and index.data(PARENT):
            self._paint_fork_point(p, option, index, rect, text_rect)

    def _paint_marks(self, p: QPainter, index: Index, text_rect: QRect) -> QRect:
        """Running dot, pin, "Archived" tag at the right; returns the rect left for the title."""
        t = appearance.current()
        text_rect = QRect(text_rect)
        if index.data(RUNNING):
            p.setBrush(QColor(t.accent))
            p.setPen(Qt.PenStyle.NoPen)
            p.drawEllipse(QPoint(text_rect.right() - 3, text_rect.center().y()), 3, 3)
            text_rect.adjust(0, 0, -14, 0)
        if index.data(PINNED):
            icon = appearance.icon("pin", t.muted, 14)
            icon.paint(p, QRect(text_rect.right() - 14, text_rect.center().y() - 7, 14, 14))
            text_rect.adjust(0, 0, -20, 0)
        if index.data(ARCHIVED):
            small = QFont(p.font())
            small.setPointSizeF(max(6.0, small.pointSizeF() * 0.8))
            p.setFont(small)
            p.setPen(QColor(t.faint))
            tag = "Archived"
            width = p.fontMetrics().horizontalAdvance(tag)
            p.drawText(QRect(text_rect.right() - width, text_rect.top(), width,
                             text_rect.height()), Qt.AlignmentFlag.AlignVCenter, tag)
            text_rect.adjust(0, 0, -(width + 8), 0)
        return text_rect

    @staticmethod
    def _paint_fork_point(p: QPainter, option: QStyleOptionViewItem, index: Index,
                          rect: QRect, text_rect: QRect) -> None:
        t = appearance.current()
        small = QFont(option.font)
        small.setPointSizeF(max(6.0, small.pointSizeF() * 0.82))
        p.setFont(small)
        p.setPen(QColor(t.faint))
        point = index.data(FORK_LABEL) or index.data(FORK_POINT) or ""
        if index.data(PARENT_GONE):
            point = "fork of a deleted chat" + (f" · {point}" if point else "")
        sub = QRect(text_rect.left() + 14, rect.top() + ROW_H - 12, text_rect.width() - 14, 16)
        p.drawText(sub, Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter,
                   p.fontMetrics().elidedText(point, Qt.TextElideMode.ElideRight, sub.width()))

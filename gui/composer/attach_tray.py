"""The tray of files waiting to be sent, shown in the composer above the text.

An image shows as a square thumbnail, a PDF or a text file as a chip (a tile
with its type, the name and a detail line such as "PDF · 3 pages · 1.2 MB");
a file still being read shows as a chip saying "Reading file…". Each has a
round ✕ button (reachable with Tab, named "Remove <file>" for screen readers)
that asks to take it out of the message. The tray is a view only: it shows a
list of :class:`TrayItem` and emits :attr:`AttachTray.remove_requested`;
:class:`parley.gui.chat.attach.ChatAttachments` owns what is pending. It hides
itself when the list is empty.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from PySide6.QtCore import QByteArray, QPointF, QRectF, QSize, Qt, Signal
from PySide6.QtGui import (
    QColor,
    QFont,
    QFontMetrics,
    QKeyEvent,
    QPainter,
    QPainterPath,
    QPaintEvent,
    QPen,
    QPixmap,
    QResizeEvent,
)
from PySide6.QtWidgets import (
    QAbstractButton,
    QFrame,
    QHBoxLayout,
    QLabel,
    QScrollArea,
    QSizePolicy,
    QVBoxLayout,
    QWidget,
)

from parley.gui.look import appearance

THUMB_PX = 56  # side of an image thumbnail and height of a chip, logical px
CHIP_WIDTH = 208
REMOVE_PX = 18

ItemKind = Literal["image", "document", "text", "reading"]


@dataclass(frozen=True, slots=True)
class TrayItem:
    """One pending file as the tray shows it.

    Attributes:
        key: a number unique among the pending files (what ``remove_requested`` carries).
        name: the file name shown.
        kind: image, document (PDF), text, or reading (not read yet).
        detail: one line under the name, e.g. "PNG · 800×600 px" or "Text · 3 KB".
        thumbnail: for images, PNG (or other Qt-readable) bytes of a small picture.
        note: what Parley changed, e.g. "re-encoded as JPEG to fit Anthropic's limits:
            13.9 MB → 1.2 MB" (``parley.core.attachments.limits.change_note``).
    """

    key: int
    name: str
    kind: ItemKind
    detail: str = ""
    thumbnail: bytes | None = None
    note: str = ""

    @property
    def description(self) -> str:
        """What a screen reader says about the item (and its tooltip)."""
        parts = [self.name, self.detail] + ([self.note] if self.note else [])
        return ", ".join(p for p in parts if p)


def badge_text(name: str, kind: ItemKind) -> str:
    """The short type shown in a chip's tile: the file's ending ("PY", "CSV"), or "PDF"/"TXT"."""
    if kind == "document":
        return "PDF"
    if kind == "reading":
        return "…"
    suffix = Path(name).suffix.lstrip(".").upper()
    return suffix[:4] if suffix else "TXT"


class RemoveButton(QAbstractButton):
    """The round ✕ on a pending file (drawn, so it needs no font glyph or icon file)."""

    def __init__(self, name: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("AttachRemove")
        self.setAccessibleName(f"Remove {name}")
        self.setToolTip(f"Remove {name}")
        self.setFixedSize(REMOVE_PX, REMOVE_PX)
        self.setCursor(Qt.CursorShape.PointingHandCursor)
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)

    def keyPressEvent(self, event: QKeyEvent) -> None:  # noqa: N802 (Qt name)
        if event.key() in (Qt.Key.Key_Delete, Qt.Key.Key_Backspace):
            self.click()
            event.accept()
            return
        super().keyPressEvent(event)

    def sizeHint(self) -> QSize:  # noqa: N802
        return QSize(REMOVE_PX, REMOVE_PX)

    def paintEvent(self, _event: QPaintEvent) -> None:  # noqa: N802
        t = appearance.current()
        p = QPainter(self)
        p.setRenderHint(QPainter.RenderHint.Antialiasing)
        rect = QRectF(self.rect()).adjusted(1, 1, -1, -1)
        hot = self.underMouse() or self.hasFocus()
        p.setPen(QPen(QColor(t.accent if self.hasFocus() else t.surface), 1.5))
        p.setBrush(QColor(t.text if hot else t.muted))
        p.drawEllipse(rect)
        p.setPen(QPen(QColor(t.surface), 1.6, Qt.PenStyle.SolidLine, Qt.PenCapStyle.RoundCap))
        c, r = rect.center(), rect.width() * 0.2
        p.drawLine(QPointF(c.x() - r, c.y() - r), QPointF(c.x() + r, c.y() + r))
        p.drawLine(QPointF(c.x() - r, c.y() + r), QPointF(c.x() + r, c.y() - r))
        p.end()


class _Thumbnail(QWidget):
    """An image cropped to a rounded square (cover), or its badge when unreadable."""

    def __init__(self, data: bytes | None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setFixedSize(THUMB_PX, THUMB_PX)
        self.pixmap = QPixmap()
        if data:
            self.pixmap.loadFromData(QByteArray(data))

    def paintEvent(self, _event: QPaintEvent) -> None:  # noqa: N802
        t = appearance.current()
        p = QPainter(self)
        p.setRenderHint(QPainter.RenderHint.Antialiasing)
        p.setRenderHint(QPainter.RenderHint.SmoothPixmapTransform)
        rect = QRectF(self.rect()).adjusted(0.5, 0.5, -0.5, -0.5)
        path = QPainterPath()
        path.addRoundedRect(rect, 10, 10)
        p.fillPath(path, QColor(t.hover))
        if not self.pixmap.isNull():
            p.setClipPath(path)
            src = QRectF(self.pixmap.rect())
            side = min(src.width(), src.height())  # centre square: the image covers the tile
            src = QRectF(src.center().x() - side / 2, src.center().y() - side / 2, side, side)
            p.drawPixmap(rect, self.pixmap, src)
            p.setClipping(False)
        p.setPen(QPen(QColor(t.border), 1))
        p.setBrush(Qt.BrushStyle.NoBrush)
        p.drawPath(path)
        p.end()


class _Badge(QWidget):
    """A chip's tile: the file type in the accent colour on a tinted square."""

    def __init__(self, text: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.text = text
        self.setFixedSize(38, 38)

    def paintEvent(self, _event: QPaintEvent) -> None:  # noqa: N802
        t = appearance.current()
        p = QPainter(self)
        p.setRenderHint(QPainter.RenderHint.Antialiasing)
        accent = QColor(t.accent)
        tint = QColor(accent)
        tint.setAlphaF(0.14)
        p.setPen(Qt.PenStyle.NoPen)
        p.setBrush(tint)
        p.drawRoundedRect(QRectF(self.rect()), 8, 8)
        font = QFont(self.font())
        font.setBold(True)
        font.setPixelSize(11 if len(self.text) <= 3 else 9)
        p.setFont(font)
        p.setPen(accent)
        p.drawText(QRectF(self.rect()), Qt.AlignmentFlag.AlignCenter, self.text)
        p.end()


class _ElidedLabel(QLabel):
    """A one-line label that shortens its text in the middle to fit ("report…final.pdf").

    Elided when painted, with the font the style sheet gave it.
    """

    def __init__(self, text: str, parent: QWidget | None = None) -> None:
        super().__init__(text, parent)
        self.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)

    def shown_text(self) -> str:
        """The text as painted in the label's width."""
        return self.fontMetrics().elidedText(self.text(), Qt.TextElideMode.ElideMiddle,
                                             self.contentsRect().width())

    def paintEvent(self, _event: QPaintEvent) -> None:  # noqa: N802
        p = QPainter(self)
        p.setPen(self.palette().color(self.foregroundRole()))
        p.drawText(self.contentsRect(), int(Qt.AlignmentFlag.AlignLeft
                                            | Qt.AlignmentFlag.AlignVCenter), self.shown_text())
        p.end()


#: What separates the parts of a chip's detail line ("Text · 1,600 lines · 0.1 MB").
DETAIL_SEP = " · "


def fit_detail(text: str, metrics: QFontMetrics, width: int) -> str:
    """A detail line shortened to ``width`` px by whole parts, never inside one.

    Parts (separated by :data:`DETAIL_SEP`) are dropped from the end, so "Text · 1,600
    lines · 0.1 MB" becomes "Text · 1,600 lines"; only a first part too long on its own
    is cut, at its end ("…").
    """
    if metrics.horizontalAdvance(text) <= width:
        return text
    parts = text.split(DETAIL_SEP)
    for n in range(len(parts) - 1, 0, -1):
        shorter = DETAIL_SEP.join(parts[:n])
        if metrics.horizontalAdvance(shorter) <= width:
            return shorter
    return metrics.elidedText(parts[0], Qt.TextElideMode.ElideRight, width)


class _DetailLabel(_ElidedLabel):
    """A chip's detail line: shortened by whole parts (:func:`fit_detail`); the whole line
    is in the chip's tooltip."""

    def shown_text(self) -> str:
        return fit_detail(self.text(), self.fontMetrics(), self.contentsRect().width())


class TrayEntry(QFrame):
    """One pending file in the tray: a thumbnail or a chip, with its ✕ button."""

    def __init__(self, item: TrayItem, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.item = item
        image = item.kind == "image"
        self.setObjectName("AttachThumb" if image else "AttachChip")
        self.setProperty("reading", item.kind == "reading")
        self.setAccessibleName(item.description)
        self.setToolTip(item.description)
        self.setAttribute(Qt.WidgetAttribute.WA_StyledBackground, True)
        row = QHBoxLayout(self)
        if image:
            row.setContentsMargins(0, 0, 0, 0)
            row.addWidget(_Thumbnail(item.thumbnail, self))
            self.setFixedSize(THUMB_PX, THUMB_PX)
        else:
            row.setContentsMargins(9, 8, 22, 8)
            row.setSpacing(9)
            row.addWidget(_Badge(badge_text(item.name, item.kind), self))
            col = QVBoxLayout()
            col.setContentsMargins(0, 0, 0, 0)
            col.setSpacing(1)
            self.name_label = _ElidedLabel(item.name, self)
            self.name_label.setObjectName("AttachName")
            self.detail_label = _DetailLabel(item.detail, self)
            self.detail_label.setObjectName("AttachDetail")
            col.addStretch(1)
            col.addWidget(self.name_label)
            col.addWidget(self.detail_label)
            col.addStretch(1)
            row.addLayout(col, 1)
            self.setFixedSize(CHIP_WIDTH, THUMB_PX)
        self.remove_button = RemoveButton(item.name, self)
        self.remove_button.move(self.width() - REMOVE_PX - 3, 3)
        self.remove_button.raise_()


class AttachTray(QScrollArea):
    """The row of pending files (scrolls sideways when they do not fit).

    Signals:
        remove_requested(int): the ✕ of the item with this key was pressed.
        changed(): the items shown changed (the Send button follows it).
    """

    remove_requested = Signal(int)
    changed = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("AttachTray")
        self.setAccessibleName("Attached files")
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setWidgetResizable(True)
        self.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAsNeeded)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.inner = QWidget(self)
        self.inner.setObjectName("AttachTrayInner")
        self._row = QHBoxLayout(self.inner)
        self._row.setContentsMargins(1, 2, 1, 2)
        self._row.setSpacing(8)
        self._row.addStretch(1)
        self.setWidget(self.inner)
        self.entries: list[TrayEntry] = []
        self._fit_height()
        self.hide()

    def items(self) -> list[TrayItem]:
        """The items shown, in order."""
        return [e.item for e in self.entries]

    def count(self) -> int:
        """How many files are shown (being read or ready)."""
        return len(self.entries)

    def set_items(self, items: list[TrayItem]) -> None:
        """Show ``items`` (entries whose item did not change are kept, so focus stays)."""
        if items == self.items():
            return
        focused = next((e.item.key for e in self.entries if e.remove_button.hasFocus()), None)
        old = {e.item.key: e for e in self.entries}
        kept: list[TrayEntry] = []
        for item in items:
            entry = old.pop(item.key, None)
            if entry is None or entry.item != item:
                if entry is not None:
                    old[item.key] = entry  # replaced: delete the old one below
                entry = TrayEntry(item, self.inner)
                entry.remove_button.clicked.connect(
                    lambda _checked=False, key=item.key: self.remove_requested.emit(key))
            kept.append(entry)
        for entry in old.values():
            entry.hide()
            entry.deleteLater()
        for i, entry in enumerate(kept):
            self._row.insertWidget(i, entry)
            entry.show()
        self.entries = kept
        self.setVisible(bool(kept))
        self._fit_height()
        self._restore_focus(focused, [i.key for i in items])
        self.changed.emit()

    def _restore_focus(self, focused: int | None, keys: list[int]) -> None:
        """After a removal by keyboard, focus the next ✕ (or the one before)."""
        if focused is None or focused in keys or not self.entries:
            return
        # The removed item's neighbour: the first entry whose key is after it, else the last.
        after = [e for e in self.entries if e.item.key > focused]
        target = after[0] if after else self.entries[-1]
        target.remove_button.setFocus(Qt.FocusReason.TabFocusReason)

    def _fit_height(self) -> None:
        """As tall as one row of files, plus the scroll bar when they overflow."""
        overflow = self.inner.sizeHint().width() > self.viewport().width()
        bar = self.horizontalScrollBar().sizeHint().height() if overflow else 0
        height = THUMB_PX + 4 + bar
        if height != self.height():
            self.setFixedHeight(height)

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802
        super().resizeEvent(event)
        self._fit_height()

"""A QListView that lays out only what is visible, for sessions of any length.

QListView (and QTreeView) ask the delegate for the size of *every* row before
the first paint, and QListView lays everything out again when one row changes
height; with rendered markdown that is seconds for a 10,000-turn session. This
view keeps its own geometry instead: one height per row — measured (rendered)
for rows that have been on screen, estimated from text length for the rest —
and their running sums for positions. Painting measures the rows it is about to
show; when a measured height differs from the estimate the view keeps the row
at the top of the viewport where it was (or stays at the bottom while it
follows a streaming reply).

It still is a QListView (QAbstractItemView underneath): selection model,
current index, keyboard focus and the accessibility interface for lists come
from Qt; only geometry, painting and cursor movement are overridden.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from PySide6.QtCore import (
    QAbstractItemModel,
    QCoreApplication,
    QEvent,
    QItemSelection,
    QItemSelectionModel,
    QModelIndex,
    QPersistentModelIndex,
    QPoint,
    QRect,
    QSize,
    Qt,
    QTimer,
    QTimerEvent,
    Signal,
)
from PySide6.QtGui import (
    QContextMenuEvent,
    QCursor,
    QFocusEvent,
    QHelpEvent,
    QKeyEvent,
    QMouseEvent,
    QPainter,
    QPaintEvent,
    QRegion,
    QResizeEvent,
)
from PySide6.QtWidgets import (
    QAbstractItemView,
    QListView,
    QStyle,
    QStyleOptionViewItem,
    QToolTip,
    QWidget,
)

from parley.gui.commands.actions import key_text
from parley.gui.commands.keymap import keymap_for
from parley.gui.transcript.damage import RowPicture, damage, picture
from parley.gui.transcript.delegate import TranscriptDelegate
from parley.gui.transcript.geometry import RowGeometry
from parley.gui.transcript.layout import Hit, RowLayout
from parley.gui.transcript.model import TranscriptModel
from parley.gui.transcript.tooltips import tooltip_text

Index = QModelIndex | QPersistentModelIndex
BOTTOM_PAD = 12  # px of empty space under the last row
STICK_SLACK = 4  # px: "at the bottom" tolerance
SCROLL_STEP = 40  # px per scroll-bar arrow step / wheel notch third
RE_ESTIMATE_MS = 150  # after a resize, wait this long before re-estimating every row
ENSURE_VISIBLE = QAbstractItemView.ScrollHint.EnsureVisible
PREFETCH_ROWS = 2  # rows laid out per idle step, above and below the view
PREFETCH_MS = 30  # pause between idle steps
#: Focus arriving for these reasons does not show the focus frame (message keys stay
#: off): a click, or the focus coming back to where it was when the window is
#: activated again or a menu closes (it shows the frame only if it did before).
_FOCUS_KEEPS_FRAME = (Qt.FocusReason.MouseFocusReason, Qt.FocusReason.ActiveWindowFocusReason,
                      Qt.FocusReason.PopupFocusReason, Qt.FocusReason.MenuBarFocusReason)
_COMMAND_MODS = (Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.AltModifier
                 | Qt.KeyboardModifier.MetaModifier)
_MODIFIER_KEYS = (Qt.Key.Key_Control, Qt.Key.Key_Shift, Qt.Key.Key_Alt, Qt.Key.Key_Meta,
                  Qt.Key.Key_AltGr)
_CURSOR = QAbstractItemView.CursorAction
_MOVES = {"previous": _CURSOR.MoveUp, "next": _CURSOR.MoveDown, "first": _CURSOR.MoveHome,
          "last": _CURSOR.MoveEnd}


class TranscriptListView(QListView):
    """The scrolling list of transcript rows.

    Signals:
        anchorClicked(QModelIndex, str, object): an anchor (href) of a row was
            clicked; the object is the :class:`~parley.gui.transcript.layout.Placed` piece.
        foldClicked(QModelIndex, str): a fold line (key) of a row was clicked.
        menuRequested(QModelIndex, QPoint, object): context menu at a global
            position; the object is the :class:`Hit` under the pointer or None.
        actionRequested(str, QModelIndex): a message key on the current row;
            the str is the action's name (``copy``, ``copy_markdown``, ``edit``,
            ``fork``, ``retry``, ``toggle``; see ``message.*`` in gui/commands/actions.py).
        clearOfChanged(): what floats over the view changed (:meth:`keep_clear_of`).
        startWanted(): Home (or the first-message key) while older rows of the
            session are not read yet (:attr:`more_above`): read them, then
            :meth:`move_to` ``first`` again.

    Message keys come from the keymap of the window (``parley.gui.commands.keymap.keymap_for``),
    so rebinding them in Settings → Keyboard applies at once. The moves
    (``previous``, ``next``, ``first``, ``last``) are done here; Up, Down,
    Home, End and Page Up/Down always move too, as in any list.
    """

    anchorClicked = Signal(QModelIndex, str, object)
    foldClicked = Signal(QModelIndex, str)
    menuRequested = Signal(QModelIndex, QPoint, object)
    actionRequested = Signal(str, QModelIndex)
    startWanted = Signal()
    clearOfChanged = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        #: top-level rows of the session above the first row, not read yet
        self.more_above = 0
        #: a reply's model in its tooltip: ``provider:model`` -> display name (set by the
        #: window, ``parley.gui.chat.regenerate``); None: the model id
        self.model_name: Callable[[str], str] | None = None
        self._rows = RowGeometry()
        self._width = 0
        self._stick = True
        self._adjusting = False
        self._painting = False
        self._quiet = False  # visualRect is empty (a growing row repaints what changed)
        self._clicking = False  # a mouse click is being handled: no scrolling to its row
        self._press: tuple[int, str, object] | None = None
        self._footer: QWidget | None = None
        self._place: tuple[str | None, str | None, int] = (None, None, 0)
        self._clear_of = QRect()  # window coordinates: something floating over the view
        self._reserved = 0  # px kept free of rows under the viewport (:meth:`reserve_bottom`)
        self.setVerticalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.setUniformItemSizes(False)
        self.setMouseTracking(True)
        self.setFrameShape(QListView.Shape.NoFrame)
        self.setObjectName("TranscriptList")  # no focus ring round it: parley.qss
        self.viewport().setAutoFillBackground(True)
        self._delegate = TranscriptDelegate(self)
        self._delegate.repaintRequested.connect(self._throttle_over)
        self._delegate.lexersMade.connect(self._rehighlight, Qt.ConnectionType.QueuedConnection)
        self.setItemDelegate(self._delegate)
        self.verticalScrollBar().valueChanged.connect(self._value_changed)
        self.verticalScrollBar().setSingleStep(SCROLL_STEP)
        self._re_estimate = QTimer(self, singleShot=True, interval=RE_ESTIMATE_MS)
        self._re_estimate.timeout.connect(self._estimate_all)
        self._prefetch_timer = QTimer(self, singleShot=True, interval=PREFETCH_MS)
        self._prefetch_timer.timeout.connect(self._prefetch)

    # -- model wiring ---------------------------------------------------------
    @property
    def delegate(self) -> TranscriptDelegate:
        return self._delegate

    def transcript_model(self) -> TranscriptModel:
        model = self.model()
        assert isinstance(model, TranscriptModel)
        return model

    def setModel(self, model: QAbstractItemModel | None) -> None:  # noqa: N802
        if not isinstance(model, TranscriptModel):
            raise TypeError("a TranscriptListView shows a TranscriptModel")
        super().setModel(model)
        model.rowsRemoved.connect(self._rows_removed)
        model.modelAboutToBeReset.connect(self._remember_place)
        model.modelReset.connect(self._model_reset)
        model.layoutChanged.connect(self._estimate_all)
        self._estimate_all()

    def _remember_place(self) -> None:
        """Before a reset: which row is current, which is at the top, and where."""
        model = self.transcript_model()
        current = self.currentIndex()
        key = model.rows[current.row()].key if current.isValid() else None
        anchor, offset = None, 0
        if model.rows:
            value = self.verticalScrollBar().value()
            first, _ = self._visible(value)
            anchor, offset = model.rows[first].key, value - self._rows.tops[first]
        self._place = (key, anchor, offset)

    def _model_reset(self) -> None:
        """After a reset (e.g. a compaction regrouped rows): the same place, if still there."""
        self._estimate_all()
        key, anchor, offset = self._place
        self._place = (None, None, 0)
        model = self.transcript_model()
        row = model.row_of(key) if key else None
        if row is not None:
            self.set_current_row(row)
        anchor_row = model.row_of(anchor) if anchor else None
        if not self._stick and anchor_row is not None:
            self._apply_range(self._rows.tops[anchor_row] + offset)

    def set_current_row(self, row: int) -> None:
        """Make a row current (where the keyboard starts) without scrolling to it.

        Qt scrolls to a new current row at once, or at the next show when the
        view is hidden (a chat opened at start-up); for a row taller than the
        view that is its top, which would leave the end of the transcript.
        """
        auto = self.hasAutoScroll()
        self.setAutoScroll(False)
        try:
            self.selectionModel().setCurrentIndex(
                self.transcript_model().index(row), QItemSelectionModel.SelectionFlag.NoUpdate
            )
        finally:
            self.setAutoScroll(auto)

    @property
    def sticks_to_bottom(self) -> bool:
        """True while the view follows the end of the transcript."""
        return self._stick

    def stick_to_bottom(self) -> None:
        """Scroll to the end and follow it (new rows, a growing last row)."""
        self._stick = True
        self._sync()
        self._apply_range()

    def footer(self) -> QWidget | None:
        """The widget shown under the last row, if any."""
        return self._footer

    def set_footer(self, widget: QWidget | None) -> None:
        """Show a widget under the last row (the inline error), or none."""
        if self._footer is not None and self._footer is not widget:
            self._footer.hide()
        self._footer = widget
        if widget is not None:
            widget.setParent(self.viewport())
            widget.show()
        self.updateGeometries()
        self.viewport().update()

    # -- heights ----------------------------------------------------------------
    def _estimate_all(self) -> None:
        model = self.model()
        rows = model.rows if isinstance(model, TranscriptModel) else []
        width = self._width = self.viewport().width()
        self._rows.reset(self._delegate.estimates(rows, width))
        self.updateGeometries()

    def _footer_width(self) -> int:
        return max(100, min(self.viewport().width() - 40, 800))

    def _footer_height(self) -> int:
        if self._footer is None:
            return 0
        footer, width = self._footer, self._footer_width()
        if footer.hasHeightForWidth():
            return footer.heightForWidth(width) + 8
        return footer.sizeHint().height() + 8

    def content_height(self) -> int:
        """Height (px) of everything: rows, footer, bottom padding (and the room kept
        under the end for what floats over the view, see :meth:`keep_clear_of`)."""
        return self._rows.total + self._footer_height() + BOTTOM_PAD + self.floating_inset()

    def keep_clear_of(self, rect: QRect) -> None:
        """Keep the end of the transcript clear of a rect floating over the view.

        Args:
            rect: what floats (a toast), in the coordinates of this view's window;
                an empty rect when nothing does. The part of the view under its
                top edge is added under the last row, so the view scrolled to
                the end (and one following a reply) shows the last message, its
                links and an inline error above it.
        """
        self._clear_of = QRect(rect)
        self.updateGeometries()
        self.viewport().update()
        self.clearOfChanged.emit()

    def reserve_bottom(self, px: int) -> None:
        """Keep a strip of ``px`` under the rows, outside the viewport, for what sits
        there (the "↓ Latest" button while scrolled up, ``parley.gui.transcript.jump``):
        no message is painted under it. 0 gives the room back."""
        if px == self._reserved:
            return
        self._reserved = px
        # The strip is the view's own area: painted as the conversation is, not as a band.
        self.setBackgroundRole(self.viewport().backgroundRole())
        self.setAutoFillBackground(True)
        self.setViewportMargins(0, 0, 0, px)
        self.updateGeometries()

    def floating_rect(self) -> QRect:
        """:meth:`keep_clear_of`'s rect in this view's coordinates (empty for none)."""
        rect = self._clear_of
        if rect.isEmpty():
            return QRect()
        return QRect(self.mapFrom(self.window(), rect.topLeft()), rect.size())

    def floating_inset(self) -> int:
        """px of the viewport's bottom covered by :meth:`keep_clear_of`'s rect."""
        rect = self._clear_of
        if rect.isEmpty():
            return 0
        viewport = self.viewport()
        top_left = viewport.mapFrom(self.window(), rect.topLeft())
        if top_left.x() >= viewport.width() or top_left.x() + rect.width() <= 0:
            return 0
        return max(0, min(viewport.height(), viewport.height() - top_left.y()))

    def _measure(self, row: int) -> bool:
        """Lay out a row at the current width; True if its height changed."""
        layout = self._delegate.row_layout(self.transcript_model(), row, self._width)
        return self._rows.set(row, layout.height, measured=not layout.stale)

    def _visible(self, value: int) -> tuple[int, int]:
        """First and last row intersecting [value, value + viewport height)."""
        return self._rows.visible(value, self.viewport().height())

    def _sync(self) -> None:
        """Measure the rows about to be shown; keep the view anchored while heights change."""
        if self._width != self.viewport().width():
            self._width_changed()
        for _ in range(8):
            value = self.verticalScrollBar().value()
            if self._stick:
                value = max(0, self.content_height() - self.viewport().height())
            first, last = self._visible(value)
            if last < first:
                return
            # Keep in place a row the user already sees (measured before), so rows
            # growing above it push upwards, not the text being read downwards.
            measured = self._rows.measured
            anchor = next((r for r in range(first, last + 1) if measured[r]), first)
            offset = value - self._rows.tops[anchor]
            changed = False
            for row in range(first, last + 1):
                if not measured[row]:
                    changed |= self._measure(row)
            if not changed:
                if self._stick:
                    self._apply_range()
                self._prefetch_timer.start()
                return
            self._rows.recompute()
            self._apply_range(None if self._stick else self._rows.tops[anchor] + offset)

    def _prefetch(self) -> None:
        """While idle, lay out a few rows just outside the view (smooth scrolling).

        Rows above the view that change height move the scroll value by as
        much, so what is on screen does not move.
        """
        geo = self._rows
        if not len(geo) or self._width != self.viewport().width():
            return
        value = self.verticalScrollBar().value()
        view_h = self.viewport().height()
        first, last = self._visible(value)
        stop_below = min(len(geo), geo.row_at(value + 2 * view_h) + 1)
        stop_above = geo.row_at(value - view_h) - 1
        below = [r for r in range(last + 1, stop_below) if not geo.measured[r]]
        above = [r for r in range(first - 1, max(stop_above, -1), -1) if not geo.measured[r]]
        below, above = below[:PREFETCH_ROWS], above[:PREFETCH_ROWS]
        if not below and not above:
            return
        shift = 0
        for row in above:
            old = geo.heights[row]
            if self._measure(row):
                shift += geo.heights[row] - old
        changed = shift != 0
        for row in below:
            changed |= self._measure(row)
        if changed:
            geo.recompute()
            self._painting = True  # the screen shows the same rows at the same place
            try:
                self._apply_range(None if self._stick else value + shift)
            finally:
                self._painting = False
        self._prefetch_timer.start()

    def settle(self) -> None:
        """Measure the rows in view now (as the next paint would), so positions are exact."""
        self._painting = True
        try:
            self._sync()
        finally:
            self._painting = False
        self.viewport().update()

    def _apply_range(self, value: int | None = None) -> None:
        """Set the scroll bar's range (and value) without marking a user scroll."""
        bar = self.verticalScrollBar()
        viewport_h = self.viewport().height()
        maximum = max(0, self.content_height() - viewport_h)
        self._adjusting = True
        try:
            bar.setRange(0, maximum)
            bar.setPageStep(viewport_h)
            if self._stick:
                bar.setValue(maximum)
            elif value is not None:
                bar.setValue(max(0, min(maximum, value)))
        finally:
            self._adjusting = False
        self._place_footer()

    def _place_footer(self) -> None:
        if self._footer is None:
            return
        top = self._rows.total - self.verticalScrollBar().value()
        w = self._footer_width()
        x = (self.viewport().width() - w) // 2
        self._footer.setGeometry(QRect(x, top + 4, w, self._footer_height() - 8))

    def _value_changed(self, value: int) -> None:
        if not self._adjusting:
            self._stick = value >= self.verticalScrollBar().maximum() - STICK_SLACK
        self._place_footer()

    def _width_changed(self) -> None:
        self._width = self.viewport().width()
        self._rows.invalidate()
        self._re_estimate.start()

    # -- QAbstractItemView geometry overrides -----------------------------------
    def doItemsLayout(self) -> None:  # noqa: N802
        model = self.model()
        if model is not None and len(self._rows) != model.rowCount():
            self._estimate_all()
        QAbstractItemView.doItemsLayout(self)

    def updateGeometries(self) -> None:  # noqa: N802
        self._apply_range()
        QAbstractItemView.updateGeometries(self)

    def reset(self) -> None:
        QAbstractItemView.reset(self)

    def rowsInserted(self, parent: Index, start: int, end: int) -> None:  # noqa: N802
        model = self.transcript_model()
        self._rows.insert(start, self._delegate.estimates(model.rows[start : end + 1], self._width))
        self.updateGeometries()
        QAbstractItemView.rowsInserted(self, parent, start, end)
        self.viewport().update()

    def rowsAboutToBeRemoved(self, parent: Index, start: int, end: int) -> None:  # noqa: N802
        QAbstractItemView.rowsAboutToBeRemoved(self, parent, start, end)

    def _rows_removed(self, parent: Index, start: int, end: int) -> None:
        self._rows.remove(start, end)
        self.updateGeometries()
        self.viewport().update()

    def dataChanged(  # noqa: N802
        self, top_left: Index, bottom_right: Index, roles: Sequence[int] = ()
    ) -> None:
        row = bottom_right.row()
        growing = (self._stick and 0 <= top_left.row() == row == len(self._rows) - 1
                   and self.isVisible())
        before = self._picture(row) if growing else None
        self._rows.invalidate(top_left.row(), row)
        self._quiet = before is not None  # no repaint of the whole row: see _grown
        try:
            QAbstractItemView.dataChanged(self, top_left, bottom_right, list(roles))
        finally:
            self._quiet = False
        if before is not None:
            self._grown(row, before)
        elif self._stick and row == len(self._rows) - 1 and self.isVisible():
            # A streaming reply grew at the bottom: measure it and scroll now, so the
            # next paint shows it in place once (measuring while painting moved the
            # view under the paint and cost a second full repaint per update).
            self.settle()

    def _picture(self, row: int) -> RowPicture | None:
        """What the row's last layout paints (a throttled one too: it is what the screen
        shows) and where; None when it has none at the current width."""
        layout = self._delegate.cached_layout(self.transcript_model(), row, self._width)
        if layout is None:
            return None
        return picture(layout, self._rows.tops[row] - self.verticalScrollBar().value(),
                       self.viewport().height())

    def _throttle_over(self) -> None:
        """A streaming row laid out less often (its layout is expensive) may be laid out
        again: as for an update, only what changed on screen is painted again."""
        row = len(self._rows) - 1
        before = self._picture(row) if self._stick and row >= 0 and self.isVisible() else None
        if before is None:
            self.viewport().update()
        else:
            self._grown(row, before)

    def _rehighlight(self, _languages: list[str]) -> None:
        """Code shown plain is highlighted now: the rows in view are laid out again."""
        self._rows.invalidate()
        self.viewport().update()

    def _grown(self, row: int, before: RowPicture) -> None:
        """The last row changed (a reply streaming): measure it and scroll, as
        :meth:`settle`, then move the pixels that only moved (the view follows the end)
        and repaint the band that differs (:mod:`parley.gui.transcript.damage`);
        everything when the rows above changed too or the row's frame did."""
        above = self._rows.tops[row]
        self._painting = True
        try:
            self._sync()
        finally:
            self._painting = False
        after = self._picture(row)
        viewport = self.viewport()
        band = None
        if after is not None and self._rows.tops[row] == above:
            band = damage(before, after, viewport.width(), viewport.height())
        if band is None:
            viewport.update()
            return
        if after is not None and after.top != before.top:
            viewport.scroll(0, after.top - before.top, viewport.rect())  # exposes the rest
        if not band.isEmpty():
            viewport.update(band)

    def visualRect(self, index: Index) -> QRect:  # noqa: N802
        row = index.row()
        if self._quiet or not index.isValid() or not 0 <= row < len(self._rows):
            return QRect()
        top = self._rows.tops[row] - self.verticalScrollBar().value()
        return QRect(0, top, self.viewport().width(), self._rows.heights[row])

    def indexAt(self, point: QPoint) -> QModelIndex:  # noqa: N802
        y = point.y() + self.verticalScrollBar().value()
        row = self._rows.row_at(y)
        model = self.model()
        if model is None or not 0 <= row < len(self._rows):
            return QModelIndex()
        return model.index(row, 0)

    def scrollTo(  # noqa: N802
        self, index: Index, hint: QAbstractItemView.ScrollHint = ENSURE_VISIBLE
    ) -> None:
        if not index.isValid() or not 0 <= index.row() < len(self._rows) or self._clicking:
            return  # (a clicked row stays where it is: what was clicked stays under the pointer)
        self.scroll_to_row(index.row(), hint)

    def timerEvent(self, event: QTimerEvent) -> None:  # noqa: N802
        # Half a second after a press Qt scrolls to the pressed row ("delayed auto
        # scroll"): for a row taller than the view that jumped to its top, e.g. away
        # from a Resume link just clicked and the reply it starts. A clicked row
        # stays where it is, then as at the press.
        self._clicking = True
        try:
            super().timerEvent(event)
        finally:
            self._clicking = False

    def scroll_to_row(
        self,
        row: int,
        hint: QAbstractItemView.ScrollHint = ENSURE_VISIBLE,
        y_in_row: int | None = None,
    ) -> None:
        """Scroll so a row is shown: by ``hint``, or with ``y_in_row`` a third down the view."""
        if self._width != self.viewport().width():
            self._width_changed()
        if self._measure(row):
            self._rows.recompute()
        top, height = self._rows.tops[row], self._rows.heights[row]
        view_h = self.viewport().height()
        value = self.verticalScrollBar().value()
        hints = QAbstractItemView.ScrollHint
        if y_in_row is not None:
            target = top + y_in_row - view_h // 3
        elif hint == hints.PositionAtTop:
            target = top
        elif hint == hints.PositionAtBottom:
            target = top + height - view_h
        elif hint == hints.PositionAtCenter:
            target = top - (view_h - height) // 2
        elif top < value or height > view_h:
            target = top
        elif top + height > value + view_h:
            target = top + height - view_h
        else:
            return
        maximum = max(0, self.content_height() - view_h)
        if row == len(self._rows) - 1 and target >= top + height - view_h:
            target = maximum  # the end of the last row: show what is under it too (an error)
        self._stick = target >= maximum - STICK_SLACK
        self._apply_range(target)
        self.viewport().update()

    def place_row(self, row: int, y: int) -> None:
        """Scroll so a row's top is ``y`` px below the top of the viewport (as far as
        the content allows), e.g. to keep a card where it was while rows change."""
        if self._width != self.viewport().width():
            self._width_changed()
        if self._measure(row):
            self._rows.recompute()
        maximum = max(0, self.content_height() - self.viewport().height())
        target = self._rows.tops[row] - y
        self._stick = target >= maximum - STICK_SLACK
        self._apply_range(target)
        self.viewport().update()

    def verticalOffset(self) -> int:  # noqa: N802
        return self.verticalScrollBar().value()

    def horizontalOffset(self) -> int:  # noqa: N802
        return 0

    def isIndexHidden(self, index: Index) -> bool:  # noqa: N802
        return False

    def viewportSizeHint(self) -> QSize:  # noqa: N802
        return QSize(self.viewport().width(), self.content_height())

    def setSelection(self, rect: QRect, command: QItemSelectionModel.SelectionFlag) -> None:  # noqa: N802
        model = self.model()
        if model is None or not len(self._rows):
            return
        top = self.indexAt(QPoint(0, max(rect.top(), 0)))
        bottom = self.indexAt(QPoint(0, rect.bottom()))
        if not top.isValid():
            return
        if not bottom.isValid():
            bottom = top
        self.selectionModel().select(QItemSelection(top, bottom), command)

    def visualRegionForSelection(self, selection: QItemSelection) -> QRegion:  # noqa: N802
        region = QRegion()
        for rng in (selection.at(i) for i in range(selection.count())):
            for row in range(rng.top(), rng.bottom() + 1):
                region += self.visualRect(self.model().index(row, 0))
        return region

    def moveCursor(  # noqa: N802
        self, action: QAbstractItemView.CursorAction, modifiers: Qt.KeyboardModifier
    ) -> QModelIndex:
        model = self.model()
        n = len(self._rows)
        if model is None or n == 0:
            return QModelIndex()
        current = self.currentIndex()
        row = current.row() if current.isValid() else n - 1
        actions = QAbstractItemView.CursorAction
        if action in (actions.MoveUp, actions.MovePrevious):
            row = max(0, row - 1) if current.isValid() else n - 1
        elif action in (actions.MoveDown, actions.MoveNext):
            row = min(n - 1, row + 1)
        elif action == actions.MoveHome:
            row = 0
            if self.more_above > 0:
                self.startWanted.emit()
        elif action == actions.MoveEnd:
            row = n - 1
        elif action in (actions.MovePageUp, actions.MovePageDown):
            step = self.viewport().height() * (-1 if action == actions.MovePageUp else 1)
            bar = self.verticalScrollBar()
            bar.setValue(bar.value() + step)
            return self.indexAt(QPoint(0, self.viewport().height() // 3))
        return model.index(row, 0)

    def scrollContentsBy(self, dx: int, dy: int) -> None:  # noqa: N802
        if self._painting:
            return
        self.viewport().scroll(0, dy)

    def keyboardSearch(self, search: str) -> None:  # noqa: N802
        return  # typing letters does not jump between messages

    # -- painting ---------------------------------------------------------------
    def paintEvent(self, event: QPaintEvent) -> None:  # noqa: N802
        model = self.model()
        if not isinstance(model, TranscriptModel):
            return
        self._painting = True
        try:
            before = self.verticalScrollBar().value()
            self._sync()
            moved = self.verticalScrollBar().value() != before
        finally:
            self._painting = False
        if moved:  # the rows shifted under an already scrolled region: repaint it all
            self.viewport().update()
            self._place_footer()
        painter = QPainter(self.viewport())
        value = self.verticalScrollBar().value()
        first, last = self._visible(value)
        option = QStyleOptionViewItem()
        self.initViewItemOption(option)
        current = self.currentIndex()
        focused = self.hasFocus()
        self._delegate.clip = event.rect()
        state_base = option.state
        for row in range(first, last + 1):
            index = model.index(row, 0)
            top, height = self._rows.tops[row], self._rows.heights[row]
            option.rect = QRect(0, top - value, self._width, height)
            if not option.rect.intersects(event.rect()) and not moved:
                continue
            state = state_base
            if focused and index == current:
                state |= QStyle.StateFlag.State_HasFocus
            option.state = state
            self._delegate.paint(painter, option, index)
        painter.end()

    # -- input ----------------------------------------------------------------
    def hit_at(self, pos: QPoint) -> tuple[QModelIndex, Hit | None]:
        """The row and the anchor or fold line under a viewport position."""
        index = self.indexAt(pos)
        if not index.isValid():
            return index, None
        layout = self.layout_of(index.row())
        rect = self.visualRect(index)
        return index, layout.hit(pos - rect.topLeft())

    def layout_of(self, row: int, *, fresh: bool = False) -> RowLayout:
        """The layout of a row at the current width (``fresh``: never a throttled one)."""
        return self._delegate.row_layout(
            self.transcript_model(), row, self.viewport().width(), fresh=fresh
        )

    def mousePressEvent(self, event: QMouseEvent) -> None:  # noqa: N802
        self._delegate.show_focus = False
        index, hit = self.hit_at(event.position().toPoint())
        self._press = None
        if hit is not None and event.button() == Qt.MouseButton.LeftButton:
            self._press = (index.row(), hit.href or f"fold:{hit.fold_key}", hit.placed.piece)
        self._clicking = True  # a click makes its row current without scrolling to it
        try:
            super().mousePressEvent(event)
        finally:
            self._clicking = False

    def mouseReleaseEvent(self, event: QMouseEvent) -> None:  # noqa: N802
        self._clicking = True
        try:
            super().mouseReleaseEvent(event)
        finally:
            self._clicking = False
        if event.button() != Qt.MouseButton.LeftButton or self._press is None:
            return
        index, hit = self.hit_at(event.position().toPoint())
        pressed, self._press = self._press, None
        if hit is None or not index.isValid():
            return
        if (index.row(), hit.href or f"fold:{hit.fold_key}", hit.placed.piece) != pressed:
            return  # released over something else than was pressed
        if hit.href:
            self.hand_focus_back()  # first: the action may want the focus (a menu)
            self.anchorClicked.emit(index, hit.href, hit.placed)
        elif hit.fold_key is not None:
            self.foldClicked.emit(index, hit.fold_key)

    def mouseMoveEvent(self, event: QMouseEvent) -> None:  # noqa: N802
        _, hit = self.hit_at(event.position().toPoint())
        shape = Qt.CursorShape.PointingHandCursor if hit is not None else Qt.CursorShape.ArrowCursor
        if self.viewport().cursor().shape() != shape:
            self.viewport().setCursor(QCursor(shape))
        super().mouseMoveEvent(event)

    def keyPressEvent(self, event: QKeyEvent) -> None:  # noqa: N802
        if self._pass_typing_on(event):
            return
        name = keymap_for(self).message_keys().get(key_text(event.key(), event.modifiers()))
        if event.key() in _MODIFIER_KEYS or (name is None and event.modifiers() & _COMMAND_MODS):
            # Ctrl alone (the start of Ctrl+, …) or an unclaimed shortcut: no frame, so
            # letters typed next still go to the message box.
            super().keyPressEvent(event)
            return
        self._delegate.show_focus = True
        if name is not None and self.message_key(name):
            event.accept()
            self.viewport().update()
            return
        if self._pass_typing_on(event, framed=True):
            return  # a letter that is no message key here is typed, not dropped
        super().keyPressEvent(event)
        self.viewport().update()

    def _typing_target(self) -> QWidget | None:
        """The window's message box (``composer``), when it can take typing now."""
        box = getattr(self.window(), "composer", None)
        if isinstance(box, QWidget) and box.isVisible() and box.isEnabled():
            return box
        return None

    def hand_focus_back(self) -> bool:
        """Give the keyboard focus to the window's message box (after a click on a link
        or a button of a message: the click was for that action, not to pick a message,
        so typing goes on in the box). False when there is no box to take it."""
        box = self._typing_target()
        if box is None:
            return False
        self._delegate.show_focus = False
        box.setFocus(Qt.FocusReason.OtherFocusReason)
        self.viewport().update()
        return True

    def _pass_typing_on(self, event: QKeyEvent, framed: bool = False) -> bool:
        """Text typed while the messages have the focus only because one was clicked
        goes to the message box: no typed letter is lost or taken for a message key.

        Message keys (c, e, f, r …) act only while the focused message shows its
        focus frame: the focus came by the keyboard (Tab, F6, Ctrl+Shift+M) or a
        key such as an arrow was pressed on the messages. Without the frame, a
        printable key (no Ctrl, Alt or Meta) moves the focus to the box and is
        typed there. With ``framed`` (the frame shows and the key was no message key
        that acted) a printable key other than Space is passed on too. Returns True
        when the key was passed on.
        """
        text = event.text()
        if framed and text == " ":
            return False
        if ((self._delegate.show_focus and not framed) or not text or not text.isprintable()
                or event.modifiers() & _COMMAND_MODS):
            return False
        box = self._typing_target()
        if box is None:
            return False
        box.setFocus(Qt.FocusReason.OtherFocusReason)
        typed = QKeyEvent(event.type(), event.key(), event.modifiers(), text,
                          event.isAutoRepeat(), event.count())
        QCoreApplication.sendEvent(box, typed)
        event.accept()
        self.viewport().update()
        return True

    def message_key(self, name: str) -> bool:
        """Do what a message key means: move (``previous``, ``next``, ``first``,
        ``last``) or emit ``actionRequested`` for the current row. False when
        there is no message to act on."""
        if name in _MOVES:
            return self.move_to(name)
        current = self.currentIndex()
        if not current.isValid():
            return False
        self.actionRequested.emit(name, current)
        return True

    def move_to(self, name: str) -> bool:
        """Focus the ``previous``, ``next``, ``first`` or ``last`` message and show it."""
        index = self.moveCursor(_MOVES[name], Qt.KeyboardModifier.NoModifier)
        if not index.isValid():
            return False
        self.setCurrentIndex(index)
        self.scrollTo(index)
        self.viewport().update()
        return True

    def focusInEvent(self, event: QFocusEvent) -> None:  # noqa: N802
        if event.reason() not in _FOCUS_KEEPS_FRAME:
            self._delegate.show_focus = True  # arrived by keyboard: show which message
        if not self.currentIndex().isValid() and self.model() and self.model().rowCount():
            row = self.indexAt(QPoint(0, self.viewport().height() - 1)).row()
            self.set_current_row(row if row >= 0 else self.model().rowCount() - 1)
        super().focusInEvent(event)

    def contextMenuEvent(self, event: QContextMenuEvent) -> None:  # noqa: N802
        if event.reason() == QContextMenuEvent.Reason.Keyboard:
            index = self.currentIndex()
            rect = self.visualRect(index)
            pos = rect.topLeft() + QPoint(rect.width() // 2, min(rect.height(), 40))
            hit = None
        else:
            pos = event.pos()
            index, hit = self.hit_at(pos)
        if index.isValid():
            self.setCurrentIndex(index)
        self.menuRequested.emit(index, self.viewport().mapToGlobal(pos), hit)

    def viewportEvent(self, event: QEvent) -> bool:  # noqa: N802
        if event.type() == QEvent.Type.ToolTip and isinstance(event, QHelpEvent):
            index, hit = self.hit_at(event.pos())
            text = self.tooltip_for(index, hit)
            if text:
                QToolTip.showText(event.globalPos(), text, self.viewport())
            else:
                QToolTip.hideText()
                event.ignore()
            return True
        return super().viewportEvent(event)

    def tooltip_for(self, index: QModelIndex, hit: Hit | None) -> str:
        """Tooltip text for what is under the pointer (links show where they go)."""
        if not index.isValid():
            return ""
        return tooltip_text(self.transcript_model().rows[index.row()], hit, self.model_name)

    def changeEvent(self, event: QEvent) -> None:  # noqa: N802
        restyled = event.type() in (QEvent.Type.PaletteChange, QEvent.Type.FontChange)
        if restyled and self._delegate.restyle():
            self._estimate_all()
            self.viewport().update()
        super().changeEvent(event)

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802
        QAbstractItemView.resizeEvent(self, event)
        if event.size().width() != event.oldSize().width():
            self._width_changed()
        self._apply_range()


"""The chat list's tree view: keys, folding, drag and drop.

Arrows move the current row (the chat it lands on opens, and the focus stays in
the list: :attr:`SessionTree.walked`); Left/Right fold forks and spaces; the
Menu key or Shift+F10 opens the focused row's menu. Drops are interpreted here
and said by signals; the window moves the rows.
"""

from __future__ import annotations

from PySide6.QtCore import QByteArray, QModelIndex, QPoint, Qt, Signal
from PySide6.QtGui import QDragMoveEvent, QDropEvent, QFocusEvent, QKeyEvent, QMouseEvent
from PySide6.QtWidgets import QAbstractItemView, QFrame, QTreeView, QWidget

from parley.gui.sidebar.delegate import RowDelegate, chevron_rect
from parley.gui.sidebar.model import ID, KIND, SESSION_MIME, SPACE, SPACE_MIME


class SessionTree(QTreeView):
    """The tree view: arrows move between rows, Left/Right fold forks and spaces.

    Signals:
        session_dropped(str, str): a session was dropped on a space (session id, space id).
        space_dropped(str, str): a space heading was dropped on another one
            (moved space id, the space it now goes before).
        menu_requested(QModelIndex, QPoint): the context menu of a row (global position).
    """

    session_dropped = Signal(str, str)
    space_dropped = Signal(str, str)
    menu_requested = Signal(QModelIndex, QPoint)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("SessionList")
        self.setAccessibleName("Chats")
        self.setHeaderHidden(True)
        self.setRootIsDecorated(False)
        self.setIndentation(0)  # the delegate indents forks itself
        self.setItemsExpandable(True)
        self.setExpandsOnDoubleClick(False)
        self.setUniformRowHeights(False)
        self.setMouseTracking(True)
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.setDragEnabled(True)
        self.setAcceptDrops(True)
        self.setDropIndicatorShown(False)  # the delegate outlines the target instead
        self.setDragDropMode(QAbstractItemView.DragDropMode.DragDrop)
        self.setDefaultDropAction(Qt.DropAction.MoveAction)
        #: True while a key pressed on the list is handled (a current row it moves to
        #: was walked to, not clicked).
        self.keyed = False
        #: The chat the arrow keys last moved the current row to (None after a click):
        #: opening it leaves the focus in the list (``Sidebar.walking``).
        self.walked: str | None = None
        #: True while the menu of the current row is asked for with the Menu key or
        #: Shift+F10 (its first entry is highlighted then).
        self.menu_by_keys = False
        self.row_delegate = RowDelegate(self)
        self.setItemDelegate(self.row_delegate)
        self.customContextMenuRequested.connect(
            lambda pos: self.menu_requested.emit(self.indexAt(pos),
                                                 self.viewport().mapToGlobal(pos)))

    # -- folding ------------------------------------------------------------------
    def mousePressEvent(self, event: QMouseEvent) -> None:  # noqa: N802
        if event.button() == Qt.MouseButton.RightButton:
            event.accept()  # only its menu (customContextMenuRequested): the chat shown stays
            return
        self.walked = None  # a click opens the chat for typing in it
        index = self.indexAt(event.position().toPoint())
        if index.isValid() and event.button() == Qt.MouseButton.LeftButton:
            kind = index.data(KIND)
            on_arrow = chevron_rect(self.visualRect(index), index).contains(
                event.position().toPoint())
            foldable = kind == "space" or (kind == "session" and self.model().hasChildren(index))
            if foldable and (on_arrow or kind == "space"):
                self.setExpanded(index, not self.isExpanded(index))
                event.accept()
                return
        super().mousePressEvent(event)

    def keyPressEvent(self, event: QKeyEvent) -> None:  # noqa: N802
        key, mods = event.key(), event.modifiers()
        if key == Qt.Key.Key_Menu or (key == Qt.Key.Key_F10 and
                                      mods & Qt.KeyboardModifier.ShiftModifier):
            index = self.currentIndex()
            if index.isValid():
                rect = self.visualRect(index)
                self.menu_by_keys = True  # its first entry highlighted
                try:
                    self.menu_requested.emit(index, self.viewport().mapToGlobal(rect.center()))
                finally:
                    self.menu_by_keys = False
            event.accept()
            return
        self.keyed = True
        try:
            super().keyPressEvent(event)
        finally:
            self.keyed = False

    def focusOutEvent(self, event: QFocusEvent) -> None:  # noqa: N802
        super().focusOutEvent(event)
        if event.reason() != Qt.FocusReason.PopupFocusReason:  # not for a row's menu
            self.walked = None

    # -- drag and drop -------------------------------------------------------------
    def drop_target(self, index: QModelIndex, mime: str) -> str | None:
        """The space id a drop of ``mime`` at ``index`` means (None: refused)."""
        if not index.isValid():
            return None
        kind = index.data(KIND)
        if mime == SPACE_MIME:
            return index.data(ID) if kind == "space" else None
        if kind == "space":
            return str(index.data(ID))
        if kind == "session":
            return str(index.data(SPACE))
        return str(index.data(ID)) if kind in ("more", "start") else None

    @staticmethod
    def _payload(event: QDropEvent | QDragMoveEvent) -> tuple[str, str] | None:
        data = event.mimeData()
        for mime in (SESSION_MIME, SPACE_MIME):
            if data.hasFormat(mime):
                return mime, bytes(QByteArray(data.data(mime)).data()).decode()
        return None

    def dragEnterEvent(self, event: QDragMoveEvent) -> None:  # noqa: N802
        if self._payload(event) is not None:
            event.acceptProposedAction()
        else:
            event.ignore()

    def dragMoveEvent(self, event: QDragMoveEvent) -> None:  # noqa: N802
        payload = self._payload(event)
        index = self.indexAt(event.position().toPoint())
        target = self.drop_target(index, payload[0]) if payload else None
        self.row_delegate.drop_target = (self.model().index(*self._space_row(target))
                                         if target else None)
        self.viewport().update()
        if target is None:
            event.ignore()
        else:
            event.setDropAction(Qt.DropAction.MoveAction)
            event.accept()

    def _space_row(self, space_id: str) -> tuple[int, int]:
        model = self.model()
        for r in range(model.rowCount()):
            if model.index(r, 0).data(ID) == space_id:
                return r, 0
        return -1, 0

    def dragLeaveEvent(self, event: object) -> None:  # noqa: N802
        self.row_delegate.drop_target = None
        self.viewport().update()

    def dropEvent(self, event: QDropEvent) -> None:  # noqa: N802
        """Interpret the drop (the model's rows are moved by the window, not by Qt)."""
        self.row_delegate.drop_target = None
        self.viewport().update()
        payload = self._payload(event)
        index = self.indexAt(event.position().toPoint())
        target = self.drop_target(index, payload[0]) if payload else None
        if payload is None or target is None:
            event.ignore()
            return
        mime, dragged = payload
        event.setDropAction(Qt.DropAction.CopyAction)  # nothing for Qt to remove afterwards
        event.accept()
        if mime == SESSION_MIME:
            self.session_dropped.emit(dragged, target)
        elif dragged != target:
            self.space_dropped.emit(dragged, target)

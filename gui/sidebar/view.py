"""The sidebar widget: "New chat" button and the tree of spaces and sessions.

Selecting a session row (click, or the arrow keys) asks the window to open
it; the window owns what that means. Space rows are section headings.
"""

from __future__ import annotations

from PySide6.QtCore import QModelIndex, QPoint, QRect, QSize, Qt, Signal
from PySide6.QtGui import QAction, QColor, QFont, QPainter, QPainterPath
from PySide6.QtWidgets import (
    QAbstractItemView,
    QFrame,
    QHBoxLayout,
    QLabel,
    QMenu,
    QPushButton,
    QStyle,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QTreeView,
    QVBoxLayout,
    QWidget,
)

from gui import appearance
from gui.sidebar.model import ID, KIND, PINNED, RUNNING, SessionTreeModel

ROW_H = 34
SPACE_H = 30


class _RowDelegate(QStyledItemDelegate):
    """Paints session rows as rounded pills and space rows as small headings."""

    def sizeHint(self, option: QStyleOptionViewItem, index: QModelIndex) -> QSize:  # noqa: N802
        return QSize(option.rect.width(), SPACE_H if index.data(KIND) == "space" else ROW_H)

    def paint(self, p: QPainter, option: QStyleOptionViewItem, index: QModelIndex) -> None:
        t = appearance.current()
        kind = index.data(KIND)
        rect = option.rect.adjusted(8, 1, -8, -1)
        p.save()
        p.setRenderHint(QPainter.RenderHint.Antialiasing)
        font = QFont(option.font)
        if kind == "space":
            font.setPointSizeF(font.pointSizeF() * 0.85)
            font.setWeight(QFont.Weight.DemiBold)
            p.setFont(font)
            p.setPen(QColor(t.muted))
            p.drawText(rect.adjusted(10, 8, 0, 0),
                       Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter,
                       str(index.data()))
            p.restore()
            return
        selected = bool(option.state & QStyle.StateFlag.State_Selected)
        hovered = bool(option.state & QStyle.StateFlag.State_MouseOver)
        if selected or hovered:
            path = QPainterPath()
            path.addRoundedRect(rect, 8, 8)
            p.fillPath(path, QColor(t.selected if selected else t.hover))
        text_rect = rect.adjusted(10, 0, -10, 0)
        if kind == "more":
            p.setPen(QColor(t.muted))
        else:
            p.setPen(QColor(t.text))
            if index.data(RUNNING):
                p.setBrush(QColor(t.accent))
                p.setPen(Qt.PenStyle.NoPen)
                p.drawEllipse(QPoint(text_rect.right() - 3, text_rect.center().y()), 3, 3)
                p.setPen(QColor(t.text))
                text_rect.adjust(0, 0, -14, 0)
            if index.data(PINNED):
                icon = appearance.icon("pin", t.muted, 14)
                icon.paint(p, QRect(text_rect.right() - 14, text_rect.center().y() - 7, 14, 14))
                text_rect.adjust(0, 0, -20, 0)
        if selected:
            font.setWeight(QFont.Weight.Medium)
        p.setFont(font)
        elided = option.fontMetrics.elidedText(str(index.data()), Qt.TextElideMode.ElideRight,
                                               text_rect.width())
        p.drawText(text_rect, Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter, elided)
        p.restore()


class SessionTree(QTreeView):
    """The tree view; Home/End/arrows move between sessions, skipping headings."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("SessionList")
        self.setAccessibleName("Chats")
        self.setHeaderHidden(True)
        self.setRootIsDecorated(False)
        self.setIndentation(0)
        self.setItemsExpandable(False)
        self.setUniformRowHeights(False)
        self.setMouseTracking(True)
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.setItemDelegate(_RowDelegate(self))


class Sidebar(QWidget):
    """Signals carry session ids (or a space id for ``load_more_requested``)."""

    session_activated = Signal(str)
    new_chat_clicked = Signal()
    rename_requested = Signal(str)
    delete_requested = Signal(str)
    load_more_requested = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("Sidebar")
        self.setAccessibleName("Sidebar")
        self.setAttribute(Qt.WidgetAttribute.WA_StyledBackground, True)
        self.model = SessionTreeModel(self)

        title = QLabel("Parley", self)
        title.setObjectName("AppTitle")
        self.new_button = QPushButton(self)
        self.new_button.setObjectName("NewChatButton")
        self.new_button.setText("New chat")
        self.new_button.setAccessibleName("New chat")
        self.new_button.setToolTip("New chat (Ctrl+N)")
        self.new_button.setIcon(appearance.icon("new-chat", appearance.current().text, 16))
        self.new_button.setCursor(Qt.CursorShape.PointingHandCursor)
        self.new_button.clicked.connect(self.new_chat_clicked)

        self.tree = SessionTree(self)
        self.tree.setModel(self.model)
        self.tree.selectionModel().currentChanged.connect(self._current_changed)
        self.tree.clicked.connect(self._clicked)
        self.tree.customContextMenuRequested.connect(self._context_menu)
        self.model.rowsInserted.connect(lambda parent, *_: self.tree.expand(parent)
                                        if parent.isValid() else None)
        self.model.modelReset.connect(self.tree.expandAll)
        self.model.rowsInserted.connect(self._reselect)
        self.model.rowsRemoved.connect(self._reselect)
        self._selected: str | None = None

        self.status = QLabel("", self)
        self.status.setObjectName("SidebarStatus")
        self.status.setWordWrap(True)
        self.status.hide()

        top = QHBoxLayout()
        top.setContentsMargins(18, 14, 12, 6)
        top.addWidget(title)
        top.addStretch(1)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 8)
        lay.setSpacing(4)
        lay.addLayout(top)
        new_row = QHBoxLayout()
        new_row.setContentsMargins(8, 0, 8, 6)
        new_row.addWidget(self.new_button, 1)
        lay.addLayout(new_row)
        lay.addWidget(self.tree, 1)
        lay.addWidget(self.status)

    # -- what the window calls --------------------------------------------
    def select(self, session_id: str | None) -> None:
        """Highlight ``session_id`` (no signal is emitted)."""
        self._selected = session_id
        index = self.model.index_of(session_id) if session_id else QModelIndex()
        blocked = self.tree.selectionModel().blockSignals(True)
        try:
            if index.isValid():
                self.tree.setCurrentIndex(index)
                self.tree.scrollTo(index)
            else:
                self.tree.clearSelection()
                self.tree.setCurrentIndex(QModelIndex())
        finally:
            self.tree.selectionModel().blockSignals(blocked)
        self.tree.viewport().update()

    def current_session_id(self) -> str | None:
        """The selected session's id, if a session row is selected."""
        index = self.tree.currentIndex()
        return index.data(ID) if index.isValid() and index.data(KIND) == "session" else None

    def show_status(self, text: str) -> None:
        """Show a line under the list ("Loading chats…"); empty text hides it."""
        self.status.setText(text)
        self.status.setVisible(bool(text))

    # -- internals --------------------------------------------------------
    def _reselect(self, *_args: object) -> None:
        # Rows moved under the selection (a chat went to the top): keep the open one selected.
        self.select(self._selected)

    def _current_changed(self, current: QModelIndex, _previous: QModelIndex) -> None:
        if self.model.mutating:
            return
        if current.isValid() and current.data(KIND) == "session":
            self.session_activated.emit(current.data(ID))

    def _clicked(self, index: QModelIndex) -> None:
        if index.data(KIND) == "more":
            self.load_more_requested.emit(index.data(ID))
        elif index.data(KIND) == "session":
            self.session_activated.emit(index.data(ID))

    def _context_menu(self, pos: QPoint) -> None:
        index = self.tree.indexAt(pos)
        if not index.isValid() or index.data(KIND) != "session":
            return
        sid = index.data(ID)
        menu = QMenu(self)
        rename = QAction("Rename…", menu)
        rename.triggered.connect(lambda: self.rename_requested.emit(sid))
        delete = QAction("Delete…", menu)
        delete.triggered.connect(lambda: self.delete_requested.emit(sid))
        menu.addAction(rename)
        menu.addSeparator()
        menu.addAction(delete)
        menu.exec(self.tree.viewport().mapToGlobal(pos))

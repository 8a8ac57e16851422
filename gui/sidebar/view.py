"""The sidebar widget: "New chat", search, and the tree of spaces, sessions and forks.

Selecting a session row (click, or the arrow keys) asks the window to open
it; the window owns what that means. Walking the list with the arrow keys
keeps the focus in it (:meth:`Sidebar.walking`); Enter opens the current row's
chat and goes to the message box, Esc goes back there (the window's
``sidebar.open`` and ``sidebar.leave`` commands). Space rows are headings (click the
arrow to fold a space); forks nest under the session they came from and
fold the same way. Sessions are dragged onto another space to move them,
spaces dragged onto another space's place to reorder them. Everything the
context menus offer is also reachable from the keyboard (the Menu key or
Shift+F10 opens the menu of the focused row).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from PySide6.QtCore import QEvent, QModelIndex, QPoint, Qt, Signal
from PySide6.QtGui import QAction
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QMenu,
    QPushButton,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from parley.gui.look import appearance
from parley.gui.look.popup import popup
from parley.gui.sidebar.menus import session_menu, space_menu
from parley.gui.sidebar.model import ID, KIND, SPACE, SessionTreeModel
from parley.gui.sidebar.tree import SessionTree


class Sidebar(QWidget):
    """Signals carry session ids, space ids, or both."""

    session_activated = Signal(str)
    new_chat_clicked = Signal()
    rename_requested = Signal(str)
    delete_requested = Signal(str)
    load_more_requested = Signal(str)
    pin_requested = Signal(str)
    archive_requested = Signal(str)
    export_requested = Signal(str)
    move_requested = Signal(str, str)  # session id, space id
    space_action = Signal(str, str)  # "new-chat" | "rename" | "edit" | "up" | "down" | "delete"
    space_dropped = Signal(str, str)  # moved space id, the space it goes before
    new_space_requested = Signal()
    import_requested = Signal()
    search_requested = Signal()
    archived_toggled = Signal(bool)
    #: a space was folded or unfolded, or a chat's forks (:attr:`folded`, :attr:`unfolded`).
    folds_changed = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("Sidebar")
        self.setAccessibleName("Sidebar")
        self.setAttribute(Qt.WidgetAttribute.WA_StyledBackground, True)
        self.model = SessionTreeModel(self)
        self.show_archived = False
        #: the space that cannot be deleted (set by the window once known).
        self.default_space_id: str | None = None
        #: ids of the spaces and sessions the person folded (kept while rows move).
        self.folded: set[str] = set()
        #: ids of the chats whose forks the person unfolded (forks start folded under
        #: their chat; a fork opened unfolds its chat too).
        self.unfolded: set[str] = set()
        self._selected: str | None = None
        self._selected_space: str | None = None  # the new chat's space (None: a chat's)
        #: The "Show more" row asked for (its space id and row): the first chat of the
        #: page read takes its place as the current row (:meth:`_page_added`).
        self._more_at: tuple[str, int] | None = None
        self._build_top()
        self._build_tree()
        self.status = QLabel("", self)
        self.status.setObjectName("SidebarStatus")
        self.status.setWordWrap(True)
        self.status.hide()
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 8)
        lay.setSpacing(4)
        lay.addLayout(self._top)
        for widget in (self.new_button, self.search_button):
            row = QHBoxLayout()
            row.setContentsMargins(8, 0, 8, 2)
            row.addWidget(widget, 1)
            lay.addLayout(row)
        lay.addSpacing(4)
        lay.addWidget(self.tree, 1)
        lay.addWidget(self.status)

    def _build_top(self) -> None:
        title = QLabel("Parley", self)
        title.setObjectName("AppTitle")
        self.menu_button = QToolButton(self)
        self.menu_button.setObjectName("SidebarMenuButton")
        self.menu_button.setText("⋯")
        self.menu_button.setAccessibleName("Spaces and chats menu")
        self.menu_button.setToolTip("New space, import, archived chats")
        self.menu_button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        menu = QMenu(self.menu_button)
        menu.setAccessibleName("Sidebar menu")
        menu.addAction("New space…", self.new_space_requested.emit)
        menu.addAction("Import conversation…", self.import_requested.emit)
        menu.addSeparator()
        self.archived_action = QAction("Show archived chats", menu)
        self.archived_action.setCheckable(True)
        self.archived_action.toggled.connect(self._archived_toggled)
        menu.addAction(self.archived_action)
        self.menu_button.setMenu(menu)
        self._top = QHBoxLayout()
        self._top.setContentsMargins(18, 14, 12, 6)
        self._top.addWidget(title)
        self._top.addStretch(1)
        self._top.addWidget(self.menu_button)

        self.new_button = QPushButton(self)
        self.new_button.setObjectName("NewChatButton")
        self.new_button.setText("New chat")
        self.new_button.setAccessibleName("New chat")
        self.new_button.setToolTip("New chat (Ctrl+N)")
        self.new_button.setCursor(Qt.CursorShape.PointingHandCursor)
        self.new_button.clicked.connect(self.new_chat_clicked)
        self.search_button = QPushButton(self)
        self.search_button.setObjectName("SearchChatsButton")
        self.search_button.setText("Search chats")
        self.search_button.setAccessibleName("Search chats")
        self.search_button.setToolTip("Search the titles and messages of every chat")
        self.search_button.setCursor(Qt.CursorShape.PointingHandCursor)
        self.search_button.clicked.connect(self.search_requested)
        self.restyle()

    def restyle(self) -> None:
        """Colours of the sidebar's own buttons (the rest comes from the style sheet)."""
        t = appearance.current()
        # Icons are tinted with the theme's colours: made again when the theme changes.
        self.new_button.setIcon(appearance.icon("new-chat", t.text, 16))
        self.search_button.setStyleSheet(
            f"#SearchChatsButton {{ text-align: left; padding: 6px 10px; color: {t.faint};"
            f" background: {t.base}; border: 1px solid {t.border}; border-radius: 8px; }}"
            f"#SearchChatsButton:hover {{ border-color: {t.muted}; }}"
            # Own sheets override the app's focus ring (parley.qss): each draws it, the
            # padding 1-2 px less so nothing moves (trial 17b: Tab showed nothing here).
            f"#SearchChatsButton:focus {{ border: 2px solid {t.accent}; padding: 5px 9px; }}")
        self.menu_button.setStyleSheet(
            f"#SidebarMenuButton {{ border: none; padding: 2px 6px; color: {t.muted};"
            f" border-radius: 6px; font-size: 16px; }}"
            f"#SidebarMenuButton:hover {{ background: {t.hover}; }}"
            f"#SidebarMenuButton:focus {{ border: 2px solid {t.accent}; padding: 0px 4px; }}"
            "#SidebarMenuButton::menu-indicator { image: none; width: 0; }")

    def _build_tree(self) -> None:
        self.tree = SessionTree(self)
        self.tree.setModel(self.model)
        self.tree.selectionModel().currentChanged.connect(self._current_changed)
        self.tree.clicked.connect(self._clicked)
        self.tree.menu_requested.connect(self._context_menu)
        self.tree.session_dropped.connect(self._session_dropped)
        self.tree.space_dropped.connect(self.space_dropped)
        self.model.rowsInserted.connect(self._expand_new)
        self.model.modelReset.connect(lambda: self._expand_new(QModelIndex(), 0,
                                                               self.model.rowCount() - 1))
        self.tree.collapsed.connect(lambda index: self._folded(index, True))
        self.tree.expanded.connect(lambda index: self._folded(index, False))
        self.model.rowsInserted.connect(self._reselect)
        self.model.rowsRemoved.connect(self._reselect)
        self.model.rowsMoved.connect(self._reselect)
        self.model.pageAdded.connect(self._page_added)

    # -- what the window calls --------------------------------------------
    @contextmanager
    def painted_after(self) -> Iterator[None]:
        """The list is painted once, after the ``with`` block: pages put in one by one
        with the event loop running between them are not each painted (10 spaces' first
        pages at start-up: a paint of the list between each)."""
        was = self.tree.updatesEnabled()
        self.tree.setUpdatesEnabled(False)
        try:
            yield
        finally:
            self.tree.setUpdatesEnabled(was)

    def select(self, session_id: str | None, space_id: str | None = None) -> None:
        """Highlight ``session_id`` (no signal is emitted); its folded ancestors open. A
        new chat (None) in ``space_id``, a space listing no chat, highlights that space's
        "New chat in <space>" row (a space just made is so shown at once)."""
        self._selected, self._selected_space = session_id, space_id
        index = self.model.index_of(session_id) if session_id else QModelIndex()
        if session_id is None and space_id is not None:
            index = self.model.start_index(space_id)
        blocked = self.tree.selectionModel().blockSignals(True)
        try:
            if index.isValid():
                parent = index.parent()
                while parent.isValid():
                    self.tree.expand(parent)
                    parent = parent.parent()
                self.tree.setCurrentIndex(index)
                self.tree.scrollTo(index)
            else:
                self.tree.clearSelection()
                self.tree.setCurrentIndex(QModelIndex())
        finally:
            self.tree.selectionModel().blockSignals(blocked)
        self.tree.viewport().update()

    def walking(self) -> bool:
        """True while the person walks the list with the arrow keys: it has the focus and
        its current row is the chat a key moved to. The window then leaves the focus
        in the list when that chat opens (Enter goes to the message box)."""
        walked = self.tree.walked
        return (walked is not None and self.tree.hasFocus()
                and self.tree.currentIndex().data(ID) == walked)

    def open_current(self) -> bool:
        """Enter on the list: open the current row's chat (True: the window then puts the
        focus in the message box); "New chat in <space>" starts one there (True too);
        a space heading folds or unfolds, "more" reads more chats (False: the focus
        stays in the list)."""
        index = self.tree.currentIndex()
        kind = index.data(KIND) if index.isValid() else None
        self.tree.walked = None
        if kind == "session":
            self.session_activated.emit(index.data(ID))
            return True
        if kind == "start":
            self.space_action.emit("new-chat", index.data(ID))
            return True
        if kind == "space":
            self.tree.setExpanded(index, not self.tree.isExpanded(index))
        elif kind == "more":
            self._show_more(index)
        return False

    def current_space_id(self) -> str | None:
        """The space of the focused row (a heading or a session), if any."""
        index = self.tree.currentIndex()
        if not index.isValid():
            return None
        kind = index.data(KIND)
        return index.data(ID) if kind in ("space", "more", "start") else index.data(SPACE)

    def show_status(self, text: str) -> None:
        """Show a line under the list ("Loading chats…"); empty text hides it."""
        self.status.setText(text)
        self.status.setVisible(bool(text))

    def set_show_archived(self, shown: bool) -> None:
        """Check or uncheck "Show archived chats" (emits ``archived_toggled`` on change)."""
        self.archived_action.setChecked(shown)

    def changeEvent(self, event: QEvent) -> None:  # noqa: N802
        super().changeEvent(event)
        if event.type() == QEvent.Type.PaletteChange:
            self.restyle()

    # -- internals --------------------------------------------------------
    def _archived_toggled(self, shown: bool) -> None:
        if shown != self.show_archived:
            self.show_archived = shown
            self.archived_toggled.emit(shown)

    def _expand_new(self, parent: QModelIndex, first: int, last: int) -> None:
        """Rows (re)inserted open, unless the person folded them (rows that move to
        their new place are removed and inserted, which would forget that)."""
        if parent.isValid() and self._open_by_default(parent):
            self.tree.expand(parent)
        for row in range(first, last + 1):
            self._expand_tree(self.model.index(row, 0, parent))

    def _open_by_default(self, index: QModelIndex) -> bool:
        """Spaces are open unless folded; a chat's forks are folded unless unfolded."""
        if index.data(KIND) == "session":
            return index.data(ID) in self.unfolded
        return index.data(ID) not in self.folded

    def _expand_tree(self, index: QModelIndex) -> None:
        if not self.model.hasChildren(index):
            return
        if self._open_by_default(index):
            self.tree.expand(index)
        for row in range(self.model.rowCount(index)):
            self._expand_tree(self.model.index(row, 0, index))

    def _folded(self, index: QModelIndex, folded: bool) -> None:
        if self.model.mutating:
            return
        ident = index.data(ID)
        if index.data(KIND) == "session":  # its forks: kept when unfolded
            kept, keep = self.unfolded, not folded
        else:  # a space: kept when folded
            kept, keep = self.folded, folded
        if keep == (ident in kept):
            return
        if keep:
            kept.add(ident)
        else:
            kept.discard(ident)
        self.folds_changed.emit()

    def _reselect(self, *_args: object) -> None:
        # Rows moved under the selection (a chat went to the top): keep the open one selected.
        # Once per page read, not per row: each scrolls to it and lays the tree out (a
        # page of 50 took 5-7 ms at start-up, 10 spaces' pages 60 ms; issue 33).
        if not self.model.adding_page:
            self.select(self._selected, self._selected_space)

    def _show_more(self, index: QModelIndex) -> None:
        """Ask for the next page of the "Show more" row at ``index``; its first chat
        becomes the current row there when it comes."""
        self._more_at = (str(index.data(ID)), index.row())
        self.load_more_requested.emit(index.data(ID))

    def _page_added(self, space_id: str) -> None:
        """A page came: the open chat stays selected; after "Show more", the first chat
        of the page is the current row (the focus stays where "Show more" was, the view
        does not move), else the open chat is current and scrolled to."""
        more, self._more_at = self._more_at, None
        if more is None or more[0] != space_id:
            self._more_at = more  # another space's page (start-up, a chat opened)
            self.select(self._selected, self._selected_space)
            return
        first = self.model.index(more[1], 0, self.model.space_index(space_id))
        if not first.isValid():  # nothing came (the chats were deleted meanwhile)
            self.select(self._selected, self._selected_space)
            return
        selection = self.tree.selectionModel()
        blocked = selection.blockSignals(True)
        try:
            opened = (self.model.index_of(self._selected) if self._selected
                      else self.model.start_index(self._selected_space or ""))
            if opened.isValid():
                selection.select(opened, selection.SelectionFlag.ClearAndSelect)
            else:
                selection.clearSelection()
            selection.setCurrentIndex(first, selection.SelectionFlag.NoUpdate)
        finally:
            selection.blockSignals(blocked)
        self.tree.viewport().update()

    def _current_changed(self, current: QModelIndex, _previous: QModelIndex) -> None:
        if self.model.mutating:
            return
        if current.isValid() and current.data(KIND) == "session":
            self.tree.walked = current.data(ID) if self.tree.keyed else None
            self.session_activated.emit(current.data(ID))

    def _clicked(self, index: QModelIndex) -> None:
        if index.data(KIND) == "more":
            self._show_more(index)
        elif index.data(KIND) == "start":
            self.space_action.emit("new-chat", index.data(ID))
        elif index.data(KIND) == "session":
            self.session_activated.emit(index.data(ID))

    def _session_dropped(self, session_id: str, space_id: str) -> None:
        if self.model.space_of(session_id) != space_id:
            self.move_requested.emit(session_id, space_id)

    def _context_menu(self, index: QModelIndex, global_pos: QPoint) -> None:
        kind = index.data(KIND) if index.isValid() else None
        if kind == "session":
            menu = session_menu(self, index)
        elif kind == "space":
            menu = space_menu(self, index)
        else:
            menu = QMenu(self)
            menu.addAction("New space…", self.new_space_requested.emit)
            menu.addAction("Import conversation…", self.import_requested.emit)
            menu.addAction(self.archived_action)
        menu.setAccessibleName("Chat actions")
        self.last_menu = menu  # kept for tests and so it is not collected while shown
        popup(menu, global_pos, highlight_first=self.tree.menu_by_keys)

"""Item model of the sidebar: spaces → sessions → forks (→ a "Show more" row per space).

Rows are kept in display order — pinned first, then newest first by
``updated_at`` — the order ``Store.list_sessions`` returns; :meth:`upsert`
keeps it when a session changes. A fork made on purpose is a child of the
chat it came from when that chat is loaded in the same space (folded there
until the person unfolds it: ``parley.gui.sidebar.view``); otherwise (its parent
was deleted, moved away or is not loaded yet) it is a row of its space and
is adopted as soon as its parent appears. Edits and regenerations are branches
inside their chat (``parley.core.branches``), not rows. Only the first page of each space
is loaded; a "Show more" row asks for the next (start-up stays fast with
10,000 sessions). A space with no chat listed has a "New chat in <space>" row
(kind "start"): what starts one there.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from PySide6.QtCore import (
    QByteArray,
    QMimeData,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    Qt,
    Signal,
)
from PySide6.QtGui import QStandardItem, QStandardItemModel

from parley.core.visible import strip_invisible
from parley.gui.sidebar.fork_labels import distinct_fork_labels

KIND = Qt.ItemDataRole.UserRole + 1  # "space" | "session" | "more" | "start"
ID = Qt.ItemDataRole.UserRole + 2  # space id or session id
PINNED = Qt.ItemDataRole.UserRole + 3
UPDATED = Qt.ItemDataRole.UserRole + 4  # epoch ms
RUNNING = Qt.ItemDataRole.UserRole + 5
SPACE = Qt.ItemDataRole.UserRole + 6  # the session's space id
ARCHIVED = Qt.ItemDataRole.UserRole + 7
PARENT = Qt.ItemDataRole.UserRole + 8  # a fork's parent session id (None otherwise)
FORK_POINT = Qt.ItemDataRole.UserRole + 9  # a fork's "at …" line (None until known)
PARENT_GONE = Qt.ItemDataRole.UserRole + 10  # a fork whose parent was deleted
#: The fork point as the row draws it, told apart from its siblings' (``fork_labels``).
FORK_LABEL = Qt.ItemDataRole.UserRole + 11

SESSION_MIME = "application/x-parley-session"
SPACE_MIME = "application/x-parley-space"
UNTITLED = "New chat"
Index = QModelIndex | QPersistentModelIndex

_DRAG = Qt.ItemFlag.ItemIsDragEnabled | Qt.ItemFlag.ItemIsDropEnabled
_ROW = Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable


def _sort_key(pinned: bool, updated: int) -> tuple[int, int]:
    return (0 if pinned else 1, -updated)


def _key_of(item: QStandardItem) -> tuple[int, int]:
    return _sort_key(bool(item.data(PINNED)), int(item.data(UPDATED) or 0))


class SessionTreeModel(QStandardItemModel):
    """Spaces at the top level, their sessions as children, forks under their parents.

    Signals:
        pageAdded(str): :meth:`add_sessions` put a page of rows in (the space id); a
            view that follows each row inserted (``rowsInserted``) while
            :attr:`adding_page` is True may wait for this instead.
    """

    pageAdded = Signal(str)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._sessions: dict[str, QStandardItem] = {}
        self._spaces: dict[str, QStandardItem] = {}
        #: True while rows move: a view's "current row changed" is then not a person's choice.
        self.mutating = False
        #: True while :meth:`add_sessions` inserts a page, a row at a time.
        self.adding_page = False
        #: Every parent id a session listed has named: a fork may wait for these only.
        self._parents: set[str] = set()

    @contextmanager
    def _mutation(self) -> Iterator[None]:
        was, self.mutating = self.mutating, True
        try:
            yield
        finally:
            self.mutating = was

    # -- spaces ---------------------------------------------------------
    def set_spaces(self, spaces: Iterable[Any]) -> None:
        """Show these spaces (objects with ``id`` and ``name``), in order; drops all sessions."""
        with self._mutation():
            self.clear()
            self._sessions.clear()
            self._parents.clear()
            self._spaces.clear()
            for space in spaces:
                self.add_space(space)

    def add_space(self, space: Any, row: int | None = None) -> None:
        """Add a space heading at ``row`` (default: last); renames it if present."""
        item = self._spaces.get(space.id)
        if item is not None:
            self.rename_space(space.id, space.name)
            return
        item = QStandardItem()
        item.setData("space", KIND)
        item.setData(space.id, ID)
        item.setFlags(_ROW | _DRAG)
        self._spaces[space.id] = item
        self._set_space_name(item, space.name)
        with self._mutation():
            self.insertRow(self.rowCount() if row is None else row, [item])
            self._sync_start(item)

    def rename_space(self, space_id: str, name: str) -> None:
        """Change a space heading's text."""
        item = self._spaces.get(space_id)
        if item is not None:
            self._set_space_name(item, name)
            start = self._start_row(item)
            if start is not None:
                start.setText(f"New chat in {name}")

    def start_index(self, space_id: str) -> QModelIndex:
        """The "New chat in <space>" row of an empty space (invalid when it has chats)."""
        item = self._spaces.get(space_id)
        start = self._start_row(item) if item is not None else None
        return start.index() if start is not None else QModelIndex()

    @staticmethod
    def _start_row(space: QStandardItem) -> QStandardItem | None:
        """Its "start" row: alone until a chat comes (then before or after it)."""
        for row in {0, space.rowCount() - 1}:
            child = space.child(row) if row >= 0 else None
            if child is not None and child.data(KIND) == "start":
                return child
        return None

    def _sync_start(self, space: QStandardItem | None) -> None:
        """Give ``space`` its "New chat in <space>" row when it lists nothing else, and
        take it away when it does."""
        if space is None:
            return
        start = self._start_row(space)
        if start is None and space.rowCount() == 0:
            row = QStandardItem(f"New chat in {space.text()}")
            row.setData("start", KIND)
            row.setData(space.data(ID), ID)
            row.setData(f"New chat in the space {space.text()}",
                        Qt.ItemDataRole.AccessibleTextRole)
            row.setFlags(_ROW)
            space.appendRow(row)
        elif start is not None and space.rowCount() > 1:
            space.removeRow(start.row())

    @staticmethod
    def _set_space_name(item: QStandardItem, name: str) -> None:
        item.setText(name)
        item.setToolTip(name)
        item.setData(f"Space {name}", Qt.ItemDataRole.AccessibleTextRole)

    def order_spaces(self, ids: Sequence[str]) -> None:
        """Put the space headings (with their sessions) in the order of ``ids``."""
        with self._mutation():
            for target, space_id in enumerate(i for i in ids if i in self._spaces):
                row = self._spaces[space_id].row()
                if row != target:
                    taken = self.takeRow(row)
                    self.insertRow(target, taken)

    def space_ids(self) -> list[str]:
        """The space ids in display order."""
        return [self.item(r).data(ID) for r in range(self.rowCount())]

    def space_index(self, space_id: str) -> QModelIndex:
        """The index of a space heading (invalid when unknown)."""
        item = self._spaces.get(space_id)
        return item.index() if item else QModelIndex()

    # -- sessions -------------------------------------------------------
    def add_sessions(self, space_id: str, sessions: Sequence[Any], *, has_more: bool) -> None:
        """Append a page of a space's sessions (already in display order).

        Args:
            space_id: the space they belong to (must have been set).
            sessions: ``parley.core.store.models.Session`` objects.
            has_more: whether a further page exists (shows "Show more").
        """
        space = self._spaces.get(space_id)
        if space is None:
            return
        was, self.adding_page = self.adding_page, True
        try:
            with self._mutation():
                self._drop_more(space)
                for s in sessions:
                    self._upsert(s)
                if has_more:
                    more = QStandardItem("Show more")
                    more.setData("more", KIND)
                    more.setData(space_id, ID)
                    more.setFlags(_ROW)
                    space.appendRow(more)
                self._sync_start(space)
        finally:
            self.adding_page = was
        if not was:
            self.pageAdded.emit(space_id)

    def has_more(self, space_id: str) -> bool:
        """True when a space's list ends with "Show more" (further pages to read)."""
        space = self._spaces.get(space_id)
        last = space.child(space.rowCount() - 1) if space is not None and space.rowCount() else None
        return last is not None and last.data(KIND) == "more"

    def loaded_count(self, space_id: str) -> int:
        """How many sessions of a space are loaded (forks nested anywhere included)."""
        return sum(1 for i in self._sessions.values() if i.data(SPACE) == space_id)

    def upsert(self, session: Any) -> QModelIndex:
        """Insert or update a session and move it to its place; returns its index."""
        with self._mutation():
            return self._upsert(session)

    def _upsert(self, session: Any) -> QModelIndex:
        space = self._spaces.get(session.space_id)
        if space is None:
            self._remove(session.id)  # its space is not shown (or was deleted)
            return QModelIndex()
        item = self._sessions.get(session.id)
        left: QStandardItem | None = None  # the space it leaves
        if item is None:
            item = QStandardItem()
            self._sessions[session.id] = item
        else:
            left = self._spaces.get(item.data(SPACE))
            self._take(item)
        self._fill(item, session)
        if item.data(PARENT):
            self._parents.add(item.data(PARENT))
        self._insert_sorted(self._home_of(item), item)
        self._release_strangers(item)
        self._adopt(item)
        self._sync_start(space)
        if left is not space:
            self._sync_start(left)
        return item.index()

    def _home_of(self, item: QStandardItem) -> QStandardItem:
        """Where a session row belongs: under its parent session if shown in its space."""
        space = self._spaces[item.data(SPACE)]
        parent = self._sessions.get(item.data(PARENT) or "")
        if parent is None or parent.data(SPACE) != item.data(SPACE):
            return space
        ancestor: QStandardItem | None = parent
        while ancestor is not None:  # never under itself (a cycle would hide both)
            if ancestor is item:
                return space
            ancestor = ancestor.parent()
        return parent

    @staticmethod
    def _take(item: QStandardItem) -> None:
        """Detach ``item`` (its children stay with it)."""
        holder = item.parent()
        if holder is not None:
            holder.takeRow(item.row())
        elif item.model() is not None:
            item.model().takeRow(item.row())

    @staticmethod
    def _insert_sorted(parent: QStandardItem, item: QStandardItem) -> None:
        key = _key_of(item)
        last = parent.child(parent.rowCount() - 1) if parent.rowCount() else None
        if last is not None and last.data(KIND) == "session" and key > _key_of(last):
            parent.appendRow([item])  # after every row: a page read in display order
            return
        row = 0
        while row < parent.rowCount():
            other = parent.child(row)
            if other.data(KIND) != "session" or key <= _key_of(other):
                break
            row += 1
        parent.insertRow(row, [item])

    def _adopt(self, item: QStandardItem) -> None:
        """Move the forks of ``item`` that wait at their space's level under it."""
        sid, space = item.data(ID), self._spaces[item.data(SPACE)]
        if sid not in self._parents:  # no fork names it (a page of 50: 50 x 50 rows read)
            return
        waiting = [space.child(r) for r in range(space.rowCount())
                   if space.child(r).data(PARENT) == sid]
        for child in waiting:
            self._take(child)
            self._insert_sorted(item, child)

    def _release_strangers(self, item: QStandardItem) -> None:
        """Children of ``item`` from another space go back to their own space."""
        strangers = [item.child(r) for r in range(item.rowCount())
                     if item.child(r).data(SPACE) != item.data(SPACE)]
        for child in strangers:
            self._take(child)
            self._insert_sorted(self._home_of(child), child)

    def set_title(self, session_id: str, title: str) -> None:
        """Change a session's shown title."""
        item = self._sessions.get(session_id)
        if item is not None:
            item.setText(strip_invisible(title) or UNTITLED)
            item.setToolTip(self._tooltip(item))

    def set_running(self, session_id: str, running: bool) -> None:
        """Mark a session as answering (the row shows a dot)."""
        item = self._sessions.get(session_id)
        if item is not None:
            item.setData(running, RUNNING)

    def set_fork_point(self, session_id: str, text: str | None) -> None:
        """Show where a fork came from ("from “How do I…”", whole in the tooltip); None
        shows nothing. The forks of the same chat are labelled apart
        (:func:`~parley.gui.sidebar.fork_labels.distinct_fork_labels`)."""
        item = self._sessions.get(session_id)
        if item is not None:
            item.setData(text, FORK_POINT)
            item.setToolTip(self._tooltip(item))
            self._label_forks_of(item.data(PARENT))

    def _label_forks_of(self, parent_id: str | None) -> None:
        """Set the row label (``FORK_LABEL``) of each fork of ``parent_id`` whose point is
        known, told apart from the others'."""
        if parent_id is None:
            return
        forks = [i for i in self._sessions.values()
                 if i.data(PARENT) == parent_id and i.data(FORK_POINT)]
        for item, label in zip(forks, distinct_fork_labels([i.data(FORK_POINT) for i in forks]),
                               strict=True):
            if item.data(FORK_LABEL) != label:
                item.setData(label, FORK_LABEL)

    def set_parent_gone(self, parent_id: str) -> None:
        """Mark the forks of a deleted session as orphans (they stay, at their space's level)."""
        for item in self._sessions.values():
            if item.data(PARENT) == parent_id:
                item.setData(True, PARENT_GONE)
                item.setToolTip(self._tooltip(item))

    def remove(self, session_id: str) -> None:
        """Remove a session's row (no-op if absent); its forks move to their space's level."""
        with self._mutation():
            self._remove(session_id)

    def _remove(self, session_id: str) -> None:
        item = self._sessions.pop(session_id, None)
        if item is None:
            return
        children = [item.child(r) for r in range(item.rowCount())]
        for child in children:
            self._take(child)
        self._take(item)
        for child in children:
            self._insert_sorted(self._home_of(child), child)
        self._sync_start(self._spaces.get(item.data(SPACE)))
        self._label_forks_of(item.data(PARENT))  # its siblings: told apart from the rest

    def index_of(self, session_id: str) -> QModelIndex:
        """Return the index of a session row (invalid when not loaded)."""
        item = self._sessions.get(session_id)
        return item.index() if item else QModelIndex()

    def has(self, session_id: str) -> bool:
        """True when the session has a row."""
        return session_id in self._sessions

    def session_ids(self) -> list[str]:
        """Return the loaded session ids in display order (space by space, forks after
        their parent)."""
        return [i.data(ID) for i in self._iter_sessions()]

    def space_of(self, session_id: str) -> str | None:
        """The space id a session row is in (None when not loaded)."""
        item = self._sessions.get(session_id)
        return item.data(SPACE) if item else None

    def _iter_sessions(self) -> Iterator[QStandardItem]:
        def walk(parent: QStandardItem) -> Iterator[QStandardItem]:
            for c in range(parent.rowCount()):
                child = parent.child(c)
                if child.data(KIND) == "session":
                    yield child
                    yield from walk(child)

        for r in range(self.rowCount()):
            yield from walk(self.item(r))

    @staticmethod
    def _drop_more(parent: QStandardItem) -> None:
        last = parent.rowCount() - 1
        if last >= 0 and parent.child(last).data(KIND) == "more":
            parent.removeRow(last)

    @staticmethod
    def _tooltip(item: QStandardItem) -> str:
        tip = item.text()
        if item.data(PARENT):
            tip += "\nFork of a deleted chat" if item.data(PARENT_GONE) else "\nFork"
            if item.data(FORK_POINT):
                tip += f", {item.data(FORK_POINT)}"
        if item.data(ARCHIVED):
            tip += "\nArchived"
        return tip

    @classmethod
    def _fill(cls, item: QStandardItem, s: Any) -> None:
        title = strip_invisible(s.title or "") or UNTITLED  # parley.core.visible
        item.setText(title)
        item.setData("session", KIND)
        item.setData(s.id, ID)
        item.setData(bool(s.pinned), PINNED)
        item.setData(int(s.updated_at or 0), UPDATED)
        item.setData(s.space_id, SPACE)
        item.setData(bool(getattr(s, "archived", False)), ARCHIVED)
        parent = getattr(s, "parent_session_id", None)
        item.setData(parent, PARENT)
        item.setData(parent is not None and not getattr(s, "parent_exists", True), PARENT_GONE)
        flags = [", pinned" if s.pinned else "", ", fork" if parent else "",
                 ", archived" if getattr(s, "archived", False) else ""]
        item.setData(f"Chat {title}" + "".join(flags), Qt.ItemDataRole.AccessibleTextRole)
        item.setFlags(_ROW | _DRAG)
        item.setToolTip(cls._tooltip(item))

    # -- drag and drop ------------------------------------------------------
    def mimeTypes(self) -> list[str]:  # noqa: N802
        return [SESSION_MIME, SPACE_MIME]

    def mimeData(self, indexes: Sequence[QModelIndex]) -> QMimeData:  # noqa: N802
        """A dragged session or space row: its id under our own MIME type."""
        data = QMimeData()
        for index in indexes:
            kind = index.data(KIND)
            if kind in ("session", "space"):
                mime = SESSION_MIME if kind == "session" else SPACE_MIME
                data.setData(mime, QByteArray(str(index.data(ID)).encode()))
                break
        return data

    def supportedDropActions(self) -> Qt.DropAction:  # noqa: N802
        return Qt.DropAction.MoveAction

    def supportedDragActions(self) -> Qt.DropAction:  # noqa: N802
        return Qt.DropAction.MoveAction

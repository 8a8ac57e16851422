"""Item model of the sidebar: spaces → sessions (→ a "Show more" row per space).

Rows are kept in display order — pinned first, then newest first by
``updated_at`` — the order ``Store.list_sessions`` returns; :meth:`upsert`
keeps it when a session changes. Only the first page of each space is
loaded; a "Show more" row asks for the next (start-up stays fast with
10,000 sessions).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from PySide6.QtCore import QModelIndex, QObject, QPersistentModelIndex, Qt
from PySide6.QtGui import QStandardItem, QStandardItemModel

KIND = Qt.ItemDataRole.UserRole + 1  # "space" | "session" | "more"
ID = Qt.ItemDataRole.UserRole + 2  # space id or session id
PINNED = Qt.ItemDataRole.UserRole + 3
UPDATED = Qt.ItemDataRole.UserRole + 4  # epoch ms
RUNNING = Qt.ItemDataRole.UserRole + 5
SPACE = Qt.ItemDataRole.UserRole + 6  # the session's space id

UNTITLED = "New chat"
Index = QModelIndex | QPersistentModelIndex


def _sort_key(pinned: bool, updated: int) -> tuple[int, int]:
    return (0 if pinned else 1, -updated)


class SessionTreeModel(QStandardItemModel):
    """Spaces at the top level, their sessions as children."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._sessions: dict[str, QStandardItem] = {}
        self._spaces: dict[str, QStandardItem] = {}
        #: True while rows move: a view's "current row changed" is then not a person's choice.
        self.mutating = False

    @contextmanager
    def _mutation(self) -> Iterator[None]:
        self.mutating = True
        try:
            yield
        finally:
            self.mutating = False

    # -- spaces ---------------------------------------------------------
    def set_spaces(self, spaces: Iterable[Any]) -> None:
        """Show these spaces (objects with ``id`` and ``name``), in order; drops all sessions."""
        self.clear()
        self._sessions.clear()
        self._spaces.clear()
        for space in spaces:
            item = QStandardItem(space.name)
            item.setData("space", KIND)
            item.setData(space.id, ID)
            item.setFlags(Qt.ItemFlag.ItemIsEnabled)
            item.setData(f"Space {space.name}", Qt.ItemDataRole.AccessibleTextRole)
            self.appendRow(item)
            self._spaces[space.id] = item

    # -- sessions -------------------------------------------------------
    def add_sessions(self, space_id: str, sessions: Sequence[Any], *, has_more: bool) -> None:
        """Append a page of a space's sessions (already in display order).

        Args:
            space_id: the space they belong to (must have been set).
            sessions: ``core.store.models.Session`` objects.
            has_more: whether a further page exists (shows "Show more").
        """
        parent = self._spaces.get(space_id)
        if parent is None:
            return
        self._drop_more(parent)
        for s in sessions:
            if s.id in self._sessions:
                self._fill(self._sessions[s.id], s)
                continue
            item = QStandardItem()
            self._fill(item, s)
            parent.appendRow(item)
            self._sessions[s.id] = item
        if has_more:
            more = QStandardItem("Show more")
            more.setData("more", KIND)
            more.setData(space_id, ID)
            more.setFlags(Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable)
            parent.appendRow(more)

    def loaded_count(self, space_id: str) -> int:
        """How many sessions of a space are loaded."""
        parent = self._spaces.get(space_id)
        if parent is None:
            return 0
        return sum(1 for r in range(parent.rowCount()) if parent.child(r).data(KIND) == "session")

    def upsert(self, session: Any) -> QModelIndex:
        """Insert or update a session and move it to its place; returns its index."""
        with self._mutation():
            return self._upsert(session)

    def _upsert(self, session: Any) -> QModelIndex:
        item = self._sessions.get(session.id)
        parent = self._spaces.get(session.space_id)
        if parent is None:
            return QModelIndex()
        if item is not None:
            old_parent = item.parent()
            taken = old_parent.takeRow(item.row())
            item = taken[0]
        else:
            item = QStandardItem()
            self._sessions[session.id] = item
        self._fill(item, session)
        key = _sort_key(bool(session.pinned), int(session.updated_at or 0))
        row = 0
        while row < parent.rowCount():
            other = parent.child(row)
            if other.data(KIND) != "session" or key <= _sort_key(
                bool(other.data(PINNED)), int(other.data(UPDATED) or 0)
            ):
                break
            row += 1
        parent.insertRow(row, item)
        return item.index()

    def set_title(self, session_id: str, title: str) -> None:
        """Change a session's shown title."""
        item = self._sessions.get(session_id)
        if item is not None:
            item.setText(title or UNTITLED)
            item.setToolTip(title or UNTITLED)

    def set_running(self, session_id: str, running: bool) -> None:
        """Mark a session as answering (the row shows a dot)."""
        item = self._sessions.get(session_id)
        if item is not None:
            item.setData(running, RUNNING)

    def remove(self, session_id: str) -> None:
        """Remove a session's row (no-op if absent)."""
        item = self._sessions.pop(session_id, None)
        if item is not None:
            with self._mutation():
                item.parent().removeRow(item.row())

    def index_of(self, session_id: str) -> QModelIndex:
        """Return the index of a session row (invalid when not loaded)."""
        item = self._sessions.get(session_id)
        return item.index() if item else QModelIndex()

    def session_ids(self) -> list[str]:
        """Return the loaded session ids in display order (space by space)."""
        return [i.data(ID) for i in self._iter_sessions()]

    def _iter_sessions(self) -> Iterator[QStandardItem]:
        for r in range(self.rowCount()):
            space = self.item(r)
            for c in range(space.rowCount()):
                child = space.child(c)
                if child.data(KIND) == "session":
                    yield child

    @staticmethod
    def _drop_more(parent: QStandardItem) -> None:
        last = parent.rowCount() - 1
        if last >= 0 and parent.child(last).data(KIND) == "more":
            parent.removeRow(last)

    @staticmethod
    def _fill(item: QStandardItem, s: Any) -> None:
        title = s.title or UNTITLED
        item.setText(title)
        item.setToolTip(title)
        item.setData("session", KIND)
        item.setData(s.id, ID)
        item.setData(bool(s.pinned), PINNED)
        item.setData(int(s.updated_at or 0), UPDATED)
        item.setData(s.space_id, SPACE)
        item.setData(f"Chat {title}" + (", pinned" if s.pinned else ""),
                     Qt.ItemDataRole.AccessibleTextRole)
        item.setFlags(Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable)

"""Context menus of the sidebar rows. Each entry only emits a sidebar signal."""

from __future__ import annotations

from functools import partial
from typing import Any, Protocol, cast

from PySide6.QtCore import QModelIndex
from PySide6.QtWidgets import QMenu, QWidget

from parley.gui.sidebar.model import ARCHIVED, ID, PINNED, SPACE, SessionTreeModel


class SidebarView(Protocol):
    """What the menus use of the sidebar (``parley.gui.sidebar.view.Sidebar``, a QWidget:
    the menus' parent). Typed here so this module does not import the view."""

    @property
    def archive_requested(self) -> Any: ...

    @property
    def default_space_id(self) -> Any: ...

    @property
    def delete_requested(self) -> Any: ...

    @property
    def export_requested(self) -> Any: ...

    @property
    def model(self) -> SessionTreeModel: ...

    @property
    def move_requested(self) -> Any: ...

    @property
    def pin_requested(self) -> Any: ...

    @property
    def rename_requested(self) -> Any: ...

    @property
    def session_activated(self) -> Any: ...

    @property
    def space_action(self) -> Any: ...


def session_menu(bar: SidebarView, index: QModelIndex) -> QMenu:
    """Open, rename, pin, move to a space, export, archive, delete — for one chat."""
    sid = str(index.data(ID))
    menu = QMenu(cast(QWidget, bar))  # the sidebar widget
    menu.addAction("Open", lambda: bar.session_activated.emit(sid))
    rename = menu.addAction("Rename…", lambda: bar.rename_requested.emit(sid))
    rename.setShortcut("F2")
    menu.addAction("Unpin" if index.data(PINNED) else "Pin to top",
                   lambda: bar.pin_requested.emit(sid))
    move = menu.addMenu("Move to space")
    move.setAccessibleName("Move to space")
    here = index.data(SPACE)
    for space_id in bar.model.space_ids():
        name = bar.model.space_index(space_id).data()
        action = move.addAction(name, partial(bar.move_requested.emit, sid, space_id))
        action.setEnabled(space_id != here)
    menu.addAction("Export…", lambda: bar.export_requested.emit(sid))
    menu.addSeparator()
    menu.addAction("Unarchive" if index.data(ARCHIVED) else "Archive",
                   lambda: bar.archive_requested.emit(sid))
    menu.addAction("Delete…", lambda: bar.delete_requested.emit(sid))
    return menu


def space_menu(bar: SidebarView, index: QModelIndex) -> QMenu:
    """New chat here, rename, edit defaults, move up/down, delete — for one space."""
    space_id = str(index.data(ID))
    ids = bar.model.space_ids()
    menu = QMenu(cast(QWidget, bar))  # the sidebar widget

    def add(label: str, action: str, enabled: bool = True) -> None:
        entry = menu.addAction(label, lambda: bar.space_action.emit(action, space_id))
        entry.setEnabled(enabled)

    add("New chat in this space", "new-chat")
    menu.addSeparator()
    add("Rename space…", "rename")
    add("System prompt and model…", "edit")
    add("Move up", "up", ids.index(space_id) > 0 if space_id in ids else False)
    add("Move down", "down", space_id in ids and ids.index(space_id) < len(ids) - 1)
    menu.addSeparator()
    add("Delete space…", "delete", space_id != bar.default_space_id)
    return menu

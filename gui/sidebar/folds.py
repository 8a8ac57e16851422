"""The sidebar's folds kept across restarts: the spaces folded, the chats whose forks are unfolded.

Owner of the ``app_state`` key :data:`parley.core.app_state.SIDEBAR_FOLDS` (this machine's
row: how a list is folded is a view of this computer's window). :meth:`KeptFolds.load` reads
it before the sidebar is filled (rows put in then open or stay folded as kept,
``parley.gui.sidebar.view.Sidebar._expand_new``); every fold the person makes afterwards is
written back, one write at a time, the last fold last.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject

from parley.core.app_state import SIDEBAR_FOLDS, StateStore

if TYPE_CHECKING:
    from parley.core.tasks import TaskSet
    from parley.gui.sidebar.view import Sidebar

#: Most ids kept of each kind (a chat deleted leaves its id until then): a few KB.
MAX_KEPT = 1000


def _ids(value: Any, name: str) -> set[str]:
    """The ids under ``name`` in a kept value (from this or an older Parley): strings only."""
    items = value.get(name) if isinstance(value, dict) else None
    return {item for item in items if isinstance(item, str)} if isinstance(items, list) else set()


class KeptFolds(QObject):
    """Keeps ``sidebar``'s folds in ``store`` (see the module docstring); a child of the
    sidebar, so it lives as long as the sidebar does.

    Args:
        sidebar: the window's sidebar.
        store: the open store (its ``app_state``).
        tasks: the window's background tasks (a write that fails is shown by the window).
    """

    def __init__(self, sidebar: Sidebar, store: StateStore, tasks: TaskSet) -> None:
        for earlier in sidebar.findChildren(KeptFolds):  # the store opened again (recovery)
            earlier.stop()
        super().__init__(sidebar)
        self.sidebar, self.store, self.tasks = sidebar, store, tasks
        self._watching = False
        self._writing = False
        self._again = False

    async def load(self) -> None:
        """Put the kept folds into the sidebar (before it is filled), then keep each change.

        Raises:
            StoreError: the store could not be read.
        """
        value = await SIDEBAR_FOLDS.get(self.store)
        self.sidebar.folded |= _ids(value, "spaces")
        self.sidebar.unfolded |= _ids(value, "forks")
        self.sidebar.folds_changed.connect(self.changed)
        self._watching = True

    def stop(self) -> None:
        """Keep no more changes (another :class:`KeptFolds` takes over)."""
        if self._watching:
            self.sidebar.folds_changed.disconnect(self.changed)
            self._watching = False
        self.setParent(None)

    def changed(self) -> None:
        """A fold changed: write the folds now, or once the write under way is done."""
        if self._writing:
            self._again = True
            return
        self._writing = True
        self.tasks.spawn(self._write(), name="sidebar-folds")

    async def _write(self) -> None:
        try:
            while True:
                self._again = False
                value = {"spaces": sorted(self.sidebar.folded)[:MAX_KEPT],
                         "forks": sorted(self.sidebar.unfolded)[:MAX_KEPT]}
                await SIDEBAR_FOLDS.set(self.store, value)
                if not self._again:
                    return
        finally:
            self._writing = False

"""Quitting: asked first when something would be lost, then everything stopped and saved.

A message still waiting to be sent (Parley starting) is asked about
(``parley.gui.startup.quit_waiting``); a sessions.db deleted or moved while open gets a
copy saved first (``parley.gui.database.rescue``); replies not saved yet are asked about
(``parley.gui.database.save_status``). Then runs stop (their partial replies kept), the
drafts, the window's geometry and the open chat are saved, and the workspace closed
(``parley.core.workspace``: the store, providers, MCP servers; a last backup made).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

import shiboken6
from PySide6.QtCore import QTimer
from PySide6.QtGui import QCloseEvent
from PySide6.QtWidgets import QApplication, QDialog, QMainWindow, QWidget

from parley.core.errors import ParleyError
from parley.core.tasks import report_bug
from parley.gui.window.state import WindowState

if TYPE_CHECKING:  # asyncio is imported after the first paint
    import asyncio

log = logging.getLogger(__name__)


class WindowShutdown:
    """The window's closing: a part of ``MainWindow``.

    Args:
        state: the window's state (the store, providers, chat, timers and tasks to stop).
        window: the window closed (disabled while it shuts down; handed to the questions
            asked before quitting).
        save_geometry: saves the window's size and panes in the store (raises the
            store's errors).

    Attributes:
        closing: a shutdown is under way (the window disabled).
        closed: shut down (or retired): the next close is accepted at once.
    """

    def __init__(self, state: WindowState, window: QMainWindow,
                 save_geometry: Callable[[], Awaitable[None]]) -> None:
        self.state = state
        self.window = window
        self.save_geometry = save_geometry
        self.closing = False
        self.closed = False
        self._focus_before_close: QWidget | None = None  # back there if kept open

    async def shutdown(self) -> bool:
        """Stop runs (their partial replies are kept), save drafts, geometry and the
        open session, close the store. Safe to call twice.

        If sessions.db was deleted, moved or replaced while open, a copy of what
        the store holds (with the drafts) is saved first, beside the old name or
        where the person chooses (``parley.gui.database.rescue``). A message still waiting to be
        sent (Parley starting) is asked about first (``parley.gui.startup.quit_waiting``).
        Returns False, with nothing stopped or closed, when the person chose to
        keep Parley open (a message waits, or no copy could be saved); True once
        shut down."""
        if self.closed:
            return True
        from parley.gui.startup import quit_waiting

        state = self.state
        if not await quit_waiting.ask_before_quit(state, self.window):  # a message waits: asked
            return False
        if state.store is not None and not await self._rescue_if_moved():
            return False
        if state.chat is not None:
            from parley.gui.database.save_status import ask_before_quit

            if not await ask_before_quit(state, self.window):  # replies not saved yet: asked
                return False
        self.closed = True
        try:
            if state.elsewhere is not None:
                state.elsewhere.close()
            if state.cache_timer is not None:  # no compaction starts while the chat stops
                state.cache_timer.close()
            if state.chat is not None:
                await state.chat.shutdown()
        except ParleyError as exc:  # a full disk, a damaged file…: closing goes on
            log.warning("not saved while closing: %s", exc.message)
        finally:
            await state.tasks.cancel_all()
            await self._close_workspace()
        return True

    async def _close_workspace(self) -> None:
        """Close the workspace (``Workspace.close``: this run's clean exit recorded, the MCP
        servers' programs ended, the providers and the store closed, then a last
        automatic backup if anything changed since the previous one, said in the status
        bar)."""
        workspace = self.state.workspace
        if workspace is None:
            return
        if workspace.backups is not None and workspace.backups.changed():
            self.window.statusBar().showMessage("Backing up your chats…")
        try:
            await workspace.close()
        except Exception:  # a part that failed to close must never stop Parley closing
            log.exception("closing the workspace failed")

    async def _rescue_if_moved(self) -> bool:
        """Save the geometry: a write, refused when sessions.db moved while open; then
        save a copy first (``parley.gui.database.rescue``). False: the person keeps Parley open."""
        from parley.core.store.errors import DatabaseMissing, DatabaseReplaced

        try:
            await self.save_geometry()
        except (DatabaseMissing, DatabaseReplaced) as moved:
            from parley.gui.database.rescue import rescue_before_close

            store = self.state.store
            return store is None or await rescue_before_close(self.state, store, self.window,
                                                              moved)
        except ParleyError as exc:  # a full disk, a damaged file…: closing goes on
            log.warning("not saved while closing: %s", exc.message)
        return True

    def close_requested(self, event: QCloseEvent) -> None:
        """The window is asked to close (``closeEvent``): at once when nothing is open, else
        once shut down (:meth:`shutdown`), the window disabled meanwhile."""
        typed = self.state.startup.typed
        early_waits = bool(self.state.startup.queue.messages())
        if typed is not None and typed.kept:  # in typed-at-start.txt: not lost
            early_waits = False
        if self.closed or (self.state.store is None and not early_waits):
            event.accept()
            return
        event.ignore()
        if not self.closing:
            import asyncio

            self.closing = True
            self._focus_before_close = QApplication.focusWidget()  # back there if it stays open
            self.window.setEnabled(False)  # not hide(): a hidden window's close does not quit
            task = asyncio.ensure_future(self.shutdown())
            task.add_done_callback(self._shutdown_done)

    def _shutdown_done(self, task: asyncio.Future[bool]) -> None:
        """Close once shut down; stay open when the person chose to (or closing failed
        before anything was stopped: nothing is lost by staying)."""
        exc = None if task.cancelled() else task.exception()
        if self.closed:
            if exc is not None:
                log.error("closing: %r", exc)
            self.window.close()
            return
        self.closing = False
        self.window.setEnabled(True)
        focus, self._focus_before_close = self._focus_before_close, None
        if focus is not None and shiboken6.isValid(focus) and focus.isVisible() \
                and focus.window() is self.window:
            focus.setFocus()  # disabling the window moved the focus to its first button
        if exc is not None:
            report_bug(exc)

    def close_from_outside(self) -> None:
        """Close as File → Quit does when asked from outside Parley (SIGTERM, Ctrl+C, the X11
        window destroyed: ``parley.gui.startup.quit_signals`` and ``window_gone``).

        Dialogs open over the window (a modal ``exec()``: a question, a file to pick) are
        cancelled first: the person cannot answer them then, and one left open would keep
        Parley running after the window had closed. The questions the shutdown itself asks
        (a message waiting, replies not saved yet) are still asked.
        """
        seen: set[QWidget] = set()
        while (modal := QApplication.activeModalWidget()) is not None and modal not in seen:
            seen.add(modal)
            if isinstance(modal, QDialog):
                modal.reject()
            else:
                modal.close()
        self.window.close()

    def retire(self) -> None:
        """Close the window for good after its successor took its place (a recovery)."""
        import asyncio

        self.closed = True
        for timer in self.window.findChildren(QTimer):
            timer.stop()
        if self.state.workspace is not None:  # its store closed for the recovery: the rest
            asyncio.ensure_future(self.state.workspace.close(final_backup=False))
        self.window.close()

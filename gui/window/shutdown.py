"""Quitting: asked first when something would be lost, then everything stopped and saved.

A message still waiting to be sent (Parley starting) is asked about
(``parley.gui.startup.quit_waiting``); a sessions.db deleted or moved while open gets a
copy saved first (``parley.gui.database.rescue``); replies not saved yet are asked about
(``parley.gui.database.save_status``). Then runs stop (their partial replies kept), the
drafts, the window's geometry and the open chat are saved, the store closed and a last
backup made.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

import shiboken6
from PySide6.QtGui import QCloseEvent
from PySide6.QtWidgets import QApplication

from parley.core.errors import ParleyError
from parley.core.tasks import report_bug
from parley.gui.window.base import WindowBase

if TYPE_CHECKING:
    import asyncio

log = logging.getLogger(__name__)


class WindowShutdown(WindowBase):
    """The window's closing (mixed into ``MainWindow``)."""

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
        if self._closed:
            return True
        from parley.gui.startup import quit_waiting

        if not await quit_waiting.ask_before_quit(self):  # a message waits to be sent: asked
            return False
        if self.store is not None and not await self._rescue_if_moved():
            return False
        if self.chat is not None:
            from parley.gui.database.save_status import ask_before_quit

            if not await ask_before_quit(self):  # replies not saved yet: asked
                return False
        self._closed = True
        try:
            if self.elsewhere is not None:
                self.elsewhere.close()
            if self.cache_timer is not None:
                self.cache_timer.close()
            if self.chat is not None:
                await self.chat.shutdown()
            if self.store is not None:
                from parley.core.recovery.previous_run import mark_clean_exit

                await mark_clean_exit(self.store)
        except ParleyError as exc:  # a full disk, a damaged file…: closing goes on
            log.warning("not saved while closing: %s", exc.message)
        finally:
            await self.tasks.cancel_all()
            if self.mcp is not None:  # the servers' programs end with Parley
                await self.mcp.host.close()
            if self.hub is not None:
                await self.hub.aclose()
            if self.store is not None:
                await self.store.close()
            await self._final_backup()
        return True

    async def _final_backup(self) -> None:
        """At quit: a last automatic backup if anything changed since the previous one."""
        if self.backups is None:
            return
        if self.backups.changed():
            self.statusBar().showMessage("Backing up your chats…")
        try:
            await self.backups.close()
        except Exception:  # a backup must never stop Parley from closing
            log.exception("the backup at quit failed")

    async def _rescue_if_moved(self) -> bool:
        """Save the geometry: a write, refused when sessions.db moved while open; then
        save a copy first (``parley.gui.database.rescue``). False: the person keeps Parley open."""
        from parley.core.store.errors import DatabaseMissing, DatabaseReplaced

        try:
            await self._save_geometry()
        except (DatabaseMissing, DatabaseReplaced) as moved:
            from parley.gui.database.rescue import rescue_before_close

            return await rescue_before_close(self, moved)
        except ParleyError as exc:  # a full disk, a damaged file…: closing goes on
            log.warning("not saved while closing: %s", exc.message)
        return True

    def close_requested(self, event: QCloseEvent) -> None:
        """The window is asked to close (``closeEvent``): at once when nothing is open, else
        once shut down (:meth:`shutdown`), the window disabled meanwhile."""
        import asyncio

        early_waits = self.early is not None and any(c.message is not None
                                                     for c in self.early.chats)
        if self.typed is not None and self.typed.kept:  # in typed-at-start.txt: not lost
            early_waits = False
        if self._closed or (self.store is None and not early_waits):
            event.accept()
            return
        event.ignore()
        if not self._closing:
            self._closing = True
            self._focus_before_close = QApplication.focusWidget()  # back there if it stays open
            self.setEnabled(False)  # not hide(): a hidden window's close does not quit the app
            task = asyncio.ensure_future(self.shutdown())
            task.add_done_callback(self._shutdown_done)

    def _shutdown_done(self, task: asyncio.Future[bool]) -> None:
        """Close once shut down; stay open when the person chose to (or closing failed
        before anything was stopped: nothing is lost by staying)."""
        exc = None if task.cancelled() else task.exception()
        if self._closed:
            if exc is not None:
                log.error("closing: %r", exc)
            self.close()
            return
        self._closing = False
        self.setEnabled(True)
        focus, self._focus_before_close = self._focus_before_close, None
        if focus is not None and shiboken6.isValid(focus) and focus.isVisible() \
                and focus.window() is self:
            focus.setFocus()  # disabling the window moved the focus to its first button
        if exc is not None:
            report_bug(exc)

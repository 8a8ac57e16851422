"""Errors the person can act on, told once; a damaged or moved sessions.db.

:meth:`WindowProblems.show_problem` is the window's one way to tell an error
(``TaskSet``'s, the store's, the background jobs'): one dialog modal to the window, a
burst listed in it (``parley.gui.dialogs.problem_box``), and a damaged file or
one deleted or moved while open told in one dialog, later refusals because of it in
the status bar only. A damaged file shows the recovery page
(``parley.gui.database.recovery_page``), for which the store is closed here.
"""

from __future__ import annotations

import logging
from pathlib import Path

from PySide6.QtCore import QTimer

from parley.core.errors import ParleyError
from parley.gui.window.base import WindowBase

log = logging.getLogger(__name__)


class WindowProblems(WindowBase):
    """Errors told to the person, and the damaged store (mixed into ``MainWindow``)."""

    def _store_damaged(self) -> None:
        """sessions.db was found damaged (writes have stopped): the recovery page, once."""
        if not self._recovering:
            from parley.gui.database.recovery_page import on_damage

            self._recovering = True  # once, whoever noticed it first
            self.tasks.spawn(on_damage(self, at_start=not self.ready), name="damaged")

    async def _damaged_at_start(self, path: Path) -> None:
        """The file was found damaged while the window was starting: the recovery page."""
        if not self._recovering:
            from parley.gui.database.recovery_page import on_damage

            await on_damage(self, at_start=True)

    async def close_store_for_recovery(self) -> None:
        """Stop the runs and the backups and close the damaged store
        (``parley.gui.database.recovery_page``).

        Nothing more is written to it; what the chats showed as saved stays in it.
        """
        self._recovering = True
        self._damage_told = True  # refusals still in flight go to the status bar only
        if self.chat is not None and self.runner is not None:
            for sid in list(self.chat.runs.active):
                self.runner.cancel(sid)
        if self.cache_timer is not None:
            self.cache_timer.close()
        if self.backups is not None:
            await self.backups.close(final=False)
        store, self.store = self.store, None
        for timer in self.findChildren(QTimer):  # drafts, titles…: nothing more to save
            timer.stop()
        self.composer_bar.setEnabled(False)
        self.sidebar.hide()
        if store is not None:
            await store.close()

    def retire(self) -> None:
        """Close this window for good after its successor took its place (a recovery)."""
        import asyncio

        self._closed = True
        for timer in self.findChildren(QTimer):
            timer.stop()
        if self.hub is not None:
            asyncio.ensure_future(self.hub.aclose())
        self.close()

    def show_problem(self, error: ParleyError) -> None:
        """Show an error the person can act on (one window-modal dialog; one arriving while
        it is open joins its list). A damaged file, or one
        deleted or moved while open, is told in one dialog; later refusals because of
        it only in the status bar."""
        from parley.core.store.errors import (
            SAVE_COPY_COMMAND,
            DamagedWhileOpen,
            DatabaseCorrupt,
            DatabaseMissing,
            DatabaseReplaced,
        )

        if self._recovering:  # the recovery page says what happened and what to do
            log.info("after the damage: %s", error.message)
            return
        if self.chat is not None and self.chat.save_status.absorb(error):
            return  # disk full, file locked…: told in the one bar above the composer
        if isinstance(error, DatabaseMissing | DatabaseReplaced):
            if self._moved_told:
                self.statusBar().showMessage(
                    f"Not saved: sessions.db was moved or deleted. Use {SAVE_COPY_COMMAND} "
                    "to keep what is open (closing Parley saves a copy too).", 10_000)
                return
            self._moved_told = True
        elif isinstance(error, DamagedWhileOpen | DatabaseCorrupt):
            if self._damage_told:
                self.statusBar().showMessage(
                    "Not saved: sessions.db is damaged. Quit Parley and start it again.",
                    10_000)
                return
            self._damage_told = True
            error = DamagedWhileOpen(error.path)  # what to do, whichever noticed it first
        from parley.gui import dialogs

        dialogs.show_problem(self, "Parley", error.message)

"""Errors the person can act on, told once; a damaged or moved sessions.db.

:meth:`WindowProblems.show` is the window's one way to tell an error (``TaskSet``'s,
the store's, the background jobs'; ``MainWindow.show_problem``): one dialog modal to
the window, a burst listed in it (``parley.gui.dialogs.problem_box``), and a damaged
file or one deleted or moved while open told in one dialog, later refusals because of
it in the status bar only. A damaged file shows the recovery page
(``parley.gui.database.recovery_page``), for which the store is closed here.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QMainWindow

from parley.core.errors import ParleyError
from parley.gui.startup.state import Stage
from parley.gui.window.place import place_file, write_place
from parley.gui.window.state import WindowState

if TYPE_CHECKING:
    from parley.gui.database.recovery_page import RecoveryWindow

log = logging.getLogger(__name__)


class WindowProblems:
    """Errors told to the person, and the damaged store: a part of ``MainWindow``.

    Args:
        state: the window's state (the store, the runs and timers to stop, whether
            start-up finished, the recovery flag).
        window: the window, the dialogs' parent.
        recovered: the window as the recovery page uses it (the page is shown in it; a
            new window of its class may take its place).
    """

    def __init__(self, state: WindowState, window: QMainWindow,
                 recovered: RecoveryWindow) -> None:
        self.state = state
        self.window = window
        self.recovered = recovered
        self.damage_told = False  # a damaged sessions.db was told
        self.moved_told = False  # sessions.db deleted or moved while open was told

    def store_damaged(self) -> None:
        """sessions.db was found damaged (writes have stopped): the recovery page, once."""
        if not self.state.startup.recovering:
            from parley.gui.database.recovery_page import on_damage

            at_start = not self.state.ready
            self.state.startup.move_to(Stage.RECOVERY)  # once, whoever noticed it first
            self.state.tasks.spawn(on_damage(self.recovered, at_start=at_start),
                                  name="damaged")

    async def damaged_at_start(self, path: Path) -> None:
        """The file was found damaged while the window was starting: the recovery page."""
        if not self.state.startup.recovering:
            from parley.gui.database.recovery_page import on_damage

            await on_damage(self.recovered, at_start=True)

    def reopened(self) -> None:
        """The store opened again after the recovery page: a fresh start."""
        self.damage_told = False

    async def close_store_for_recovery(self) -> None:
        """Stop the runs and the backups and close the damaged store
        (``parley.gui.database.recovery_page``).

        Nothing more is written to it; what the chats showed as saved stays in it.
        """
        state = self.state
        state.startup.move_to(Stage.RECOVERY)
        self.damage_told = True  # refusals still in flight go to the status bar only
        if state.chat is not None and state.runner is not None:
            for sid in list(state.chat.runs.active):
                state.runner.cancel(sid)
        if state.cache_timer is not None:
            state.cache_timer.close()
        if state.backups is not None:
            await state.backups.close(final=False)
        store, state.store = state.store, None
        for timer in self.window.findChildren(QTimer):  # drafts, titles…: nothing more to save
            timer.stop()
        state.composer_bar.setEnabled(False)
        # This computer's window as it is (the sidebar shown or hidden, its width) is
        # kept in window.ini before the page hides the sidebar: the window opened after
        # the recovery paints with it, never with what the restored file held.
        write_place(place_file(state.home), self.window.saveGeometry(), state.splitter.sizes())
        state.sidebar.hide()
        if store is not None:
            await store.close()

    def show(self, error: ParleyError) -> None:
        """Show an error the person can act on (one window-modal dialog; one arriving while
        it is open joins its list). A damaged file, or one deleted or moved while open, is
        told in one dialog; later refusals because of it only in the status bar."""
        from parley.core.store.errors import (
            SAVE_COPY_COMMAND,
            DamagedWhileOpen,
            DatabaseCorrupt,
            DatabaseMissing,
            DatabaseReplaced,
        )

        if self.state.startup.recovering:  # the recovery page says what happened and what to do
            log.info("after the damage: %s", error.message)
            return
        chat = self.state.chat
        if chat is not None and chat.save_status.absorb(error):
            return  # disk full, file locked…: told in the one bar above the composer
        status = self.window.statusBar()
        from parley.core.chat.events import RunInProgress
        from parley.core.compaction.types import CompactionInProgress

        if isinstance(error, RunInProgress | CompactionInProgress):
            # A chat busy when asked (what was sent is back in the box or queued): one
            # line, as the window's own "a reply is still coming", never a dialog that
            # takes the keys typed meanwhile.
            status.showMessage(error.message, 10_000)
            return
        if isinstance(error, DatabaseMissing | DatabaseReplaced):
            if self.moved_told:
                status.showMessage(
                    f"Not saved: sessions.db was moved or deleted. Use {SAVE_COPY_COMMAND} "
                    "to keep what is open (closing Parley saves a copy too).", 10_000)
                return
            self.moved_told = True
        elif isinstance(error, DamagedWhileOpen | DatabaseCorrupt):
            if self.damage_told:
                status.showMessage(
                    "Not saved: sessions.db is damaged. Quit Parley and start it again.",
                    10_000)
                return
            self.damage_told = True
            error = DamagedWhileOpen(error.path)  # what to do, whichever noticed it first
        from parley.gui import dialogs

        dialogs.show_problem(self.window, "Parley", error.message)

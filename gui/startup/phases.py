"""The main window's start-up: the store, the chats, then the providers, after the first paint.

The window is shown first, with only cheap widgets (``parley.gui.window.layout``), and
the message box focused: what a person types from the first paint on is kept.
:meth:`WindowStartup.start` then opens the store and the providers off the GUI thread
and fills the window, never undoing what the person did meanwhile (a message sent
before the chats are open is kept for the chat it was written in; Ctrl+N pressed then
opens a new chat, and what was typed before it stays with the last chat:
``parley.gui.composer.early_input``). A damaged file shows the recovery page
(``parley.gui.database.recovery_page``); a store that cannot be opened is told in the
window, what was typed kept (``parley.gui.startup.typed_at_start``).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any, cast

from PySide6.QtCore import QTimer

from parley.core.errors import ParleyError
from parley.core.gc_pause import pausing_gc
from parley.core.tasks import report_bug
from parley.gui.composer.early_input import ONE_WAITING
from parley.gui.startup.first_paint import PAINT_FALLBACK_MS, when_painted
from parley.gui.startup.replay_early import replay
from parley.gui.window.base import WindowBase
from parley.gui.window.layout import import_window_parts

if TYPE_CHECKING:
    import asyncio

log = logging.getLogger(__name__)
#: How long the notice of a v3 upgrade shows (ms; longer while the pointer rests on it).
UPGRADE_NOTICE_MS = 30_000


class WindowStartup(WindowBase):
    """The window's start-up (mixed into ``MainWindow``)."""

    @property
    def store_opened(self) -> asyncio.Event:
        """Set once the store is open (a search begun while starting waits for it).
        Made when first asked for: asyncio is imported after the first paint."""
        if self._store_opened is None:
            import asyncio

            self._store_opened = asyncio.Event()
        return self._store_opened

    def start_after_first_paint(self) -> None:
        """Schedule :meth:`start` right after the first paint (at once when it was before;
        fallback: :data:`PAINT_FALLBACK_MS`)."""
        def go() -> None:
            if not self._started:
                self._started = True
                self.tasks.spawn(self.start(), name="window-start")

        if self._painted:
            QTimer.singleShot(0, go)
            return
        when_painted(self, go)
        QTimer.singleShot(PAINT_FALLBACK_MS, go)

    async def start(self) -> None:
        """Open the store and show the chats, then load the providers.

        Step 1 (store only): the sidebar and the last open chat appear (a new
        chat instead when Ctrl+N was pressed meanwhile; what was typed stays in
        the message box), then what the person did meanwhile is done: messages
        saved in the chats they were sent in, drafts kept, chat commands run
        (``parley.gui.composer.early_input``);
        if the previous run did not exit cleanly and left a reply cut off, a
        notice says so (the transcript offers Resume). Step 2: the providers'
        settings and keys are loaded (set-up is shown if none is usable) and
        messages can be sent; then the SDKs of the providers in use (seconds
        to import on a cold start) are imported, the first chat's first; a
        message waits for its provider's ("connecting…"). Imports run in a
        worker thread so the window keeps painting. A damaged file
        (``DatabaseCorrupt``) shows the recovery page; another store that
        cannot be opened (``NewerFormat`` …) is reported in the window.
        """
        import asyncio

        self._started = True
        if self._to_build:  # the rest of the window: its modules off the GUI thread, then
            await asyncio.to_thread(import_window_parts)  # made a part at a time
        while self._to_build:
            self._to_build.pop(0)()
            await asyncio.sleep(0)  # keys typed meanwhile are taken in between
        self.sidebar.show_status("Loading chats…")
        await asyncio.to_thread(_import_store)
        from parley.core import paths
        from parley.core.store.async_store import AsyncStore
        from parley.core.store.backends import database_url
        from parley.core.store.errors import DamagedWhileOpen, DatabaseCorrupt, NotAParleyFile
        from parley.gui.chat.controller import ChatController
        from parley.gui.chat.parts import ChatCore, ChatParts, WindowCalls
        from parley.gui.notices.status_line import OneLineStatusBar

        path = paths.db_path(self.home)
        if self.typed is None:
            from parley.gui.startup.typed_at_start import TypedAtStart

            self.typed = TypedAtStart(paths.data_dir(self.home))
        # A database URL (--database, PARLEY_DATABASE_URL) puts the chats on PostgreSQL.
        try:  # a mistyped address: InvalidDatabaseUrl, shown in the window
            target = database_url(self.env.get("PARLEY_DATABASE_URL"), paths.data_dir(self.home))
            if target is None and await self._missing_file(path):
                return
            self.store = await AsyncStore.open(target or path, self._upgrade_progress)
        except (DatabaseCorrupt, NotAParleyFile) as exc:
            from parley.core.store.sqlite.backups import automatic_backups, folder_of
            from parley.gui.database.recovery_page import AT_START, show_recovery, words

            # Not even an SQLite header, but Parley backed it up: its first page is damaged.
            if isinstance(exc, DatabaseCorrupt) or automatic_backups(folder_of(path)):
                self.sidebar.show_status("")
                self.recovering = True
                await show_recovery(self, path, words(path, AT_START))
                return
            self._cannot_open(exc)
            raise
        except ParleyError as exc:
            self._cannot_open(exc)
            raise
        self.store.on_damaged = self.problems.store_damaged
        self.store_opened.set()
        self._note_upgrade()
        if self.recovering:  # opened again after the recovery page: a fresh start
            self.problems.reopened()
            self.sidebar.show()
        hub_task: asyncio.Future[Any] | None = None
        try:
            await self._note_previous_run()
            await self.widgets.restore_geometry()
            self.widgets.install_transcript()
            from parley.gui.look.view_prefs import ViewPrefs

            self.view_prefs = ViewPrefs(self)  # theme, text size, zoom (Settings → Appearance)
            await self.view_prefs.load()
            assert self.transcript is not None  # the store is open, the transcript in place
            self.chat = ChatController(
                ChatParts(parent=self, status=cast(OneLineStatusBar, self.statusBar()),
                          tasks=self.tasks,
                          keymap=self.keymap, sidebar=self.sidebar, transcript=self.transcript,
                          composer=self.composer, composer_bar=self.composer_bar,
                          model_picker=self.model_picker, context_meter=self.context_meter,
                          undo=self.undo, chat_page=self.chat_page,
                          chat_layout=self._chat_layout, heading=self.chat_heading,
                          greeting=self.greeting),
                WindowCalls(set_title=self.setWindowTitle, show_chat=self.pages.show_chat,
                            show_setup=self.pages.show_setup, setup_panel=lambda: self.setup_panel,
                            focus_composer=self.pages.focus_composer_unless_moved,
                            show_problem=lambda error: self.show_problem(error),
                            starting=lambda: self.early is not None,
                            queue_early_message=self.queue_early_message,
                            new_chat_asked=lambda: self.early is not None
                            and self.early.new_chat_asked,
                            ready=lambda: self.ready, cache_timer=lambda: self.cache_timer,
                            elsewhere=lambda: self.elsewhere),
                ChatCore(self.store, home=self.home))
            await self.chat.load_sidebar()
            self.sidebar.show_status("")
            self.probe("sessions-listed")
            self._sources_changed()
            # The providers load while the first chat is read and shown.
            hub_task = asyncio.ensure_future(self._open_hub())
            await self.chat.show_first()
            if self.store.on_server:  # other Parleys' changes show without a restart
                from parley.gui.database.elsewhere import Elsewhere

                self.elsewhere = Elsewhere(self)
                await self.elsewhere.start()
            self._tell_previous_run()  # once a chat shows: told before, a slow start hid it
            early, self.early = self.early, None  # from now on keys act on the chat shown
            if early is not None:
                await replay(self, early)
            if self.typed is not None:  # an earlier run's text typed at start, back in the box
                self.typed.restore(self)
        except (DatabaseCorrupt, DamagedWhileOpen):
            if hub_task is not None:
                hub_task.cancel()
                await asyncio.gather(hub_task, return_exceptions=True)
            await self.problems.damaged_at_start(path)
            return
        except BaseException:
            if hub_task is not None:
                hub_task.cancel()
            raise

        self.hub = await hub_task
        from parley.core.chat.run import ChatRunner
        from parley.core.tools import ToolExecutor

        # Memory, skills and session search as tools the model can use (parley.core.tools),
        # and the tools of the MCP servers in mcp.json (parley.core.mcp), asked about first.
        self.runner = ChatRunner(self.store, self.hub,
                                 tools=ToolExecutor(self.store, mcp=self._open_mcp()))
        from parley.core.recovery.previous_run import CompactionMarks

        self.compaction_marks = CompactionMarks(self.store, self.runner.hooks)
        self._start_cache_timer()
        await self._start_backups()
        self.chat.attach(self.hub, self.runner)
        if self.hub.is_configured:
            await self.chat.enter()
        else:
            self.pages.show_setup()
        await self.hub.prepare_all(first=self.chat.current_model())
        self.probe("ready")
        self.ready = True
        self._sources_changed()
        if self.pending_notice:
            self.undo.notice(self.pending_notice, 15_000)
            self.pending_notice = None
        if self.upgrade_notice:  # a v3 file was upgraded as it opened: say so, and where
            self.undo.notice(self.upgrade_notice, UPGRADE_NOTICE_MS)
        # A rescue copy saved elsewhere when sessions.db could not take the chats.
        from parley.gui.database.rescued_offer import offer_rescued

        self.tasks.spawn(offer_rescued(self), name="rescued")

    def _open_mcp(self) -> Any:
        """The MCP servers of ``mcp.json`` (started when a chat first needs them) and their
        tools, with the approval dialog (``parley.gui.dialogs.mcp_approval``); kept as
        ``self.mcp``."""
        from parley.core import paths
        from parley.core.mcp import McpHost, McpTools
        from parley.core.mcp.config import config_path
        from parley.gui.dialogs.mcp_approval import DialogApprover

        hub, store, transcript = self.hub, self.store, self.transcript
        assert hub is not None and store is not None and transcript is not None
        host = McpHost(config_path(paths.data_dir(self.home)), keys=hub.keys)
        host.load()
        self.mcp = McpTools(host, store, approver=DialogApprover(self))
        # Tool calls in the transcript are named as configured, like the dialog names them
        # (the chat opened before the tools were: its frozen list is read now).
        transcript.set_tool_names(self.mcp.names_of)
        mcp, chat = self.mcp, self.chat

        async def name_open_chat() -> None:
            if chat is not None and chat.session_id is not None:
                await mcp.load_names(chat.session_id)
                transcript.tool_names_changed()

        self.tasks.spawn(name_open_chat(), name="mcp-names")
        from parley.gui.notices import mcp_status

        mcp_status.watch(self, host)  # starting / failed servers in the status bar
        return self.mcp

    def _sources_changed(self) -> None:
        """The chats are listed, or the commands can run: a palette opened while
        starting lists them (``CommandPalette.sources_changed``)."""
        palette = getattr(self, "command_palette", None)
        if palette is not None:
            palette.sources_changed()

    async def _open_hub(self) -> Any:
        """Load the providers' settings and keys and start importing the SDKs of those in
        use (the default model's first) in worker threads; returns the ``ProviderHub``."""
        import asyncio

        await asyncio.to_thread(_import_providers)
        from parley.core.providers.hub import ProviderHub

        assert self.store is not None
        hub = ProviderHub(self.store, environ=self.env)
        await hub.load()
        self.tasks.spawn(hub.prepare_all(first=hub.default_model_ref()), name="providers")
        return hub

    def _cannot_open(self, exc: ParleyError) -> None:
        from parley.gui.startup.typed_at_start import show_start_problem

        show_start_problem(self, exc)  # why, where what was typed is kept, "Try again"
        self.sidebar.show_status("")

    @property
    def early_message(self) -> str | None:
        """The message sent before the chats were open in the chat in view, if any."""
        return self.early.current.message if self.early is not None else None

    def queue_early_message(self) -> bool:
        """Enter before the first chat is shown: keep the message (the composer's text)
        for the chat it was written in (``parley.gui.composer.early_input``): the one start-up
        shows,
        or the new chat Ctrl+N made. One waiting message per chat; another stays in
        the composer, and the status bar says why. Always consumes the key."""
        text = self.composer.text()
        if not text.strip() or self.early is None:
            return True
        if not self.early.send(text):
            self.statusBar().showMessage(ONE_WAITING, 8_000)
            return True
        self.composer.clear()
        if self.transcript is None:  # else the chat shows in a moment, with the message
            self._transcript_slot.setText(
                "Opening your chats…\n\nYour message is kept and will be sent in a moment.")
        return True

    def take_back_early_message(self) -> bool:
        """Esc before the first chat is shown: the message sent meanwhile in the chat in
        view comes back into the box (what was typed since stays after it). False
        when no message waits there."""
        text = self.early.take_back() if self.early is not None else None
        if text is None:
            return False
        box = self.composer.text()
        self.composer.set_text(f"{text}\n\n{box}" if box.strip() else text)
        if self.transcript is None:
            self._transcript_slot.setText("Opening your chats…")
        return True

    async def _missing_file(self, path: Any) -> bool:
        """sessions.db is missing but backups or rescue copies of it exist: the page that
        says so is shown (``parley.gui.database.missing_page``) and True returned."""
        from parley.gui.database.missing_page import show_if_missing

        if not await show_if_missing(self, path):
            return False
        self.recovering = True
        return True

    async def _note_previous_run(self) -> None:
        """Record this run; tell the person what the last one left if it did not exit
        cleanly (a cut-off reply, an unanswered message, an interrupted compaction)."""
        from parley.core.recovery.previous_run import mark_running

        assert self.store is not None
        self.previous_run = await mark_running(self.store)

    def _tell_previous_run(self) -> None:
        """Show what the previous run left (:meth:`_note_previous_run`)."""
        run = self.previous_run
        notice = run.notice() if run is not None else None
        if notice:
            self.undo.notice(notice)

    def _start_cache_timer(self) -> None:
        """The idle pre-cache-expiry compaction (experimental setting) and the meter's
        "cache warm until" (``parley.core.compaction.cache_timer``)."""
        from parley.core.compaction.cache_timer import CacheTimer

        runner = self.runner
        assert runner is not None
        self.cache_timer = CacheTimer(runner, runner.compactor.compact,
                                      on_error=self._background_error)
        runner.hooks.on("cache:updated", self._cache_updated)

    async def _start_backups(self) -> None:
        """Automatic backups while the chats are open (``parley.core.recovery.backup_schedule``)."""
        from parley.core.recovery.backup_schedule import BackupScheduler
        from parley.core.settings import Settings

        store = self.store
        assert store is not None
        if store.on_server:  # PostgreSQL: the server's own backups apply
            return
        self.backups = BackupScheduler(
            store, on_damaged=self.problems.store_damaged,
            on_error=lambda exc: self.statusBar().showMessage(exc.message, 15_000))
        await self.backups.start(Settings.of(store))

    def _background_error(self, exc: BaseException) -> None:
        if isinstance(exc, ParleyError):
            self.show_problem(exc)
        else:
            report_bug(exc)

    def _cache_updated(self, payload: dict[str, Any]) -> None:
        if self.chat is not None and payload.get("session_id") == self.chat.session_id:
            self.context_meter.set_cache_expiry(
                payload.get("expires_at"), payload.get("compact_at"))

    def _note_upgrade(self) -> None:
        """The store upgraded the file as it opened (v3, or the conversation tree added):
        keep the words to tell (and log them)."""
        from parley.core.recovery.upgrade_notice import upgrade_notice

        assert self.store is not None
        self.upgrade_notice = upgrade_notice(self.store.migration_report)
        if self.upgrade_notice:
            log.info("%s", self.upgrade_notice)

    def _upgrade_progress(self, done: int, total: int) -> None:
        """Shown while an older sessions.db is upgraded (a backup is made first), in the
        chat page (the message box stays usable) and on the loading page."""
        percent = f" {100 * done // total}%" if total else ""
        text = (f"Upgrading your chats to the new format…{percent}\n"
                "A backup of the old file is kept next to it.")
        self.loading_page.setText(text)
        if self.transcript is None:
            self._transcript_slot.setText(text)


@pausing_gc
def _import_store() -> None:
    """Import the store (SQLAlchemy), the controller and what showing the first chat
    needs (its code style too); run in a worker thread: an import on the GUI thread
    holds the window still."""
    import parley.core.recovery.damaged_file  # noqa: F401
    import parley.core.recovery.previous_run  # noqa: F401
    import parley.core.settings  # noqa: F401
    import parley.core.store.async_store  # noqa: F401
    import parley.gui.chat.controller  # noqa: F401
    import parley.gui.transcript  # noqa: F401
    from parley.gui.look import theme
    from parley.gui.text.markdown import pygments_background

    for style in (theme.LIGHT_CODE_STYLE, theme.DARK_CODE_STYLE):
        pygments_background(style)


@pausing_gc
def _import_providers() -> None:
    """Import the providers' hub (no SDK: ``ProviderHub.prepare`` imports those), the
    run loop and the tools; run in a worker thread."""
    import parley.core.chat.run  # noqa: F401
    import parley.core.compaction.cache_timer  # noqa: F401
    import parley.core.providers.hub  # noqa: F401
    import parley.core.recovery.backup_schedule  # noqa: F401
    import parley.core.tools  # noqa: F401


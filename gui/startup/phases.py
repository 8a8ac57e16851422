"""The main window's start-up: the store, the chats, then the providers, after the first paint.

:class:`Startup` is the window's start-up part (``window.startup``), one state machine in
the manner of Anki's ``MainWindowState``: it is in one ``Stage`` at a time
(``parley.gui.startup.state``: painting → opening → chats shown → ready, or set-up,
recovery, failed) and moves with :meth:`Startup.move_to`.

The window is shown first, with only cheap widgets (``parley.gui.window.layout``), and
the message box focused: what a person types from the first paint on is kept.
:meth:`Startup.start` then opens the store and the providers off the GUI thread and fills
the window, never undoing what the person did meanwhile: until the chats are shown it goes
into one queue (``parley.gui.startup.state.PendingQueue``: a message sent is kept for the
chat it was written in; Ctrl+N opens a new chat, and what was typed before it stays with
the last chat), done once they are. A damaged file shows the recovery page
(``parley.gui.database.recovery_page``); a store that cannot be opened is told in the
window, what was typed kept (``parley.gui.startup.typed_at_start``).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any, cast

from PySide6.QtCore import QEvent, QObject, Qt, QTimer
from PySide6.QtGui import QKeyEvent

from parley.core.errors import ParleyError
from parley.core.gc_pause import pausing_gc
from parley.core.tasks import report_bug
from parley.gui.startup.first_paint import PAINT_FALLBACK_MS, when_painted
from parley.gui.startup.state import LOADED, ONE_WAITING, QUEUEING, PendingQueue, Stage, replay
from parley.gui.window.layout import import_window_parts

if TYPE_CHECKING:
    import asyncio
    from collections.abc import Callable

    from PySide6.QtWidgets import QWidget

    from parley.core.events import CacheUpdated
    from parley.core.workspace import Workspace
    from parley.gui.chat.controller import ChatController
    from parley.gui.startup.typed_at_start import TypedAtStart
    from parley.gui.window.base import WindowBase

log = logging.getLogger(__name__)
#: How long the notice of a v3 upgrade shows (ms; longer while the pointer rests on it).
UPGRADE_NOTICE_MS = 30_000


class Startup:
    """The window's start-up (see the module docstring).

    Args:
        window: the main window it fills (its store, chats, providers are set on it).

    Attributes:
        stage: where start-up is (:meth:`move_to` changes it).
        queue: what the person did before the chats were shown, done once they are.
        typed: where that text is kept when the chats cannot be opened (set by
            :meth:`start`; None before, and after a recovery kept it).
        painted: True once the window's first paint was flushed.
    """

    def __init__(self, window: WindowBase) -> None:
        self.window = window
        self.stage = Stage.PAINTING
        self.queue = PendingQueue()
        self.typed: TypedAtStart | None = None
        self.painted = False
        self._store_opened: asyncio.Event | None = None
        self._to_build: list[Callable[[], None]] = []

    def move_to(self, stage: Stage) -> None:
        """Move to ``stage``; what a stage begins with is done by its ``_<stage>_state``
        method, when it has one (Anki's ``moveToState``)."""
        old, self.stage = self.stage, stage
        log.debug("start-up: %s -> %s", old.value, stage.value)
        enter = getattr(self, f"_{stage.name.lower()}_state", None)
        if enter is not None:
            enter(old)

    @property
    def ready(self) -> bool:
        """True once messages can be sent (the providers are loaded, or set-up shows)."""
        return self.stage in LOADED

    @property
    def queueing(self) -> bool:
        """True while what the person does waits in :attr:`queue` (no chat shown yet)."""
        return self.stage in QUEUEING

    @property
    def recovering(self) -> bool:
        """True while sessions.db is damaged or missing: the recovery page shows."""
        return self.stage is Stage.RECOVERY

    @property
    def store_opened(self) -> asyncio.Event:
        """Set once the store is open (a search begun while starting waits for it).
        Made when first asked for: asyncio is imported after the first paint."""
        if self._store_opened is None:
            import asyncio

            self._store_opened = asyncio.Event()
        return self._store_opened

    def build_later(self, rest: list[Callable[[], None]]) -> None:
        """The window's parts its first paint does not need (``WindowLayout.rest``): made
        once it is painted, a part at a time (:meth:`start`), or at once when a command
        key is pressed before (its shortcut then runs)."""
        self._to_build = list(rest)
        _CommandKeyFirst(self.window.composer, self.finish_build)

    def finish_build(self) -> None:
        """Make at once what is left of the window (:meth:`build_later`); safe to call
        again."""
        while self._to_build:
            self._to_build.pop(0)()

    @property
    def built(self) -> bool:
        """True once the whole window is made."""
        return not self._to_build

    def first_paint(self) -> None:
        """The window's first paint was flushed (``MainWindow``)."""
        self.painted = True
        self.window.probe("first-paint")

    def start_after_first_paint(self) -> None:
        """Schedule :meth:`start` right after the first paint (at once when it was before;
        fallback: :data:`PAINT_FALLBACK_MS`)."""
        def go() -> None:
            if self.stage is Stage.PAINTING:
                self.move_to(Stage.OPENING)
                self.window.tasks.spawn(self.start(), name="window-start")

        if self.painted:
            QTimer.singleShot(0, go)
            return
        when_painted(self.window, go)
        QTimer.singleShot(PAINT_FALLBACK_MS, go)

    async def start(self) -> None:
        """Open the store and show the chats, then load the providers.

        Opening (store only): the sidebar and the last open chat appear (a new chat
        instead when Ctrl+N was pressed meanwhile; what was typed stays in the message
        box). Chats shown: what the person did meanwhile is done (the queue: messages
        saved in the chats they were sent in, drafts kept, chat commands run); if the
        previous run did not exit cleanly and left a reply cut off, a notice says so
        (the transcript offers Resume). Ready: the providers' settings and keys are
        loaded (set-up is shown if none is usable) and messages can be sent; then the
        SDKs of the providers in use (seconds to import on a cold start) are imported,
        the first chat's first; a message waits for its provider's ("connecting…").
        Imports run in a worker thread so the window keeps painting. A damaged file
        (``DatabaseCorrupt``) shows the recovery page; another store that cannot be
        opened (``NewerFormat`` …) is reported in the window.
        """
        import asyncio

        w = self.window
        after_recovery = self.stage is Stage.RECOVERY  # opened again: a fresh start
        self.move_to(Stage.OPENING)
        if self._to_build:  # the rest of the window: its modules off the GUI thread, then
            await asyncio.to_thread(import_window_parts)  # made a part at a time
        while self._to_build:
            self._to_build.pop(0)()
            await asyncio.sleep(0)  # keys typed meanwhile are taken in between
        w.sidebar.show_status("Loading chats…")
        await asyncio.to_thread(_import_store)
        from parley.core import paths
        from parley.core.store.errors import DamagedWhileOpen, DatabaseCorrupt, NotAParleyFile

        path = paths.db_path(w.home)
        if self.typed is None:
            from parley.gui.startup.typed_at_start import TypedAtStart

            self.typed = TypedAtStart(paths.data_dir(w.home))
        workspace = self._workspace()
        # A database URL (--database, PARLEY_DATABASE_URL) puts the chats on PostgreSQL.
        try:  # a mistyped address: InvalidDatabaseUrl, shown in the window
            if workspace.database_url() is None and await self._missing_file(path):
                return
            w.store = store = await workspace.open_store(self._upgrade_progress)
        except (DatabaseCorrupt, NotAParleyFile) as exc:
            from parley.core.store.sqlite.backups import automatic_backups, folder_of
            from parley.gui.database.recovery_page import AT_START, show_recovery, words

            # Not even an SQLite header, but Parley backed it up: its first page is damaged.
            if isinstance(exc, DatabaseCorrupt) or automatic_backups(folder_of(path)):
                w.sidebar.show_status("")
                self.move_to(Stage.RECOVERY)
                await show_recovery(w, path, words(path, AT_START))
                return
            self._cannot_open(exc)
            raise
        except ParleyError as exc:
            self._cannot_open(exc)
            raise
        self.store_opened.set()
        self._note_upgrade()
        if after_recovery:
            w.problems.reopened()
            w.sidebar.show()
        hub_task: asyncio.Future[Any] | None = None
        try:
            await self._note_previous_run()
            await w.widgets.restore_geometry()
            w.widgets.install_transcript()
            from parley.gui.look.view_prefs import ViewPrefs

            w.view_prefs = ViewPrefs(w)  # theme, text size, zoom (Settings → Appearance)
            await w.view_prefs.load()
            w.chat = chat = self._open_chat()
            await chat.load_sidebar()
            w.sidebar.show_status("")
            w.probe("sessions-listed")
            self.sources_changed()
            # The providers load while the first chat is read and shown.
            hub_task = asyncio.ensure_future(self._open_hub())
            await chat.show_first()
            if store.on_server:  # other Parleys' changes show without a restart
                from parley.gui.database.elsewhere import Elsewhere

                w.elsewhere = Elsewhere(w)
                await w.elsewhere.start()
            self._tell_previous_run()  # once a chat shows: told before, a slow start hid it
            self.move_to(Stage.CHATS_SHOWN)  # from now on keys act on the chat shown
            await replay(chat, w.composer, self.queue)
            if self.typed is not None:  # an earlier run's text typed at start, back in the box
                self.typed.restore(w)
        except (DatabaseCorrupt, DamagedWhileOpen):
            if hub_task is not None:
                hub_task.cancel()
                await asyncio.gather(hub_task, return_exceptions=True)
            await w.problems.damaged_at_start(path)
            return
        except BaseException:
            if hub_task is not None:
                hub_task.cancel()
            raise
        await self._load_providers(chat, await hub_task)

    def _open_chat(self) -> ChatController:
        """The open chat's controller, given the window's widgets and what it asks of the
        window (``parley.gui.chat.parts``); the store is open, the transcript in place."""
        from parley.gui.chat.controller import ChatController
        from parley.gui.chat.parts import ChatCore, ChatParts, WindowCalls
        from parley.gui.notices.status_line import OneLineStatusBar

        w = self.window
        assert w.transcript is not None and w.store is not None
        return ChatController(
            ChatParts(parent=w, status=cast(OneLineStatusBar, w.statusBar()), tasks=w.tasks,
                      keymap=w.keymap, sidebar=w.sidebar, transcript=w.transcript,
                      composer=w.composer, composer_bar=w.composer_bar,
                      model_picker=w.model_picker, context_meter=w.context_meter,
                      undo=w.undo, chat_page=w.chat_page, chat_layout=w._chat_layout,
                      heading=w.chat_heading, greeting=w.greeting, commands=w.commands),
            WindowCalls(set_title=w.setWindowTitle, show_chat=w.pages.show_chat,
                        show_setup=w.pages.show_setup, setup_panel=lambda: w.setup_panel,
                        focus_composer=w.pages.focus_composer_unless_moved,
                        show_problem=lambda error: w.show_problem(error),
                        starting=lambda: self.queueing, queue_early_message=self.queue_message,
                        new_chat_asked=lambda: self.queue.new_chat_asked,
                        ready=lambda: self.ready, cache_timer=lambda: w.cache_timer,
                        elsewhere=lambda: w.elsewhere),
            ChatCore(w.store, home=w.home))

    async def _load_providers(self, chat: Any, hub: Any) -> None:
        """The chats show and the workspace's providers are open (``hub`` loaded; its
        runner with memory, skills and session search as tools and the tools of the MCP
        servers in mcp.json, asked about first; the cache timer; the backups): the
        window takes them; then ready (or set-up, with no provider set up)."""
        w, workspace = self.window, self.workspace
        assert workspace is not None
        w.hub, w.runner, w.mcp = hub, workspace.runner, workspace.mcp
        w.cache_timer, w.backups = workspace.cache_timer, workspace.backups
        runner = workspace.runner
        self._show_mcp()
        from parley.core.events import CacheUpdated

        runner.events.on(CacheUpdated, self._cache_updated)  # the meter's "cache warm until"
        chat.attach(hub, runner)
        if hub.is_configured:
            await chat.enter()
        else:
            w.pages.show_setup()
        await hub.prepare_all(first=chat.current_model())
        self.move_to(Stage.READY if hub.is_configured else Stage.SET_UP)

    def _ready_state(self, old: Stage) -> None:
        """Messages can be sent: said to the probe, the palette lists the commands, the
        notices kept for now are shown."""
        w = self.window
        if old in LOADED:  # set-up done (or shown again): nothing more to begin
            return
        w.probe("ready")
        self.sources_changed()
        if w.pending_notice:
            w.undo.notice(w.pending_notice, 15_000)
            w.pending_notice = None
        if w.upgrade_notice:  # a v3 file was upgraded as it opened: say so, and where
            w.undo.notice(w.upgrade_notice, UPGRADE_NOTICE_MS)
        # A rescue copy saved elsewhere when sessions.db could not take the chats.
        from parley.gui.database.rescued_offer import offer_rescued

        w.tasks.spawn(offer_rescued(w), name="rescued")

    #: Set-up shows (no provider set up yet): ready as well, reading chats is possible.
    _set_up_state = _ready_state

    def queue_message(self) -> bool:
        """Enter before the first chat is shown: keep the message (the composer's text)
        for the chat it was written in: the one start-up shows, or the new chat Ctrl+N
        made. One waiting message per chat; another stays in the composer, and the
        status bar says why. Always consumes the key."""
        w = self.window
        text = w.composer.text()
        if not text.strip():
            return True
        if not self.queue.send(text):
            w.statusBar().showMessage(ONE_WAITING, 8_000)
            return True
        w.composer.clear()
        if w.transcript is None:  # else the chat shows in a moment, with the message
            w._transcript_slot.setText(
                "Opening your chats…\n\nYour message is kept and will be sent in a moment.")
        return True

    def take_back_message(self) -> bool:
        """Esc before the first chat is shown: the message sent meanwhile in the chat in
        view comes back into the box (what was typed since stays after it). False when no
        message waits there."""
        w = self.window
        text = self.queue.take_back()
        if text is None:
            return False
        box = w.composer.text()
        w.composer.set_text(f"{text}\n\n{box}" if box.strip() else text)
        if w.transcript is None:
            w._transcript_slot.setText("Opening your chats…")
        return True

    @property
    def workspace(self) -> Workspace | None:
        """The window's workspace (``window.workspace``), once :meth:`start` made it."""
        return self.window.workspace

    def _workspace(self) -> Workspace:
        """The window's :class:`~parley.core.workspace.Workspace`: a new one unless the last
        is still unopened (a failed open is tried again; one closed for a recovery is
        not reopened)."""
        from parley.core.workspace import Stage as Opened
        from parley.core.workspace import Workspace

        w = self.window
        old = w.workspace
        if old is not None and old.stage is Opened.NEW:
            return old
        if old is not None:  # its store closed for a recovery: the rest closes too
            w.tasks.spawn(old.close(final_backup=False), name="workspace-closed")
        w.workspace = new = Workspace(
            w.home, environ=w.env, tasks=w.tasks, on_damaged=w.problems.store_damaged,
            on_backup_error=lambda exc: w.statusBar().showMessage(exc.message, 15_000),
            on_timer_error=self.background_error)
        return new

    def _show_mcp(self) -> None:
        """The MCP servers' tools (``window.mcp``, the workspace's) named in the transcript,
        and the servers' status in the status bar."""
        w = self.window
        mcp, transcript = w.mcp, w.transcript
        if mcp is None or transcript is None:
            return
        # Tool calls in the transcript are named as configured, like the dialog names them
        # (the chat opened before the tools were: its frozen list is read now).
        transcript.set_tool_names(mcp.names_of)
        chat = w.chat

        async def name_open_chat() -> None:
            if chat is not None and chat.session_id is not None:
                await mcp.load_names(chat.session_id)
                transcript.tool_names_changed()

        w.tasks.spawn(name_open_chat(), name="mcp-names")
        from parley.gui.notices import mcp_status

        mcp_status.watch(w, mcp.host)  # starting / failed servers in the status bar

    def sources_changed(self) -> None:
        """The chats are listed, or the commands can run: a palette opened while
        starting lists them (``CommandPalette.sources_changed``)."""
        palette = getattr(self.window, "command_palette", None)
        if palette is not None:
            palette.sources_changed()

    async def _open_hub(self) -> Any:
        """Open the workspace's providers (``Workspace.open_providers``: the hub's settings
        and keys, the SDKs of those in use imported in the background, the default
        model's first; the tools, MCP, runner, timer, backups), the MCP tools asking
        through the approval dialog; returns the ``ProviderHub``."""
        from parley.gui.dialogs.mcp_approval import DialogApprover

        workspace = self.workspace
        assert workspace is not None  # made by start, its store open
        workspace.approver = DialogApprover(self.window)
        await workspace.open_providers()
        return workspace.hub

    def _cannot_open(self, exc: ParleyError) -> None:
        """The store could not be opened: why, where what was typed is kept, "Try again"."""
        from parley.gui.startup.typed_at_start import show_start_problem

        self.move_to(Stage.FAILED)
        show_start_problem(self.window, exc)
        self.window.sidebar.show_status("")

    async def _missing_file(self, path: Any) -> bool:
        """sessions.db is missing but backups or rescue copies of it exist: the page that
        says so is shown (``parley.gui.database.missing_page``) and True returned."""
        from parley.gui.database.missing_page import show_if_missing

        if not await show_if_missing(self.window, path):
            return False
        self.move_to(Stage.RECOVERY)
        return True

    async def _note_previous_run(self) -> None:
        """Record this run; tell the person what the last one left if it did not exit
        cleanly (a cut-off reply, an unanswered message, an interrupted compaction)."""
        assert self.workspace is not None
        self.window.previous_run = await self.workspace.note_run()

    def _tell_previous_run(self) -> None:
        """Show what the previous run left (:meth:`_note_previous_run`)."""
        run = self.window.previous_run
        notice = run.notice() if run is not None else None
        if notice:
            self.window.undo.notice(notice)

    def background_error(self, exc: BaseException) -> None:
        """An error in background work (the cache timer): told, or a bug reported."""
        if isinstance(exc, ParleyError):
            self.window.show_problem(exc)
        else:
            report_bug(exc)

    def _cache_updated(self, event: CacheUpdated) -> None:
        chat = self.window.chat
        if chat is not None and event.session_id == chat.session_id:
            self.window.context_meter.set_cache_expiry(event.expires_at, event.compact_at)

    def _note_upgrade(self) -> None:
        """The store upgraded the file as it opened (v3, or the conversation tree added):
        keep the words to tell (and log them)."""
        from parley.core.recovery.upgrade_notice import upgrade_notice

        w = self.window
        assert w.store is not None
        w.upgrade_notice = upgrade_notice(w.store.migration_report)
        if w.upgrade_notice:
            log.info("%s", w.upgrade_notice)

    def _upgrade_progress(self, done: int, total: int) -> None:
        """Shown while an older sessions.db is upgraded (a backup is made first), in the
        chat page (the message box stays usable) and on the loading page."""
        percent = f" {100 * done // total}%" if total else ""
        text = (f"Upgrading your chats to the new format…{percent}\n"
                "A backup of the old file is kept next to it.")
        self.window.loading_page.setText(text)
        if self.window.transcript is None:
            self.window._transcript_slot.setText(text)


class _CommandKeyFirst(QObject):
    """Until the window is whole: a command key (Ctrl/Alt/Meta + key, F1–F35) pressed in
    the message box makes the rest of it first (``finish_build``), so its shortcut runs
    (Qt looks the key up after this event)."""

    def __init__(self, composer: QWidget, finish_build: Callable[[], None]) -> None:
        super().__init__(composer)
        self.finish_build = finish_build
        composer.installEventFilter(self)

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:  # noqa: N802
        if event.type() == QEvent.Type.ShortcutOverride and isinstance(event, QKeyEvent):
            command = Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.AltModifier \
                | Qt.KeyboardModifier.MetaModifier
            if event.modifiers() & command or Qt.Key.Key_F1 <= event.key() <= Qt.Key.Key_F35:
                obj.removeEventFilter(self)
                self.finish_build()
        return False


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

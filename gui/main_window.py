"""The main window: sidebar | (header, transcript, composer), or the set-up panel.

The window is built from cheap widgets only, so it can be shown at once, with
the message box focused: what a person types from the first paint on is kept.
:meth:`MainWindow.start` then opens the store and the providers off the GUI
thread and fills the window, never undoing what the person did meanwhile (a
message sent before the chats are open is kept for the chat it was written
in; Ctrl+N pressed then opens a new chat, and what was typed before it stays
with the last chat: ``parley.gui.composer.early_input``).
Everything a person does with chats (open, send, stop, retry, drafts …) is
in :class:`parley.gui.chat.controller.ChatController` (spaces and housekeeping in
``parley.gui.chat.organize``, edits, forks and compaction in ``parley.gui.chat.edit``);
the methods the actions call are in ``parley.gui.commands.window_commands``. This module owns
the layout, start-up (recovery after a crash, a damaged file), window geometry
and shutdown.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QByteArray, QEvent, QObject, QPoint, QRect, Qt, QTimer
from PySide6.QtGui import QCloseEvent, QGuiApplication, QKeyEvent, QResizeEvent
from PySide6.QtWidgets import (
    QApplication,
    QHBoxLayout,
    QLabel,
    QMainWindow,
    QSplitter,
    QStackedWidget,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from parley.core.errors import ParleyError
from parley.core.gc_pause import pausing_gc
from parley.core.restart_notice import CUT_OFF
from parley.core.tasks import TaskSet, report_bug
from parley.gui.commands.registry import Commands
from parley.gui.commands.window_commands import WindowCommands
from parley.gui.composer.early_input import ONE_WAITING, EarlyInput, replay
from parley.gui.composer.widget import ComposerBar
from parley.gui.look import appearance

if TYPE_CHECKING:
    import asyncio

    from parley.gui.chat.controller import ChatController
    from parley.gui.commands.actions import Action
    from parley.gui.dialogs.search import SearchPopup
    from parley.gui.header.context_meter import ContextMeter
    from parley.gui.header.model_picker import ModelPicker
    from parley.gui.notices.undo import Toast, UndoManager
    from parley.gui.sidebar import Sidebar
    from parley.gui.startup.setup_panel import SetupPanel
    from parley.gui.startup.typed_at_start import TypedAtStart

log = logging.getLogger(__name__)
#: The status line while the chats are read before a provider is set up.
READING_ONLY = ("No provider is set up yet: you can read your chats. Sending a message takes "
                "you to the set-up page (the message is kept).")
#: How long the notice of a v3 upgrade shows (ms; longer while the pointer rests on it).
UPGRADE_NOTICE_MS = 30_000

GEOMETRY_KEY = "window.geometry"
SPLITTER_KEY = "window.splitter"
CONTENT_WIDTH = 800  # px: the composer's maximum width, like the transcript column
#: The restart notice for a cut-off reply (the others: ``parley.core.restart_notice``).
INTERRUPTED_NOTICE = CUT_OFF


#: ms after which what waits for the first paint goes ahead without it (a window
#: shown minimised gets no paint event).
PAINT_FALLBACK_MS = 500


def when_painted(target: QWidget, callback: Callable[[], None]) -> None:
    """Call ``callback`` once, right after ``target``'s first paint has been flushed."""
    _FirstPaint(target, callback)


class _FirstPaint(QObject):
    """Calls ``callback`` once, at the window's first paint event."""

    def __init__(self, target: QWidget, callback: Callable[[], None]) -> None:
        super().__init__(target)
        self.callback: Callable[[], None] | None = callback
        target.installEventFilter(self)

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:  # noqa: N802
        if event.type() == QEvent.Type.Paint and self.callback is not None:
            callback, self.callback = self.callback, None
            obj.removeEventFilter(self)
            QTimer.singleShot(0, callback)  # after this paint has been flushed
        return False


class _BuildOnCommandKey(QObject):
    """Until the window is whole: a command key (Ctrl/Alt/Meta + key, F1–F35) pressed
    in the message box makes the rest of it first, so its shortcut runs
    (``MainWindow.finish_build``; Qt looks the key up after this event)."""

    def __init__(self, window: MainWindow) -> None:
        super().__init__(window)
        self.window_ = window
        window.composer.installEventFilter(self)

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:  # noqa: N802
        if event.type() == QEvent.Type.ShortcutOverride and isinstance(event, QKeyEvent):
            command = Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.AltModifier \
                | Qt.KeyboardModifier.MetaModifier
            if event.modifiers() & command or Qt.Key.Key_F1 <= event.key() <= Qt.Key.Key_F35:
                obj.removeEventFilter(self)
                self.window_.finish_build()
        return False


class MainWindow(QMainWindow, WindowCommands):
    """Parley's window.

    Args:
        home: the data directory (None: ``PARLEY_HOME`` or the platform default).
        probe: start-up probe callback (``parley.gui.app.StartupProbe.mark``) or None.
        env: environment for provider keys and ``PARLEY_DATABASE_URL`` (default ``os.environ``).

    Attributes:
        store, hub, runner: set by :meth:`start` (None before).
        chat: the :class:`ChatController`, set by :meth:`start`.
        ready: True once :meth:`start` finished.
        sidebar, model_picker, context_meter, toast, undo, qactions: made right after
            the first paint (:meth:`finish_build`, first thing :meth:`start` does).
    """

    sidebar: Sidebar
    model_picker: ModelPicker
    context_meter: ContextMeter
    toast: Toast
    undo: UndoManager

    def __init__(self, home: Path | None = None, *, probe: Callable[[str], None] | None = None,
                 env: dict[str, str] | None = None) -> None:
        super().__init__()
        self.home = home
        self.probe = probe or (lambda _event: None)
        self.env = dict(os.environ if env is None else env)
        self.store: Any = None
        self.hub: Any = None
        self._damage_told = False  # a damaged sessions.db was told (show_problem)
        self._moved_told = False  # sessions.db deleted or moved while open was told
        self.runner: Any = None
        self.mcp: Any = None  # parley.core.mcp.McpTools, once the providers are loaded
        self.chat: ChatController | None = None
        self.cache_timer: Any = None
        self.search_popup: SearchPopup | None = None
        self.setup_panel: SetupPanel | None = None
        self.recovery_page: Any = None
        self.backups: Any = None  # parley.core.backup_schedule.BackupScheduler, set by start
        self.elsewhere: Any = None  # gui.database.elsewhere.Elsewhere, on PostgreSQL
        self.successor: Any = None  # the window that took this one's place after a recovery
        self.pending_notice: str | None = None  # told once the chats show (after a recovery)
        self.upgrade_notice: str | None = None  # told once ready (a v3 file was upgraded)
        self._recovering = False  # sessions.db is damaged: the recovery page is (being) shown
        self.previous_run: Any = None
        self.ready = False
        self.qactions: dict[str, Any] = {}
        self.keymap: Any = None  # the keys in force, set by actions.install (a Keymap)
        #: The handlers of the declared actions, registered where they are written.
        self.commands = Commands()
        self.tasks = TaskSet(on_user_error=self.show_problem)
        self._closing = False
        self._closed = False
        self._started = False
        #: What the person does before the first chat is shown (messages sent, Ctrl+N,
        #: chat commands), done once it is (``parley.gui.composer.early_input``); None after that.
        self.early: EarlyInput | None = EarlyInput()
        #: Where that text is kept when the chats cannot be opened (set by start).
        self.typed: TypedAtStart | None = None
        self._store_opened: asyncio.Event | None = None
        self.setWindowTitle("Parley")
        self.setAccessibleName("Parley")
        self.resize(1180, 780)
        #: The parts of the window not needed for its first paint, made right after
        #: it (``finish_build``); empty once they are.
        self._to_build: list[Callable[[], None]] = [
            self._build_sidebar, self._build_header_tools, self._build_actions]
        self._build()
        self.composer.on_action = self._composer_action
        self.composer.setFocus()  # keys typed from the first paint on go in the message box
        _BuildOnCommandKey(self)
        self._painted = False
        _FirstPaint(self, self._first_paint)

    # -- layout -----------------------------------------------------------
    def _build(self) -> None:
        """What the first paint shows: the chat page with its message box (focused), the
        header's sidebar button, and the sidebar's empty frame (``finish_build`` fills it)."""
        self._sidebar_frame = QWidget(self)
        self._sidebar_frame.setObjectName("Sidebar")  # styled as the sidebar it stands for
        self._sidebar_frame.setAttribute(Qt.WidgetAttribute.WA_StyledBackground, True)
        self._sidebar_frame.setMinimumWidth(200)
        self.stack = QStackedWidget(self)
        self.stack.setObjectName("MainStack")

        self.loading_page = QLabel("Opening your chats…")
        self.loading_page.setObjectName("LoadingLabel")
        self.loading_page.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.stack.addWidget(self.loading_page)

        self.chat_page = QWidget()
        self.chat_page.setObjectName("ChatPage")
        self.chat_page.setAttribute(Qt.WidgetAttribute.WA_StyledBackground, True)
        self.header = QWidget(self.chat_page)
        self.header.setObjectName("HeaderBar")
        self.header.setAttribute(Qt.WidgetAttribute.WA_StyledBackground, True)
        self.sidebar_button = QToolButton(self.header)
        self.sidebar_button.setObjectName("HeaderButton")
        self.sidebar_button.setAccessibleName("Show or hide the sidebar")
        self.sidebar_button.setToolTip("Show or hide the sidebar (Ctrl+B)")
        self.sidebar_button.setIcon(appearance.icon("sidebar", appearance.current().muted, 18))
        head = QHBoxLayout(self.header)
        head.setContentsMargins(10, 6, 14, 6)
        head.setSpacing(4)
        head.addWidget(self.sidebar_button)
        head.addStretch(1)  # the model picker goes before it, the context meter after
        self._head = head

        # The transcript (markdown, syntax highlighting) is imported and built after
        # the first paint (see start); this placeholder holds its place until then.
        self.transcript: Any = None
        self._transcript_slot = QLabel("Opening your chats…", self.chat_page)
        self._transcript_slot.setObjectName("LoadingLabel")
        self._transcript_slot.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self._transcript_slot.setWordWrap(True)
        self.composer_bar = ComposerBar(self.chat_page)
        self.composer_bar.setMaximumWidth(CONTENT_WIDTH)
        self.composer = self.composer_bar.editor
        composer_area = QWidget(self.chat_page)
        composer_area.setObjectName("ComposerArea")
        row = QHBoxLayout(composer_area)
        row.setContentsMargins(24, 4, 24, 12)
        row.addStretch(1)
        row.addWidget(self.composer_bar, 100)
        row.addStretch(1)

        col = QVBoxLayout(self.chat_page)
        col.setContentsMargins(0, 0, 0, 0)
        col.setSpacing(0)
        col.addWidget(self.header)
        col.addWidget(self._transcript_slot, 1)
        col.addWidget(composer_area)
        self._chat_layout = col
        self.stack.addWidget(self.chat_page)

        self.splitter = QSplitter(Qt.Orientation.Horizontal, self)
        self.splitter.setObjectName("MainSplitter")
        self.splitter.setHandleWidth(1)
        self.splitter.setChildrenCollapsible(False)
        self.splitter.addWidget(self._sidebar_frame)
        self.splitter.addWidget(self.stack)
        self.splitter.setStretchFactor(1, 1)
        self.splitter.setSizes([260, 920])
        self.setCentralWidget(self.splitter)
        # Made now and kept: a status bar that appeared with its first message would
        # shift the window's layout each time.
        from parley.gui.notices.status_line import WrappingStatusBar

        self.setStatusBar(WrappingStatusBar(self))  # a long refusal is shown whole
        self.statusBar().setSizeGripEnabled(False)
        self.stack.setCurrentWidget(self.chat_page)  # typing works before the chats show

    def finish_build(self) -> None:
        """Make what the first paint did not need (the sidebar, the model picker and
        the context meter, the toast, the commands and their keys); safe to call again.

        ``start`` makes them one at a time (each ~5-15 ms), letting the window
        take keys in between; a command key pressed before makes them at once.
        """
        while self._to_build:
            self._to_build.pop(0)()

    @property
    def built(self) -> bool:
        """True once the whole window is made (:meth:`finish_build`)."""
        return not self._to_build

    def _build_sidebar(self) -> None:
        from parley.gui.sidebar import Sidebar

        self.sidebar = Sidebar(self)
        self.sidebar.setMinimumWidth(200)
        self.sidebar.search_requested.connect(self.open_search)
        self.sidebar.export_requested.connect(self.export_session)
        self.sidebar.import_requested.connect(self.import_conversation)
        frame = self._sidebar_frame
        shown = not frame.isHidden()
        self.splitter.replaceWidget(0, self.sidebar)  # keeps the frame's width
        self.sidebar.setVisible(shown)
        frame.deleteLater()
        self.sidebar_button.clicked.connect(self.toggle_sidebar)

    def _build_header_tools(self) -> None:
        from parley.gui.header.chat_heading import ChatHeading
        from parley.gui.header.context_meter import ContextMeter
        from parley.gui.header.model_picker import ModelPicker
        from parley.gui.notices.undo import Toast, UndoManager

        self.model_picker = ModelPicker(self.header)
        self.context_meter = ContextMeter(self.header)
        self.chat_heading = ChatHeading(self.header)  # the chat's title (renamed in place)
        self._head.insertWidget(1, self.model_picker)
        self._head.addWidget(self.chat_heading)
        self._head.addStretch(1)
        self._head.addWidget(self.context_meter)
        self.toast = Toast(self, self._composer_rect, follow=self.composer_bar)
        self.undo = UndoManager(self.toast, self.tasks)

    def _build_actions(self) -> None:
        from parley.gui.commands import actions

        self.register_commands(self.commands)
        actions.install(self)

    def _composer_action(self, action: Action) -> Any:
        """A key of the message box (Enter, Esc, Up …): its command, once the window is
        whole (a key pressed before it is made makes it at once)."""
        self.finish_build()
        return self.commands.run(action.id)

    @property
    def store_opened(self) -> asyncio.Event:
        """Set once the store is open (a search begun while starting waits for it).
        Made when first asked for: asyncio is imported after the first paint."""
        if self._store_opened is None:
            import asyncio

            self._store_opened = asyncio.Event()
        return self._store_opened

    def _first_paint(self) -> None:
        self._painted = True
        self.probe("first-paint")

    def _composer_rect(self) -> QRect | None:
        """Where the composer is (window coordinates) when the chat page shows."""
        if self.stack.currentWidget() is not self.chat_page or not self.composer_bar.isVisible():
            return None
        bar = self.composer_bar
        return QRect(bar.mapTo(self, QPoint(0, 0)), bar.size())

    # -- start-up ---------------------------------------------------------
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
        _FirstPaint(self, go)
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
            await asyncio.to_thread(_import_window_parts)  # made a part at a time
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

        path = paths.db_path(self.home)
        if self.typed is None:
            from parley.gui.startup.typed_at_start import TypedAtStart

            self.typed = TypedAtStart(paths.data_dir(self.home))
        # A database URL (--database, PARLEY_DATABASE_URL) puts the chats on PostgreSQL.
        try:  # a mistyped address: InvalidDatabaseUrl, shown in the window
            target = database_url(self.env.get("PARLEY_DATABASE_URL"), paths.data_dir(self.home))
            self.store = await AsyncStore.open(target or path, self._upgrade_progress)
        except (DatabaseCorrupt, NotAParleyFile) as exc:
            from parley.core.store.sqlite.backups import automatic_backups, folder_of
            from parley.gui.database.recovery_page import AT_START, show_recovery

            # Not even an SQLite header, but Parley backed it up: its first page is damaged.
            if isinstance(exc, DatabaseCorrupt) or automatic_backups(folder_of(path)):
                self.sidebar.show_status("")
                self._recovering = True
                await show_recovery(self, path, AT_START)
                return
            self._cannot_open(exc)
            raise
        except ParleyError as exc:
            self._cannot_open(exc)
            raise
        self.store.on_damaged = self._store_damaged
        self.store_opened.set()
        self._note_upgrade()
        if self._recovering:  # opened again after the recovery page: a fresh start
            self._recovering = self._damage_told = False
            self.sidebar.show()
        hub_task: asyncio.Future[Any] | None = None
        try:
            await self._note_previous_run()
            await self._restore_geometry()
            self._install_transcript()
            from parley.gui.look.view_prefs import ViewPrefs

            self.view_prefs = ViewPrefs(self)  # theme, text size, zoom (Settings → Appearance)
            await self.view_prefs.load()
            self.chat = ChatController(self)
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
            await self._damaged_at_start(path)
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
        from parley.core.recovery import CompactionMarks

        self.compaction_marks = CompactionMarks(self.store, self.runner.hooks)
        self._start_cache_timer()
        await self._start_backups()
        self.chat.attach(self.hub, self.runner)
        if self.hub.is_configured:
            await self.chat.enter()
        else:
            self.show_setup()
        await self.hub.prepare_all(first=self.chat.current_model())
        self.probe("ready")
        self.ready = True
        self._sources_changed()
        if self.pending_notice:
            self.undo.notice(self.pending_notice, 15_000)
            self.pending_notice = None
        if self.upgrade_notice:  # a v3 file was upgraded as it opened: say so, and where
            self.undo.notice(self.upgrade_notice, UPGRADE_NOTICE_MS)

    def _open_mcp(self) -> Any:
        """The MCP servers of ``mcp.json`` (started when a chat first needs them) and their
        tools, with the approval dialog (``parley.gui.dialogs.mcp_approval``); kept as
        ``self.mcp``."""
        from parley.core import paths
        from parley.core.mcp import McpHost, McpTools
        from parley.core.mcp.config import config_path
        from parley.gui.dialogs.mcp_approval import DialogApprover

        host = McpHost(config_path(paths.data_dir(self.home)), keys=self.hub.keys)
        host.load()
        self.mcp = McpTools(host, self.store, approver=DialogApprover(self))
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

    async def _note_previous_run(self) -> None:
        """Record this run; tell the person what the last one left if it did not exit
        cleanly (a cut-off reply, an unanswered message, an interrupted compaction)."""
        from parley.core.recovery import mark_running

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

        self.cache_timer = CacheTimer(self.runner, self.runner.compactor.compact,
                                      on_error=self._background_error)
        self.runner.hooks.on("cache:updated", self._cache_updated)

    async def _start_backups(self) -> None:
        """Automatic backups while the chats are open (``parley.core.backup_schedule``)."""
        from parley.core.backup_schedule import BackupScheduler
        from parley.core.settings import Settings

        if self.store.on_server:  # PostgreSQL: the server's own backups apply
            return
        self.backups = BackupScheduler(
            self.store, on_damaged=self._store_damaged,
            on_error=lambda exc: self.statusBar().showMessage(exc.message, 15_000))
        await self.backups.start(Settings.of(self.store))

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
        """The store upgraded a v3 file as it opened: keep the words to tell (and log them)."""
        from parley.core.upgrade_notice import upgrade_notice

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

    def _install_transcript(self) -> None:
        from parley.gui.transcript import TranscriptView

        view = TranscriptView(self.chat_page)
        view.setAccessibleName("Conversation")
        self._chat_layout.replaceWidget(self._transcript_slot, view)
        self.toast.covers.connect(view.keep_clear_of)  # the last message stays above it
        if self.toast.isVisible():  # shown before the chats (the restart notice)
            view.keep_clear_of(self.toast.geometry())
        self._transcript_slot.deleteLater()
        self.transcript = view
        from parley.gui.header.greeting import Greeting

        self.greeting = Greeting(view.list_view, view.model, self._first_key)
        view.register_commands(self.commands)

    def _first_key(self, action_id: str) -> str:
        """The first key of an action as this platform writes it ("" for none)."""
        keymap = getattr(self, "keymap", None)
        if keymap is None:
            return ""
        first = keymap.shown(action_id).split(", ")[0]
        return first.replace("Return", "Enter")  # the key's name on most keyboards

    def show_setup(self) -> None:
        """Show the first-run set-up panel instead of the chat."""
        from parley.gui.startup.setup_panel import SetupPanel

        if self.setup_panel is None:
            self.setup_panel = SetupPanel(tester=self.hub.test_connection, env=self.env)
            self.setup_panel.completed.connect(
                lambda answers: self.tasks.spawn(self._finish_setup(answers), name="setup"))
            self.setup_panel.read_first.connect(self._read_before_setup)
            self.stack.addWidget(self.setup_panel)
            self.tasks.spawn(self._offer_reading(), name="setup-chats")
        self.stack.setCurrentWidget(self.setup_panel)
        self.sidebar.hide()  # the chats are listed once a provider is set up, or to read
        self.setup_panel.kind_buttons[0].setFocus()

    async def _offer_reading(self) -> None:
        """Chats already stored (imported before any provider was set up) can be read
        first: the set-up page offers it."""
        listed = await self.store.list_sessions(limit=100_000)
        chats = sum(1 for s in listed if s.parent_session_id is None)
        if self.setup_panel is not None:
            self.setup_panel.offer_reading(chats)

    def _read_before_setup(self) -> None:
        """Show the chats (sidebar, transcript) with no provider set up; sending goes back
        to the set-up page, the message kept (``ChatRuns``)."""
        self.show_chat()
        self.statusBar().showMessage(READING_ONLY, 15_000)

    async def _finish_setup(self, answers: Any) -> None:
        assert self.chat is not None
        await self.hub.add_provider(answers.kind, base_url=answers.base_url,
                                    api_key=answers.api_key, default_model=answers.model)
        await self.chat.enter()

    def show_chat(self) -> None:
        """Show the chat page and focus the composer (while starting, only if the focus
        is not somewhere the person put it: the search, the chat list …)."""
        if self.stack.currentWidget() is self.setup_panel:
            self.sidebar.show()
        self.stack.setCurrentWidget(self.chat_page)
        self.composer_bar.setEnabled(True)
        self.focus_composer_unless_moved()

    def focus_composer_unless_moved(self) -> None:
        """Focus the composer; while starting, only when the focus is in the chat page or
        nowhere (start-up never takes the focus from where the person moved it)."""
        if self.ready:
            self.composer.setFocus()
            return
        focus = QApplication.focusWidget()
        if focus is None or focus is self.composer or not focus.isVisible() \
                or self.chat_page.isAncestorOf(focus):
            self.composer.setFocus()

    # -- geometry ---------------------------------------------------------
    async def _restore_geometry(self) -> None:
        geometry = await self.store.get_state(GEOMETRY_KEY, None)
        if geometry:
            self.restoreGeometry(QByteArray.fromBase64(geometry.encode()))
        sizes = await self.store.get_state(SPLITTER_KEY, None)
        if isinstance(sizes, list) and len(sizes) == 2:
            self.splitter.setSizes([int(s) for s in sizes])
            self.sidebar.setVisible(int(sizes[0]) > 0)

    async def _save_geometry(self) -> None:
        geometry = bytes(self.saveGeometry().toBase64().data()).decode()
        await self.store.set_state(GEOMETRY_KEY, geometry)
        await self.store.set_state(SPLITTER_KEY, self.splitter.sizes())

    # -- problems ---------------------------------------------------------
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
        """Show an error the person can act on (non-modal). A damaged file, or one
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

    # -- shutdown ---------------------------------------------------------
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
                from parley.core.recovery import mark_clean_exit

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

    def closeEvent(self, event: QCloseEvent) -> None:  # noqa: N802
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
        if exc is not None:
            report_bug(exc)

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802
        super().resizeEvent(event)
        if self.built:
            self.toast.place()
        if self.search_popup is not None:
            self.search_popup.place()

    def changeEvent(self, event: QEvent) -> None:  # noqa: N802
        if event.type() == QEvent.Type.PaletteChange:  # icons follow the theme's colours
            self.sidebar_button.setIcon(
                appearance.icon("sidebar", appearance.current().muted, 18))
        if event.type() == QEvent.Type.ThemeChange and not os.environ.get("PARLEY_THEME") \
                and appearance.preference() == "system":
            app = QGuiApplication.instance()
            if isinstance(app, QGuiApplication) and appearance.choose(app) != appearance.current():
                appearance.apply(app)
        super().changeEvent(event)


@pausing_gc
def _import_window_parts() -> None:
    """Import what :meth:`MainWindow.finish_build` makes (the sidebar, the header's
    tools, the toast, the commands); run in a worker thread: ~30 ms on an idle core
    that would otherwise hold the window still just after its first paint."""
    import parley.gui.commands.actions  # noqa: F401
    import parley.gui.commands.keymap  # noqa: F401
    import parley.gui.header.context_meter  # noqa: F401
    import parley.gui.header.model_picker  # noqa: F401
    import parley.gui.notices.undo  # noqa: F401
    import parley.gui.sidebar  # noqa: F401


@pausing_gc
def _import_store() -> None:
    """Import the store (SQLAlchemy), the controller and what showing the first chat
    needs (its code style too); run in a worker thread: an import on the GUI thread
    holds the window still."""
    import parley.core.recovery  # noqa: F401
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
    import parley.core.backup_schedule  # noqa: F401
    import parley.core.chat.run  # noqa: F401
    import parley.core.compaction.cache_timer  # noqa: F401
    import parley.core.providers.hub  # noqa: F401
    import parley.core.tools  # noqa: F401

"""The main window: sidebar | (header, transcript, composer), or the set-up panel.

:class:`MainWindow` is made of parts, one responsibility each:

* its widgets and their sizes: ``parley.gui.window.layout`` (the first paint's widgets
  made at once, the rest right after it);
* its start-up (the store, the chats, then the providers, after the first paint; what
  the person did meanwhile kept): ``parley.gui.startup.phases``;
* which page shows (the chat, or first-run set-up): ``parley.gui.window.pages``;
* errors told to the person, a damaged or moved sessions.db: ``parley.gui.window.problems``;
* quitting: ``parley.gui.window.shutdown``;
* the methods the actions run: ``parley.gui.commands.window_commands``.

Everything a person does with chats (open, send, stop, retry, drafts …) is in
:class:`parley.gui.chat.controller.ChatController`, which sees the window through
``parley.gui.chat.interfaces.ChatWindow``. This module makes the window's state and
routes Qt's events to the parts.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QEvent
from PySide6.QtGui import QCloseEvent, QGuiApplication, QResizeEvent
from PySide6.QtWidgets import QMainWindow

from parley.core.recovery.restart_notice import CUT_OFF
from parley.core.tasks import TaskSet
from parley.gui.commands.registry import Commands
from parley.gui.commands.window_commands import WindowCommands
from parley.gui.composer.early_input import EarlyInput
from parley.gui.look import appearance
from parley.gui.startup.first_paint import when_painted
from parley.gui.startup.phases import WindowStartup
from parley.gui.window.focus_back import FocusBack
from parley.gui.window.layout import BuildOnCommandKey, WindowLayout
from parley.gui.window.pages import WindowPages
from parley.gui.window.problems import WindowProblems
from parley.gui.window.shutdown import WindowShutdown

#: The restart notice for a cut-off reply (the others: ``parley.core.recovery.restart_notice``).
INTERRUPTED_NOTICE = CUT_OFF


class MainWindow(WindowLayout, WindowPages, WindowStartup, WindowProblems, WindowShutdown,
                 QMainWindow, WindowCommands):
    """Parley's window.

    Args:
        home: the data directory (None: ``PARLEY_HOME`` or the platform default).
        probe: start-up probe callback (``parley.gui.startup.probe.StartupProbe.mark``)
            or None.
        env: environment for provider keys and ``PARLEY_DATABASE_URL`` (default ``os.environ``).

    Attributes:
        store, hub, runner: set by :meth:`start` (None before).
        chat: the :class:`ChatController`, set by :meth:`start`.
        ready: True once :meth:`start` finished.
        sidebar, model_picker, context_meter, toast, undo, qactions: made right after
            the first paint (:meth:`finish_build`, first thing :meth:`start` does).
        The attributes the parts share are declared in ``parley.gui.window.base``.
    """

    def __init__(self, home: Path | None = None, *, probe: Callable[[str], None] | None = None,
                 env: dict[str, str] | None = None) -> None:
        super().__init__()
        self.home = home
        self.probe = probe or (lambda _event: None)
        self.env = dict(os.environ if env is None else env)
        self.store = None
        self.hub = None
        self._damage_told = False  # a damaged sessions.db was told (show_problem)
        self._moved_told = False  # sessions.db deleted or moved while open was told
        self.runner = None
        self.mcp = None  # parley.core.mcp.McpTools, once the providers are loaded
        self.chat = None
        self.cache_timer = None
        self.search_popup = None
        self.setup_panel = None
        self.recovery_page = None
        self.backups = None  # parley.core.recovery.backup_schedule.BackupScheduler, set by start
        self.elsewhere = None  # gui.database.elsewhere.Elsewhere, on PostgreSQL
        self.successor = None  # the window that took this one's place after a recovery
        self.pending_notice = None  # told once the chats show (after a recovery)
        self.upgrade_notice = None  # told once ready (a v3 file was upgraded)
        self._recovering = False  # sessions.db is damaged: the recovery page is (being) shown
        self.previous_run = None
        self.ready = False
        self.qactions = {}
        self.keymap = None  # the keys in force, set by actions.install (a Keymap)
        #: The handlers of the declared actions, registered where they are written.
        self.commands = Commands()
        self.tasks = TaskSet(on_user_error=self.show_problem)
        self._closing = False
        self._focus_before_close = None
        self._closed = False
        self._started = False
        #: What the person does before the first chat is shown (messages sent, Ctrl+N,
        #: chat commands), done once it is (``parley.gui.composer.early_input``); None after that.
        self.early = EarlyInput()
        #: Where that text is kept when the chats cannot be opened (set by start).
        self.typed = None
        self._store_opened = None
        self.setWindowTitle("Parley")
        self.setAccessibleName("Parley")
        self.resize(1180, 780)
        #: The parts of the window not needed for its first paint, made right after
        #: it (``finish_build``); empty once they are.
        self._to_build = [
            self._build_sidebar, self._build_header_tools, self._build_actions]
        self._build()
        self.composer.on_action = self._composer_action
        self.composer.setFocus()  # keys typed from the first paint on go in the message box
        BuildOnCommandKey(self)
        FocusBack(self)  # the keys come back to the window when a dialog closes
        self._painted = False
        when_painted(self, self._first_paint)

    def _first_paint(self) -> None:
        self._painted = True
        self.probe("first-paint")

    def closeEvent(self, event: QCloseEvent) -> None:  # noqa: N802
        self.close_requested(event)

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

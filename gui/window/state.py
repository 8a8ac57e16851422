"""The main window's state, declared once: what it holds and what its parts share.

:class:`WindowState` is what ``parley.gui.main_window.MainWindow`` holds besides being a
``QMainWindow``: the data folder and environment it was started with, the store and the
providers once open (None before), the open chat's controller, its flags, and its
widgets (made by ``parley.gui.window.layout``). The window's parts (pages, problems,
shutdown, commands) are given it, typed as this class, not as the window: they see
the state they share and the widgets they were made with, never the window's own
methods. This module imports no other part of the window, so each can import it.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from parley.core.tasks import TaskSet
from parley.gui.commands.registry import Commands

if TYPE_CHECKING:
    from PySide6.QtCore import QObject
    from PySide6.QtGui import QAction
    from PySide6.QtWidgets import (
        QHBoxLayout,
        QLabel,
        QSplitter,
        QStackedWidget,
        QToolButton,
        QVBoxLayout,
        QWidget,
    )

    from parley.core.chat.run import ChatRunner
    from parley.core.compaction.cache_timer import CacheTimer
    from parley.core.errors import ParleyError
    from parley.core.mcp import McpTools
    from parley.core.providers.hub import ProviderHub
    from parley.core.recovery.backup_schedule import BackupScheduler
    from parley.core.recovery.previous_run import PreviousRun
    from parley.core.store.async_store import AsyncStore
    from parley.core.workspace import Workspace
    from parley.gui.chat.controller import ChatController
    from parley.gui.commands.keymap import Keymap
    from parley.gui.commands.palette import CommandPalette
    from parley.gui.commands.shortcut_help import ShortcutHelp
    from parley.gui.composer.widget import Composer, ComposerBar
    from parley.gui.database.elsewhere import Elsewhere
    from parley.gui.database.missing_page import MissingPage
    from parley.gui.database.recovery_page import RecoveryPage, RecoveryWindow
    from parley.gui.dialogs.import_dialog import ImportProgress
    from parley.gui.dialogs.search import SearchPopup
    from parley.gui.header.chat_heading import ChatHeading
    from parley.gui.header.context_meter import ContextMeter
    from parley.gui.header.greeting import Greeting
    from parley.gui.header.model_picker import ModelPicker
    from parley.gui.look.view_prefs import ViewPrefs
    from parley.gui.notices.undo import Toast, UndoManager
    from parley.gui.sidebar import Sidebar
    from parley.gui.startup.setup_panel import SetupPanel
    from parley.gui.startup.state import StartupView
    from parley.gui.transcript import TranscriptView
    from parley.gui.window.narrow import NarrowSidebar


class WindowState:
    """The main window's state (module doc), set to "nothing yet" by :meth:`__init__`.

    Args:
        home: the data directory (None: ``PARLEY_HOME`` or the platform default).
        probe: start-up probe callback (``parley.gui.startup.probe.StartupProbe.mark``)
            or None.
        env: environment for provider keys and ``PARLEY_DATABASE_URL`` (default
            ``os.environ``).
        on_user_error: where the background tasks' errors for the person go (the
            window's ``show_problem``).
    """

    # Made by the layout before the first paint (parley.gui.window.layout.build_first_paint)
    stack: QStackedWidget
    loading_page: QLabel
    chat_page: QWidget
    header: QWidget
    sidebar_button: QToolButton
    splitter: QSplitter
    narrow_sidebar: NarrowSidebar  # hides the sidebar in a narrow window (its resizeEvent)
    composer_bar: ComposerBar
    composer: Composer
    _sidebar_frame: QWidget
    _head: QHBoxLayout
    _header_fit: QObject  # gives the context meter the header's room (layout.HeaderFit)
    _transcript_slot: QLabel
    _chat_layout: QVBoxLayout

    # Made right after the first paint (WindowLayout.rest, Startup.finish_build)
    sidebar: Sidebar
    model_picker: ModelPicker
    context_meter: ContextMeter
    chat_heading: ChatHeading
    toast: Toast
    undo: UndoManager
    keymap: Keymap  # the keys in force (parley.gui.commands.install.install)

    #: The window's start-up (``parley.gui.startup.phases.Startup``: its stage, what the
    #: person did meanwhile), made with the window.
    startup: StartupView

    # Made once the chats are open (start-up)
    greeting: Greeting

    def __init__(self, home: Path | None, probe: Callable[[str], None] | None,
                 env: dict[str, str] | None,
                 on_user_error: Callable[[ParleyError], None]) -> None:
        self.home = home
        self.probe: Callable[[str], None] = probe or (lambda _event: None)
        self.env = dict(os.environ if env is None else env)
        #: What opens and closes them all (``parley.core.workspace``): made by start-up,
        #: a new one after a recovery. Its providers, run loop, MCP tools, cache timer
        #: and backups are read through it (:attr:`hub` …).
        self.workspace: Workspace | None = None
        #: The workspace's open store: set by start-up (None before, and again once
        #: closed for a recovery).
        self.store: AsyncStore | None = None
        #: The open chat's controller (set by start-up).
        self.chat: ChatController | None = None
        self.elsewhere: Elsewhere | None = None  # other Parleys' changes, on PostgreSQL
        self.previous_run: PreviousRun | None = None
        self.search_popup: SearchPopup | None = None
        self.setup_panel: SetupPanel | None = None
        self.recovery_page: RecoveryPage | None = None  # sessions.db is damaged
        #: Made when first opened (``parley.gui.commands.palette``, ``.shortcut_help``).
        self.command_palette: CommandPalette | None = None
        self.shortcut_help: ShortcutHelp | None = None
        #: The folder of the last file exported or imported (None: home;
        #: ``parley.gui.dialogs.export_dialog``).
        self.files_folder: Path | None = None
        #: sessions.db was looked for once (``parley.gui.database.missing_page``), and
        #: the page shown while it is missing and copies of it were found.
        self.missing_checked = False
        self.missing_page: MissingPage | None = None
        #: The import under way (``parley.gui.dialogs.import_dialog``).
        self.import_progress: ImportProgress | None = None
        #: The store whose saved keys the keymap took (``parley.gui.commands.keymap``).
        self._keymap_store: AsyncStore | None = None
        #: The window that took this one's place after a recovery.
        self.successor: RecoveryWindow | None = None
        self.pending_notice: str | None = None  # told once the chats show (a recovery)
        self.upgrade_notice: str | None = None  # told once ready (a v3 file was upgraded)
        #: The transcript, once the chats are open (a placeholder holds its place before).
        self.transcript: TranscriptView | None = None
        #: The theme, text size and zoom (Settings → Appearance), once the chats are open.
        self.view_prefs: ViewPrefs | None = None
        self.qactions: dict[str, QAction] = {}
        #: The handlers of the declared actions, registered where they are written.
        self.commands = Commands()
        self.tasks = TaskSet(on_user_error=on_user_error)

    # -- the workspace's parts, once the open chat took its providers (None before) --------
    @property
    def hub(self) -> ProviderHub | None:
        """The workspace's providers, once the open chat took them (``ChatController.attach``)."""
        return self.chat.hub if self.chat is not None else None

    @property
    def runner(self) -> ChatRunner | None:
        """The workspace's run loop, once the open chat took it."""
        return self.chat.runner if self.chat is not None else None

    @property
    def mcp(self) -> McpTools | None:
        """The workspace's MCP tools (None also when left out)."""
        workspace = self._taken()
        return workspace.mcp if workspace is not None else None

    @property
    def cache_timer(self) -> CacheTimer | None:
        """The workspace's cache idle-timer."""
        workspace = self._taken()
        return workspace.cache_timer if workspace is not None else None

    @property
    def backups(self) -> BackupScheduler | None:
        """The workspace's automatic backups (None on PostgreSQL)."""
        workspace = self._taken()
        return workspace.backups if workspace is not None else None

    def _taken(self) -> Workspace | None:
        """The workspace, once the open chat took its providers (else None)."""
        return self.workspace if self.hub is not None else None

    @property
    def ready(self) -> bool:
        """True once messages can be sent (the providers loaded: ``Startup.ready``)."""
        return self.startup.ready

    @property
    def session_id(self) -> str | None:
        """The open chat's id (None for a new chat not yet sent, or no chat open)."""
        return self.chat.session_id if self.chat is not None else None

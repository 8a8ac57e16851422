"""The main window: sidebar | (header, transcript, composer), or the set-up panel.

:class:`MainWindow` is a ``QMainWindow`` holding the window's state
(``parley.gui.window.state``, declared once) and owning its parts, one responsibility
each, each given what it uses:

* its widgets and their sizes: ``parley.gui.window.layout`` (``window.widgets``; the
  first paint's widgets made at once, at the size and place kept when it last closed
  (``parley.gui.window.place``), the rest right after it);
* which page shows (the chat, or first-run set-up, its welcome painted first on a
  first start): ``parley.gui.window.pages`` (``window.pages``);
* errors told to the person, a damaged or moved sessions.db: ``parley.gui.window.problems``
  (``window.problems``);
* quitting: ``parley.gui.window.shutdown`` (``window.quitting``);
* what the actions do: ``parley.gui.commands.window_commands`` (``window.window_commands``).

* its start-up, one state machine (the store, the chats, then the providers, after the
  first paint; what the person did meanwhile queued): ``parley.gui.startup.phases``
  (``window.startup``).

Everything a
person does with chats (open, send, stop, retry, drafts …) is in
:class:`parley.gui.chat.controller.ChatController`, given the window's parts it uses
(``parley.gui.chat.parts``). This module makes the parts and routes Qt's events to them.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QEvent
from PySide6.QtGui import QCloseEvent, QGuiApplication, QResizeEvent
from PySide6.QtWidgets import QMainWindow

from parley.core.first_start import surely_first_start
from parley.core.paths import find_data_dir
from parley.core.recovery.restart_notice import CUT_OFF
from parley.gui.commands.window_commands import WindowCommands
from parley.gui.look import appearance
from parley.gui.startup.first_paint import when_painted
from parley.gui.startup.phases import Startup
from parley.gui.window.base import WindowBase
from parley.gui.window.focus_back import FocusBack
from parley.gui.window.layout import WindowLayout, keep_chat_room
from parley.gui.window.pages import WindowPages
from parley.gui.window.problems import WindowProblems
from parley.gui.window.shutdown import WindowShutdown
from parley.gui.window.state import WindowState

if TYPE_CHECKING:
    from parley.core.errors import ParleyError

#: The restart notice for a cut-off reply (the others: ``parley.core.recovery.restart_notice``).
INTERRUPTED_NOTICE = CUT_OFF


class MainWindow(WindowBase, QMainWindow):
    """Parley's window: its state (:class:`WindowState`, declared once) and its parts.

    Args:
        home: the data directory (None: ``PARLEY_HOME`` or the platform default).
        probe: start-up probe callback (``parley.gui.startup.probe.StartupProbe.mark``)
            or None.
        env: environment for provider keys and ``PARLEY_DATABASE_URL`` (default ``os.environ``).

    Attributes:
        widgets: its widgets, made into its state, and their sizes (:class:`WindowLayout`).
        pages: which page shows (:class:`WindowPages`).
        problems: errors told to the person, the damaged store (:class:`WindowProblems`).
        quitting: the window's closing (:class:`WindowShutdown`).
        window_commands: what the actions do (:class:`WindowCommands`).
        startup: its start-up, one state machine (``parley.gui.startup.phases.Startup``).
        The window's state and widgets: :class:`WindowState`.
    """

    def __init__(self, home: Path | None = None, *, probe: Callable[[str], None] | None = None,
                 env: dict[str, str] | None = None) -> None:
        QMainWindow.__init__(self)
        WindowState.__init__(self, home, probe, env, on_user_error=self.show_problem)
        self.setWindowTitle("Parley")
        self.setAccessibleName("Parley")
        self.resize(1180, 780)
        self.startup = Startup(self)
        self.window_commands = WindowCommands(self, self)
        self.widgets = WindowLayout(self, self, self.window_commands)
        self.widgets.build()
        self.widgets.restore_place()  # the size and place it had when it closed
        self.startup.build_later(self.widgets.rest)
        self.pages = WindowPages(self, self.statusBar(), self.setWindowTitle)
        if surely_first_start(find_data_dir(home), self.env):
            self.pages.welcome()  # painted first, instead of a chat the set-up would replace
        self.problems = WindowProblems(self, self, self)
        self.quitting = WindowShutdown(self, self, self.widgets.save_geometry)
        self.composer.on_action = self.widgets.composer_action
        self.composer.setFocus()  # keys typed from the first paint on go in the message box
        FocusBack(self)  # the keys come back to the window when a dialog closes
        when_painted(self, self.startup.first_paint)

    def show_problem(self, error: ParleyError) -> None:
        """Tell an error the person can act on (:meth:`WindowProblems.show`)."""
        self.problems.show(error)

    async def shutdown(self) -> bool:
        """Stop and save everything (:meth:`WindowShutdown.shutdown`); False: kept open."""
        return await self.quitting.shutdown()

    def closeEvent(self, event: QCloseEvent) -> None:  # noqa: N802
        self.quitting.close_requested(event)

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802
        super().resizeEvent(event)
        self.narrow_sidebar.resized(event.oldSize().width(), event.size().width())
        keep_chat_room(self.splitter)
        if self.startup.built:
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

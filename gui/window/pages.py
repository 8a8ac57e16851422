"""Which page the main window shows: the chat, or the first-run set-up panel.

With no provider set up the set-up panel shows (``parley.gui.startup.setup_panel``); chats
already stored can be read first, sending a message then comes back to it.

On a start certain to be the first (``parley.core.first_start``) the first paint shows
the welcome (``parley.gui.startup.welcome``), no sidebar, until the providers are loaded:
then the set-up panel takes its place (or, should a provider be usable after all, the
chat page and the sidebar), never a chat-looking window first.

The window's title is the open chat's (:meth:`WindowPages.set_chat_title`) only while the
chat page shows; on any other page (the welcome, the set-up panel, a recovery page) it
is "Parley".
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, cast

from PySide6.QtWidgets import QApplication, QStatusBar

from parley.gui.startup.state import Stage
from parley.gui.window.state import WindowState

if TYPE_CHECKING:
    from parley.core.providers.capabilities import ProviderKind
    from parley.gui.startup.setup_panel import SetupAnswers, Tester

#: The status line while the chats are read before a provider is set up.
READING_ONLY = ("No provider is set up yet: you can read your chats. Sending a message takes "
                "you to the set-up page (the message is kept).")


class WindowPages:
    """The chat page and the set-up page: a part of ``MainWindow``.

    Args:
        state: the window's state (its stack of pages, the providers, the store).
        status: the window's status bar.
        set_title: sets the window's title.
    """

    def __init__(self, state: WindowState, status: QStatusBar,
                 set_title: Callable[[str], None]) -> None:
        self.state = state
        self.status = status
        self.set_title = set_title
        #: The first-start welcome shows (:meth:`welcome`) until :meth:`end_welcome`.
        self.welcoming = False
        #: The open chat's window title ("<chat> — Parley"), shown with the chat page.
        self.chat_title = "Parley"
        state.stack.currentChanged.connect(lambda _index: self.title_for_page())

    def set_chat_title(self, title: str) -> None:
        """The open chat's window ``title``: the window's title while the chat page shows,
        kept for when it shows again otherwise."""
        self.chat_title = title
        self.title_for_page()

    def title_for_page(self) -> None:
        """The window's title for the page showing: the chat's on the chat page, "Parley"
        on any other (the welcome, the set-up panel, a recovery page)."""
        state = self.state
        on_chat = state.stack.currentWidget() is state.chat_page
        self.set_title(self.chat_title if on_chat else "Parley")

    def welcome(self) -> None:
        """Before the first paint of a first start: the welcome instead of the chat page,
        the sidebar hidden (:meth:`show_chat` waits for :meth:`end_welcome`)."""
        from parley.gui.startup.welcome import WelcomePage

        state = self.state
        page = WelcomePage()
        state.stack.addWidget(page)
        state.stack.setCurrentWidget(page)
        state._sidebar_frame.hide()  # the sidebar made from it stays hidden
        self.welcoming = True

    def end_welcome(self, configured: bool) -> None:
        """The providers are loaded: the welcome gives way — to the set-up panel, or when
        a provider is ``configured`` after all, to the chat page and its sidebar (the
        caller shows either). No-op when it was not shown."""
        if not self.welcoming:
            return
        self.welcoming = False
        if configured:
            self.state.sidebar.show()

    def show_setup(self) -> None:
        """Show the first-run set-up panel instead of the chat."""
        from parley.gui.startup.setup_panel import SetupPanel

        state = self.state
        assert state.hub is not None, "set-up is shown once the providers are loaded"
        if state.setup_panel is None:
            # The panel's kinds are the providers' (its buttons offer only those).
            tester = cast("Tester", state.hub.test_connection)
            state.setup_panel = SetupPanel(tester=tester, env=state.env)
            state.setup_panel.completed.connect(
                lambda answers: state.tasks.spawn(self._finish_setup(answers), name="setup"))
            state.setup_panel.read_first.connect(self._read_before_setup)
            state.stack.addWidget(state.setup_panel)
            state.tasks.spawn(self.offer_reading(), name="setup-chats")
        state.stack.setCurrentWidget(state.setup_panel)
        state.sidebar.hide()  # the chats are listed once a provider is set up, or to read
        state.setup_panel.kind_buttons[0].setFocus()

    async def offer_reading(self) -> None:
        """Chats already stored (imported before any provider was set up) can be read
        first: the set-up page offers it (counted again after ``parley --import``)."""
        assert self.state.store is not None
        listed = await self.state.store.list_sessions(limit=100_000)
        chats = sum(1 for s in listed if s.parent_session_id is None)
        if self.state.setup_panel is not None:
            self.state.setup_panel.offer_reading(chats)

    def _read_before_setup(self) -> None:
        """Show the chats (sidebar, transcript) with no provider set up; sending goes back
        to the set-up page, the message kept (``ChatRuns``)."""
        self.show_chat()
        self.status.showMessage(READING_ONLY, 15_000)

    async def _finish_setup(self, answers: SetupAnswers) -> None:
        state = self.state
        assert state.chat is not None and state.hub is not None
        # The models the test listed are kept: the picker and the meter name the chosen
        # one from the start (not its id and "0 / 200k" until it is listed again).
        await state.hub.add_provider(cast("ProviderKind", answers.kind), base_url=answers.base_url,
                                     api_key=answers.api_key, default_model=answers.model,
                                     models=answers.models)
        await state.chat.enter()
        state.startup.move_to(Stage.READY)

    def show_chat(self) -> None:
        """Show the chat page and focus the composer (while starting, only if the focus
        is not somewhere the person put it: the search, the chat list …). While the
        first-start welcome shows (:attr:`welcoming`), it stays."""
        state = self.state
        if self.welcoming:
            return
        if state.stack.currentWidget() is state.setup_panel:
            state.sidebar.show()
        state.stack.setCurrentWidget(state.chat_page)
        state.composer_bar.setEnabled(True)
        self.focus_composer_unless_moved()

    def focus_composer_unless_moved(self) -> None:
        """Focus the composer; while starting, only when the focus is in the chat page or
        nowhere (start-up never takes the focus from where the person moved it). A chat
        opened by walking the chat list with the arrow keys leaves the focus there
        (``Sidebar.walking``): the next arrow goes on walking."""
        state = self.state
        if state.sidebar.walking():
            return
        if state.ready:
            state.composer.setFocus()
            return
        focus = QApplication.focusWidget()
        if focus is None or focus is state.composer or not focus.isVisible() \
                or state.chat_page.isAncestorOf(focus):
            state.composer.setFocus()

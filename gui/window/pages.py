"""Which page the main window shows: the chat, or the first-run set-up panel.

With no provider set up the set-up panel shows (``parley.gui.startup.setup_panel``); chats
already stored can be read first, sending a message then comes back to it.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtWidgets import QApplication

from parley.gui.window.base import WindowBase

#: The status line while the chats are read before a provider is set up.
READING_ONLY = ("No provider is set up yet: you can read your chats. Sending a message takes "
                "you to the set-up page (the message is kept).")


class WindowPages(WindowBase):
    """The chat page and the set-up page (mixed into ``MainWindow``)."""

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

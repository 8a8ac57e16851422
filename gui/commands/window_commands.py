"""What the window's commands do: the methods ``parley.gui.commands.actions`` calls by name.

:class:`WindowCommands` is a mixin of :class:`parley.gui.main_window.MainWindow`.
Most commands act on the open chat through the chat controller
(``_chat_call``), and do nothing while the set-up panel or a loading page
is shown; the rest open a dialog or move the focus.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QWidget

if TYPE_CHECKING:
    from parley.gui.chat.controller import ChatController


class WindowCommands:
    """The window's command methods (mixed into ``MainWindow``, whose widgets they use)."""

    chat: ChatController | None
    store: Any
    hub: Any
    runner: Any
    tasks: Any
    stack: Any
    chat_page: Any
    sidebar: Any
    composer: Any
    transcript: Any
    early: Any  # parley.gui.composer.early_input.EarlyInput | None
    queue_early_message: Any
    take_back_early_message: Any
    def _chat_call(self, name: str, *args: Any) -> Any:
        """Call ``name`` (a dotted path from the controller) when the chat page is up;
        before the first chat is shown, once it is (``parley.gui.composer.early_input``)."""
        if self.early is not None and not self.store_failed():
            return self._chat_call_later(name, *args)
        if self.chat is None or self.stack.currentWidget() is not self.chat_page:
            return False
        target: Any = self.chat
        for part in name.split("."):
            target = getattr(target, part)
        return target(*args)

    def _chat_call_later(self, name: str, *args: Any) -> Any:
        """A chat command given before the first chat is shown: done once it is. Up
        (edit the last message) only with an empty message box (else the key moves
        the cursor); Esc takes back the message sent meanwhile in the chat in view."""
        if name == "runs.stop":
            return self.take_back_early_message()
        if name == "editor.edit_last" and self.composer.text():
            return False
        self.early.commands.append(lambda: self._chat_call(name, *args))
        return True

    def new_session(self) -> Any:
        """Ctrl+N: a new chat; before the chats are open, the first chat shown is a new
        one (instead of the last chat)."""
        if self.early is not None and not self.store_failed():
            if self.early.new_chat(self.composer.text()):
                self.composer.clear()  # what was typed stays with its chat
            return True
        return self._chat_call("new_session")

    def _space_row_focused(self) -> bool:
        """True when the chat list has focus on a space heading (F2, Delete act on it)."""
        from parley.gui.sidebar.model import KIND

        tree = self.sidebar.tree
        return tree.hasFocus() and tree.currentIndex().data(KIND) == "space"

    def rename_session(self) -> Any:
        """F2: rename the focused space heading, the chat focused in the list (a dialog),
        else the open chat in place, in the header's heading (``parley.gui.chat_heading``)."""
        if self._space_row_focused():
            return self._chat_call("organizer.rename_space")
        heading = getattr(self, "chat_heading", None)
        in_list = self.sidebar.tree.hasFocus()
        if heading is not None and not in_list and self.early is None and self.chat is not None \
                and self.stack.currentWidget() is self.chat_page:
            return heading.begin_edit()
        return self._chat_call("organizer.rename_session")

    rename_current_session = rename_session

    def delete_current_session(self) -> Any:
        """Delete the open chat (or the focused space heading), after asking."""
        if self._space_row_focused():
            return self._chat_call("organizer.delete_space")
        return self._chat_call("organizer.delete_session")

    def pin_session(self) -> Any:
        return self._chat_call("organizer.pin_session")

    def archive_session(self) -> Any:
        return self._chat_call("organizer.archive_session")

    def move_session_to_space(self) -> Any:
        return self._chat_call("organizer.move_session")

    def toggle_archived_visible(self) -> None:
        self.sidebar.set_show_archived(not self.sidebar.show_archived)

    def new_space(self) -> Any:
        return self._chat_call("organizer.new_space")

    def rename_space(self) -> Any:
        return self._chat_call("organizer.rename_space")

    def edit_space(self) -> Any:
        return self._chat_call("organizer.edit_space")

    def delete_space(self) -> Any:
        return self._chat_call("organizer.delete_space")

    def open_session(self, session_id: str) -> Any:
        return self._chat_call("open_session", session_id)

    def open_session_at(self, session_id: str, turn_id: str | None,
                        highlight: str | None = None) -> Any:
        """Open a chat scrolled to a message with ``highlight`` marked (reads further
        back than the last turns when the message is older)."""
        return self._chat_call("open_at", session_id, turn_id, highlight)

    def step_session(self, delta: int) -> Any:
        return self._chat_call("step_session", delta)

    def goto_session(self, n: int) -> Any:
        return self._chat_call("goto_session", n)

    def send_from_composer(self) -> Any:
        """Enter: send the message (before the chats are open: keep it for the chat shown
        first, ``MainWindow.queue_early_message``)."""
        if self.early is not None and not self.store_failed():
            return self.queue_early_message()
        return self._chat_call("runs.send_from_composer")

    def store_failed(self) -> bool:
        """True when start-up stopped without opening the chats (an error or the
        recovery page shows instead of the chat page)."""
        return self.stack.currentWidget() is not self.chat_page

    def stop_run(self) -> Any:
        return self._chat_call("runs.stop")

    def retry_run(self) -> Any:
        return self._chat_call("runs.retry")

    def regenerate_reply(self, model_ref: str | None = None) -> Any:
        """Answer the last message again (with ``model_ref``, default the chat's model);
        the current answer is kept as a fork."""
        return self._chat_call("regen.regenerate", model_ref)

    def regenerate_with_model(self) -> Any:
        """Pick a model, then regenerate the last reply with it."""
        return self._chat_call("regen.pick_model")

    def attach_files(self) -> Any:
        """Ctrl+O: choose files to attach to the message being written."""
        return self._chat_call("attachments.open_dialog")

    def edit_last_message(self) -> Any:
        return self._chat_call("editor.edit_last")

    def fork_at_focused_message(self) -> Any:
        return self._chat_call("editor.fork_at_focused")

    def compact_now(self) -> Any:
        return self._chat_call("editor.compact_now")

    def refresh_system_prompt(self) -> None:
        """Make the open chat's next request carry its space's current memory and skills
        (``ChatRunner.refresh_system_prompt``); no-op without an open saved chat."""
        if self.runner is not None and self.session_id is not None:
            self.tasks.spawn(self.runner.refresh_system_prompt(self.session_id),
                             name="refresh-system-prompt")

    def open_search(self) -> bool:
        """Show the search popup over the window (search every chat as you type)."""
        from parley.gui.search import open_search

        return open_search(self)

    def export_session(self, session_id: str | None = None) -> bool:
        """Save a chat (default: the open one) as Markdown or JSON; asks where."""
        from parley.gui.export_dialog import export_chat

        return export_chat(self, session_id)

    def import_conversation(self) -> bool:
        """Import a chat history (ChatGPT, Claude.ai, Open WebUI) or a conversation file
        (Parley JSON or Markdown, Anthropic or OpenAI messages)."""
        from parley.gui.export_dialog import import_chat

        return import_chat(self)

    def save_copy_now(self) -> bool:
        """File ▸ Save a copy now…: copy every chat (and this run's drafts) to a file the
        person chooses; also when sessions.db was deleted or moved (``parley.gui.rescue``)."""
        if self.store is None:
            return False
        from parley.gui.rescue import save_copy_now

        self.tasks.spawn(save_copy_now(self), name="save-copy")
        return True

    def open_settings(self) -> Any:
        """Settings (non-modal; changes apply at once)."""
        if self.store is None or self.hub is None:
            return None
        from parley.gui.settings.dialog import SettingsDialog

        dlg = SettingsDialog(self.store, self.hub, parent=cast(QWidget, self))
        dlg.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dlg.open()
        return dlg

    def focus_composer(self) -> None:
        self.composer.setFocus(Qt.FocusReason.ShortcutFocusReason)

    def focus_transcript(self) -> None:
        if self.transcript is not None:
            self.transcript.setFocus(Qt.FocusReason.ShortcutFocusReason)

    def focus_sidebar(self) -> None:
        self.sidebar.setVisible(True)
        self.sidebar.tree.setFocus(Qt.FocusReason.ShortcutFocusReason)

    def toggle_sidebar(self) -> None:
        self.sidebar.setVisible(not self.sidebar.isVisible())

    def zoom(self, direction: int) -> Any:
        """Ctrl++ (1), Ctrl+− (-1), Ctrl+0 (0): the conversation's text size (kept)."""
        prefs = getattr(self, "view_prefs", None)
        return prefs.step_zoom(direction) if prefs is not None else False

    def close_chat(self) -> Any:
        """Ctrl+W: close the open chat, which archives it (Undo in the toast), and show
        its neighbour; an archived chat (or a new one) is only left."""
        chat = self.chat
        if chat is None or self.stack.currentWidget() is not self.chat_page:
            return False
        sid = getattr(chat, "chat_row", None) or chat.session_id
        session = chat.sessions.get(sid or "")
        if session is None:
            return False
        if session.archived:
            return self._chat_call("new_session")
        return self._chat_call("organizer.archive_session", sid)

    def toggle_full_screen(self) -> None:
        """F11: full screen, or back."""
        window = cast(QWidget, self)
        window.setWindowState(window.windowState() ^ Qt.WindowState.WindowFullScreen)

    @property
    def session_id(self) -> str | None:
        """The open session's id (None for a new chat not yet sent)."""
        return self.chat.session_id if self.chat else None

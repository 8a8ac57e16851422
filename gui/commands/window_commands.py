"""What the window's commands do, and their registration as handlers of the actions.

:class:`WindowCommands` is a part of :class:`parley.gui.main_window.MainWindow`
(``window.window_commands``). :meth:`WindowCommands.register` registers its methods as
the handlers of the
actions declared in ``parley.gui.commands.actions`` (the message commands are registered
by the transcript).
Most commands act on the open chat through the chat controller
(``_chat_call``), and do nothing while the set-up panel or a loading page
is shown; the rest open a dialog or move the focus.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QMainWindow

from parley.gui.window.state import WindowState

if TYPE_CHECKING:
    from parley.gui.chat.interfaces import OpenChat
    from parley.gui.commands.registry import Commands


class WindowCommands:
    """The window's command methods: a part of ``MainWindow`` (``window.window_commands``).

    Args:
        state: the window's state (the open chat, the store, the widgets the commands
            move the focus between).
        window: the window (closed by Quit, the dialogs' parent, handed to the search,
            the palette and the import/export dialogs).

    Before the chats are shown (``state.startup.queueing``) the chat commands are queued
    for them (``parley.gui.startup.state.PendingQueue``).
    """

    def __init__(self, state: WindowState, window: QMainWindow) -> None:
        self.state = state
        self.window = window

    def register(self, commands: Commands) -> None:
        """Register the window's handlers of the declared actions in ``commands``."""
        handlers: dict[str, Callable[[], Any]] = {
            "session.new": self.new_session,
            "space.new": self.new_space,
            "composer.attach": self.attach_files,
            "session.import": self.import_conversation,
            "session.export": self.export_session,
            "app.save_copy": self.save_copy_now,
            "app.settings": self.open_settings,
            "app.quit": self.window.close,
            "composer.send": self.send_from_composer,
            "composer.newline": lambda: self.state.composer.insertPlainText("\n"),
            "run.stop": self.stop_run,
            "composer.edit_last": self.edit_last_message,
            # The open chat's queue of messages sent while a reply streams (gui.chat.queue).
            "queue.send": lambda: self._chat_call(lambda c: c.runs.queue.send_now()),
            "queue.pause": lambda: self._chat_call(lambda c: c.runs.queue.pause()),
            "queue.focus": lambda: self._chat_call(lambda c: c.runs.queue.focus()),
            "run.retry": self.retry_run,
            "run.regenerate": self.regenerate_reply,
            "run.regenerate_with": self.regenerate_with_model,
            "composer.ask_several":  # Ask several models (parley.gui.chat.several)
                lambda: self._chat_call(lambda c: c.several.ask_from_composer()),
            "run.answer_with": lambda: self._chat_call(lambda c: c.several.answer_again()),
            "session.fork": self.fork_at_focused_message,
            "session.compact": self.compact_now,
            "session.refresh_prompt": self.refresh_system_prompt,
            "session.rename": self.rename_session,
            "session.pin": self.pin_session,
            "session.move": self.move_session_to_space,
            "session.close": self.close_chat,
            "session.archive": self.archive_session,
            "session.delete": self.delete_current_session,
            "sidebar.delete": self.delete_current_session,
            "sidebar.open": self.open_from_list,
            "sidebar.leave": self.focus_composer,
            "space.rename": self.rename_space,
            "space.documents": self.space_documents,
            "space.delete": self.delete_space,
            "palette.open": self.open_palette,
            "search.open": self.open_search,
            "focus.composer": self.focus_composer,
            "focus.transcript": self.focus_transcript,
            "focus.sidebar": self.focus_sidebar,
            "focus.next_pane": partial(self.cycle_panes, +1),
            "focus.previous_pane": partial(self.cycle_panes, -1),
            "sidebar.toggle": self.toggle_sidebar,
            "view.zoom_in": partial(self.zoom, 1),
            "view.zoom_out": partial(self.zoom, -1),
            "view.zoom_reset": partial(self.zoom, 0),
            "view.full_screen": self.toggle_full_screen,
            "session.archived": self.toggle_archived_visible,
            "session.next": partial(self.step_session, 1),
            "session.previous": partial(self.step_session, -1),
            "help.shortcuts": self.open_shortcut_help,
            "edit.undo": lambda: self.state.undo.undo(),
            **{f"session.goto.{n}": partial(self.goto_session, n - 1) for n in range(1, 10)},
        }
        whens: dict[str, Callable[[], bool]] = {
            "session.archive": self._open_chat_archived,
            "edit.undo": lambda: self.state.undo.pending,  # while the toast offers Undo
            # Not on the set-up page (trial 21: enabled there, they did nothing).
            "session.compact": self._chats_shown,
            "session.export": self._saved_chat_shown,
        }
        for action_id, handler in handlers.items():
            commands.handle(action_id, handler, when=whens.get(action_id))

    def _chats_shown(self) -> bool:
        """True when a chat command acts now or is kept for the chat shown first: the
        chat page shows, or the chats are not shown yet (``_chat_call`` queues it).
        False on the set-up page (no provider yet) or another page."""
        state = self.state
        return state.startup.queueing or (
            state.chat is not None and state.stack.currentWidget() is state.chat_page)

    def _saved_chat_shown(self) -> bool:
        """True when the chat page shows a saved chat (one there is to export)."""
        state = self.state
        return state.chat is not None and state.chat.session_id is not None \
            and state.stack.currentWidget() is state.chat_page

    def _chat_call(self, command: Callable[[OpenChat], Any], *,
                   early: Callable[[], Any] | None = None) -> Any:
        """Run ``command`` on the chat controller when the chat page is up. Before the first
        chat is shown: ``early()`` when given (what the command means then), else
        ``command`` is queued and run once the chat is shown
        (``parley.gui.startup.state.PendingQueue``)."""
        if self.state.startup.queueing:
            if early is not None:
                return early()
            self.state.startup.queue.command(lambda: self._chat_call(command))
            return True
        if self.state.chat is None or self.state.stack.currentWidget() is not self.state.chat_page:
            return False
        return command(self.state.chat)

    def new_session(self) -> Any:
        """Ctrl+N: a new chat; before the chats are open, the first chat shown is a new
        one (instead of the last chat)."""
        if self.state.startup.queueing:
            if self.state.startup.queue.new_chat(self.state.composer.text()):
                self.state.composer.clear()  # what was typed stays with its chat
            return True
        return self._chat_call(lambda c: c.new_session())

    def _space_row_focused(self) -> bool:
        """True when the chat list has focus on a space heading (F2, Delete act on it)."""
        from parley.gui.sidebar.model import KIND

        tree = self.state.sidebar.tree
        return tree.hasFocus() and tree.currentIndex().data(KIND) == "space"

    def rename_session(self) -> Any:
        """F2: rename the focused space heading, the chat focused in the list (a dialog),
        else the open chat in place, in the header's heading
        (``parley.gui.header.chat_heading``)."""
        if self._space_row_focused():
            return self._chat_call(lambda c: c.organizer.rename_space())
        state = self.state
        in_list = state.sidebar.tree.hasFocus()
        read_only = state.store is not None and state.store.write_refused() is not None
        if not in_list and not read_only and not state.startup.queueing \
                and state.chat is not None and state.stack.currentWidget() is state.chat_page:
            return state.chat_heading.begin_edit()
        return self._chat_call(lambda c: c.organizer.rename_session())  # read-only: says so

    def delete_current_session(self) -> Any:
        """Delete the open chat (or the focused space heading), after asking."""
        if self._space_row_focused():
            return self._chat_call(lambda c: c.organizer.delete_space())
        return self._chat_call(lambda c: c.organizer.delete_session())

    def pin_session(self) -> Any:
        return self._chat_call(lambda c: c.organizer.pin_session())

    def archive_session(self) -> Any:
        """Unarchive the open chat (the command is offered only while it is archived;
        Ctrl+W archives)."""
        if not self._open_chat_archived():
            return False
        return self._chat_call(lambda c: c.organizer.archive_session())

    def _open_chat_archived(self) -> bool:
        """True when the open chat is an archived one."""
        chat = self.state.chat
        if chat is None:
            return False
        sid = getattr(chat, "chat_row", None) or chat.session_id
        session = chat.sessions.get(sid or "")
        return session is not None and session.archived

    def move_session_to_space(self) -> Any:
        return self._chat_call(lambda c: c.organizer.move_session())

    def toggle_archived_visible(self) -> None:
        self.state.sidebar.set_show_archived(not self.state.sidebar.show_archived)

    def new_space(self) -> Any:
        return self._chat_call(lambda c: c.organizer.new_space())

    def rename_space(self) -> Any:
        return self._chat_call(lambda c: c.organizer.rename_space())

    def edit_space(self) -> Any:
        return self._chat_call(lambda c: c.organizer.edit_space())

    def space_documents(self) -> Any:
        return self._chat_call(lambda c: c.organizer.edit_space(documents=True))

    def delete_space(self) -> Any:
        return self._chat_call(lambda c: c.organizer.delete_space())

    def open_session(self, session_id: str) -> Any:
        return self._chat_call(lambda c: c.open_session(session_id))

    def step_session(self, delta: int) -> Any:
        return self._chat_call(lambda c: c.step_session(delta))

    def goto_session(self, n: int) -> Any:
        return self._chat_call(lambda c: c.goto_session(n))

    def send_from_composer(self) -> Any:
        """Enter: send the message (before the chats are open: keep it for the chat shown
        first, ``Startup.queue_message``)."""
        if self.state.startup.queueing:
            return self.state.startup.queue_message()
        return self._chat_call(lambda c: c.runs.send_from_composer())

    def stop_run(self) -> Any:
        return self._chat_call(lambda c: c.runs.stop(),
                               early=self.state.startup.take_back_message)

    def retry_run(self) -> Any:
        return self._chat_call(lambda c: c.runs.retry())

    def regenerate_reply(self, model_ref: str | None = None) -> Any:
        """Answer the last message again (with ``model_ref``, default the chat's model);
        the current answer is kept as a fork."""
        return self._chat_call(lambda c: c.regen.regenerate(model_ref))

    def regenerate_with_model(self) -> Any:
        """Pick a model, then regenerate the last reply with it."""
        return self._chat_call(lambda c: c.regen.pick_model())

    def attach_files(self) -> Any:
        """Ctrl+O: choose files to attach to the message being written."""
        return self._chat_call(lambda c: c.attachments.open_dialog())

    def edit_last_message(self) -> Any:
        # Up before the chats are shown: only with an empty message box (else the key
        # moves the cursor).
        return self._chat_call(lambda c: c.runs.queue.edit_last() or c.editor.edit_last(),
                               early=(lambda: False) if self.state.composer.text() else None)

    def fork_at_focused_message(self) -> Any:
        return self._chat_call(lambda c: c.editor.fork_at_focused())

    def compact_now(self) -> Any:
        return self._chat_call(lambda c: c.editor.compact_now())

    def refresh_system_prompt(self) -> None:
        """Read ``mcp.json`` again (fixed or written while Parley runs: every chat's next
        list of tools takes it), then make the open chat's next request carry its space's
        current memory and skills and the servers' current tools
        (``ChatRunner.refresh_system_prompt``; not without an open saved chat). A file
        still broken says so in the status bar."""
        mcp = self.state.mcp
        runner = self.state.runner
        sid = self.state.session_id if runner is not None else None
        if mcp is None and sid is None:
            return

        async def refresh() -> None:
            if mcp is not None:
                changed = await mcp.host.reload()
                error = mcp.host.error
                if error is not None:
                    self.window.statusBar().showMessage(error.message, 15_000)
                elif changed:
                    names = ", ".join(f"“{n}”" for n in mcp.host.configs) or "none"
                    self.window.statusBar().showMessage(
                        f"MCP servers read again from {mcp.host.path.name}: {names}.", 8_000)
            if sid is not None and runner is not None:
                await runner.refresh_system_prompt(sid)

        self.state.tasks.spawn(refresh(), name="refresh-system-prompt")

    def open_search(self) -> bool:
        """Show the search popup over the window (search every chat as you type)."""
        from parley.gui.dialogs.search import open_search

        return open_search(self.state, self.window)

    def export_session(self, session_id: str | None = None) -> bool:
        """Save a chat (default: the open one) as Markdown or JSON; asks where."""
        from parley.gui.dialogs.export_dialog import export_chat

        return export_chat(self.state, self.window, session_id)

    def import_conversation(self) -> bool:
        """Import a chat history (ChatGPT, Claude.ai, Open WebUI) or a conversation file
        (Parley JSON or Markdown, Anthropic or OpenAI messages)."""
        from parley.gui.dialogs.import_dialog import import_chat

        return import_chat(self.state, self.window)

    def save_copy_now(self) -> bool:
        """File ▸ Save a copy now…: copy every chat (and this run's drafts) to a file the
        person chooses; also when sessions.db was deleted or moved
        (``parley.gui.database.rescue``)."""
        if self.state.store is None:
            return False
        from parley.gui.database.rescue import save_copy_now

        self.state.tasks.spawn(save_copy_now(self.state, self.window), name="save-copy")
        return True

    def open_settings(self) -> Any:
        """Settings (non-modal; changes apply at once)."""
        if self.state.store is None or self.state.hub is None:
            return None
        from parley.gui.settings.dialog import SettingsDialog

        dlg = SettingsDialog(self.state.store, self.state.hub, parent=self.window)
        dlg.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dlg.open()
        return dlg

    def open_palette(self) -> None:
        """Ctrl+K: the command palette."""
        from parley.gui.commands.palette import open_palette

        open_palette(self.state, self.window)

    def open_shortcut_help(self) -> None:
        """Ctrl+/: every command and its keys."""
        from parley.gui.commands.shortcut_help import open_shortcut_help

        open_shortcut_help(self.state, self.window)

    def cycle_panes(self, step: int) -> None:
        """F6 / Shift+F6: the focus to the next (``step`` 1) or previous (-1) pane: the chat
        list, the conversation, the message box (those shown)."""
        transcript = self.state.transcript
        panes = [p for p in (self.state.sidebar.tree,
                             transcript.list_view if transcript is not None else None,
                             self.state.composer)
                 if p is not None and p.isVisible() and p.isEnabled()]
        if not panes:
            return
        focus = QApplication.focusWidget()
        at = next((i for i, p in enumerate(panes)
                   if focus is not None and (p is focus or p.isAncestorOf(focus))), -1)
        start = at if at >= 0 else (-1 if step > 0 else 0)
        panes[(start + step) % len(panes)].setFocus(Qt.FocusReason.TabFocusReason)

    def focus_composer(self) -> None:
        self.state.composer.setFocus(Qt.FocusReason.ShortcutFocusReason)

    def open_from_list(self) -> None:
        """Enter in the chat list: open the current row's chat and go to its message box
        (a space heading folds, "more" reads more: the focus stays in the list)."""
        if self.state.sidebar.open_current():
            self.focus_composer()

    def focus_transcript(self) -> None:
        if self.state.transcript is not None:
            self.state.transcript.setFocus(Qt.FocusReason.ShortcutFocusReason)

    def focus_sidebar(self) -> None:
        self.state.narrow_sidebar.toggled_by_hand()
        self.state.sidebar.setVisible(True)
        self.state.sidebar.tree.setFocus(Qt.FocusReason.ShortcutFocusReason)

    def toggle_sidebar(self) -> None:
        self.state.narrow_sidebar.toggled_by_hand()
        self.state.sidebar.setVisible(not self.state.sidebar.isVisible())

    def zoom(self, direction: int) -> Any:
        """Ctrl++ (1), Ctrl+− (-1), Ctrl+0 (0): the conversation's text size (kept)."""
        prefs = self.state.view_prefs
        return prefs.step_zoom(direction) if prefs is not None else False

    def close_chat(self) -> Any:
        """Ctrl+W: close the open chat, which archives it (Undo in the toast), and show
        its neighbour; an archived chat (or a new one) is only left."""
        chat = self.state.chat
        if chat is None or self.state.stack.currentWidget() is not self.state.chat_page:
            return False
        sid = chat.session_id
        session = chat.sessions.get(sid or "")
        if session is None:
            return False
        if session.archived:
            return self._chat_call(lambda c: c.new_session())
        return self._chat_call(lambda c: c.organizer.archive_session(sid))

    def toggle_full_screen(self) -> None:
        """F11: full screen, or back."""
        window = self.window
        window.setWindowState(window.windowState() ^ Qt.WindowState.WindowFullScreen)

"""The narrow interfaces between the open chat's controllers and the window.

The controllers of :mod:`parley.gui.chat` (and the window's commands) are given the
window and the chat controller typed by these protocols, not by their classes: a
controller module then never imports ``parley.gui.main_window`` or
``parley.gui.chat.controller``, and the GUI's modules import each other without a
cycle (``tests/gui/test_import_cycles.py``). Each protocol lists exactly what is used
through it; a member added here is a new dependency, made visible.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from PySide6.QtWidgets import QWidget

    from parley.gui.chat.state import OpenChatState


class ChatWindow(Protocol):
    """What the chat's controllers use of the main window (``MainWindow``).

    A dialog or menu the controllers open is parented to :meth:`window` (the main
    window itself, as a QWidget).
    """

    def window(self) -> QWidget: ...

    @property
    def chat(self) -> Any: ...

    @property
    def _chat_layout(self) -> Any: ...

    @property
    def chat_page(self) -> Any: ...

    @property
    def composer(self) -> Any: ...

    @property
    def composer_bar(self) -> Any: ...

    @property
    def context_meter(self) -> Any: ...

    @property
    def early(self) -> Any: ...

    @property
    def focus_composer_unless_moved(self) -> Any: ...

    @property
    def home(self) -> Any: ...

    @property
    def hub(self) -> Any: ...

    @property
    def keymap(self) -> Any: ...

    @property
    def model_picker(self) -> Any: ...

    @property
    def queue_early_message(self) -> Any: ...

    @property
    def ready(self) -> Any: ...

    @property
    def runner(self) -> Any: ...

    @property
    def setWindowTitle(self) -> Any: ...

    @property
    def setup_panel(self) -> Any: ...

    @property
    def show_chat(self) -> Any: ...

    @property
    def show_problem(self) -> Any: ...

    @property
    def show_setup(self) -> Any: ...

    @property
    def sidebar(self) -> Any: ...

    @property
    def statusBar(self) -> Any: ...

    @property
    def store(self) -> Any: ...

    @property
    def tasks(self) -> Any: ...

    @property
    def transcript(self) -> Any: ...

    @property
    def undo(self) -> Any: ...


class OpenChat(Protocol):
    """What the chat's helpers (runs, edits, regeneration, attachments, organizing) and
    the window's commands use of the chat controller (``ChatController``)."""

    @property
    def attachments(self) -> Any: ...

    @property
    def chat_ids(self) -> Any: ...

    @property
    def chat_of(self) -> Any: ...

    @property
    def chat_row(self) -> Any: ...

    @property
    def create_session(self) -> Any: ...

    @property
    def current_model(self) -> Any: ...

    @property
    def drafts(self) -> Any: ...

    @property
    def no_model_reason(self) -> Any: ...

    @property
    def editor(self) -> Any: ...

    @property
    def goto_session(self) -> Any: ...

    @property
    def hub(self) -> Any: ...

    @property
    def leave(self) -> Any: ...

    @property
    def load_sidebar(self) -> Any: ...

    @property
    def model_for(self) -> Any: ...

    @property
    def new_session(self) -> Any: ...

    @property
    def open_at(self) -> Any: ...

    @property
    def open_session(self) -> Any: ...

    @property
    def organizer(self) -> Any: ...

    @property
    def partial(self) -> Any: ...

    @property
    def providers_changed(self) -> Any: ...

    @property
    def refresh_versions(self) -> Any: ...

    @property
    def regen(self) -> Any: ...

    @property
    def reload(self) -> Any: ...

    @property
    def remember_session(self) -> Any: ...

    @property
    def runner(self) -> Any: ...

    @property
    def runs(self) -> Any: ...

    @property
    def save_status(self) -> Any: ...

    session_id: Any

    @property
    def sessions(self) -> Any: ...

    @property
    def show_fork(self) -> Any: ...

    @property
    def show_new_chat(self) -> Any: ...

    @property
    def show_turns(self) -> Any: ...

    @property
    def space_changed(self) -> Any: ...

    space_id: Any

    @property
    def spans(self) -> Any: ...

    @property
    def step_session(self) -> Any: ...

    @property
    def store(self) -> Any: ...

    @property
    def titles(self) -> Any: ...

    @property
    def state(self) -> OpenChatState: ...

    @property
    def turns(self) -> Any: ...

    @property
    def update_meter(self) -> Any: ...

    @property
    def update_title(self) -> Any: ...

"""The narrow interfaces between the open chat's controllers and the window.

The controllers of :mod:`parley.gui.chat` (and the window's commands) are given the
window and the chat controller typed by these protocols, not by their classes: a
controller module then never imports ``parley.gui.main_window`` or
``parley.gui.chat.controller``, and the GUI's modules import each other without a
cycle (``tests/test_import_cycles.py``). Each protocol lists exactly what is used
through it; a member added here is a new dependency, made visible.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from pathlib import Path

    from PySide6.QtWidgets import QStatusBar, QVBoxLayout, QWidget

    from parley.core.chat.run import ChatRunner
    from parley.core.errors import ParleyError
    from parley.core.providers.hub import ProviderHub
    from parley.core.store.async_store import AsyncStore
    from parley.core.tasks import TaskSet
    from parley.gui.chat.state import OpenChatState
    from parley.gui.commands.keymap import Keymap
    from parley.gui.composer.early_input import EarlyInput
    from parley.gui.composer.widget import Composer, ComposerBar
    from parley.gui.header.context_meter import ContextMeter
    from parley.gui.header.model_picker import ModelPicker
    from parley.gui.notices.undo import UndoManager
    from parley.gui.sidebar import Sidebar
    from parley.gui.startup.setup_panel import SetupPanel
    from parley.gui.transcript import TranscriptView


class ChatWindow(Protocol):
    """What the chat's controllers use of the main window (``MainWindow``): a view.

    A dialog or menu the controllers open is parented to :meth:`window` (the main
    window itself, as a QWidget). The controllers are made once the store is open and
    the transcript is in place (``parley.gui.startup.phases``), so :attr:`store`
    and :attr:`transcript` are there; the providers (:attr:`hub`, :attr:`runner`) come
    a moment later, and the set-up panel only when no provider is set up.
    """

    def window(self) -> QWidget: ...

    def setWindowTitle(self, title: str, /) -> None: ...  # noqa: N802 - Qt's name

    def statusBar(self) -> QStatusBar: ...  # noqa: N802 - Qt's name

    @property
    def home(self) -> Path | None:
        """The data folder given at start (None: the default one)."""

    @property
    def ready(self) -> bool:
        """True once start-up finished (the providers loaded)."""

    @property
    def store(self) -> AsyncStore:
        """The open store."""

    @property
    def hub(self) -> ProviderHub | None:
        """The providers (None until they are loaded)."""

    @property
    def runner(self) -> ChatRunner | None:
        """The run loop (None until the providers are loaded)."""

    @property
    def tasks(self) -> TaskSet:
        """The window's background tasks (a user error told by :meth:`show_problem`)."""

    @property
    def keymap(self) -> Keymap:
        """The keys in force (installed before the controllers are made)."""

    @property
    def chat(self) -> OpenChat | None:
        """The open chat's controller."""

    @property
    def early(self) -> EarlyInput | None:
        """What the person did before the first chat showed (None once it showed)."""

    def queue_early_message(self) -> bool:
        """Keep the message typed before the chats are open for the chat in view."""

    # the window's parts the controllers fill
    @property
    def chat_page(self) -> QWidget: ...

    @property
    def _chat_layout(self) -> QVBoxLayout: ...

    @property
    def sidebar(self) -> Sidebar: ...

    @property
    def transcript(self) -> TranscriptView: ...

    @property
    def composer(self) -> Composer: ...

    @property
    def composer_bar(self) -> ComposerBar: ...

    @property
    def model_picker(self) -> ModelPicker: ...

    @property
    def context_meter(self) -> ContextMeter: ...

    @property
    def undo(self) -> UndoManager: ...

    @property
    def setup_panel(self) -> SetupPanel | None: ...

    # pages and problems
    def show_chat(self) -> None: ...

    def show_setup(self) -> None: ...

    def focus_composer_unless_moved(self) -> None: ...

    def show_problem(self, error: ParleyError) -> None: ...


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
    def editor(self) -> Any: ...

    @property
    def hub(self) -> Any: ...

    def keep_draft(self) -> None: ...

    @property
    def load_sidebar(self) -> Any: ...

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
    def regen(self) -> Any: ...

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

    space_id: Any

    @property
    def spans(self) -> Any: ...

    @property
    def store(self) -> Any: ...

    @property
    def titles(self) -> Any: ...

    @property
    def state(self) -> OpenChatState: ...

    @property
    def turns(self) -> Any: ...

    @property
    def meter(self) -> Any: ...

    @property
    def models(self) -> Any: ...

    @property
    def opener(self) -> Any: ...

    @property
    def paging(self) -> Any: ...

    @property
    def older(self) -> int: ...

    adopting: bool

    def after_switch(self, draft: str) -> None: ...

    def step_session(self, delta: int) -> None: ...

    def goto_session(self, n: int) -> None: ...

    async def stash_draft(self) -> None: ...


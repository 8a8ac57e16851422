"""What the open chat's controllers are given: the window's parts and its calls.

The window makes the chat controller (``parley.gui.chat.controller.ChatController``)
with these two and its :class:`~parley.core.workspace.Workspace` (the core: the store,
then the providers and the run loop, its stages telling what is open yet); the
controller hands each of its helpers the parts it uses, as typed constructor
arguments. No controller holds the window.

* :class:`ChatParts`: the widgets the chat fills and the window's task set.
* :class:`WindowCalls`: what the chat asks of the window (pages, problems, start-up).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from PySide6.QtWidgets import QVBoxLayout, QWidget

    from parley.core.compaction.cache_timer import CacheTimer
    from parley.core.errors import ParleyError
    from parley.core.tasks import TaskSet
    from parley.gui.commands.keymap import Keymap
    from parley.gui.commands.registry import Commands
    from parley.gui.composer.widget import Composer, ComposerBar
    from parley.gui.database.elsewhere import Elsewhere
    from parley.gui.header.chat_heading import ChatHeading
    from parley.gui.header.context_meter import ContextMeter
    from parley.gui.header.greeting import Greeting
    from parley.gui.header.model_picker import ModelPicker
    from parley.gui.notices.status_line import OneLineStatusBar
    from parley.gui.notices.undo import UndoManager
    from parley.gui.sidebar import Sidebar
    from parley.gui.startup.setup_panel import SetupPanel
    from parley.gui.transcript import TranscriptView


@dataclass(frozen=True)
class ChatParts:
    """The window's widgets the open chat fills, and its background tasks.

    Attributes:
        parent: the main window as a widget: dialogs, menus and timers are its children.
        status: the window's one-line status bar.
        tasks: the window's background tasks (a user error is shown by the window).
        chat_page: the page holding the chat (files dropped on it are attached).
        chat_layout: the chat page's column (transcript, notices, composer).
        heading: the chat's title in the header; greeting: the new chat's greeting.
        commands: the window's commands (the message box's keys run them).
    """

    parent: QWidget
    status: OneLineStatusBar
    tasks: TaskSet
    keymap: Keymap
    sidebar: Sidebar
    transcript: TranscriptView
    composer: Composer
    composer_bar: ComposerBar
    model_picker: ModelPicker
    context_meter: ContextMeter
    undo: UndoManager
    chat_page: QWidget
    chat_layout: QVBoxLayout
    heading: ChatHeading
    greeting: Greeting
    commands: Commands


@dataclass(frozen=True)
class WindowCalls:
    """What the open chat asks of the window.

    Attributes:
        set_title: sets the window's title.
        show_chat: shows the chat page (after set-up, a recovery page…).
        show_setup: shows the set-up page (no provider is set up).
        setup_panel: the set-up page's panel (None until it was shown).
        focus_composer: puts the focus in the message box unless the person moved it.
        show_problem: tells a user error in the window.
        starting: True while the chats are still being opened (keys are queued for them).
        queue_early_message: keeps the message typed before the chats showed (Enter).
        new_chat_asked: True when Ctrl+N was pressed before the first chat showed.
        ready: True once start-up finished (the providers loaded).
        cache_timer: the prompt cache timer (None before the run loop, or off).
        elsewhere: other Parleys' changes to the chats (on PostgreSQL; None before, or
            on sessions.db): held during a run, shown when it ends.
    """

    set_title: Callable[[str], None]
    show_chat: Callable[[], None]
    show_setup: Callable[[], None]
    setup_panel: Callable[[], SetupPanel | None]
    focus_composer: Callable[[], None]
    show_problem: Callable[[ParleyError], None]
    starting: Callable[[], bool]
    queue_early_message: Callable[[], bool]
    new_chat_asked: Callable[[], bool]
    ready: Callable[[], bool]
    cache_timer: Callable[[], CacheTimer | None]
    elsewhere: Callable[[], Elsewhere | None]


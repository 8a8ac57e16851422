"""What the main window's parts share: its widgets and its state, declared once.

``MainWindow`` is made of mixins (``parley.gui.window.*``,
``parley.gui.startup.phases``); each derives from :class:`WindowBase`, which declares
the attributes they read and write and the methods one part calls in another. At run
time :class:`WindowBase` is a plain class with these annotations only; for the type
checker it is a ``QMainWindow`` with the window's commands (``WindowCommands``), so a
part can use the window's own Qt methods and commands.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import asyncio

    from PySide6.QtWidgets import (
        QHBoxLayout,
        QLabel,
        QMainWindow,
        QSplitter,
        QStackedWidget,
        QToolButton,
        QVBoxLayout,
        QWidget,
    )

    from parley.core.errors import ParleyError
    from parley.core.tasks import TaskSet
    from parley.gui.chat.controller import ChatController
    from parley.gui.commands.registry import Commands
    from parley.gui.commands.window_commands import WindowCommands
    from parley.gui.composer.early_input import EarlyInput
    from parley.gui.composer.widget import Composer, ComposerBar
    from parley.gui.dialogs.search import SearchPopup
    from parley.gui.header.context_meter import ContextMeter
    from parley.gui.header.model_picker import ModelPicker
    from parley.gui.notices.undo import Toast, UndoManager
    from parley.gui.sidebar import Sidebar
    from parley.gui.startup.setup_panel import SetupPanel
    from parley.gui.startup.typed_at_start import TypedAtStart

    class _Base(QMainWindow, WindowCommands):
        """The window's Qt methods and its commands (``WindowCommands``)."""
else:
    _Base = object


class WindowBase(_Base):
    """The attributes of ``MainWindow`` its parts use (set in ``MainWindow.__init__``,
    the layout's ``_build`` and ``finish_build``, and start-up)."""

    # Set in MainWindow.__init__
    home: Path | None
    probe: Callable[[str], None]
    env: dict[str, str]
    store: Any
    hub: Any
    runner: Any
    mcp: Any  # parley.core.mcp.McpTools, once the providers are loaded
    chat: ChatController | None
    cache_timer: Any
    search_popup: SearchPopup | None
    setup_panel: SetupPanel | None
    recovery_page: Any
    backups: Any  # parley.core.recovery.backup_schedule.BackupScheduler
    elsewhere: Any  # parley.gui.database.elsewhere.Elsewhere, on PostgreSQL
    successor: Any
    pending_notice: str | None
    upgrade_notice: str | None
    previous_run: Any
    ready: bool
    qactions: dict[str, Any]
    keymap: Any
    commands: Commands
    tasks: TaskSet
    early: EarlyInput | None
    typed: TypedAtStart | None
    _damage_told: bool
    _moved_told: bool
    _recovering: bool
    _closing: bool
    _focus_before_close: QWidget | None  # the focus when a quit began (back there if kept open)
    _closed: bool
    _started: bool
    _painted: bool
    _store_opened: asyncio.Event | None
    _to_build: list[Callable[[], None]]

    # Made by the layout (before the first paint)
    stack: QStackedWidget
    loading_page: QLabel
    chat_page: QWidget
    header: QWidget
    sidebar_button: QToolButton
    splitter: QSplitter
    composer_bar: ComposerBar
    composer: Composer
    transcript: Any  # the TranscriptView, once installed (None before)
    _sidebar_frame: QWidget
    _head: QHBoxLayout
    _transcript_slot: QLabel
    _chat_layout: QVBoxLayout

    # Made right after the first paint (finish_build) or by start-up
    sidebar: Sidebar
    model_picker: ModelPicker
    context_meter: ContextMeter
    toast: Toast
    undo: UndoManager
    chat_heading: Any
    greeting: Any
    view_prefs: Any
    compaction_marks: Any

    if TYPE_CHECKING:  # one part calls these in another
        def finish_build(self) -> None: ...
        def show_problem(self, error: ParleyError) -> None: ...
        def show_setup(self) -> None: ...
        def show_chat(self) -> None: ...
        def focus_composer_unless_moved(self) -> None: ...
        def _store_damaged(self) -> None: ...
        async def _damaged_at_start(self, path: Path) -> None: ...
        async def _save_geometry(self) -> None: ...
        async def _restore_geometry(self) -> None: ...
        def _install_transcript(self) -> None: ...
        def _sources_changed(self) -> None: ...

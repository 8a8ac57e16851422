"""The main window's widgets: sidebar | (header, transcript, composer), and their sizes.

What the first paint shows is made in ``MainWindow.__init__`` (:meth:`WindowLayout._build`:
the chat page with its message box, the header's sidebar button, the sidebar's empty
frame); the rest right after it, a part at a time (:meth:`WindowLayout.finish_build`:
the sidebar, the header's tools and the toast, the commands and their keys), or at once
when a command key is pressed before (:class:`BuildOnCommandKey`). The transcript is
put in its place once the chats are open. The window's size and the sidebar's width
are kept in the store.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QByteArray, QEvent, QObject, QPoint, QRect, Qt
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QSplitter,
    QStackedWidget,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from parley.core.gc_pause import pausing_gc
from parley.core.machine import get_own_state, set_own_state
from parley.gui.composer.widget import ComposerBar
from parley.gui.look import appearance
from parley.gui.window.base import WindowBase

if TYPE_CHECKING:
    from parley.gui.commands.actions import Action

#: App-state keys of the window's place and size and of its panes (the sidebar's width,
#: 0 when hidden), this machine's own (``parley.core.machine``): a wide window on one
#: computer does not follow to another sharing the database.
GEOMETRY_KEY = "window.geometry"
SPLITTER_KEY = "window.splitter"
CONTENT_WIDTH = 800  # px: the composer's maximum width, like the transcript column


class BuildOnCommandKey(QObject):
    """Until the window is whole: a command key (Ctrl/Alt/Meta + key, F1–F35) pressed
    in the message box makes the rest of it first, so its shortcut runs
    (``MainWindow.finish_build``; Qt looks the key up after this event)."""

    def __init__(self, window: WindowLayout) -> None:
        super().__init__(window)
        self.window_ = window
        window.composer.installEventFilter(self)

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:  # noqa: N802
        if event.type() == QEvent.Type.ShortcutOverride and isinstance(event, QKeyEvent):
            command = Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.AltModifier \
                | Qt.KeyboardModifier.MetaModifier
            if event.modifiers() & command or Qt.Key.Key_F1 <= event.key() <= Qt.Key.Key_F35:
                obj.removeEventFilter(self)
                self.window_.finish_build()
        return False


class WindowLayout(WindowBase):
    """The window's widgets (mixed into ``MainWindow``)."""

    def _build(self) -> None:
        """What the first paint shows: the chat page with its message box (focused), the
        header's sidebar button, and the sidebar's empty frame (``finish_build`` fills it)."""
        self._sidebar_frame = QWidget(self)
        self._sidebar_frame.setObjectName("Sidebar")  # styled as the sidebar it stands for
        self._sidebar_frame.setAttribute(Qt.WidgetAttribute.WA_StyledBackground, True)
        self._sidebar_frame.setMinimumWidth(200)
        self.stack = QStackedWidget(self)
        self.stack.setObjectName("MainStack")

        self.loading_page = QLabel("Opening your chats…")
        self.loading_page.setObjectName("LoadingLabel")
        self.loading_page.setAlignment(Qt.AlignmentFlag.AlignCenter)
        # Wrapped from the start: a long reason (a database not found…) set before the
        # wrap was one line wider than the page, cut on both sides.
        self.loading_page.setWordWrap(True)
        self.loading_page.setContentsMargins(24, 0, 24, 0)
        self.stack.addWidget(self.loading_page)

        self.chat_page = QWidget()
        self.chat_page.setObjectName("ChatPage")
        self.chat_page.setAttribute(Qt.WidgetAttribute.WA_StyledBackground, True)
        self.header = QWidget(self.chat_page)
        self.header.setObjectName("HeaderBar")
        self.header.setAttribute(Qt.WidgetAttribute.WA_StyledBackground, True)
        self.sidebar_button = QToolButton(self.header)
        self.sidebar_button.setObjectName("HeaderButton")
        self.sidebar_button.setAccessibleName("Show or hide the sidebar")
        self.sidebar_button.setToolTip("Show or hide the sidebar (Ctrl+B)")
        self.sidebar_button.setIcon(appearance.icon("sidebar", appearance.current().muted, 18))
        head = QHBoxLayout(self.header)
        head.setContentsMargins(10, 6, 14, 6)
        head.setSpacing(4)
        head.addWidget(self.sidebar_button)
        head.addStretch(1)  # the model picker goes before it, the context meter after
        self._head = head

        # The transcript (markdown, syntax highlighting) is imported and built after
        # the first paint (see start); this placeholder holds its place until then.
        self._transcript_slot = QLabel("Opening your chats…", self.chat_page)
        self._transcript_slot.setObjectName("LoadingLabel")
        self._transcript_slot.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self._transcript_slot.setWordWrap(True)
        self.composer_bar = ComposerBar(self.chat_page)
        self.composer_bar.setMaximumWidth(CONTENT_WIDTH)
        self.composer = self.composer_bar.editor
        composer_area = QWidget(self.chat_page)
        composer_area.setObjectName("ComposerArea")
        row = QHBoxLayout(composer_area)
        row.setContentsMargins(24, 4, 24, 12)
        row.addStretch(1)
        row.addWidget(self.composer_bar, 100)
        row.addStretch(1)

        col = QVBoxLayout(self.chat_page)
        col.setContentsMargins(0, 0, 0, 0)
        col.setSpacing(0)
        col.addWidget(self.header)
        col.addWidget(self._transcript_slot, 1)
        col.addWidget(composer_area)
        self._chat_layout = col
        self.stack.addWidget(self.chat_page)

        self.splitter = QSplitter(Qt.Orientation.Horizontal, self)
        self.splitter.setObjectName("MainSplitter")
        self.splitter.setHandleWidth(1)
        self.splitter.setChildrenCollapsible(False)
        self.splitter.addWidget(self._sidebar_frame)
        self.splitter.addWidget(self.stack)
        self.splitter.setStretchFactor(1, 1)
        self.splitter.setSizes([260, 920])
        self.setCentralWidget(self.splitter)
        # Made now and kept: a status bar that appeared with its first message would
        # shift the window's layout each time.
        from parley.gui.notices.status_line import OneLineStatusBar

        self.setStatusBar(OneLineStatusBar(self))  # one line; a long refusal behind Details
        self.statusBar().setSizeGripEnabled(False)
        self.stack.setCurrentWidget(self.chat_page)  # typing works before the chats show

    def finish_build(self) -> None:
        """Make what the first paint did not need (the sidebar, the model picker and
        the context meter, the toast, the commands and their keys); safe to call again.

        ``start`` makes them one at a time (each ~5-15 ms), letting the window
        take keys in between; a command key pressed before makes them at once.
        """
        while self._to_build:
            self._to_build.pop(0)()

    @property
    def built(self) -> bool:
        """True once the whole window is made (:meth:`finish_build`)."""
        return not self._to_build

    def _build_sidebar(self) -> None:
        from parley.gui.sidebar import Sidebar

        self.sidebar = Sidebar(self)
        self.sidebar.setMinimumWidth(200)
        commands = self.window_commands
        self.sidebar.search_requested.connect(commands.open_search)
        self.sidebar.export_requested.connect(commands.export_session)
        self.sidebar.import_requested.connect(commands.import_conversation)
        frame = self._sidebar_frame
        shown = not frame.isHidden()
        self.splitter.replaceWidget(0, self.sidebar)  # keeps the frame's width
        self.sidebar.setVisible(shown)
        frame.deleteLater()
        self.sidebar_button.clicked.connect(commands.toggle_sidebar)

    def _build_header_tools(self) -> None:
        from parley.gui.header.chat_heading import ChatHeading
        from parley.gui.header.context_meter import ContextMeter
        from parley.gui.header.model_picker import ModelPicker
        from parley.gui.notices.undo import Toast, UndoManager

        self.model_picker = ModelPicker(self.header)
        self.context_meter = ContextMeter(self.header)
        self.chat_heading = ChatHeading(self.header)  # the chat's title (renamed in place)
        self._head.insertWidget(1, self.model_picker)
        self._head.addWidget(self.chat_heading)
        self._head.addStretch(1)
        self._head.addWidget(self.context_meter)
        self.toast = Toast(self, self._composer_rect, follow=self.composer_bar)
        self.undo = UndoManager(self.toast, self.tasks)

    def _build_actions(self) -> None:
        from parley.gui.commands import actions

        self.window_commands.register(self.commands)
        actions.install(self)

    def _composer_action(self, action: Action) -> Any:
        """A key of the message box (Enter, Esc, Up …): its command, once the window is
        whole (a key pressed before it is made makes it at once)."""
        self.finish_build()
        return self.commands.run(action.id)

    def _composer_rect(self) -> QRect | None:
        """Where the composer is (window coordinates) when the chat page shows."""
        if self.stack.currentWidget() is not self.chat_page or not self.composer_bar.isVisible():
            return None
        bar = self.composer_bar
        return QRect(bar.mapTo(self, QPoint(0, 0)), bar.size())

    def _install_transcript(self) -> None:
        from parley.gui.transcript import TranscriptView

        view = TranscriptView(self.chat_page)
        view.setAccessibleName("Conversation")
        self._chat_layout.replaceWidget(self._transcript_slot, view)
        self.toast.covers.connect(view.keep_clear_of)  # the last message stays above it
        if self.toast.isVisible():  # shown before the chats (the restart notice)
            view.keep_clear_of(self.toast.geometry())
        self._transcript_slot.deleteLater()
        self.transcript = view
        from parley.gui.header.greeting import Greeting

        self.greeting = Greeting(view.list_view, view.model, self._first_key)
        view.register_commands(self.commands)

    def _first_key(self, action_id: str) -> str:
        """The first key of an action as this platform writes it ("" for none)."""
        first = self.keymap.shown(action_id).split(", ")[0]
        return first.replace("Return", "Enter")  # the key's name on most keyboards

    async def _restore_geometry(self) -> None:
        assert self.store is not None
        geometry = await get_own_state(self.store, GEOMETRY_KEY)
        if geometry:
            self.restoreGeometry(QByteArray.fromBase64(geometry.encode()))
        sizes = await get_own_state(self.store, SPLITTER_KEY)
        if isinstance(sizes, list) and len(sizes) == 2:
            self.splitter.setSizes([int(s) for s in sizes])
            self.sidebar.setVisible(int(sizes[0]) > 0)

    async def _save_geometry(self) -> None:
        assert self.store is not None
        geometry = bytes(self.saveGeometry().toBase64().data()).decode()
        await set_own_state(self.store, GEOMETRY_KEY, geometry)
        await set_own_state(self.store, SPLITTER_KEY, self.splitter.sizes())


@pausing_gc
def import_window_parts() -> None:
    """Import what :meth:`MainWindow.finish_build` makes (the sidebar, the header's
    tools, the toast, the commands); run in a worker thread: ~30 ms on an idle core
    that would otherwise hold the window still just after its first paint."""
    import parley.gui.commands.actions  # noqa: F401
    import parley.gui.commands.keymap  # noqa: F401
    import parley.gui.header.context_meter  # noqa: F401
    import parley.gui.header.model_picker  # noqa: F401
    import parley.gui.notices.undo  # noqa: F401
    import parley.gui.sidebar  # noqa: F401

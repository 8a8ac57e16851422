"""The main window's widgets: sidebar | (header, transcript, composer), and their sizes.

:class:`WindowLayout` is a part of ``MainWindow`` (``window.widgets``). What the first
paint shows is made in ``MainWindow.__init__`` (:meth:`WindowLayout.build`:
the chat page with its message box, the header's sidebar button, the sidebar's empty
frame, the menu bar's menus without their actions); the rest (:attr:`WindowLayout.rest`:
the sidebar, the header's tools and the toast, the commands and their keys, the menus'
actions) when start-up says (``Startup.finish_build``: right
after the first paint, a part at a time, or at once when a command key is pressed
before). The transcript is put in its place once the chats are open. The window's size
and the sidebar's width are kept in the data folder's ``window.ini``, read before the
first paint (``parley.gui.window.place``), and in the store.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QByteArray, QEvent, QObject, QPoint, QRect, Qt
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

from parley.core.app_state import WINDOW_GEOMETRY, WINDOW_SPLITTER
from parley.core.gc_pause import pausing_gc
from parley.gui.composer.widget import ComposerBar
from parley.gui.look import appearance
from parley.gui.window.narrow import NarrowSidebar
from parley.gui.window.place import place_file, read_place, write_place
from parley.gui.window.state import WindowState

if TYPE_CHECKING:
    from parley.gui.commands.actions import Action
    from parley.gui.commands.window_commands import WindowCommands

CONTENT_WIDTH = 800  # px: the composer's maximum width, like the transcript column


#: Room (px) the chat's title keeps in the header (beside the space's name and the
#: documents' line) before the context meter drops its words ("cache warm until …"); the
#: meter's figure goes only when the title would have under :data:`FIGURE_TITLE_PX`;
#: the model's name is cut last (trial 16: "Cl….5", and no title).
TITLE_ROOM_PX = 110
FIGURE_TITLE_PX = 60


#: The chat page keeps at least this much (px) of a narrow window while the sidebar can
#: give room (down to :data:`SIDEBAR_MIN_PX`): a 520 px window shows the chat's title.
CHAT_ROOM_PX = 360
SIDEBAR_MIN_PX = 200


def keep_chat_room(splitter: QSplitter) -> None:
    """Narrow the sidebar (not under :data:`SIDEBAR_MIN_PX`) when the chat page is under
    :data:`CHAT_ROOM_PX` (the window's ``resizeEvent``): the splitter otherwise takes all
    of a narrowing from the chat page."""
    sizes = splitter.sizes()
    if len(sizes) != 2 or sizes[0] == 0:  # the sidebar hidden
        return
    side, chat = sizes
    give = min(CHAT_ROOM_PX - chat, side - SIDEBAR_MIN_PX)
    if give > 0:
        splitter.setSizes([side - give, chat + give])


class HeaderFit(QObject):
    """Gives the context meter the header's room left by the others (:data:`TITLE_ROOM_PX`
    kept for the title) each time the header is resized or laid out again."""

    def __init__(self, header: QWidget, row: QHBoxLayout, meter: Any, heading: Any) -> None:
        super().__init__(header)
        self.header, self.row, self.meter, self.heading = header, row, meter, heading
        header.installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802
        if watched is self.header and event.type() in (QEvent.Type.Resize,
                                                       QEvent.Type.LayoutRequest):
            self.fit()
        return False

    def fit(self) -> None:
        """Tell the meter how much room it has (px)."""
        row = self.row
        m = row.contentsMargins()
        used = m.left() + m.right()
        shown = 0
        for i in range(row.count()):
            item = row.itemAt(i)
            w = item.widget() if item is not None else None
            if w is None or w.isHidden():
                continue
            shown += 1
            if w is not self.meter and w is not self.heading:
                used += w.sizeHint().width()
        used += row.spacing() * max(0, shown - 1)
        left = self.header.width() - used
        self.meter.fit_room(left - TITLE_ROOM_PX - self.heading.side_width(),
                            left - FIGURE_TITLE_PX)


class WindowLayout:
    """The window's widgets, made into its state: a part of ``MainWindow``.

    Args:
        state: the window's state, where the widgets are kept (``window.composer`` …).
        window: the window they are made in (the sidebar, the status bar, the toast, the
            menus and keys of ``parley.gui.commands.actions``).
        commands: the window's commands (the sidebar's and header's buttons run them;
            registered as the actions' handlers once the window is whole).

    Attributes:
        rest: what the first paint does not need, to make after it, in order.
    """

    def __init__(self, state: WindowState, window: QMainWindow,
                 commands: WindowCommands) -> None:
        self.state = state
        self.window = window
        self.commands = commands
        self._registered = False
        #: The window's place was restored from ``window.ini`` before the first paint.
        self.placed = False
        self.rest: list[Callable[[], None]] = [
            self._build_sidebar, self._build_header_tools, self._build_actions]

    def build(self) -> None:
        """What the first paint shows: the chat page with its message box (focused), the
        header's sidebar button, the sidebar's empty frame and the menu bar's menus
        (:attr:`rest` fills them)."""
        st, window = self.state, self.window
        st._sidebar_frame = QWidget(window)
        st._sidebar_frame.setObjectName("Sidebar")  # styled as the sidebar it stands for
        st._sidebar_frame.setAttribute(Qt.WidgetAttribute.WA_StyledBackground, True)
        st._sidebar_frame.setMinimumWidth(SIDEBAR_MIN_PX)
        st.stack = QStackedWidget(window)
        st.stack.setObjectName("MainStack")

        st.loading_page = QLabel("Opening your chats…")
        st.loading_page.setObjectName("LoadingLabel")
        st.loading_page.setAlignment(Qt.AlignmentFlag.AlignCenter)
        # Wrapped from the start: a long reason (a database not found…) set before the
        # wrap was one line wider than the page, cut on both sides.
        st.loading_page.setWordWrap(True)
        st.loading_page.setContentsMargins(24, 0, 24, 0)
        st.stack.addWidget(st.loading_page)

        st.chat_page = QWidget()
        st.chat_page.setObjectName("ChatPage")
        st.chat_page.setAttribute(Qt.WidgetAttribute.WA_StyledBackground, True)
        st.header = QWidget(st.chat_page)
        st.header.setObjectName("HeaderBar")
        st.header.setAttribute(Qt.WidgetAttribute.WA_StyledBackground, True)
        st.sidebar_button = QToolButton(st.header)
        st.sidebar_button.setObjectName("HeaderButton")
        st.sidebar_button.setAccessibleName("Show or hide the sidebar")
        st.sidebar_button.setToolTip("Show or hide the sidebar (Ctrl+B)")
        st.sidebar_button.setIcon(appearance.icon("sidebar", appearance.current().muted, 18))
        head = QHBoxLayout(st.header)
        head.setContentsMargins(10, 6, 14, 6)
        head.setSpacing(4)
        head.addWidget(st.sidebar_button)
        # The model picker goes after it, then the heading (taking the room left, its
        # text centred in it), then the context meter.
        st._head = head

        # The transcript (markdown, syntax highlighting) is imported and built after
        # the first paint (see start); this placeholder holds its place until then.
        st._transcript_slot = QLabel("Opening your chats…", st.chat_page)
        st._transcript_slot.setObjectName("LoadingLabel")
        st._transcript_slot.setAlignment(Qt.AlignmentFlag.AlignCenter)
        st._transcript_slot.setWordWrap(True)
        st.composer_bar = ComposerBar(st.chat_page)
        st.composer_bar.setMaximumWidth(CONTENT_WIDTH)
        st.composer = st.composer_bar.editor
        composer_area = QWidget(st.chat_page)
        composer_area.setObjectName("ComposerArea")
        row = QHBoxLayout(composer_area)
        row.setContentsMargins(24, 4, 24, 12)
        row.addStretch(1)
        row.addWidget(st.composer_bar, 100)
        row.addStretch(1)

        col = QVBoxLayout(st.chat_page)
        col.setContentsMargins(0, 0, 0, 0)
        col.setSpacing(0)
        col.addWidget(st.header)
        col.addWidget(st._transcript_slot, 1)
        col.addWidget(composer_area)
        st._chat_layout = col
        st.stack.addWidget(st.chat_page)

        st.splitter = QSplitter(Qt.Orientation.Horizontal, window)
        st.splitter.setObjectName("MainSplitter")
        st.splitter.setHandleWidth(1)
        st.splitter.setChildrenCollapsible(False)
        st.splitter.addWidget(st._sidebar_frame)
        st.splitter.addWidget(st.stack)
        st.splitter.setStretchFactor(1, 1)
        st.splitter.setSizes([260, 920])
        # A window too narrow for both: the sidebar steps aside (the window's resizeEvent).
        st.narrow_sidebar = NarrowSidebar(st.splitter, SIDEBAR_MIN_PX + CHAT_ROOM_PX)
        window.setCentralWidget(st.splitter)
        # Made now and kept: a status bar that appeared with its first message would
        # shift the window's layout each time.
        from parley.gui.notices.status_line import OneLineStatusBar

        window.setStatusBar(OneLineStatusBar(window))  # one line; a long refusal behind Details
        window.statusBar().setSizeGripEnabled(False)
        # The menu bar at its height from the first paint (trial 20c: added after it, it
        # pushed the page ~22 px down): its menus' titles now, their actions with the rest
        # (_build_actions); a menu opened before then makes the rest at once.
        from parley.gui.commands.menu_bar import menu_bar_menus

        menu_bar_menus(window, fill=self._fill_menus)
        st.stack.setCurrentWidget(st.chat_page)  # typing works before the chats show

    def _build_sidebar(self) -> None:
        from parley.gui.sidebar import Sidebar

        st, commands = self.state, self.commands
        st.sidebar = sidebar = Sidebar(self.window)
        sidebar.setMinimumWidth(SIDEBAR_MIN_PX)
        sidebar.search_requested.connect(commands.open_search)
        sidebar.export_requested.connect(commands.export_session)
        sidebar.import_requested.connect(commands.import_conversation)
        frame = st._sidebar_frame
        shown = not frame.isHidden()
        st.splitter.replaceWidget(0, sidebar)  # keeps the frame's width
        sidebar.setVisible(shown)
        frame.deleteLater()
        st.sidebar_button.clicked.connect(commands.toggle_sidebar)

    def _build_header_tools(self) -> None:
        from parley.gui.header.chat_heading import ChatHeading
        from parley.gui.header.context_meter import ContextMeter
        from parley.gui.header.model_picker import ModelPicker
        from parley.gui.notices.undo import Toast, UndoManager

        st = self.state
        st.model_picker = ModelPicker(st.header)
        st.context_meter = ContextMeter(st.header)
        st.chat_heading = ChatHeading(st.header)  # the chat's title (renamed in place)
        st._head.insertWidget(1, st.model_picker)
        # The heading takes the room left (its hint is ignored): a long title is cut
        # before the model's name is (ChatHeading.__init__).
        st._head.addWidget(st.chat_heading, 1)
        st._head.addWidget(st.context_meter)
        st._header_fit = HeaderFit(st.header, st._head, st.context_meter, st.chat_heading)
        st.toast = Toast(self.window, self._composer_rect, follow=st.composer_bar)
        st.undo = UndoManager(st.toast, st.tasks)

    def _fill_menus(self) -> None:
        """A menu is about to show: its actions are added first if not yet made."""
        self.state.startup.finish_build()

    def _build_actions(self) -> None:
        from parley.gui.commands.install import install

        self._register_commands()
        install(self.state, self.window)

    def _register_commands(self) -> None:
        """Register the window's handlers of the declared actions (once)."""
        if not self._registered:
            self._registered = True
            self.commands.register(self.state.commands)

    def composer_action(self, action: Action) -> Any:
        """A key of the message box (Enter, Esc, Up …): its command.

        Before the chats are shown (``startup.queueing``) the window's handler runs at
        once, the rest of the window still made after the first paint: before the
        chats show these commands only queue (Enter keeps the message, Esc takes it
        back). Making the rest at once for them (imports included) held the GUI thread
        70-110 ms when Enter was pressed just after the first paint (issue 33).
        Afterwards a key pressed before the window is whole makes it first."""
        startup = self.state.startup
        if startup.queueing and not startup.built:
            self._register_commands()
        else:
            startup.finish_build()
        return self.state.commands.run(action.id)

    def _composer_rect(self) -> QRect | None:
        """Where the toast sits above (window coordinates) when the chat page shows: the
        composer's column, from the top of the bars shown above it (the queue, a save
        or run bar) down to the composer's bottom, so a notice never covers them."""
        st = self.state
        if st.stack.currentWidget() is not st.chat_page or not st.composer_bar.isVisible():
            return None
        bar = st.composer_bar
        rect = QRect(bar.mapTo(self.window, QPoint(0, 0)), bar.size())
        col = st._chat_layout
        middle = st.transcript if st.transcript is not None else st._transcript_slot
        for i in range(col.indexOf(middle) + 1, col.count()):
            item = col.itemAt(i)
            widget = item.widget() if item is not None else None
            if widget is not None and widget.isVisible():
                rect.setTop(min(rect.top(), widget.mapTo(self.window, QPoint(0, 0)).y()))
        return rect

    def install_transcript(self) -> None:
        """Put the transcript in its place (once the chats are open), with the greeting
        of an empty chat; its message commands registered."""
        from parley.gui.header.greeting import Greeting
        from parley.gui.transcript import TranscriptView

        st = self.state
        view = TranscriptView(st.chat_page)
        view.setAccessibleName("Conversation")
        st._chat_layout.replaceWidget(st._transcript_slot, view)
        st.toast.covers.connect(view.keep_clear_of)  # the last message stays above it
        st.toast.follow(view)  # a bar shown above the composer shrinks it: the toast moves up
        if st.toast.isVisible():  # shown before the chats (the restart notice)
            view.keep_clear_of(st.toast.geometry())
        st._transcript_slot.deleteLater()
        st.transcript = view
        st.greeting = Greeting(view.list_view, view.model, self._first_key)
        view.register_commands(st.commands)

    def _first_key(self, action_id: str) -> str:
        """The first key of an action as this platform writes it ("" for none)."""
        first = self.state.keymap.shown(action_id).split(", ")[0]
        return first.replace("Return", "Enter")  # the key's name on most keyboards

    def restore_place(self) -> None:
        """Before the first paint: the window's place and size and the sidebar's width as
        the data folder's ``window.ini`` keeps them (``parley.gui.window.place``); nothing
        kept there (a first start, the first after an upgrade, a damaged file): the
        default size, and the store's are restored once it is open
        (:meth:`restore_geometry`)."""
        kept = read_place(place_file(self.state.home))
        if kept.geometry is not None and self.window.restoreGeometry(kept.geometry):
            self.placed = True
        if kept.sizes is not None:
            self._set_sizes(kept.sizes, self.state._sidebar_frame)

    async def restore_geometry(self) -> None:
        """The window's place and size and the sidebar's width, as the store keeps them,
        unless ``window.ini`` gave them before the first paint (:meth:`restore_place`:
        written with them, and the person may have moved the window since)."""
        st = self.state
        assert st.store is not None
        if self.placed:
            return
        geometry = await WINDOW_GEOMETRY.get(st.store)
        if geometry:
            self.window.restoreGeometry(QByteArray.fromBase64(geometry.encode()))
        sizes = await WINDOW_SPLITTER.get(st.store)
        if isinstance(sizes, list) and len(sizes) == 2:
            self._set_sizes([int(s) for s in sizes], st.sidebar)

    def _set_sizes(self, sizes: list[int], sidebar: QWidget) -> None:
        """The splitter's sizes; a width of 0 hides ``sidebar`` (the sidebar, or its frame
        before the first paint), for room when the window is narrow."""
        st = self.state
        st.splitter.setSizes(sizes)
        sidebar.setVisible(sizes[0] > 0)
        if sizes[0] == 0 and self.window.width() < st.narrow_sidebar.below_px:
            st.narrow_sidebar.hid_itself = True  # hidden for room: back when widened

    def save_place(self) -> bool:
        """Keep the window's place and size and the sidebar's width in ``window.ini``
        (read at the next start's first paint); False when it could not be written."""
        return write_place(place_file(self.state.home), self.window.saveGeometry(),
                           self.state.splitter.sizes())

    async def save_geometry(self) -> None:
        """Keep the window's place and size and the sidebar's width in ``window.ini``
        (:meth:`save_place`, never raising) and in the store (raises the store's errors:
        a moved or damaged sessions.db)."""
        st = self.state
        assert st.store is not None
        self.save_place()
        geometry = bytes(self.window.saveGeometry().toBase64().data()).decode()
        await WINDOW_GEOMETRY.set(st.store, geometry)
        await WINDOW_SPLITTER.set(st.store, st.splitter.sizes())


@pausing_gc
def import_window_parts() -> None:
    """Import what :attr:`WindowLayout.rest` makes (the sidebar, the header's
    tools, the toast, the commands); run in a worker thread: ~30 ms on an idle core
    that would otherwise hold the window still just after its first paint."""
    import parley.gui.commands.actions  # noqa: F401
    import parley.gui.commands.keymap  # noqa: F401
    import parley.gui.header.context_meter  # noqa: F401
    import parley.gui.header.model_picker  # noqa: F401
    import parley.gui.notices.undo  # noqa: F401
    import parley.gui.sidebar  # noqa: F401

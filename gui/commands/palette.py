"""The command palette (Ctrl+K, Ctrl+Shift+P): run any command, open a chat, find a message.

One box, three kinds of results, best first:

* **commands** — every action of ``parley.gui.commands.actions`` the window can run now,
  with its key;
* **chats** — fuzzy over the titles of the chats in the sidebar (and the
  titles the full-text index finds);
* **messages** — the full-text search of every chat, once typing pauses: the one
  message search of every entry point (``parley.gui.commands.message_search``:
  asking, the results with their branch label, opening one).

With nothing typed it shows the recent chats, then every command. Up/Down
(or Tab) choose, Enter runs, Esc closes and gives the focus back. The
palette is an overlay inside the main window (no separate top-level
window), so the window's shortcuts keep working and screen readers stay in
the window.

What is listed and how typing matches it is in ``parley.gui.commands.palette_entries``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from PySide6.QtCore import (
    QAbstractListModel,
    QEvent,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    QRect,
    QSize,
    Qt,
)
from PySide6.QtGui import (
    QColor,
    QFont,
    QFontMetrics,
    QHideEvent,
    QKeyEvent,
    QPainter,
    QPainterPath,
)
from PySide6.QtWidgets import (
    QApplication,
    QFrame,
    QLabel,
    QLineEdit,
    QListView,
    QStyle,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QVBoxLayout,
    QWidget,
)

from parley.core.chat.title_text import FORK_MARK
from parley.gui.commands.actions import CommandsWindow, run
from parley.gui.commands.keymap import keymap_for
from parley.gui.commands.message_search import (
    Answer,
    MessageSearch,
    OpenWindow,
    SearchWindow,
    model_names,
    spawn_open,
    unmarked,
    window_search,
)
from parley.gui.commands.palette_entries import (
    MAX_MESSAGES,
    Entry,
    SidebarWindow,
    action_entries,
    hit_entries,
    segments,
    session_entries,
    sidebar_sessions,
)
from parley.gui.look import appearance

ROW_H = 36
VISIBLE_ROWS = 9
WIDTH = 620
ENTRY = Qt.ItemDataRole.UserRole + 1
Index = QModelIndex | QPersistentModelIndex


# -- model and painting -----------------------------------------------------------------
class PaletteModel(QAbstractListModel):
    """The palette's rows (``Entry`` objects in role ``ENTRY``)."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.entries: list[Entry] = []

    def set_entries(self, entries: Sequence[Entry]) -> None:
        self.beginResetModel()
        self.entries = list(entries)
        self.endResetModel()

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: N802, B008
        return 0 if parent.isValid() else len(self.entries)

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        entry = self.entries[index.row()]
        if role == Qt.ItemDataRole.DisplayRole:
            return unmarked(entry.label)
        if role == Qt.ItemDataRole.AccessibleTextRole:
            return unmarked(entry.spoken())
        if role == Qt.ItemDataRole.ToolTipRole:
            return unmarked(entry.label)
        if role == ENTRY:
            return entry
        return None


class _Delegate(QStyledItemDelegate):
    """A row: the label (matches in bold), and on the right the key or the place."""

    def sizeHint(self, option: QStyleOptionViewItem, index: Index) -> QSize:  # noqa: N802
        return QSize(option.rect.width(), ROW_H)

    def paint(self, p: QPainter, option: QStyleOptionViewItem, index: Index) -> None:
        entry: Entry = index.data(ENTRY)
        t = appearance.current()
        rect = option.rect.adjusted(6, 1, -6, -1)
        p.save()
        p.setRenderHint(QPainter.RenderHint.Antialiasing)
        if option.state & QStyle.StateFlag.State_Selected:
            path = QPainterPath()
            path.addRoundedRect(rect, 7, 7)
            p.fillPath(path, QColor(t.selected))
        inner = rect.adjusted(12, 0, -12, 0)
        font = QFont(option.font)
        small = QFont(font)
        small.setPointSizeF(font.pointSizeF() * 0.88)
        detail_w = 0
        if entry.detail:
            fm = QFontMetrics(small)
            shown = fm.elidedText(entry.detail, Qt.TextElideMode.ElideMiddle, inner.width() // 3)
            detail_w = fm.horizontalAdvance(shown) + 16
            box = QRect(inner.right() - detail_w + 16, inner.top(), detail_w - 16, inner.height())
            if entry.kind == "action":
                cap = box.adjusted(-6, 8, 6, -8)
                path = QPainterPath()
                path.addRoundedRect(cap.toRectF().adjusted(0.5, 0.5, -0.5, -0.5), 4, 4)
                p.fillPath(path, QColor(t.surface))
                p.setPen(QColor(t.border))
                p.drawPath(path)
                detail_w += 8
            p.setFont(small)
            p.setPen(QColor(t.muted))
            p.drawText(box, Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter, shown)
        self._label(p, inner.adjusted(0, 0, -detail_w, 0), entry, font, t.text)
        p.restore()

    @staticmethod
    def _label(p: QPainter, rect: QRect, entry: Entry, font: QFont, color: str) -> None:
        """The entry's label, its marked runs bold, cut at its end where too long; a
        chat's fork mark, " (fork 2)", kept whole at the right (``names.elided_title``)."""
        bold = QFont(font)
        bold.setWeight(QFont.Weight.Bold)
        p.setPen(QColor(color))
        runs = segments(entry)

        def width(some: list[tuple[str, bool]]) -> int:
            return sum(QFontMetrics(bold if b else font).horizontalAdvance(t) for t, b in some)

        def draw(some: list[tuple[str, bool]], x: int, right: int) -> int:
            for text, strong in some:
                f = bold if strong else font
                fm = QFontMetrics(f)
                w = fm.horizontalAdvance(text)
                if x + w > right:
                    text = fm.elidedText(text, Qt.TextElideMode.ElideRight, max(0, right - x))
                    w = fm.horizontalAdvance(text)
                p.setFont(f)
                p.drawText(QRect(x, rect.top(), w + 1, rect.height()),
                           Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter, text)
                x += w
                if x >= right:
                    break
            return x

        mark = FORK_MARK.search("".join(t for t, _ in runs))
        if mark is not None and width(runs) > rect.width():
            head, tail, at = [], [], 0
            for text, strong in runs:
                cut = max(0, min(len(text), mark.start() - at))
                if text[:cut]:
                    head.append((text[:cut], strong))
                if text[cut:]:
                    tail.append((text[cut:], strong))
                at += len(text)
            room = rect.right() - width(tail)
            if room - rect.left() > rect.width() // 3:
                draw(tail, draw(head, rect.left(), room), rect.right())
                return
        draw(runs, rect.left(), rect.right())


# -- the widget -------------------------------------------------------------------------
class PaletteWindow(CommandsWindow, SidebarWindow, SearchWindow, OpenWindow, Protocol):
    """What the palette uses of the window's state (``WindowState``): the commands it
    lists and runs, the sidebar's chats, the search and the open chat, its tasks, and
    where the palette is kept once made."""

    command_palette: CommandPalette | None


class CommandPalette(QFrame):
    """The palette overlay of one main window.

    Args:
        state: the window's state (``commands``, ``sidebar``, ``store``, ``tasks``,
            ``chat``, ``transcript`` are used when present).
        window: the main window: the palette's parent, placed over it (its ``keymap``
            is the keys shown).
    """

    def __init__(self, state: PaletteWindow, window: QWidget) -> None:
        super().__init__(window)
        self.state = state
        self.window_ = window
        self.setObjectName("CommandPalette")
        self.setAccessibleName("Command palette")
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setAttribute(Qt.WidgetAttribute.WA_StyledBackground, True)
        self.input = QLineEdit(self)
        self.input.setObjectName("PaletteInput")
        self.input.setAccessibleName("Command or search")
        self.input.setPlaceholderText("Type a command, a chat's name, or words from a message…")
        self.input.setClearButtonEnabled(True)
        self.model = PaletteModel(self)
        self.list = QListView(self)
        self.list.setObjectName("PaletteList")
        self.list.setAccessibleName("Results")
        self.list.setModel(self.model)
        self.list.setItemDelegate(_Delegate(self.list))
        self.list.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.list.setUniformItemSizes(True)
        self.list.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.list.clicked.connect(lambda index: self.activate(index.row()))
        self.list.selectionModel().currentChanged.connect(lambda *_: self._describe())
        lay = QVBoxLayout(self)
        lay.setContentsMargins(6, 6, 6, 6)
        lay.setSpacing(4)
        self.note = QLabel(self)  # why nothing is listed: no match, or a query not searchable
        self.note.setObjectName("PaletteNote")
        self.note.setAccessibleName("No results")
        self.note.setWordWrap(True)
        self.note.setContentsMargins(10, 6, 10, 8)
        self.note.hide()
        lay.addWidget(self.input)
        lay.addWidget(self.list)
        lay.addWidget(self.note)
        self.search = MessageSearch(self, window_search(state), self._spawn, self._found,
                                    limit=MAX_MESSAGES * 2, name_model=model_names(state))
        self._hits: list[Entry] = []
        self._search_problem = ""  # the message of a query the search cannot read
        self._return_to: QWidget | None = None
        self.input.textChanged.connect(self._typed)
        self.input.installEventFilter(self)
        window.installEventFilter(self)
        app = QApplication.instance()
        if isinstance(app, QApplication):
            app.focusChanged.connect(self._focus_changed)
        self._restyle()
        self.hide()

    # -- opening and closing ----------------------------------------------------------
    def open(self, text: str = "") -> None:
        """Show the palette with ``text`` typed (selected), and focus it."""
        focus = QApplication.focusWidget()
        if not self.isVisible():
            self._return_to = focus if focus is not None and not self.isAncestorOf(focus) \
                else None
        self._restyle()
        self.input.setText(text)
        self._refresh()
        self._place()
        self.show()
        self.raise_()
        self.input.setFocus(Qt.FocusReason.ShortcutFocusReason)
        self.input.selectAll()

    def hideEvent(self, event: QHideEvent) -> None:  # noqa: N802
        """Hidden (closed, or its window closing): a search typed just before is not
        started (it would run after the window's event loop is gone)."""
        self.search.cancel()
        super().hideEvent(event)

    def close_palette(self, *, restore_focus: bool = True) -> None:
        """Hide the palette; give the focus back to where it was."""
        if not self.isVisible():
            return
        self.search.cancel()
        self.hide()
        back = self._return_to
        self._return_to = None
        if restore_focus and back is not None and back.isVisible() and back.isEnabled():
            back.setFocus(Qt.FocusReason.PopupFocusReason)

    def _place(self) -> None:
        w = self.window_
        width = min(WIDTH, max(320, w.width() - 40))
        rows = min(VISIBLE_ROWS, max(1, self.model.rowCount()))
        self.list.setVisible(self.model.rowCount() > 0 or not self.note.isVisibleTo(self))
        noted = self.note.isVisibleTo(self)
        body = self.note.heightForWidth(width - 12) if noted else rows * ROW_H
        height = self.input.sizeHint().height() + body + 22
        top = 56
        bar = getattr(w, "menuBar", None)
        if callable(bar) and bar().isVisible():
            top += bar().height()
        self.setGeometry((w.width() - width) // 2, top, width, min(height, w.height() - top - 10))

    def _restyle(self) -> None:
        t = appearance.current()
        self.setStyleSheet(
            f"#CommandPalette {{ background: {t.surface}; border: 1px solid {t.border};"
            f" border-radius: 12px; }}"
            f"#PaletteInput {{ background: transparent; border: none; color: {t.text};"
            f" border-bottom: 1px solid {t.border}; padding: 9px 10px; font-size: 15px; }}"
            f"#PaletteInput:focus {{ border-bottom: 2px solid {t.accent}; }}"
            f"#PaletteList {{ background: transparent; border: none; outline: none; }}"
        )

    def sources_changed(self) -> None:
        """The chats or the commands the window can run changed (Parley finished
        starting): list again what is typed, and search the messages again."""
        if not self.isVisible():
            return
        self._typed(self.input.text())

    # -- content ----------------------------------------------------------------------
    def entries(self) -> list[Entry]:
        """The rows shown now, in order."""
        return list(self.model.entries)

    def current_entry(self) -> Entry | None:
        row = self.list.currentIndex().row()
        return self.model.entries[row] if 0 <= row < len(self.model.entries) else None

    def _typed(self, _text: str) -> None:
        self._hits = []
        self._search_problem = ""
        self._refresh()
        self._place()
        if self.input.text().strip() and getattr(self.state, "store", None) is not None:
            self.search.ask(self.input.text())
        else:
            self.search.cancel()  # no chats yet: sources_changed asks once they are

    def _refresh(self) -> None:
        query = self.input.text()
        keymap = keymap_for(self.window_)
        commands = action_entries(self.state, query, keymap)
        chats = session_entries(self.state, query)
        known = {e.ref for e in chats}
        hits = [e for e in self._hits if e.kind == "message" or e.ref not in known]
        if query.strip():
            rows = sorted(commands + chats, key=lambda e: -e.score) + hits
        else:
            rows = chats + commands
        self.model.set_entries(rows)
        if rows:
            self.list.setCurrentIndex(self.model.index(0))
        self._show_note(query.strip(), bool(rows))
        self._describe()

    def _show_note(self, query: str, listed: bool) -> None:
        """Say why nothing is listed for a typed query (the search's own message when it
        could not read the query)."""
        if listed or not query:
            self.note.hide()
            return
        self.note.setText(self._search_problem or
                          f"No commands, chats or messages match “{query}”.")
        self.note.setStyleSheet(f"color: {appearance.current().muted};")
        self.note.show()

    def _spawn(self, coro: Any, *, name: str) -> Any:
        return self.state.tasks.spawn(coro, name=name)

    def _found(self, answer: Answer) -> None:
        """The message search answered: list its hits (or say why it could not)."""
        if not self.isVisible():
            return
        current = self.current_entry()
        known = {sid for sid, _t, _s in sidebar_sessions(self.state)}
        self._hits = hit_entries(answer.found, known)
        self._search_problem = answer.problem
        self._refresh()
        self._place()
        if current is not None:  # keep the row the person had chosen
            for row, e in enumerate(self.model.entries):
                if (e.kind, e.ref) == (current.kind, current.ref):
                    self.list.setCurrentIndex(self.model.index(row))

    def _describe(self) -> None:
        entry = self.current_entry()
        n = self.model.rowCount()
        said = f"{n:,} results" + (f"; {unmarked(entry.spoken())}" if entry else "")
        self.input.setAccessibleDescription(said)

    # -- keys -------------------------------------------------------------------------
    def eventFilter(self, obj: QObject, event: QEvent) -> bool:  # noqa: N802
        if obj is self.window_:
            if event.type() == QEvent.Type.Resize and self.isVisible():
                self._place()
            return False
        if event.type() == QEvent.Type.KeyPress and isinstance(event, QKeyEvent):
            return self._key(event)
        return False

    def _key(self, event: QKeyEvent) -> bool:
        k = event.key()
        K = Qt.Key  # noqa: N806
        steps: dict[int, int] = {K.Key_Down: 1, K.Key_Up: -1, K.Key_Tab: 1, K.Key_Backtab: -1,
                                 K.Key_PageDown: VISIBLE_ROWS - 1,
                                 K.Key_PageUp: -(VISIBLE_ROWS - 1)}
        if k in steps:
            self._step(steps[k])
        elif k in (K.Key_Return, K.Key_Enter):
            self.activate(self.list.currentIndex().row())
        elif k == K.Key_Escape:
            self.close_palette()
        else:
            return False
        return True

    def _step(self, delta: int) -> None:
        n = self.model.rowCount()
        if not n:
            return
        row = self.list.currentIndex().row()
        row = (row + delta) % n if abs(delta) == 1 else max(0, min(n - 1, row + delta))
        self.list.setCurrentIndex(self.model.index(row))

    def _focus_changed(self, _old: QWidget | None, new: QWidget | None) -> None:
        if self.isVisible() and new is not None and new is not self and \
                not self.isAncestorOf(new):
            self.close_palette(restore_focus=False)

    # -- running ----------------------------------------------------------------------
    def activate(self, row: int) -> None:
        """Run the entry at ``row``: a command, open a chat, or show a message."""
        if not 0 <= row < len(self.model.entries):
            return
        entry = self.model.entries[row]
        state = self.state
        self.close_palette()
        if entry.kind == "action":
            run(state, keymap_for(self.window_).action(entry.ref))
        elif entry.kind == "session":
            open_session(state, entry.ref)
        elif entry.found is not None:
            spawn_open(state, entry.found)


def open_session(window: OpenWindow, session_id: str) -> None:
    """Open a chat in ``window`` (its ``open_session`` or its chat controller's)."""
    opener = getattr(window, "open_session", None)
    if not callable(opener):
        opener = getattr(getattr(window, "chat", None), "open_session", None)
    if callable(opener):
        opener(session_id)


def open_palette(state: PaletteWindow, window: QWidget, text: str = "") -> CommandPalette:
    """Open (creating once) the command palette of ``window``, whose state is ``state``;
    returns it."""
    palette = getattr(state, "command_palette", None)
    if not isinstance(palette, CommandPalette):
        palette = CommandPalette(state, window)
        state.command_palette = palette
    palette.open(text)
    return palette

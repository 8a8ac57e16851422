"""Search every chat as you type: a popup over the window (Ctrl+K).

Results come from the store's full-text index (``Store.search``): ranked,
each with a snippet whose matches are marked ``\\x02…\\x03``; they are shown
in bold on a tinted background. A scope limits them to the current space or
the current chat. Enter (or a click) opens the chat scrolled to the
matching message, the match highlighted; a title match opens the chat.
A message copied into forks is one result, in the chat where it was written,
with a quiet "also in N forks" beside the chat's title (``fork_copies``); a
message on another branch of its chat than the one shown says "another branch".

What a person types is never query syntax: quotes make a phrase, anything
else (``*``, ``-``, ``:``, parentheses, any script, emoji) is plain text
(``parley.core.store.search``). A query the index cannot search (only punctuation or
emoji, far too long) shows the store's reason under the field, never an error
dialog. Asking, the results and opening one are the one message search of
every entry point (``parley.gui.commands.message_search``); this module is the popup.
"""

from __future__ import annotations

import html
from datetime import datetime
from typing import TYPE_CHECKING, Protocol

from PySide6.QtCore import (
    QEvent,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    QRectF,
    QSize,
    Qt,
    Signal,
)
from PySide6.QtGui import (
    QAbstractTextDocumentLayout,
    QColor,
    QKeyEvent,
    QPainter,
    QPainterPath,
    QStandardItem,
    QStandardItemModel,
    QTextDocument,
)
from PySide6.QtWidgets import (
    QApplication,
    QButtonGroup,
    QFrame,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListView,
    QStyle,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from parley.core.store.models import SearchHit
from parley.core.visible import strip_invisible
from parley.gui.commands.message_search import (
    LIMIT,
    Answer,
    Found,
    MessageSearch,
    OpenWindow,
    Search,
    SearchWindow,
    Spawn,
    marked_runs,
    model_names,
    spawn_open,
    window_search,
)
from parley.gui.look import appearance
from parley.gui.look.theme import mix

if TYPE_CHECKING:
    from PySide6.QtWidgets import QStackedWidget

HIT = Qt.ItemDataRole.UserRole + 1  # the Found
Index = QModelIndex | QPersistentModelIndex
SCOPES = ("all", "space", "session")
def snippet_html(snippet: str, mark_bg: str) -> str:
    """HTML of a snippet: text escaped (invisible characters left out:
    ``parley.core.visible``), each ``\\x02…\\x03`` match bold on ``mark_bg``."""
    return "".join(f'<span style="background:{mark_bg}; font-weight:600">{html.escape(t)}</span>'
                   if matched else html.escape(t)
                   for t, matched in marked_runs(strip_invisible(snippet)))


def when(ms: int) -> str:
    """A short date for a result: "14:05" today, "12 Mar" this year, "12 Mar 2023" before."""
    dt = datetime.fromtimestamp(ms / 1000)
    now = datetime.now()
    if dt.date() == now.date():
        return dt.strftime("%H:%M")
    return dt.strftime("%d %b" if dt.year == now.year else "%d %b %Y").lstrip("0")


def hit_html(found: Found) -> str:
    """The rich text of a result: title (and its labels: another branch, forks) with
    the date, then the snippet."""
    t = appearance.current()
    hit = found.hit
    title = html.escape(found.title)
    if hit.turn_id is None:  # the title itself matched
        title = snippet_html(hit.snippet, _mark_bg())
    date = html.escape(when(hit.created_at))
    notes = "".join(f'<span style="color:{t.faint}; white-space:nowrap"> · {html.escape(n)}'
                    "</span>" for n in found.notes())
    body = "" if hit.turn_id is None else snippet_html(hit.snippet, _mark_bg())
    if found.author:  # whose words: a message and the reply quoting it look alike
        body = f'<b style="color:{t.muted}">{html.escape(found.author)}:</b> {body}'
    return (
        f'<table width="100%" cellspacing="0" cellpadding="0"><tr>'
        f'<td><b style="color:{t.text}">{title}</b>{notes}</td>'
        f'<td align="right" style="color:{t.faint}">{date}</td></tr></table>'
        f'<div style="color:{t.muted}">{body or "Title matches"}</div>')


class HitDelegate(QStyledItemDelegate):
    """Paints a result: the chat's title and date, then the snippet with its matches."""

    def sizeHint(self, option: QStyleOptionViewItem, index: Index) -> QSize:  # noqa: N802
        # a title line and two snippet lines
        return QSize(option.rect.width(), 3 * option.fontMetrics.lineSpacing() + 18)

    def paint(self, p: QPainter, option: QStyleOptionViewItem, index: Index) -> None:
        t = appearance.current()
        hit = index.data(HIT)
        rect = option.rect.adjusted(6, 2, -6, -2)
        p.save()
        p.setRenderHint(QPainter.RenderHint.Antialiasing)
        if option.state & (QStyle.StateFlag.State_Selected | QStyle.StateFlag.State_MouseOver):
            path = QPainterPath()
            path.addRoundedRect(QRectF(rect), 8, 8)
            selected = option.state & QStyle.StateFlag.State_Selected
            p.fillPath(path, QColor(t.selected if selected else t.hover))
        doc = QTextDocument()
        doc.setDefaultFont(option.font)
        doc.setDocumentMargin(0)
        doc.setTextWidth(rect.width() - 20)
        doc.setHtml(hit_html(hit))
        p.translate(rect.left() + 10, rect.top() + 7)
        lines = 3 * option.fontMetrics.lineSpacing()
        p.setClipRect(QRectF(0, 0, rect.width() - 20, min(lines, rect.height() - 10)))
        ctx = QAbstractTextDocumentLayout.PaintContext()
        doc.documentLayout().draw(p, ctx)
        p.restore()


def _mark_bg() -> str:
    """The background of a match: a quarter of the accent over the popup's surface."""
    t = appearance.current()
    return mix(QColor(t.surface), QColor(t.accent), 0.28).name()


class SearchPopup(QFrame):
    """The search popup (child of the main window).

    Args:
        parent: the main window (placed at its top centre).
        search: ``Store.search``-like coroutine function
            (``message_search.window_search``).
        spawn: starts a coroutine (the window's ``TaskSet.spawn``).

    Signals:
        chosen(Found): the result chosen (``message_search.open_found`` opens it).
    """

    chosen = Signal(object)

    def __init__(self, parent: QWidget, search: Search, spawn: Spawn) -> None:
        super().__init__(parent)
        self.setObjectName("SearchPopup")
        self.setAccessibleName("Search chats")
        self.setAttribute(Qt.WidgetAttribute.WA_StyledBackground, True)
        self._spawn = spawn
        self.search = MessageSearch(self, search, spawn, self._show,
                                    name_model=model_names(parent))
        self.space_id: str | None = None
        self.session_id: str | None = None
        self.edit = QLineEdit(self)
        self.edit.setAccessibleName("Search text")
        self.edit.setPlaceholderText("Search every chat…")
        self.edit.setClearButtonEnabled(True)
        self.edit.textChanged.connect(self._changed)
        self.edit.installEventFilter(self)
        self.scope_group = QButtonGroup(self)
        self.scope_buttons: dict[str, QToolButton] = {}
        scopes = QHBoxLayout()
        scopes.setSpacing(4)
        for scope, label in zip(SCOPES, ("All chats", "This space", "This chat"), strict=True):
            b = QToolButton(self)
            b.setText(label)
            b.setAccessibleName(f"Search in: {label}")
            b.setCheckable(True)
            b.setObjectName("SearchScope")
            self.scope_group.addButton(b)
            self.scope_buttons[scope] = b
            scopes.addWidget(b)
            b.toggled.connect(lambda on: self._changed() if on else None)
        self.scope_buttons["all"].setChecked(True)
        scopes.addStretch(1)
        self.status = QLabel("", self)
        self.status.setObjectName("SearchStatus")
        self.status.setWordWrap(True)
        self.status.setAccessibleName("Search status")
        scopes.addWidget(self.status, 10)
        self.model = QStandardItemModel(self)
        self.results = QListView(self)
        self.results.setAccessibleName("Search results")
        self.results.setModel(self.model)
        self.results.setItemDelegate(HitDelegate(self.results))
        self.results.setFrameShape(QFrame.Shape.NoFrame)
        self.results.setMouseTracking(True)
        self.results.setUniformItemSizes(True)
        self.results.setVerticalScrollMode(QListView.ScrollMode.ScrollPerPixel)
        self.results.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.results.activated.connect(self._activate)
        self.results.clicked.connect(self._activate)
        self.results.installEventFilter(self)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(12, 12, 12, 12)
        lay.setSpacing(8)
        lay.addWidget(self.edit)
        lay.addLayout(scopes)
        lay.addWidget(self.results, 1)
        app = QApplication.instance()
        if isinstance(app, QApplication):
            app.focusChanged.connect(self._focus_changed)
        self.hide()

    # -- showing --------------------------------------------------------------------
    def open(self, *, space_id: str | None, session_id: str | None, text: str = "",
             scope: str = "all") -> None:
        """Show the popup over the window with the field focused.

        Args:
            space_id: the current space ("This space"; disabled when None).
            session_id: the open chat ("This chat"; disabled when None).
            text: put this in the field (default: keep the last query, selected).
            scope: ``all`` | ``space`` | ``session``.
        """
        self.space_id, self.session_id = space_id, session_id
        self.scope_buttons["space"].setEnabled(space_id is not None)
        self.scope_buttons["session"].setEnabled(session_id is not None)
        wanted = scope if self.scope_buttons[scope].isEnabled() else "all"
        self.scope_buttons[wanted].setChecked(True)
        self._restyle()
        self.place()
        self.show()
        self.raise_()
        if text:
            self.edit.setText(text)
        self.edit.setFocus()
        self.edit.selectAll()
        self._changed()

    def place(self) -> None:
        """Centre at the top of the parent (call on the parent's resize)."""
        parent = self.parentWidget()
        if parent is None:
            return
        width = min(680, max(320, parent.width() - 80))
        height = min(460, max(220, parent.height() - 120))
        self.setGeometry((parent.width() - width) // 2, 56, width, height)

    def _restyle(self) -> None:
        t = appearance.current()
        self.setStyleSheet(
            f"#SearchPopup {{ background: {t.surface}; border: 1px solid {t.border};"
            f" border-radius: 12px; }}"
            f"#SearchPopup QLineEdit {{ padding: 8px 10px; border: 1px solid {t.border};"
            f" border-radius: 8px; background: {t.base}; color: {t.text}; }}"
            f"#SearchPopup QListView {{ background: transparent; }}"
            f"#SearchScope {{ border: 1px solid {t.border}; border-radius: 6px;"
            f" padding: 2px 8px; color: {t.muted}; background: transparent; }}"
            f"#SearchScope:checked {{ background: {t.selected}; color: {t.text}; }}"
            f"#SearchStatus {{ color: {t.muted}; }}")

    def close_popup(self) -> None:
        """Hide (the query and the scope are kept for next time)."""
        self.search.cancel()
        self.hide()

    def _focus_changed(self, _old: QWidget | None, new: QWidget | None) -> None:
        if self.isVisible() and new is not None and not self.isAncestorOf(new):
            self.close_popup()

    # -- querying -------------------------------------------------------------------
    @property
    def scope(self) -> str:
        """The checked scope: ``all`` | ``space`` | ``session``."""
        return next(s for s, b in self.scope_buttons.items() if b.isChecked())

    def _changed(self, *_args: object) -> None:
        scope = self.scope
        self.search.ask(self.edit.text(),
                        session_id=self.session_id if scope == "session" else None,
                        space_id=self.space_id if scope == "space" else None)

    def _show(self, answer: Answer) -> None:
        self.model.clear()
        for found in answer.found:
            item = QStandardItem()
            item.setData(found, HIT)
            item.setData(found.spoken(), Qt.ItemDataRole.AccessibleTextRole)
            item.setEditable(False)
            self.model.appendRow(item)
        self.status.setText(self._note(answer))
        if answer.found:
            self.results.setCurrentIndex(self.model.index(0, 0))

    def _note(self, answer: Answer) -> str:
        """What the status line says: the count, no match, or why the query was not read."""
        if answer.problem:
            return answer.problem
        if not answer.query:
            return "Type to search the titles and messages of every chat."
        where = {"all": "", "space": " in this space", "session": " in this chat"}[self.scope]
        n = len(answer.found)
        if not n:
            return f"No matches for “{answer.query}”{where}."
        return f"{n:,}{'+' if n >= LIMIT else ''} {'match' if n == 1 else 'matches'}{where}"

    @property
    def hits(self) -> list[SearchHit]:
        """The results shown, best first."""
        return [self.model.item(r).data(HIT).hit for r in range(self.model.rowCount())]

    # -- choosing -------------------------------------------------------------------
    def _activate(self, index: QModelIndex) -> None:
        if not index.isValid():
            return
        found = index.data(HIT)
        self.close_popup()
        self.chosen.emit(found)

    def open_current(self) -> bool:
        """Open the selected result (Enter); False when there is none."""
        index = self.results.currentIndex()
        if not index.isValid() and self.model.rowCount():
            index = self.model.index(0, 0)
        if not index.isValid():
            return False
        self._activate(index)
        return True

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:  # noqa: N802
        if event.type() == QEvent.Type.KeyPress and isinstance(event, QKeyEvent):
            key = event.key()
            if key == Qt.Key.Key_Escape:
                self.close_popup()
                return True
            if key in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
                if not self.search.settled:  # Enter before the results came: search now
                    self._spawn(self._query_then_open(), name="search-open")
                    return True
                self.open_current()
                return True
            if obj is self.edit and key in (Qt.Key.Key_Down, Qt.Key.Key_Up,
                                            Qt.Key.Key_PageDown, Qt.Key.Key_PageUp):
                QApplication.sendEvent(self.results, QKeyEvent(event.type(), key,
                                                               event.modifiers()))
                return True
        return super().eventFilter(obj, event)

    async def _query_then_open(self) -> None:
        await self.search.now()
        self.open_current()


class PopupWindow(SearchWindow, OpenWindow, Protocol):
    """What the popup uses of the window's state (``WindowState``): the search and the
    open chat, the page shown, and where the popup is kept once made."""

    search_popup: SearchPopup | None

    @property
    def stack(self) -> QStackedWidget: ...

    @property
    def chat_page(self) -> QWidget: ...


def open_search(state: PopupWindow, window: QWidget) -> bool:
    """Show the search popup over ``window``, whose state is ``state`` (made on first
    use); False when the chat page is not shown (set-up, a store that could not be
    opened).

    Opened while Parley starts, it takes the words typed at once and answers
    once the store is open (``message_search.window_search``). A chosen result
    opens its chat at the message (``message_search.open_found``).
    """
    if state.stack.currentWidget() is not state.chat_page:
        return False
    if state.search_popup is None:
        popup = SearchPopup(window, window_search(state), state.tasks.spawn)
        popup.chosen.connect(lambda found: spawn_open(state, found))
        state.search_popup = popup
    chat = state.chat
    state.search_popup.open(space_id=chat.space_id if chat is not None else None,
                             session_id=chat.session_id if chat is not None else None)
    return True

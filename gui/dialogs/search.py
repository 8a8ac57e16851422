"""Search every chat as you type: a popup over the window (Ctrl+K).

Results come from the store's full-text index (``Store.search``): ranked,
each with a snippet whose matches are marked ``\\x02…\\x03``; they are shown
in bold on a tinted background. A scope limits them to the current space or
the current chat. Enter (or a click) opens the chat scrolled to the
matching message, the match highlighted; a title match opens the chat.
A message copied into forks is one result, in the chat where it was written,
with a quiet "also in N forks" beside the chat's title (``fork_copies``).

What a person types is never query syntax: quotes make a phrase, anything
else (``*``, ``-``, ``:``, parentheses, any script, emoji) is plain text
(``parley.core.store.search``). A query the index cannot search (only punctuation or
emoji, far too long) shows the store's reason under the field, never an error
dialog. Typing fast costs one query per pause (:data:`DEBOUNCE_MS`), and an
answer to an older query is dropped.
"""

from __future__ import annotations

import html
import re
import time
from collections.abc import Callable, Collection
from datetime import datetime
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import (
    QEvent,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    QRectF,
    QSize,
    Qt,
    QTimer,
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

from parley.core.errors import ParleyError
from parley.core.visible import strip_invisible
from parley.gui.look import appearance
from parley.gui.look.theme import mix

if TYPE_CHECKING:
    from parley.core.store.models import SearchHit

DEBOUNCE_MS = 120
LIMIT = 50
HIT = Qt.ItemDataRole.UserRole + 1  # the SearchHit
Index = QModelIndex | QPersistentModelIndex
SCOPES = ("all", "space", "session")
_MARK = re.compile("\x02(.*?)\x03", re.DOTALL)


def snippet_html(snippet: str, mark_bg: str) -> str:
    """HTML of a snippet: text escaped (invisible characters left out:
    ``parley.core.visible``), each ``\\x02…\\x03`` match bold on ``mark_bg``."""
    snippet = strip_invisible(snippet)
    out: list[str] = []
    pos = 0
    for m in _MARK.finditer(snippet):
        out.append(html.escape(snippet[pos:m.start()]))
        out.append(f'<span style="background:{mark_bg}; font-weight:600">'
                   f"{html.escape(m.group(1))}</span>")
        pos = m.end()
    out.append(html.escape(snippet[pos:].replace("\x02", "").replace("\x03", "")))
    return "".join(out)


def first_match(snippet: str) -> str | None:
    """The text of the first marked match of a snippet (what the transcript highlights)."""
    m = _MARK.search(snippet)
    return m.group(1).strip() or None if m else None


def copies_hint(hit: SearchHit) -> str:
    """The quiet hint of a hit whose message forks copied: "also in 3 forks" ('' if none)."""
    n = hit.fork_copies
    if n <= 0:
        return ""
    return f"also in {n} fork" if n == 1 else f"also in {n} forks"


def when(ms: int) -> str:
    """A short date for a result: "14:05" today, "12 Mar" this year, "12 Mar 2023" before."""
    dt = datetime.fromtimestamp(ms / 1000)
    now = datetime.now()
    if dt.date() == now.date():
        return dt.strftime("%H:%M")
    return dt.strftime("%d %b" if dt.year == now.year else "%d %b %Y").lstrip("0")


def hit_html(hit: Any) -> str:
    """The rich text of a result: title (and the fork hint) with the date, then the snippet."""
    t = appearance.current()
    title = html.escape(strip_invisible(hit.session_title or "") or "New chat")
    if hit.turn_id is None:  # the title itself matched
        title = snippet_html(hit.snippet, _mark_bg())
    date = html.escape(when(hit.created_at))
    hint = copies_hint(hit)
    hint_html = (f'<span style="color:{t.faint}; white-space:nowrap"> · {html.escape(hint)}</span>'
                 if hint else "")
    body = "" if hit.turn_id is None else snippet_html(hit.snippet, _mark_bg())
    return (
        f'<table width="100%" cellspacing="0" cellpadding="0"><tr>'
        f'<td><b style="color:{t.text}">{title}</b>{hint_html}</td>'
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
        search: ``AsyncStore.search``-like coroutine function.
        spawn: starts a coroutine (the window's ``TaskSet.spawn``).
        hidden: the session ids that must not show (deleted, undo pending); the
            store leaves them out before its limit and collapsing copies, so a
            message of a chat being deleted shows in a fork that holds it.

    Signals:
        chosen(str, object, str): session id, turn id (None for a title match)
            and the text to highlight ('' for none).
    """

    chosen = Signal(str, object, str)

    def __init__(self, parent: QWidget, search: Callable[..., Any],
                 spawn: Callable[..., Any],
                 hidden: Callable[[], Collection[str]] = lambda: ()) -> None:
        super().__init__(parent)
        self.setObjectName("SearchPopup")
        self.setAccessibleName("Search chats")
        self.setAttribute(Qt.WidgetAttribute.WA_StyledBackground, True)
        self._search, self._spawn, self._hidden = search, spawn, hidden
        self.space_id: str | None = None
        self.session_id: str | None = None
        self.generation = 0
        self.answered = 0  # generation of the results shown
        self.last_ms = 0.0  # how long the last query took (store call)
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(DEBOUNCE_MS)
        self._timer.timeout.connect(self._start)
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
        self._timer.stop()
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
        self.generation += 1
        self._timer.start()

    def _start(self) -> None:
        self._spawn(self.run_query(self.generation, self.edit.text(), self.scope),
                    name="search")

    async def run_query(self, generation: int, query: str, scope: str) -> None:
        """Search and show the results, unless a newer query was typed meanwhile."""
        if not query.strip():
            self._show([], "Type to search the titles and messages of every chat.", generation)
            return
        kwargs: dict[str, Any] = {"limit": LIMIT}
        if scope == "space":
            kwargs["space_id"] = self.space_id
        elif scope == "session":
            kwargs["session_id"] = self.session_id
        hidden = set(self._hidden())
        if hidden:
            kwargs["exclude_session_ids"] = sorted(hidden)
        started = time.perf_counter()
        try:
            hits = await self._search(query, **kwargs)
        except ParleyError as exc:  # InvalidSearchQuery and store errors: said in words
            if generation == self.generation:
                self._show([], exc.message, generation)
            return
        self.last_ms = (time.perf_counter() - started) * 1000
        if generation != self.generation:
            return  # a newer query is on its way
        hits = [h for h in hits if h.session_id not in hidden]
        where = {"all": "", "space": " in this space", "session": " in this chat"}[scope]
        if not hits:
            note = f"No matches for “{query.strip()}”{where}."
        else:
            note = f"{len(hits)}{'+' if len(hits) >= LIMIT else ''} " \
                   f"{'match' if len(hits) == 1 else 'matches'}{where}"
        self._show(hits, note, generation)

    def _show(self, hits: list[Any], note: str, generation: int) -> None:
        self.answered = generation
        self.model.clear()
        for hit in hits:
            item = QStandardItem()
            item.setData(hit, HIT)
            hint = copies_hint(hit)
            label = (strip_invisible(hit.session_title or "") or "New chat") + \
                (f" ({hint})" if hint else "") + ": " + \
                strip_invisible(hit.snippet.replace("\x02", "").replace("\x03", ""))
            item.setData(label, Qt.ItemDataRole.AccessibleTextRole)
            item.setEditable(False)
            self.model.appendRow(item)
        self.status.setText(note)
        if hits:
            self.results.setCurrentIndex(self.model.index(0, 0))

    @property
    def hits(self) -> list[Any]:
        """The results shown, best first."""
        return [self.model.item(r).data(HIT) for r in range(self.model.rowCount())]

    # -- choosing -------------------------------------------------------------------
    def _activate(self, index: QModelIndex) -> None:
        if not index.isValid():
            return
        hit = index.data(HIT)
        highlight = first_match(hit.snippet) if hit.turn_id is not None else None
        self.close_popup()
        self.chosen.emit(hit.session_id, hit.turn_id, highlight or "")

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
                if self._timer.isActive() or self.answered != self.generation:
                    self._timer.stop()  # Enter before the results came: search now, then open
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
        await self.run_query(self.generation, self.edit.text(), self.scope)
        self.open_current()


def open_search(window: Any) -> bool:
    """Show ``window``'s search popup (made on first use); False when the chat page is
    not shown (set-up, a store that could not be opened).

    Opened while Parley starts, it takes the words typed at once and answers
    once the store is open (``MainWindow.store_opened``). A chosen result opens
    its chat at the message (``ChatController.open_at``). Sessions deleted with
    Undo still pending are left out (by the store, so a message they hold still
    shows in a fork that copied it).
    """
    if window.stack.currentWidget() is not window.chat_page:
        return False
    if window.search_popup is None:
        async def search(query: str, **kwargs: Any) -> Any:
            await window.store_opened.wait()
            return await window.store.search(query, **kwargs)

        def hidden() -> Collection[str]:
            return window.chat.organizer.deleting if window.chat is not None else ()

        def chosen(sid: str, turn: Any, mark: str) -> None:
            if window.chat is not None:
                window.chat.open_at(sid, turn, mark or None)

        popup = SearchPopup(window, search, window.tasks.spawn, hidden=hidden)
        popup.chosen.connect(chosen)
        window.search_popup = popup
    chat = window.chat
    window.search_popup.open(space_id=chat.space_id if chat is not None else None,
                             session_id=chat.session_id if chat is not None else None)
    return True

"""Painting transcript rows, and the cache of their layouts.

The delegate lays a row out only when it is painted or measured (the view asks
for visible rows only), keeps the layouts of the last :data:`LAYOUT_LIMIT` rows
(an LRU keyed by turn id, stamped with the row's revision and width), and
estimates the height of every other row from its text length.
"""

from __future__ import annotations

import time
from bisect import bisect_left
from collections import OrderedDict
from collections.abc import Sequence

from PySide6.QtCore import (
    QModelIndex,
    QPersistentModelIndex,
    QRect,
    QRectF,
    QSize,
    Qt,
    QTimer,
    Signal,
)
from PySide6.QtGui import (
    QAbstractTextDocumentLayout,
    QColor,
    QFontMetrics,
    QPainter,
    QPainterPath,
    QPalette,
    QPen,
    QTextCharFormat,
    QTextCursor,
    QTextDocument,
)
from PySide6.QtWidgets import QStyle, QStyledItemDelegate, QStyleOptionViewItem, QWidget

from parley.gui.look.theme import TranscriptColors, mix, transcript_colors
from parley.gui.text.markdown import load_lexers_later, warm_highlighting
from parley.gui.transcript.layout import (
    BAR,
    BUBBLE_PAD,
    BUBBLE_SHARE,
    CODE_PAD,
    INDENT,
    MAX_COLUMN,
    ROW_PAD,
    SIDE,
    RowBuilder,
    RowLayout,
    indent_levels,
)
from parley.gui.transcript.model import TranscriptModel
from parley.gui.transcript.pieces import THUMB_MAX, PieceCache
from parley.gui.transcript.rows import Node
from parley.gui.transcript.specs import CODE_KINDS

LAYOUT_LIMIT = 400  # row layouts kept (rows seen recently)
THROTTLE_MIN_MS = 8.0  # a streaming row cheaper to lay out than this is never throttled
THROTTLE_FACTOR = 4.0  # ...else it waits this many times its last layout cost
THROTTLE_MAX_MS = 250.0  # ...but never longer than this
#: The last row's layout makes new markdown of a text it showed before for about this
#: long (ms); what is left comes in the next layouts, PARTIAL_WAIT_MS apart.
RENDER_BUDGET_MS = 8.0
PARTIAL_WAIT_MS = 16.0
#: The same for a later part of a huge text, shown by "Show more" or a search hit in it
#: (``long_text.shown_part``): its markdown is made in steps of about this long (ms).
PART_BUDGET_MS = 25.0
#: Code shown plain has its lexer made this long after (ms): the paint goes first.
LEXER_DELAY_MS = 150

Index = QModelIndex | QPersistentModelIndex


class TranscriptDelegate(QStyledItemDelegate):
    """Paints rows of a :class:`TranscriptModel` and measures them.

    Args:
        parent: the list view (its palette and font are used).

    Signals:
        repaintRequested(): a throttled row is due to be laid out again.
    """

    repaintRequested = Signal()
    #: Lexers asked for by code shown plain are made (emitted from their thread; the
    #: rows are made again: :meth:`_lexers_made`, then the view's ``rehighlight``).
    lexersMade = Signal(list)

    def __init__(self, parent: QWidget) -> None:
        super().__init__(parent)
        self._widget = parent
        self._layouts: OrderedDict[str, RowLayout] = OrderedDict()
        self.highlight: tuple[str, str] | None = None  # (turn id, search text)
        self.show_focus = False
        self.clip = QRect()  # the part of the viewport being painted (viewport coordinates)
        self.colors: TranscriptColors = transcript_colors(parent.palette())
        self.cache = PieceCache(self.colors, parent.font())
        self.builder = RowBuilder(self.cache)
        self._metrics()
        warm_highlighting(self.colors.markdown.pygments_style)  # a first code block: no stall
        self._lexers_asked: set[str] = set()
        self._lexers_wanted: list[str] = []
        self._load_timer = QTimer(self, singleShot=True, interval=LEXER_DELAY_MS)
        self._load_timer.timeout.connect(self._load_lexers)
        self.cache.lexer_wanted = self._want_lexer
        self.lexersMade.connect(self._lexers_made, Qt.ConnectionType.QueuedConnection)
        self._repaint = QTimer(self, singleShot=True, timerType=Qt.TimerType.PreciseTimer)
        self._repaint.timeout.connect(self.repaintRequested)

    def _metrics(self) -> None:
        fm = QFontMetrics(self.cache.font)
        self._line_h = fm.lineSpacing()
        self._char_w = max(4, fm.averageCharWidth())

    # -- palette / font changes -------------------------------------------
    def restyle(self) -> bool:
        """Re-read the view's palette and font; drop caches if they changed.

        Returns:
            True when something changed (every row must be measured again).
        """
        colors = transcript_colors(self._widget.palette())
        font = self._widget.font()
        if colors.key == self.colors.key and font == self.cache.font:
            return False
        self.colors = colors
        self.cache = PieceCache(colors, font)
        self.cache.lexer_wanted = self._want_lexer
        answered_by = self.builder.specs.answered_by  # set by the window: kept
        marks = self.builder.specs.save_marks
        branches = self.builder.specs.branches
        tool_names = self.builder.specs.tool_names
        self.builder = RowBuilder(self.cache)
        self.builder.specs.tool_names = tool_names
        self.builder.specs.answered_by = answered_by
        self.builder.specs.save_marks = marks
        self.builder.specs.branches = branches
        self._layouts.clear()
        self._metrics()
        return True

    # -- highlighting ---------------------------------------------------------
    def _want_lexer(self, language: str) -> None:
        """Code in ``language`` was shown plain: have its lexer made in a thread, once
        what is being shown was painted (the thread holds the GIL while it compiles)."""
        if language not in self._lexers_asked:
            self._lexers_asked.add(language)
            self._lexers_wanted.append(language)
            if not self._load_timer.isActive():
                self._load_timer.start()

    def _load_lexers(self) -> None:
        languages, self._lexers_wanted = self._lexers_wanted, []
        if languages:
            load_lexers_later(languages, lambda: self.lexersMade.emit(languages))

    def _lexers_made(self, languages: list[str]) -> None:
        """Lexers asked for are there: rows are laid out again, their code in those
        languages highlighted (the other pieces are kept)."""
        self.builder.specs.forget_code(languages)
        self._layouts.clear()

    # -- layouts ------------------------------------------------------------
    def row_layout(
        self, model: TranscriptModel, row: int, width: int, *, fresh: bool = False
    ) -> RowLayout:
        """Return the layout of a row at a viewport width (px), from the cache if current.

        A streaming row whose last layout was expensive (≥ THROTTLE_MIN_MS) is
        laid out again at most every few times that cost (throttled to what the
        machine can paint): in between its previous layout is returned with
        ``stale`` set, and a repaint is scheduled. The last row makes the new markdown
        of a text it showed before for about RENDER_BUDGET_MS, the rest in the next
        layouts (``partial``, PARTIAL_WAIT_MS apart): a fast stream's text arriving
        faster than it is rendered never holds the GUI thread for long. ``fresh``
        forces a new, whole layout.
        """
        node = model.rows[row]
        is_last = model.is_last(row)
        idle = is_last and not model.busy
        stamp = (node.rev, is_last, idle, self.colors.key)
        layout = self._layouts.get(node.key)
        if layout is not None and layout.width == width:
            if layout.stamp == stamp:
                if not layout.partial:
                    self._layouts.move_to_end(node.key)
                    return layout
                if not fresh and self._wait(layout, PARTIAL_WAIT_MS):
                    return layout
            elif not fresh and is_last and layout.stamp[1:] == stamp[1:] \
                    and self._throttle(layout):
                return layout
        start = time.perf_counter()
        # A later part of a huge text ("Show more") is made in steps too.
        budget = None if fresh else RENDER_BUDGET_MS if is_last else \
            PART_BUDGET_MS if node.parts else None
        layout = self.builder.layout(node, model.transcript, width, is_last, layout, idle,
                                     budget)
        layout.cost_ms = (time.perf_counter() - start) * 1000
        layout.made_at = time.monotonic()
        layout.stamp = stamp
        if layout.partial:  # the rest of its new text in the next layouts
            layout.stale = True
            self._wait(layout, PARTIAL_WAIT_MS)
        self._layouts[node.key] = layout
        self._layouts.move_to_end(node.key)
        if len(self._layouts) > LAYOUT_LIMIT:
            self._layouts.popitem(last=False)
        return layout

    def cached_layout(self, model: TranscriptModel, row: int, width: int) -> RowLayout | None:
        """The row's last layout at ``width`` (what was painted or is about to be), or
        None; not made when missing."""
        layout = self._layouts.get(model.rows[row].key)
        return layout if layout is not None and layout.width == width else None

    def _throttle(self, layout: RowLayout) -> bool:
        """True (and a repaint scheduled) when an expensive row was laid out too recently."""
        if layout.cost_ms < THROTTLE_MIN_MS:
            return False
        return self._wait(layout, min(THROTTLE_MAX_MS, THROTTLE_FACTOR * layout.cost_ms))

    def _wait(self, layout: RowLayout, wait_ms: float) -> bool:
        """True (``layout`` marked stale, a repaint scheduled for when it is due) when it
        was made less than ``wait_ms`` ago."""
        left_ms = wait_ms - (time.monotonic() - layout.made_at) * 1000
        if left_ms <= 0:
            return False
        layout.stale = True
        if not self._repaint.isActive():
            self._repaint.start(int(left_ms) + 2)
        return True

    def known_height(self, node: Node, width: int) -> int | None:
        """The height of a node's cached layout at ``width``, if it is current."""
        layout = self._layouts.get(node.key)
        if layout is not None and layout.width == width and layout.stamp[0] == node.rev:
            return layout.height
        return None

    def forget(self) -> None:
        """Drop every cached layout (pieces stay cached)."""
        self._layouts.clear()

    def estimate(self, node: Node, width: int) -> int:
        """Guess a row's height (px) at a viewport width without laying it out."""
        return self.estimates([node], width)[0]

    def estimates(self, nodes: Sequence[Node], width: int) -> list[int]:
        """Guess rows' heights (px) at a viewport width without laying them out.

        Exact for rows laid out before at that width; otherwise from the text
        length, the number of fold lines and of images (``Node.stats``). About
        1 µs a row: this runs over every row of a session when it opens.
        """
        column = max(160, min(width - 2 * SIDE, MAX_COLUMN))
        line_h, char_w = self._line_h * 1.12, self._char_w
        fold_h, media_h = self._line_h + 4, THUMB_MAX.height() // 2 + 8
        bubble_chrome = 2 * BUBBLE_PAD.height() + 4
        layouts = self._layouts
        out: list[int] = []
        append = out.append
        for node in nodes:
            if layouts:
                known = self.known_height(node, width)
                if known is not None:
                    append(known)
                    continue
            chars, lines, folds, media = node.stats
            col = column - indent_levels(node.depth) * INDENT if node.depth else column
            chrome = 2 * ROW_PAD
            if node.turn.role == "user" and node.kind == "turn":
                col = int(col * BUBBLE_SHARE) - 2 * BUBBLE_PAD.width()
                chrome += bubble_chrome
            per_line = col // char_w if col > 8 * char_w else 8
            append(int(chrome + (lines + chars // per_line) * line_h + folds * fold_h
                       + media * media_h))
        return out

    # -- painting -------------------------------------------------------------
    def sizeHint(self, option: QStyleOptionViewItem, index: Index) -> QSize:  # noqa: N802
        model = index.model()
        if not isinstance(model, TranscriptModel):
            return super().sizeHint(option, index)
        width = option.rect.width() if option.rect.width() > 0 else self._widget.width()
        return QSize(width, self.row_layout(model, index.row(), width).height)

    def paint(self, painter: QPainter, option: QStyleOptionViewItem, index: Index) -> None:
        model = index.model()
        if not isinstance(model, TranscriptModel):
            super().paint(painter, option, index)
            return
        rect = option.rect
        layout = self.row_layout(model, index.row(), rect.width())
        colors = self.colors
        painter.save()
        painter.translate(rect.topLeft())
        painter.setRenderHint(QPainter.RenderHint.Antialiasing, True)
        if self.show_focus and option.state & QStyle.StateFlag.State_HasFocus:
            painter.setPen(QPen(colors.focus, 1.5))
            painter.setBrush(_alpha(colors.focus, 0.06))
            painter.drawRoundedRect(QRectF(layout.column).adjusted(0.5, 0.5, -0.5, -0.5), 10, 10)
        guide = mix(colors.base, colors.text, 0.16)
        for x in layout.guides:
            painter.fillRect(QRect(x, 0, 2, layout.height), guide)
        if layout.frame is not None:
            self._paint_frame(painter, layout)
        if self.clip.isValid():
            clip = QRectF(self.clip.translated(-rect.topLeft()))
            top, bottom = int(clip.top()) - 4, int(clip.bottom()) + 4
        else:
            clip, top, bottom = QRectF(), -(1 << 30), 1 << 30
        for box, bar in layout.code_boxes_in(top, bottom):  # a long reply has hundreds
            self._paint_code_box(painter, box, bar)
        node = model.rows[index.row()]
        term = self.highlight[1] if self.highlight and self.highlight[0] == node.key else ""
        pieces = layout.pieces
        # Pieces are stacked top to bottom: skip to the first one in the clip.
        first = bisect_left(pieces, top, key=lambda p: p.rect.bottom()) if top > 0 else 0
        for placed in pieces[first:]:
            r = placed.rect
            if r.top() > bottom:
                break
            if placed.bar:
                inset = CODE_PAD if placed.kind in CODE_KINDS else 0
                painter.fillRect(QRect(r.left() - inset - BAR + 3, r.top() - 4, 2, r.height() + 8),
                                 guide)
            self._paint_doc(painter, placed.piece.doc, r, placed.muted, clip, term, option.palette)
        painter.restore()

    def _paint_frame(self, painter: QPainter, layout: RowLayout) -> None:
        assert layout.frame is not None
        colors = self.colors
        frame = QRectF(layout.frame)
        if layout.frame_kind == "bubble":
            painter.setPen(Qt.PenStyle.NoPen)
            painter.setBrush(colors.user_bubble)
            painter.drawRoundedRect(frame, 16, 16)
        else:
            painter.setPen(QPen(colors.card_border, 1))
            painter.setBrush(colors.card_bg)
            painter.drawRoundedRect(frame.adjusted(0.5, 0.5, -0.5, -0.5), 10, 10)

    def _paint_code_box(self, painter: QPainter, box: QRect, bar: QRect) -> None:
        md = self.colors.markdown
        path = QPainterPath()
        path.addRoundedRect(QRectF(box), 8, 8)
        painter.save()
        painter.setPen(Qt.PenStyle.NoPen)
        painter.fillPath(path, QColor(md.code_bg))
        painter.setClipPath(path)
        painter.fillRect(bar, QColor(md.code_header_bg))
        painter.restore()

    def _paint_doc(
        self,
        painter: QPainter,
        doc: QTextDocument,
        r: QRect,
        muted: bool,
        clip: QRectF,
        term: str,
        palette: QPalette,
    ) -> None:
        if doc.textWidth() != r.width():
            doc.setTextWidth(r.width())
        ctx = QAbstractTextDocumentLayout.PaintContext()
        pal = QPalette(palette)
        pal.setColor(QPalette.ColorRole.Text, self.colors.muted if muted else self.colors.text)
        ctx.palette = pal
        local = QRectF(0, 0, r.width(), r.height())
        if clip.isValid():
            local = local.intersected(clip.translated(-r.left(), -r.top()))
        ctx.clip = local
        if term:
            ctx.selections = _matches(doc, term, self.colors.match_bg)
        painter.save()
        painter.translate(r.topLeft())
        painter.setClipRect(QRectF(0, 0, r.width() + 1, r.height() + 1))
        doc.documentLayout().draw(painter, ctx)
        painter.restore()


def _alpha(color: QColor, alpha: float) -> QColor:
    out = QColor(color)
    out.setAlphaF(alpha)
    return out


def _matches(
    doc: QTextDocument, term: str, color: QColor
) -> list[QAbstractTextDocumentLayout.Selection]:
    """Selections covering every case-insensitive occurrence in ``doc`` of each word of
    ``term`` (space-separated: every matched word of a search), at most 500."""
    fmt = QTextCharFormat()
    fmt.setBackground(color)
    out: list[QAbstractTextDocumentLayout.Selection] = []
    for word in term.split():
        cursor = doc.find(word, 0)
        while not cursor.isNull() and len(out) < 500:
            sel = QAbstractTextDocumentLayout.Selection()
            sel.cursor = QTextCursor(cursor)
            sel.format = fmt
            out.append(sel)
            cursor = doc.find(word, cursor)
    return out


"""Laying out one transcript row: where its pieces go, how tall it is, what a click hits.

:class:`RowBuilder` turns a :class:`~parley.gui.transcript.rows.Node` into a
:class:`RowLayout` for a viewport width: the pieces (from
:class:`~parley.gui.transcript.specs.SpecBuilder`) stacked in the centred content
column — user messages in a right-aligned bubble, compaction summaries in a
card, code blocks on a rounded box — and what clicks on it mean
(:meth:`RowLayout.hit`).
"""

from __future__ import annotations

import operator
import time
from bisect import bisect_left
from dataclasses import dataclass, field
from typing import cast

from PySide6.QtCore import QPoint, QPointF, QRect, QRectF, QSize
from PySide6.QtGui import QTextBlock, QTextDocument, QTextFragment, QTextLine

from parley.gui.text.markdown import BLOCKED_PREFIX, IMAGE_PREFIX
from parley.gui.transcript.pieces import Piece, PieceCache, icons_in
from parley.gui.transcript.rows import Node, Transcript
from parley.gui.transcript.specs import (
    ACTION_BUTTON_PX,
    ACTIONS_EDGE_PX,
    ACTIONS_HEIGHT_PX,
    ACTIONS_INSET,
    CODE_KINDS,
    Spec,
    SpecBuilder,
    continue_request,
)

SIDE = 20  # px between the viewport's edges and the content column
MAX_COLUMN = 800  # px: widest content column (the composer uses the same)
ROW_PAD = 7  # px above and below a row's content
GAP = 8  # px between two pieces
FOLD_GAP = 3  # px after a fold line
INDENT = 22  # px per level of nesting inside compaction cards
#: Levels of nesting that move a row right: a chat compacted hundreds of times nests
#: each summary in the next, and a row that deep keeps the width of this level.
MAX_INDENT_LEVELS = 4
BAR = 12  # px: unfolded bodies start this far right of their fold line
BUBBLE_PAD = QSize(14, 9)  # px inside a user bubble (horizontal, vertical)
BUBBLE_SHARE = 0.8  # a user bubble is at most this share of the column
CARD_PAD = QSize(12, 8)  # px inside a compaction card
CODE_PAD = 10  # px between a code box's edge and its text
CODE_TOP = 5  # px above a code box's label bar
CODE_BOTTOM = 8  # px under a code box's last line


@dataclass(slots=True, eq=False)
class Placed:
    """A piece at its place in a row (row coordinates, px).

    Attributes:
        piece: the rendered piece.
        rect: where it is painted.
        kind: ``text`` | ``fold`` | ``body`` | ``mark`` | ``media`` | ``caption``.
        fold_key: for fold lines: the fold a click toggles.
        muted: painted in the muted colour (thinking).
        bar: a vertical rule is painted on its left (unfolded bodies).
        copy: part of "Copy message".
    """

    piece: Piece
    rect: QRect
    kind: str
    fold_key: str | None = None
    muted: bool = False
    bar: bool = False
    copy: bool = False


@dataclass(slots=True, frozen=True)
class Hit:
    """What is under a point of a row: an anchor (``href``) or a fold line (``fold_key``)."""

    placed: Placed
    href: str = ""
    fold_key: str | None = None


def indent_levels(depth: int) -> int:
    """How many levels of nesting a row at ``depth`` is moved right (and guides drawn)."""
    return min(depth, MAX_INDENT_LEVELS)


@dataclass(slots=True, eq=False)
class RowLayout:
    """A row laid out at one width.

    Attributes:
        key: the node's key (turn id).
        width: the viewport width it was made for (px).
        height: the row's height (px).
        pieces: the pieces, top to bottom.
        frame: the bubble or card rectangle, if any.
        frame_kind: ``bubble`` (user message) | ``card`` (compaction summary) | None.
        column: the content column's rectangle (focus outline).
        guides: x positions of the nesting guides (rows inside expanded cards).
        stamp: what the layout was made from (rev, width, flags, palette).
        code_boxes: (box, label bar) rectangles of the code blocks drawn in parts, top to
            bottom.
        code_spans: per code box, the index of its label bar's piece and the index after
            its last piece (``len(pieces)`` while the block may go on).
        specs: what the pieces were placed from (a streaming row's next layout keeps
            the leading pieces whose specs are the very same objects).
        cost_ms / made_at: how long it took to make, and when (``time.monotonic``).
        stale: handed out although the row changed since (throttled streaming).
        partial: its text's newest part is left out, not made yet (a layout's time
            budget: ``RowBuilder.layout``); laid out again soon.
    """

    key: str
    width: int
    height: int
    pieces: list[Placed]
    frame: QRect | None = None
    frame_kind: str | None = None
    column: QRect = field(default_factory=QRect)
    guides: list[int] = field(default_factory=list)
    stamp: tuple[object, ...] = ()
    code_boxes: list[tuple[QRect, QRect]] = field(default_factory=list)
    code_spans: list[tuple[int, int]] = field(default_factory=list)
    specs: list[Spec] = field(default_factory=list)
    cost_ms: float = 0.0
    made_at: float = 0.0
    stale: bool = False
    partial: bool = False

    def code_boxes_in(self, top: int, bottom: int) -> list[tuple[QRect, QRect]]:
        """The code boxes reaching into the band from ``top`` to ``bottom`` (row px):
        found by bisection, a long reply has hundreds."""
        boxes = self.code_boxes
        first = bisect_left(boxes, top, key=lambda b: b[0].bottom()) if boxes else 0
        out: list[tuple[QRect, QRect]] = []
        for box in boxes[first:]:
            if box[0].top() > bottom:
                break
            out.append(box)
        return out

    def hit(self, pos: QPoint | QPointF) -> Hit | None:
        """Return what is under ``pos`` (row coordinates), or None."""
        p = QPointF(pos)
        for placed in self.pieces:
            r = placed.rect
            if not (r.left() <= p.x() <= r.right() + 1 and r.top() <= p.y() <= r.bottom() + 1):
                continue
            local = p - QPointF(r.topLeft())
            href = placed.piece.doc.documentLayout().anchorAt(local)
            if href:
                return Hit(placed, href=href)
            if placed.fold_key is not None:
                return Hit(placed, fold_key=placed.fold_key)
            return None
        return None

    def anchor_point(self, href: str) -> QPoint | None:
        """The centre (row coordinates) of the first anchor whose href starts with ``href``."""
        box = self.anchor_box(href)
        return box.center() if box is not None else None

    def anchor_box(self, href: str) -> QRect | None:
        """Where (row coordinates) the first anchor whose href starts with ``href`` is:
        the area a click on it hits."""
        for placed in self.pieces:
            rect = anchor_rect(placed.piece.doc, href)
            if rect is not None:
                return rect.translated(QPointF(placed.rect.topLeft())).toRect()
        return None

    def fold_point(self, key: str) -> QPoint | None:
        """A point (row coordinates) on the fold line with that key."""
        for placed in self.pieces:
            if placed.fold_key == key:
                return QPoint(placed.rect.left() + 30, placed.rect.center().y())
        return None

    def fold_keys(self) -> list[str]:
        """The keys of the row's fold lines, top to bottom."""
        return [p.fold_key for p in self.pieces if p.fold_key is not None]

    def icons(self) -> list[str]:
        """The names of the app's icons the row shows (``resources/icons``), top to bottom."""
        return [name for p in self.pieces for name in icons_in(p.piece.doc)]

    def plain_text(self, *, copy_only: bool = False) -> str:
        """The row's text as shown (fold lines and marks too unless ``copy_only``)."""
        parts = [
            piece_plain_text(p.piece)
            for p in self.pieces
            if p.copy or not copy_only
        ]
        return "\n\n".join(t for t in parts if t)


def anchor_rect(doc: QTextDocument, href: str) -> QRectF | None:
    """Where the first anchor whose href starts with ``href`` is in ``doc`` (doc
    coordinates): every fragment of that link (its text may change format inside)."""
    block = doc.begin()
    layout = doc.documentLayout()
    while block.isValid():
        it = block.begin()
        found: QRectF | None = None
        target = ""
        while not it.atEnd():
            frag = it.fragment()
            link = frag.charFormat().anchorHref() if frag.isValid() else ""
            if found is not None and link != target:
                return found
            if link and (found is not None or link.startswith(href)):
                target = link
                rect = _fragment_rect(layout.blockBoundingRect(block), block, frag)
                found = rect if found is None else found.united(rect)
            it += 1
        if found is not None:
            return found
        block = block.next()
    return None


def _x_at(line: QTextLine, pos: int) -> float:
    """The x of the cursor at ``pos`` on ``line`` (PySide6 returns ``(x, pos)``; its type
    stubs say ``object``)."""
    x, _pos = cast(tuple[float, int], line.cursorToX(pos))
    return x


def _fragment_rect(box: QRectF, block: QTextBlock, frag: QTextFragment) -> QRectF:
    """A text fragment's rect on its line (doc coordinates); ``box``: its block's."""
    line = block.layout().lineForTextPosition(frag.position() - block.position())
    if not line.isValid():
        return box
    x0 = _x_at(line, frag.position() - block.position())
    x1 = _x_at(line, frag.position() + frag.length() - block.position())
    return QRectF(box.left() + x0, box.top() + line.y(), max(1.0, x1 - x0), line.height())


def indexed_target(piece: Piece, href: str) -> str:
    """The URL behind a ``parley:blocked/<i>`` or ``parley:image/<i>`` anchor ('' if none)."""
    if href.startswith(BLOCKED_PREFIX):
        return _indexed(piece.blocked, href, BLOCKED_PREFIX)
    if href.startswith(IMAGE_PREFIX):
        return _indexed(piece.images, href, IMAGE_PREFIX)
    return ""


def _indexed(items: tuple[str, ...], href: str, prefix: str) -> str:
    try:
        return items[int(href[len(prefix) :])]
    except (ValueError, IndexError):
        return ""


def piece_plain_text(piece: Piece) -> str:
    """The piece's text as shown, without its code blocks' label bars or trailing spaces."""
    text = piece.doc.toPlainText()
    for block in piece.code:
        label = block.language or "code"
        text = text.replace(f"{label}\tCopy\n", "", 1).replace(f"{label}\nCopy\n", "", 1)
    return "\n".join(line.rstrip() for line in text.splitlines()).strip("\n")


def _column(spec: Spec, x: int, w: int) -> tuple[int, int]:
    """Left edge and width (px) of a piece in a column starting at ``x``, ``w`` wide."""
    if spec.bar:
        x, w = x + BAR, w - BAR
    if spec.kind in CODE_KINDS:
        x, w = x + CODE_PAD, w - 2 * CODE_PAD
    return x, w


def _same(placed: Placed, spec: Spec, x: int, w: int) -> bool:
    """True when a placed piece is what ``spec`` would place (same piece, same column)."""
    px, pw = _column(spec, x, w)
    return (
        placed.piece is spec.piece
        and placed.kind == spec.kind
        and placed.fold_key == spec.fold_key
        and placed.bar == spec.bar
        and placed.rect.left() == px
        and placed.rect.width() == pw
        and placed.piece.doc.textWidth() == pw
    )


def _gap(above: Spec, below: Spec) -> int:
    """Space (px) between two stacked pieces."""
    if below.joined:
        return 0  # the next part of a paragraph being written
    if below.kind == "code":
        return 4 if above.kind == "codehead" else 0  # parts of one code block touch
    extra = (CODE_BOTTOM if above.kind == "code" else 0) + (
        CODE_TOP if below.kind == "codehead" else 0
    )
    if below.bar or (above.kind == "fold" and below.kind == "fold"):
        return FOLD_GAP + extra  # a fold's own body, or a run of fold lines
    if above.kind == "fold" or below.kind in ("fold", "mark"):
        return GAP - 2 + extra
    return GAP + extra


def _code_boxes(placed: list[Placed], start: int = 0,
                previous: RowLayout | None = None) -> tuple[list[tuple[QRect, QRect]],
                                                          list[tuple[int, int]]]:
    """The (box, label bar) rectangles behind each code block's pieces, and where each
    block's pieces are (:attr:`RowLayout.code_spans`).

    Args:
        placed: the pieces.
        start: the pieces before this index are those of ``previous`` (kept as they
            were): its boxes made of them alone are kept, the rest is looked at again.
        previous: the layout the leading pieces were kept from.
    """
    boxes: list[tuple[QRect, QRect]] = []
    spans: list[tuple[int, int]] = []
    begin = 0
    if previous is not None and start:
        old_spans = previous.code_spans
        # A block ends at the first piece after it; both kept: the block is as it was.
        kept = bisect_left(old_spans, start, key=lambda span: span[1])
        boxes, spans = previous.code_boxes[:kept], old_spans[:kept]
        begin = old_spans[kept][0] if kept < len(old_spans) else start
    head: Placed | None = None
    head_at = bottom = 0
    for i in range(begin, len(placed) + 1):
        p = placed[i] if i < len(placed) else None
        if p is not None and p.kind == "code" and head is not None:
            bottom = p.rect.bottom()
            continue
        if head is not None:
            r = head.rect
            left, width = r.left() - CODE_PAD, r.width() + 2 * CODE_PAD
            box = QRect(left, r.top() - CODE_TOP, width, bottom + CODE_BOTTOM - r.top() + CODE_TOP)
            bar = QRect(left, box.top(), width, r.bottom() + 3 - box.top())
            boxes.append((box, bar))
            spans.append((head_at, i))
            head = None
        if p is not None and p.kind == "codehead":
            head, head_at, bottom = p, i, p.rect.bottom()
    return boxes, spans


def _kept(reuse: list[Placed], old_specs: list[Spec], specs: list[Spec], x: int, w: int
          ) -> int:
    """How many leading pieces of a previous stack stay where they are: each spec the
    same as before (the very object, as a growing text's leading pieces are, or one
    :func:`_same` finds equal). The last one may be followed by another, so it never
    counts. Objects compared in C: a reply of thousands of pieces costs ~0.1 ms."""
    limit = min(len(reuse), len(specs)) - 1
    if limit <= 0 or not _same(reuse[0], specs[0], x, w):
        return 0  # (the first piece's place checks the column: x and w as before)
    n = min(limit, len(old_specs))
    identical = list(map(operator.is_, specs[:n], old_specs[:n]))
    i = 1
    while i < limit:
        if i < n:
            try:
                i = identical.index(False, i)
            except ValueError:
                i = n
            if i >= limit:
                break
        if not _same(reuse[i], specs[i], x, w):  # a new object: compared in full
            break
        i += 1
    return min(i, limit)


class RowBuilder:
    """Builds row layouts from nodes, with pieces from a :class:`PieceCache`."""

    def __init__(self, cache: PieceCache) -> None:
        self.cache = cache
        self.specs = SpecBuilder(cache)

    def layout(
        self,
        node: Node,
        transcript: Transcript,
        width: int,
        is_last: bool,
        previous: RowLayout | None = None,
        idle: bool = False,
        budget_ms: float | None = None,
    ) -> RowLayout:
        """Lay a node out for a viewport ``width`` (px).

        ``previous``, an older layout of the same row at the same width, lets
        pieces that did not change keep their place (a streaming reply only
        lays out its new tail). ``budget_ms``: new markdown of a text shown before is
        made for about that long, the rest left out (:attr:`RowLayout.partial`: lay it
        out again soon); None: all of it.
        """
        builder = self.specs
        builder.deadline = None if budget_ms is None else time.perf_counter() + budget_ms / 1000
        builder.partial = False
        try:
            specs = builder.specs(node, transcript, is_last, idle)
        finally:
            builder.deadline = None
        partial = builder.partial
        col_w = max(160, min(width - 2 * SIDE, MAX_COLUMN))
        col_x = max(0, (width - col_w) // 2)
        levels = indent_levels(node.depth)
        indent = levels * INDENT
        x, w = col_x + indent, col_w - indent
        guides = [col_x + d * INDENT + INDENT // 2 - 6 for d in range(levels)]
        if node.kind in ("card", "unseen"):  # the note of turns not seen: a quiet card too
            boxed = self._boxed(node, specs, width, x, w, guides, "card", CARD_PAD)
        elif node.turn.role == "user" and continue_request(node.turn, transcript) is None:
            boxed = self._boxed(node, specs, width, x, w, guides, "bubble", BUBBLE_PAD)
        else:
            boxed = None
        writing = is_last and not idle and node.kind == "turn" \
            and node.turn.role == "assistant" and not node.turn.aborted
        buttons = builder.action_buttons(node, is_last)
        if boxed is not None:
            boxed.partial = partial
            keep_room_for_buttons(boxed, buttons, always=writing)
            return boxed
        if previous is not None and previous.width != width:
            previous = None
        start = 0 if previous is None else _kept(previous.pieces, previous.specs, specs, x, w)
        kept = previous.pieces[:start] if previous is not None and start else None
        placed, y = self._stack(specs, x, ROW_PAD, w, kept)
        height = y + ROW_PAD
        boxes, spans = _code_boxes(placed, start, previous)
        layout = RowLayout(node.key, width, height, placed, None, None,
                           QRect(x - 8, 2, w + 16, height - 4), guides,
                           code_boxes=boxes, code_spans=spans, specs=specs, partial=partial)
        keep_room_for_buttons(layout, buttons, always=writing)
        return layout

    def _stack(
        self, specs: list[Spec], x: int, y: int, w: int, kept: list[Placed] | None = None
    ) -> tuple[list[Placed], int]:
        """Place ``specs`` top to bottom from ``y`` in the column at ``x``, ``w`` wide;
        ``kept``: the places of the leading ones, unchanged (see :func:`_kept`)."""
        placed: list[Placed] = []
        start = 0
        if kept:
            start = len(kept)
            placed = list(kept)
            y = placed[-1].rect.bottom() + 1 + _gap(specs[start - 1], specs[start])
        if start == 0 and specs and specs[0].kind == "codehead":
            y += CODE_TOP
        for n in range(start, len(specs)):
            spec = specs[n]
            px, pw = _column(spec, x, w)
            clear_w, clear_h = spec.clear
            if clear_w:  # the text wraps before the message's buttons (at least half kept)
                pw = max(pw // 2, pw - clear_w)
            doc = spec.piece.doc
            if doc.textWidth() != pw:
                doc.setTextWidth(pw)
            h = max(int(doc.size().height() + 0.999), clear_h)
            placed.append(Placed(spec.piece, QRect(px, y, pw, h), spec.kind, spec.fold_key,
                                 spec.muted, spec.bar, spec.copy))
            y += h
            if n + 1 < len(specs):
                y += _gap(spec, specs[n + 1])
        if specs and specs[-1].kind == "code":
            y += CODE_BOTTOM
        return placed, y

    def _boxed(
        self,
        node: Node,
        specs: list[Spec],
        width: int,
        x: int,
        w: int,
        guides: list[int],
        kind: str,
        pad: QSize,
    ) -> RowLayout:
        if kind == "bubble":
            inner_max = int(w * BUBBLE_SHARE) - 2 * pad.width()
        else:
            inner_max = w - 2 * pad.width()
        top = ROW_PAD + (4 if kind == "bubble" else 0)
        placed, y = self._stack(specs, 0, top + pad.height(), inner_max)
        if kind == "bubble":
            ideal = max((p.piece.doc.idealWidth() for p in placed), default=40.0)
            inner = min(inner_max, max(24, int(ideal + 0.999)))
            if inner < inner_max:  # a short message: a narrower bubble
                placed, y = self._stack(specs, 0, top + pad.height(), inner)
            left = x + w - inner - 2 * pad.width()
        else:
            inner, left = inner_max, x
        for p in placed:
            p.rect.translate(left + pad.width(), 0)
        frame = QRect(left, top, inner + 2 * pad.width(), y - top + pad.height())
        height = frame.bottom() + 1 + ROW_PAD
        column = QRect(x - 8, 2, w + 16, height - 4)
        boxes, spans = _code_boxes(placed)
        return RowLayout(node.key, width, height, placed, frame, kind, column, guides,
                         code_boxes=boxes, code_spans=spans, specs=specs)


# -- the message's buttons (``actions_row.MessageActions``): where they go, room for them ----

#: Pieces drawn as boxes across the column (a tool's input and output, code, media): the
#: buttons never sit on them.
_BOXES = ("body", "code", "codehead", "media")


def buttons_size(buttons: int) -> QSize:
    """The most room ``buttons`` of the message's buttons take, frame included (px)."""
    return QSize(buttons * ACTION_BUTTON_PX + ACTIONS_EDGE_PX - ACTIONS_INSET, ACTIONS_HEIGHT_PX)


def button_corners(layout: RowLayout, size: QSize) -> tuple[QRect, QRect]:
    """Where buttons of ``size`` go on ``layout``'s row (row coordinates): at the bottom
    right of its content column, and at its top right."""
    column = layout.column if layout.column.isValid() else \
        QRect(0, 0, layout.width, layout.height)
    x = column.right() - size.width() - ACTIONS_INSET
    bottom = layout.height - 1 - size.height() - ACTIONS_INSET // 2
    return (QRect(x, bottom, size.width(), size.height()),
            QRect(x, ACTIONS_INSET // 2, size.width(), size.height()))


def beside_bubble(layout: RowLayout, size: QSize) -> QRect | None:
    """Where buttons of ``size`` go beside a person's bubble (on its left, level with its
    bottom; row coordinates), or None: no bubble, or no room left of it in the column."""
    if layout.frame is None or layout.frame_kind != "bubble":
        return None
    bubble, column = layout.frame, layout.column
    x = bubble.left() - size.width() - ACTIONS_INSET
    if not column.isValid() or x < column.left():
        return None
    return QRect(x, bubble.bottom() - size.height(), size.width(), size.height())


def keep_room_for_buttons(layout: RowLayout, buttons: int, *, always: bool = False) -> None:
    """Make ``layout``'s row tall enough that its ``buttons`` cover none of its text: when
    both the bottom and the top right corners (:func:`button_corners`) hold text, a box or
    code, and no room is left of a bubble, the row grows by a strip under its content
    where they go. ``always``: keep the strip whatever the corners hold (a reply being
    written: its last line comes and goes at the corner, the row would jump)."""
    if buttons <= 0:
        return
    size = buttons_size(buttons)
    if beside_bubble(layout, size) is not None:
        return
    bottom, top = button_corners(layout, size)
    if not always and not (covers(layout, bottom) and covers(layout, top)):
        return
    lowest = max((p.rect.bottom() for p in layout.pieces), default=0)
    lowest = max([lowest, *(box.bottom() for box, _bar in layout.code_boxes)])
    if layout.frame is not None:
        lowest = max(lowest, layout.frame.bottom())
    height = lowest + 2 + size.height() + ACTIONS_INSET // 2 + 1  # 1 px clear above them
    if height > layout.height:
        layout.height = height
        column = layout.column
        if column.isValid():
            layout.column = QRect(column.x(), column.y(), column.width(), height - 4)


def covers(layout: RowLayout, box: QRect) -> bool:
    """True when ``box`` (row coordinates) lies over something ``layout`` shows: a code
    box, a boxed piece (:data:`_BOXES`) or the ink of a line of text."""
    if any(code.intersects(box) for code, _bar in layout.code_boxes_in(box.top(), box.bottom())):
        return True
    pieces = layout.pieces
    first = bisect_left(pieces, box.top(), key=lambda p: p.rect.bottom())
    for placed in pieces[first:]:
        if placed.rect.top() > box.bottom():
            break
        if not placed.rect.intersects(box):
            continue
        if placed.kind in _BOXES or placed.bar:
            return True
        if _ink_meets(placed.piece.doc, box.translated(-placed.rect.topLeft())):
            return True
    return False


def _ink_meets(doc: QTextDocument, box: QRect) -> bool:
    """True when a line of ``doc`` has text under ``box`` (document coordinates). Only the
    blocks near the box are looked at: from the last one up for a box in the lower half
    (the buttons' bottom corner on a long reply), from the first one down otherwise."""
    target = QRectF(box)
    layout = doc.documentLayout()
    from_end = target.top() > layout.documentSize().height() / 2
    block = doc.lastBlock() if from_end else doc.begin()
    while block.isValid():
        bounds = layout.blockBoundingRect(block)
        if bounds.intersects(target):
            lines = block.layout()
            for i in range(lines.lineCount()):
                ink = lines.lineAt(i).naturalTextRect().translated(bounds.topLeft())
                if ink.intersects(target):
                    return True
        elif (bounds.bottom() < target.top()) if from_end else (bounds.top() > target.bottom()):
            break
        block = block.previous() if from_end else block.next()
    return False

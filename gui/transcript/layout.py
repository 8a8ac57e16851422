"""Laying out one transcript row: which pieces, where, how tall.

:func:`build_row` turns a :class:`~gui.transcript.rows.Node` into a
:class:`RowLayout` for a given viewport width: the pieces stacked in the
centred content column (user messages in a right-aligned bubble, compaction
summaries in a card), plus what clicks on it mean (:meth:`RowLayout.hit`).
"""

from __future__ import annotations

import html
from collections import OrderedDict
from dataclasses import dataclass, field
from datetime import datetime

from PySide6.QtCore import QPoint, QPointF, QRect, QRectF, QSize
from PySide6.QtGui import QTextDocument

from core.content import (
    DocumentBlock,
    ImageBlock,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    Turn,
    UnknownBlock,
)
from gui.markdown import (
    BLOCKED_PREFIX,
    COPY_PREFIX,
    IMAGE_PREFIX,
    is_safe_url,
    split_blocks,
    split_blocks_after,
)
from gui.transcript.pieces import (
    Piece,
    PieceCache,
    result_status,
    result_text,
    tool_args_summary,
    tool_input_text,
)
from gui.transcript.rows import Node, Transcript, summary_block

SIDE = 20  # px between the viewport's edges and the content column
MAX_COLUMN = 800  # px: widest content column (the composer uses the same)
ROW_PAD = 7  # px above and below a row's content
GAP = 8  # px between two pieces
FOLD_GAP = 3  # px after a fold line
INDENT = 22  # px per level of nesting inside compaction cards
BAR = 12  # px: unfolded bodies start this far right of their fold line
BUBBLE_PAD = QSize(14, 9)  # px inside a user bubble (horizontal, vertical)
BUBBLE_SHARE = 0.8  # a user bubble is at most this share of the column
CARD_PAD = QSize(12, 8)  # px inside a compaction card
SPLIT_MEMO = 64  # text blocks whose markdown split is remembered (streaming)
RESUME_HREF = "parley:resume"
CARD_FOLD = "card"


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
        for placed in self.pieces:
            rect = anchor_rect(placed.piece.doc, href)
            if rect is not None:
                return (rect.center() + QPointF(placed.rect.topLeft())).toPoint()
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

    def plain_text(self, *, copy_only: bool = False) -> str:
        """The row's text as shown (fold lines and marks too unless ``copy_only``)."""
        parts = [
            piece_plain_text(p.piece)
            for p in self.pieces
            if p.copy or not copy_only
        ]
        return "\n\n".join(t for t in parts if t)


def anchor_rect(doc: QTextDocument, href: str) -> QRectF | None:
    """Where the first anchor whose href starts with ``href`` is in ``doc`` (doc coordinates)."""
    block = doc.begin()
    layout = doc.documentLayout()
    while block.isValid():
        it = block.begin()
        while not it.atEnd():
            frag = it.fragment()
            if frag.isValid() and frag.charFormat().anchorHref().startswith(href):
                box = layout.blockBoundingRect(block)
                line = block.layout().lineForTextPosition(frag.position() - block.position())
                if not line.isValid():
                    return box
                x0 = line.cursorToX(frag.position() - block.position())[0]
                x1 = line.cursorToX(frag.position() + frag.length() - block.position())[0]
                return QRectF(box.left() + x0, box.top() + line.y(), max(1.0, x1 - x0),
                              line.height())
            it += 1
        block = block.next()
    return None


def tooltip_text(node: Node, hit: Hit | None) -> str:
    """What the tooltip says over a row: where a link goes, why it does not, who wrote it."""
    if hit is not None and hit.href:
        href, piece = hit.href, hit.placed.piece
        if href.startswith(COPY_PREFIX):
            return "Copy this code to the clipboard"
        if href == RESUME_HREF:
            return "Send the request again to finish this reply"
        if href.startswith(BLOCKED_PREFIX):
            url = _indexed(piece.blocked, href, BLOCKED_PREFIX)
            return f"Not opened: {url}\nOnly http, https and mailto links open."
        if href.startswith(IMAGE_PREFIX):
            url = _indexed(piece.images, href, IMAGE_PREFIX)
            if is_safe_url(url):
                return f"Image not loaded: {url}\nClick to open it in your browser."
            return f"Image not loaded: {url}"
        return href
    if hit is not None and hit.fold_key is not None:
        return "Click or press Space to unfold" if "▸" in hit.placed.piece.doc.toPlainText() \
            else "Click or press Space to fold"
    turn = node.turn
    if turn.role == "assistant" and turn.model and node.kind == "turn":
        when = datetime.fromtimestamp(turn.created_at / 1000).strftime("%Y-%m-%d %H:%M")
        text = f"{turn.model} · {when}"
        if turn.usage is not None:
            u = turn.usage
            text += f"\n{u.total_input_tokens:,} tokens in · {u.output_tokens:,} out"
        return text
    return ""


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


def _same(placed: Placed, spec: _Spec, x: int, w: int) -> bool:
    """True when a placed piece is what ``spec`` would place (same piece, same column)."""
    px = x + BAR if spec.bar else x
    return (
        placed.piece is spec.piece
        and placed.kind == spec.kind
        and placed.fold_key == spec.fold_key
        and placed.bar == spec.bar
        and placed.rect.left() == px
        and placed.rect.width() == (w - BAR if spec.bar else w)
        and placed.piece.doc.textWidth() == placed.rect.width()
    )


def _gap(above: _Spec, below: _Spec) -> int:
    """Space (px) between two stacked pieces."""
    if below.bar or (above.kind == "fold" and below.kind == "fold"):
        return FOLD_GAP  # a fold's own body, or a run of fold lines
    if above.kind == "fold" or below.kind in ("fold", "mark"):
        return GAP - 2
    return GAP


@dataclass(slots=True)
class _Spec:
    piece: Piece
    kind: str
    fold_key: str | None = None
    muted: bool = False
    bar: bool = False
    copy: bool = False


class RowBuilder:
    """Builds row layouts from nodes, with pieces from a :class:`PieceCache`."""

    def __init__(self, cache: PieceCache) -> None:
        self.cache = cache
        # Last split of each streamed text block: (turn id, block index) -> (text, chunks).
        self._splits: OrderedDict[tuple[str, int], tuple[str, list[str]]] = OrderedDict()

    def chunks(self, key: str, index: int, text: str) -> list[str]:
        """Markdown chunks of a text block, re-splitting only the tail of a grown text."""
        memo_key = (key, index)
        chunks = split_blocks_after(self._splits.get(memo_key), text)
        self._splits[memo_key] = (text, chunks)
        self._splits.move_to_end(memo_key)
        if len(self._splits) > SPLIT_MEMO:
            self._splits.popitem(last=False)
        return chunks

    # -- what a row holds ---------------------------------------------------
    def specs(self, node: Node, transcript: Transcript, is_last: bool) -> list[_Spec]:
        if node.kind == "card":
            return self._card_specs(node)
        turn = node.turn
        out: list[_Spec] = []
        for i, block in enumerate(turn.blocks):
            self._block_specs(out, node, transcript, i, block, is_last)
        if turn.role == "assistant" and not out and not turn.aborted:
            out.append(_Spec(self.cache.line("typing", self._muted("…")), "mark"))
        if turn.aborted:
            out.append(self._aborted_spec(turn, resumable=is_last))
        return out

    def _block_specs(
        self, out: list[_Spec], node: Node, tr: Transcript, i: int, block: object, last: bool
    ) -> None:
        cache = self.cache
        user = node.turn.role == "user"
        if isinstance(block, TextBlock):
            if block.origin is not None and block.origin.kind != "user":
                out.append(_Spec(cache.line(("origin", block.origin), self._origin(block)), "caption"))
            if user or block.recovered:
                if block.text:
                    out.append(_Spec(cache.plain(block.text), "text", copy=True))
                return
            for chunk in self.chunks(node.key, i, block.text):
                if chunk.strip():
                    out.append(_Spec(cache.markdown(chunk), "text", copy=True))
        elif isinstance(block, ThinkingBlock):
            key = f"think:{i}"
            opened = key in node.open_folds
            out.append(_Spec(self._fold_line(key, opened, "💭", "Thinking…", ""), "fold", key))
            if opened:
                for chunk in self.chunks(node.key, i, block.thinking):
                    if chunk.strip():
                        out.append(_Spec(cache.markdown(chunk), "body", muted=True, bar=True))
        elif isinstance(block, ToolUseBlock):
            self._tool_specs(out, node, block, tr.result_for(block.id), last)
        elif isinstance(block, ToolResultBlock):
            if tr.owns(block.tool_use_id):
                return  # shown in the fold of its tool_use
            key = f"result:{block.tool_use_id}"
            opened = key in node.open_folds
            word = "Tool error" if block.is_error else "Tool result"
            out.append(_Spec(self._fold_line(key, opened, "🔧", word, ""), "fold", key))
            if opened:
                self._result_specs(out, block)
        elif isinstance(block, ImageBlock):
            out.append(_Spec(cache.thumbnail(block), "media"))
        elif isinstance(block, DocumentBlock):
            out.append(_Spec(cache.document_block(block), "media"))
        elif isinstance(block, UnknownBlock):
            text = self._muted(f"[content of type '{block.type}' is not shown]")
            out.append(_Spec(cache.line(("unknown", block.type), text), "caption"))

    def _tool_specs(
        self,
        out: list[_Spec],
        node: Node,
        block: ToolUseBlock,
        result: ToolResultBlock | None,
        last: bool,
    ) -> None:
        key = f"tool:{block.id}"
        opened = key in node.open_folds
        symbol, _ = result_status(result, running=last and not node.turn.aborted)
        args = html.escape(tool_args_summary(block.input))
        label = f"<b>{html.escape(block.name)}</b>({args})"
        out.append(_Spec(self._fold_line(key, opened, "🔧", label, symbol, raw=True), "fold", key))
        if not opened:
            return
        cache = self.cache
        out.append(_Spec(cache.code(tool_input_text(block), "json", "input"), "body", bar=True))
        if result is not None:
            self._result_specs(out, result)

    def _result_specs(self, out: list[_Spec], result: ToolResultBlock) -> None:
        cache = self.cache
        text = result_text(result.content)
        if text or not result.content:
            label = "error" if result.is_error else "output"
            out.append(_Spec(cache.code(text, "text", label), "body", bar=True))
        for part in result.content:
            if isinstance(part, ImageBlock):
                out.append(_Spec(cache.thumbnail(part), "body", bar=True))

    def _card_specs(self, node: Node) -> list[_Spec]:
        block = summary_block(node.turn)
        opened = node.expanded
        count = block.replaced_count if block else 0
        if not count and node.children:
            count = sum(1 for c in node.children if not c.hidden)
        model = (node.turn.model or "").split(":", 1)[-1]
        label = f"Summarized {count} turn{'s' if count != 1 else ''}"
        if model:
            label += f" · {html.escape(model)}"
        if block is not None and (block.legacy or node.children is None):
            label += self._muted(" · earlier turns not kept")
        out = [_Spec(self._fold_line(CARD_FOLD, opened, "🗂", label, "", raw=True), "fold",
                     CARD_FOLD)]
        if opened and block is not None:
            for chunk in split_blocks(block.summary):
                if chunk.strip():
                    out.append(_Spec(self.cache.markdown(chunk), "text", copy=True))
        return out

    def _aborted_spec(self, turn: Turn, resumable: bool) -> _Spec:
        warn = self.cache.colors.warn_fg.name()
        text = f'<span style="color:{warn}">■ Stopped — reply incomplete</span>'
        if resumable:
            text += f'&nbsp;&nbsp;·&nbsp;&nbsp;<a href="{RESUME_HREF}"><b>Resume</b></a>'
        return _Spec(self.cache.line(("aborted", resumable), text), "mark")

    def _fold_line(
        self, key: str, opened: bool, icon: str, label: str, status: str, raw: bool = False
    ) -> Piece:
        muted = self.cache.colors.muted.name()
        arrow = "▾" if opened else "▸"
        text = label if raw else html.escape(label)
        tail = ""
        if status:
            color = self._status_color(status)
            tail = f'&nbsp;&nbsp;<span style="color:{color}">{status}</span>'
        body = f'<span style="color:{muted}">{arrow}&nbsp;{icon}&nbsp;</span>{text}{tail}'
        return self.cache.line(("fold", key, opened, label, status), body)

    def _status_color(self, status: str) -> str:
        colors = self.cache.colors
        if status == "✗":
            return colors.error_fg.name()
        if status == "✓":
            return "#3fb950" if colors.dark else "#1a7f37"
        return colors.muted.name()

    def _origin(self, block: TextBlock) -> str:
        o = block.origin
        assert o is not None
        bits = [o.kind if not o.source else f"via {o.source}"]
        if o.sender:
            bits.append(o.sender)
        return self._muted(" · ".join(bits))

    def _muted(self, text: str) -> str:
        return f'<span style="color:{self.cache.colors.muted.name()}">{html.escape(text)}</span>'

    # -- geometry -----------------------------------------------------------
    def layout(
        self,
        node: Node,
        transcript: Transcript,
        width: int,
        is_last: bool,
        previous: RowLayout | None = None,
    ) -> RowLayout:
        """Lay a node out for a viewport ``width`` (px).

        ``previous``, an older layout of the same row at the same width, lets
        pieces that did not change keep their place (a streaming reply only
        lays out its new tail).
        """
        specs = self.specs(node, transcript, is_last)
        col_w = max(160, min(width - 2 * SIDE, MAX_COLUMN))
        col_x = max(0, (width - col_w) // 2)
        indent = node.depth * INDENT
        x, w = col_x + indent, col_w - indent
        guides = [col_x + d * INDENT + INDENT // 2 - 6 for d in range(node.depth)]
        if node.kind == "card":
            return self._boxed(node, specs, width, x, w, guides, "card", CARD_PAD)
        if node.turn.role == "user":
            return self._boxed(node, specs, width, x, w, guides, "bubble", BUBBLE_PAD)
        reuse = previous.pieces if previous is not None and previous.width == width else None
        placed, y = self._stack(specs, x, ROW_PAD, w, reuse)
        height = y + ROW_PAD
        return RowLayout(node.key, width, height, placed, None, None,
                         QRect(x - 8, 2, w + 16, height - 4), guides)

    def _stack(
        self, specs: list[_Spec], x: int, y: int, w: int, reuse: list[Placed] | None = None
    ) -> tuple[list[Placed], int]:
        placed: list[Placed] = []
        start = 0
        if reuse:  # keep the leading pieces that are the same as before, where they were
            limit = min(len(reuse), len(specs)) - 1  # the last one may be followed by another
            while start < limit and _same(reuse[start], specs[start], x, w):
                start += 1
            if start:
                placed = reuse[:start]
                y = placed[-1].rect.bottom() + 1 + _gap(specs[start - 1], specs[start])
        for n in range(start, len(specs)):
            spec = specs[n]
            px, pw = (x + BAR, w - BAR) if spec.bar else (x, w)
            doc = spec.piece.doc
            if doc.textWidth() != pw:
                doc.setTextWidth(pw)
            h = int(doc.size().height() + 0.999)
            placed.append(Placed(spec.piece, QRect(px, y, pw, h), spec.kind, spec.fold_key,
                                 spec.muted, spec.bar, spec.copy))
            y += h
            if n + 1 < len(specs):
                y += _gap(spec, specs[n + 1])
        return placed, y

    def _boxed(
        self,
        node: Node,
        specs: list[_Spec],
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
        return RowLayout(node.key, width, height, placed, frame, kind, column, guides)

"""The pieces a transcript row is made of, each a small QTextDocument.

A row is a vertical stack of pieces: a markdown chunk, a fold line
("tool(args…)", "Thinking…", each after an icon the app draws), a code block
of a tool call, a thumbnail, the "Stopped — reply incomplete" mark… Each
piece is rendered once and cached by its content (:class:`PieceCache`, a
bounded LRU), so a streaming reply whose text grows only renders its last
markdown chunk again, and rows that come back into view cost nothing.

Safety: documents are :class:`SafeDocument`, which never loads a resource it
was not given (no file, no network); the only images are thumbnails decoded
from a block's base64 ``data`` and the app's own icons (``resources/icons``).
"""

from __future__ import annotations

import base64
import binascii
import html
import json
import re
from collections import OrderedDict
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import QByteArray, QSize, Qt, QUrl
from PySide6.QtGui import QFont, QFontMetricsF, QImage, QTextDocument

from parley.core.attachments.files import size_text
from parley.core.content import (
    DocumentBlock,
    ImageBlock,
    MediaPart,
    TextBlock,
    ToolResultBlock,
    ToolResultPart,
    ToolUseBlock,
)
from parley.core.visible import escape_invisible
from parley.gui.look.appearance import icon
from parley.gui.look.theme import TranscriptColors
from parley.gui.text.markdown import (
    COPY_PREFIX,
    CodeBlock,
    RenderedMarkdown,
    document_stylesheet,
    lexer_loaded,
    render_code_lines,
    render_markdown,
    render_plain,
)

THUMB_MAX = QSize(320, 220)  # px: largest thumbnail of an image block
MEDIA_PREFIX = "parley:media/"  # anchor of a thumbnail or a file chip: open it full size
OUTPUT_LIMIT = 20_000  # characters of a tool's input/output shown when unfolded
ARGS_LIMIT = 70  # characters of a tool call's arguments on its fold line
IMAGE_SCHEME = "parley-img"
#: Icons drawn by the app in a piece (``icon_html``): no font needs a glyph for them.
ICON_SCHEME = "parley-icon"
_ICON_SRC = re.compile(rf'src="{ICON_SCHEME}:([a-z-]+)/([0-9a-f]{{6}})"')


def icon_html(name: str, color: str) -> str:
    """HTML for the app's icon ``resources/icons/<name>.svg`` in ``color`` ("#rrggbb"),
    sized to the line's text when the piece is made (:meth:`PieceCache.document`)."""
    return f'<img src="{ICON_SCHEME}:{name}/{color.lstrip("#").lower()}" align="middle">'


def icons_in(doc: QTextDocument) -> list[str]:
    """The names of the app's icons shown in a document, in order."""
    out: list[str] = []
    block = doc.begin()
    while block.isValid():
        it = block.begin()
        while not it.atEnd():
            fmt = it.fragment().charFormat()
            if fmt.isImageFormat():
                name = fmt.toImageFormat().name()
                if name.startswith(f"{ICON_SCHEME}:"):
                    out.append(name.split(":", 1)[1].split("/", 1)[0])
            it += 1
        block = block.next()
    return out


class SafeDocument(QTextDocument):
    """A QTextDocument that loads nothing by itself.

    Only resources added with ``addResource`` (thumbnails) are shown; any other
    ``src``/``href`` resource — ``http:``, ``file:``, relative — is refused
    without touching the disk or the network. ``refused`` counts the attempts.
    """

    refused = 0

    def loadResource(self, type_: int, name: QUrl | str) -> Any:  # noqa: N802 (Qt override)
        SafeDocument.refused += 1
        return None


@dataclass(slots=True, eq=False)
class Piece:
    """A rendered piece: its document and what its ``parley:`` anchors point to.

    Attributes:
        doc: the document (laid out at whatever width it was last given).
        code: code blocks; anchor ``parley:copy/<i>``.
        blocked: link destinations not opened; ``parley:blocked/<i>``.
        images: image sources not loaded; ``parley:image/<i>``.
        media: images and documents a click opens full size; ``parley:media/<i>``.
    """

    doc: QTextDocument
    code: tuple[CodeBlock, ...] = ()
    blocked: tuple[str, ...] = ()
    images: tuple[str, ...] = ()
    media: tuple[ImageBlock | DocumentBlock, ...] = ()


class PieceCache:
    """Makes the documents of pieces and keeps the recent ones (LRU by content key).

    Args:
        colors: colours of the current palette (a new palette needs a new cache).
        font: the transcript's font.
        limit: how many pieces are kept.
    """

    def __init__(self, colors: TranscriptColors, font: QFont, limit: int = 1500) -> None:
        self.colors = colors
        self.font = QFont(font)
        self.mono = QFont(colors.markdown.mono_family)
        self.limit = limit
        self.css = document_stylesheet(colors.markdown)
        self._items: OrderedDict[Hashable, Piece] = OrderedDict()
        self.made = 0  # pieces rendered so far (tests, benchmarks)
        #: Told the language of code shown plain because its lexer is not made yet
        #: (:meth:`code_lines`); None: such code is highlighted at once.
        self.lexer_wanted: Callable[[str], None] | None = None

    def __len__(self) -> int:
        return len(self._items)

    def get(self, key: Hashable, make: Callable[[], Piece]) -> Piece:
        """Return the cached piece for ``key``, rendering it with ``make`` if needed."""
        piece = self._items.get(key)
        if piece is not None:
            self._items.move_to_end(key)
            return piece
        piece = make()
        self.made += 1
        self._items[key] = piece
        if len(self._items) > self.limit:
            self._items.popitem(last=False)
        return piece

    def document(self, html_text: str, *, small: bool = False) -> QTextDocument:
        """Return a new safe document holding ``html_text`` with the transcript's style."""
        doc = SafeDocument()
        doc.setUndoRedoEnabled(False)
        doc.setDocumentMargin(0)
        font = QFont(self.font)
        if small:
            font.setPointSizeF(max(6.0, font.pointSizeF() * 0.92))
        doc.setDefaultFont(font)
        doc.setDefaultStyleSheet(self.css)
        if ICON_SCHEME in html_text:
            html_text = _add_icons(doc, html_text, font)
        doc.setHtml(html_text)
        return doc

    def from_rendered(self, rendered: RenderedMarkdown, *, small: bool = False) -> Piece:
        return Piece(
            self.document(rendered.html, small=small),
            rendered.code_blocks,
            rendered.blocked_links,
            rendered.images,
        )

    # -- the kinds of pieces ------------------------------------------------
    def markdown(self, chunk: str) -> Piece:
        """A chunk of markdown (see ``parley.gui.text.markdown_blocks.split_blocks``)."""
        return self.get(
            ("md", chunk),
            lambda: self.from_rendered(render_markdown(chunk, self.colors.markdown)),
        )

    def plain(self, text: str) -> Piece:
        """Text shown as typed (user messages)."""
        return self.get(("plain", text), lambda: Piece(self.document(render_plain(text))))

    def line(self, key: Hashable, html_text: str, *, small: bool = True) -> Piece:
        """A one-line piece (fold lines, marks, captions) from trusted HTML."""
        return self.get(("line", key), lambda: Piece(self.document(html_text, small=small)))

    def code_head(self, label: str, block: CodeBlock) -> Piece:
        """The label bar of a code block: its language and a Copy anchor for all its code."""
        muted = self.colors.muted.name()

        def make() -> Piece:
            text = (
                '<table width="100%" cellspacing="0" cellpadding="0"><tr>'
                f'<td><span style="color:{muted}">{html.escape(label)}</span></td>'
                f'<td align="right"><a class="copy" href="{COPY_PREFIX}0">Copy</a></td>'
                "</tr></table>"
            )
            return Piece(self.document(text, small=True), code=(block,))

        return self.get(("code-head", label, block), make)

    def code_lines(self, code: str, language: str) -> Piece:
        """Some lines of a code block, highlighted (a code block is drawn in parts).

        While the language's lexer is not made yet (its first use imports and compiles
        it: up to a few hundred ms on a busy machine, for each language of a chat just
        opened), the lines are shown plain and :attr:`lexer_wanted` is told: it has
        the lexer made elsewhere and the pieces made again once it is there.
        """
        if self.lexer_wanted is not None and not lexer_loaded(language):
            self.lexer_wanted(language)
            return self.get(
                ("code-plain", code),
                lambda: Piece(self.document(render_code_lines(code, "", self.colors.markdown),
                                            small=True)),
            )
        return self.get(
            ("code-lines", code, language),
            lambda: Piece(
                self.document(render_code_lines(code, language, self.colors.markdown), small=True)
            ),
        )

    def thumbnail(self, block: ImageBlock) -> Piece:
        """An image from its base64 data, scaled down; a placeholder link for URL images."""
        if block.data is None:
            return remote_image_piece(self, block.url or "")
        key = block.attachment_id or block.data
        return self.get(("img", key, block.media_type), lambda: self._thumbnail(block))

    def _thumbnail(self, block: ImageBlock) -> Piece:
        image = QImage()
        try:
            raw = base64.b64decode(block.data or "", validate=False)
        except (binascii.Error, ValueError):
            raw = b""
        if raw:
            image.loadFromData(QByteArray(raw))
        if image.isNull():
            return Piece(self.document(_muted(f"[image: {block.media_type}, unreadable]", self)))
        if image.width() > THUMB_MAX.width() or image.height() > THUMB_MAX.height():
            image = image.scaled(
                THUMB_MAX,
                Qt.AspectRatioMode.KeepAspectRatio,
                Qt.TransformationMode.SmoothTransformation,
            )
        doc = SafeDocument()
        doc.setUndoRedoEnabled(False)
        doc.setDocumentMargin(0)
        url = QUrl(f"{IMAGE_SCHEME}:0")
        doc.addResource(QTextDocument.ResourceType.ImageResource, url, image)
        w, h = image.width(), image.height()
        doc.setHtml(f'<a href="{MEDIA_PREFIX}0"><img src="{IMAGE_SCHEME}:0" width="{w}" '
                    f'height="{h}"></a>')
        return Piece(doc, media=(block,))

    def document_block(self, block: DocumentBlock) -> Piece:
        """A file chip for a document (a PDF): its name, type and size; a click opens it."""
        size = len(block.data) * 3 // 4 - block.data[-2:].count("=")  # bytes behind the base64
        name = html.escape(block.name or "document")
        kind = "PDF" if block.media_type == "application/pdf" else block.media_type
        text = f'{icon_html("file", self.colors.muted.name())}&nbsp;' \
            f'<a href="{MEDIA_PREFIX}0"><b>{name}</b></a> ' \
            f"<span style='color:{self.colors.muted.name()}'>· " \
            f"{html.escape(kind)} · {_human_size(size)}</span>"
        key = ("doc", block.attachment_id or block.data, block.name, block.media_type)
        return self.get(key, lambda: Piece(self.document(text), media=(block,)))


def _add_icons(doc: QTextDocument, html_text: str, font: QFont) -> str:
    """Put the icons ``html_text`` names into ``doc`` (drawn at 2x, shown the height of
    the font's capitals and ascenders); return the HTML with their sizes."""
    px = max(8, round(QFontMetricsF(font).ascent()))

    def sized(m: re.Match[str]) -> str:
        name, color = m.group(1), m.group(2)
        pixmap = icon(name, f"#{color}", px).pixmap(QSize(px, px), 2.0)
        doc.addResource(QTextDocument.ResourceType.ImageResource,
                        QUrl(f"{ICON_SCHEME}:{name}/{color}"), pixmap.toImage())
        return f'{m.group(0)} width="{px}" height="{px}"'

    return _ICON_SRC.sub(sized, html_text)


def remote_image_piece(cache: PieceCache, url: str) -> Piece:
    """A link-like placeholder for an image given by URL: never fetched."""
    label = html.escape(_shorten(url, 60))
    muted = cache.colors.muted.name()

    def make() -> Piece:
        doc = cache.document(
            f'<a class="image" href="parley:image/0">[image: {label}]</a> '
            f'<span style="color:{muted}">(not loaded)</span>',
            small=True,
        )
        return Piece(doc, images=(url,))

    return cache.get(("remote-image", url), make)


def _muted(text: str, cache: PieceCache) -> str:
    return f'<span style="color:{cache.colors.muted.name()}">{html.escape(text)}</span>'


def _shorten(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _human_size(n: int) -> str:
    return size_text(n)


def tool_args_summary(tool_input: Any) -> str:
    """One-line summary of a tool call's arguments: ``path="a.txt", limit=10`` (shortened;
    invisible characters written out as ``<U+202E>``: ``parley.core.visible``)."""
    if isinstance(tool_input, dict):
        parts = []
        for key, value in tool_input.items():
            shown = json.dumps(value, ensure_ascii=False) if not isinstance(value, str) else (
                '"' + value + '"'
            )
            parts.append(f"{key}={shown}")
        text = ", ".join(parts)
    else:
        text = json.dumps(tool_input, ensure_ascii=False, default=str)
    return _shorten(escape_invisible(text), ARGS_LIMIT)


def tool_input_text(block: ToolUseBlock) -> str:
    """The tool call's input as indented JSON (invisible characters written out, as in
    the approval dialog; cut at OUTPUT_LIMIT characters)."""
    try:
        text = json.dumps(dict(block.input), ensure_ascii=False, indent=2, default=str)
    except (TypeError, ValueError):
        text = str(block.input)
    return escape_invisible(_limit(text))


def result_text(parts: tuple[ToolResultPart, ...]) -> str:
    """The text parts of a tool result, joined (invisible characters written out: a
    result quoting a tool's name, such as Parley's own "declined" text, reads as the
    dialog showed it; cut at OUTPUT_LIMIT characters)."""
    texts = [p.text for p in parts if isinstance(p, TextBlock)]
    for p in parts:
        if isinstance(p, DocumentBlock):
            texts.append(f"[document: {p.name or p.media_type}]")
        elif isinstance(p, MediaPart):
            texts.append(f"[{p.kind}: {p.media_type}]")
    return escape_invisible(_limit("\n".join(texts)))


def _limit(text: str) -> str:
    if len(text) <= OUTPUT_LIMIT:
        return text
    rest = len(text) - OUTPUT_LIMIT
    return text[:OUTPUT_LIMIT] + f"\n… ({rest:,} more characters; use Copy message for all)"


def result_status(result: ToolResultBlock | None, running: bool) -> tuple[str, str]:
    """Return (status, tooltip word) for a tool call's fold line: the icon names
    ``check`` / ``cross`` for a result, a symbol ("…", "–") without one."""
    if result is None:
        return ("…", "running") if running else ("–", "no result")
    return ("cross", "failed") if result.is_error else ("check", "done")

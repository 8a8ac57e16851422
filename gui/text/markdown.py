"""Markdown → HTML for Qt's rich-text engine (QTextDocument), code highlighted by Pygments.

The transcript shows model replies as markdown. This module turns markdown text
into the HTML subset QTextDocument understands, with three safety rules:

* raw HTML in the text is shown as text, never interpreted (``html=False``);
* images are never loaded: ``![alt](src)`` becomes a link-like placeholder
  (``parley:image/<i>``) so nothing is fetched until the user clicks it;
* only ``http``, ``https`` and ``mailto`` links are real links; any other
  destination (``javascript:``, ``file:``, relative paths…) is shown as a
  *blocked* link (``parley:blocked/<i>``) that does nothing when clicked.

Fenced code blocks are highlighted with Pygments (inline ``style`` colours, no
CSS classes) and carry a copy anchor ``parley:copy/<i>``; the caller maps the
index back to :attr:`RenderedMarkdown.code_blocks` to put the code on the clipboard.

For streaming, :mod:`parley.gui.text.markdown_blocks` cuts markdown at top-level block
boundaries so that a growing reply only re-renders its last chunk.

This module does not import Qt: it returns strings.
"""

from __future__ import annotations

import functools
import html
import re
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from markdown_it import MarkdownIt
from markdown_it.common.utils import escapeHtml, unescapeAll
from markdown_it.renderer import RendererHTML
from markdown_it.token import Token
from markdown_it.utils import OptionsDict
from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexer import Lexer
from pygments.lexers import TextLexer, get_lexer_by_name
from pygments.styles import get_style_by_name
from pygments.util import ClassNotFound

#: URL schemes a click may open (in the system browser / mail client).
SAFE_SCHEMES = frozenset({"http", "https", "mailto"})
#: Anchor prefixes Parley uses inside rendered HTML (never opened as URLs).
COPY_PREFIX = "parley:copy/"
BLOCKED_PREFIX = "parley:blocked/"
IMAGE_PREFIX = "parley:image/"


@dataclass(frozen=True, slots=True)
class MarkdownStyle:
    """Colours and fonts the generated HTML uses (CSS colour strings).

    Attributes:
        dark: True on a dark palette (picks the dark Pygments style).
        text: body text colour.
        muted: secondary text (code language labels, blocked links).
        link: link colour.
        border: table and rule colour.
        code_bg: fenced code background.
        code_header_bg: background of the code block's label/copy bar.
        inline_code_bg: background of `inline code`.
        table_header_bg: background of table header cells.
        mono_family: monospace font family for code.
        pygments_style: name of the Pygments style for highlighting.
    """

    dark: bool = False
    text: str = "#1f2328"
    muted: str = "#6e7781"
    link: str = "#0969da"
    border: str = "#d0d7de"
    code_bg: str = "#f6f8fa"
    code_header_bg: str = "#eaeef2"
    inline_code_bg: str = "#eff1f3"
    table_header_bg: str = "#f6f8fa"
    mono_family: str = "monospace"
    pygments_style: str = "default"


@dataclass(frozen=True, slots=True)
class CodeBlock:
    """A fenced or indented code block: its language label ('' if none) and code."""

    language: str
    code: str


@dataclass(frozen=True, slots=True)
class RenderedMarkdown:
    """The HTML of a markdown text and what its Parley anchors refer to.

    Attributes:
        html: HTML for ``QTextDocument.setHtml`` (use :func:`document_stylesheet`
            as the document's default style sheet).
        code_blocks: code of each block; anchor ``parley:copy/<i>`` is ``code_blocks[i]``.
        blocked_links: destinations not allowed as links; ``parley:blocked/<i>``.
        images: image sources never loaded; ``parley:image/<i>``.
    """

    html: str
    code_blocks: tuple[CodeBlock, ...] = ()
    blocked_links: tuple[str, ...] = ()
    images: tuple[str, ...] = ()


class _Env(dict[str, Any]):
    """markdown-it's ``env`` (it must be a mapping) with Parley's collections as attributes."""

    def __init__(self, style: MarkdownStyle) -> None:
        super().__init__()
        self.style = style
        self.code_blocks: list[CodeBlock] = []
        self.blocked: list[str] = []
        self.images: list[str] = []


def is_safe_url(url: str) -> bool:
    """Tell whether a link destination may be opened after a click.

    Args:
        url: a link destination as written in the text.

    Returns:
        True for ``http://`` and ``https://`` URLs with a host and for ``mailto:``;
        False for everything else (``javascript:``, ``file:``, ``data:``,
        relative paths, unparsable text).
    """
    try:
        parts = urlsplit(url.strip())
    except ValueError:
        return False
    scheme = parts.scheme.lower()
    if scheme not in SAFE_SCHEMES:
        return False
    return scheme == "mailto" or bool(parts.netloc)


_MADE: set[str] = set()  # languages (stripped, lower case) whose lexer was made


@functools.lru_cache(maxsize=64)
def _lexer(language: str) -> Lexer:
    name = language.strip().lower()
    if not name:
        return TextLexer()
    try:
        lexer: Lexer = get_lexer_by_name(name, stripnl=False, ensurenl=False)
    except ClassNotFound:
        lexer = TextLexer()
    _MADE.add(name)
    return lexer


def lexer_loaded(language: str) -> bool:
    """True when highlighting ``language`` imports and compiles nothing first (its lexer
    was made, or it has none: plain text). The first use of a lexer takes 30-200 ms."""
    name = language.strip().lower()
    return not name or name in _MADE


def load_lexers_later(languages: Sequence[str], done: Callable[[], None]) -> threading.Thread:
    """Make the lexers of ``languages`` in a daemon thread, then call ``done`` there."""

    def load() -> None:
        for language in languages:
            _lexer(language)
        done()

    thread = threading.Thread(target=load, name="load-lexers", daemon=True)
    thread.start()
    return thread


@functools.lru_cache(maxsize=8)
def _formatter(style_name: str) -> HtmlFormatter:
    return HtmlFormatter(nowrap=True, noclasses=True, style=style_name)


def pygments_background(style_name: str) -> str:
    """Return the background colour (CSS string) of a Pygments style."""
    return str(get_style_by_name(style_name).background_color or "#f8f8f8")


#: Languages whose lexers :func:`warm_highlighting` loads ahead: the most frequent in replies.
WARM_LANGUAGES = ("python", "bash", "javascript", "typescript", "json")
_warming: list[threading.Thread] = []


def warm_highlighting(style_name: str, delay_s: float = 1.0,
                      languages: Sequence[str] = WARM_LANGUAGES) -> threading.Thread:
    """Load Pygments' lexers and formatter ahead, in a daemon thread (once per process).

    A lexer's first use imports its module and compiles its regular expressions: about
    90 ms for Python on an idle machine, which stalled the GUI thread when a reply's
    first code block arrived. The thread waits ``delay_s`` (start-up goes first), then
    fills the caches :func:`highlight_code` reads; the GUI thread still makes anything
    it needs before the thread gets to it.

    Args:
        style_name: the Pygments style the transcript uses.
        delay_s: seconds to wait before starting.
        languages: lexer aliases to load.

    Returns:
        The thread (the same one on later calls).
    """
    if _warming:
        return _warming[0]

    def warm() -> None:
        time.sleep(delay_s)
        _formatter(style_name)
        for language in languages:
            highlight("x = 1\n", _lexer(language), _formatter(style_name))

    thread = threading.Thread(target=warm, name="warm-highlighting", daemon=True)
    _warming.append(thread)
    thread.start()
    return thread


def highlight_code(code: str, language: str, style: MarkdownStyle) -> str:
    """Highlight code as HTML spans with inline colours (no wrapping element).

    Args:
        code: the source text.
        language: a Pygments lexer alias ('python', 'js', …); unknown or empty
            means plain text.
        style: supplies the Pygments style name.

    Returns:
        Escaped HTML: ``<span style="color: …">`` runs and newlines, to be put
        inside a ``<pre>``.
    """
    out = highlight(code, _lexer(language), _formatter(style.pygments_style))
    return out[:-1] if out.endswith("\n") and not code.endswith("\n") else out


def _code_block_html(code: str, language: str, env: _Env, label: str | None = None) -> str:
    s = env.style
    index = len(env.code_blocks)
    env.code_blocks.append(CodeBlock(language, code))
    body = highlight_code(code.rstrip("\n"), language, s)
    label = escapeHtml(label or language or "code")
    href = f"{COPY_PREFIX}{index}"
    return (
        f'<table class="code" width="100%" cellspacing="0" cellpadding="0" '
        f'bgcolor="{s.code_bg}">'
        f'<tr><td bgcolor="{s.code_header_bg}" class="codebar">'
        f'<span class="codelang">{label}</span></td>'
        f'<td bgcolor="{s.code_header_bg}" class="codebar" align="right">'
        f'<a class="copy" href="{href}">Copy</a></td></tr>'
        f'<tr><td colspan="2" class="codebody"><pre class="code">{body}</pre></td></tr>'
        "</table>\n"
    )


class _QtRenderer(RendererHTML):
    """markdown-it's HTML renderer, adjusted for QTextDocument and Parley's link rules."""

    def fence(
        self, tokens: Sequence[Token], idx: int, options: OptionsDict, env: Any
    ) -> str:
        token = tokens[idx]
        info = unescapeAll(token.info).strip() if token.info else ""
        language = info.split(maxsplit=1)[0] if info else ""
        return _code_block_html(token.content, language, env)

    def code_block(
        self, tokens: Sequence[Token], idx: int, options: OptionsDict, env: Any
    ) -> str:
        return _code_block_html(tokens[idx].content, "", env)

    def code_inline(
        self, tokens: Sequence[Token], idx: int, options: OptionsDict, env: Any
    ) -> str:
        return f"<code>{escapeHtml(tokens[idx].content)}</code>"

    def link_open(
        self, tokens: Sequence[Token], idx: int, options: OptionsDict, env: Any
    ) -> str:
        href = str(tokens[idx].attrGet("href") or "")
        if is_safe_url(href):
            return f'<a href="{escapeHtml(href)}">'
        env.blocked.append(href)
        return f'<a class="blocked" href="{BLOCKED_PREFIX}{len(env.blocked) - 1}">'

    def image(
        self, tokens: Sequence[Token], idx: int, options: OptionsDict, env: Any
    ) -> str:
        token = tokens[idx]
        src = str(token.attrGet("src") or "")
        alt = self.renderInlineAsText(token.children, options, env).strip() or "image"
        env.images.append(src)
        return (
            f'<a class="image" href="{IMAGE_PREFIX}{len(env.images) - 1}">'
            f"[image: {escapeHtml(alt)}]</a>"
        )

    def table_open(
        self, tokens: Sequence[Token], idx: int, options: OptionsDict, env: Any
    ) -> str:
        return '<table class="md" border="1" cellspacing="0" cellpadding="5">\n'

    def th_open(
        self, tokens: Sequence[Token], idx: int, options: OptionsDict, env: Any
    ) -> str:
        align = _cell_align(tokens[idx])
        return f'<th bgcolor="{env.style.table_header_bg}"{align}>'

    def td_open(
        self, tokens: Sequence[Token], idx: int, options: OptionsDict, env: Any
    ) -> str:
        return f"<td{_cell_align(tokens[idx])}>"


def _cell_align(token: Token) -> str:
    style = str(token.attrGet("style") or "")
    match = re.search(r"text-align:(left|right|center)", style)
    return f' align="{match.group(1)}"' if match else ""


def _make_parser() -> MarkdownIt:
    # breaks=True: a single newline inside a paragraph is a line break (``<br />``),
    # as chat apps show replies; CommonMark alone joins such lines into one. Code
    # blocks, lists and tables are separate blocks and are not affected.
    md = MarkdownIt("commonmark", {"html": False, "breaks": True}, renderer_cls=_QtRenderer)
    md.enable(["table", "strikethrough"])
    # Every destination becomes a link token; link_open decides whether it is a
    # real link (is_safe_url), so blocked links look the same everywhere.
    md.validateLink = lambda url: True  # type: ignore[method-assign]
    return md


_MD = _make_parser()


def render_markdown(text: str, style: MarkdownStyle | None = None) -> RenderedMarkdown:
    """Render markdown (CommonMark + tables + strikethrough) to QTextDocument HTML.

    A single newline inside a paragraph is kept as a line break (markdown-it's
    ``breaks`` option), so a poem or an address written without markdown keeps its lines.

    Args:
        text: markdown source.
        style: colours and fonts; defaults to a light style.

    Returns:
        The HTML and the lists its ``parley:`` anchors index into. No ``<img>``
        element is ever produced, and raw HTML in ``text`` is escaped.
    """
    env = _Env(style or MarkdownStyle())
    out = _MD.render(text, env)
    return RenderedMarkdown(out, tuple(env.code_blocks), tuple(env.blocked), tuple(env.images))


_FENCE_LINE = re.compile(r"(`{3,}|~{3,})([^\n]*)(\n|$)")


def parse_fence(chunk: str) -> CodeBlock | None:
    """Read a chunk that is one fenced code block starting in column 0.

    Such chunks come out of :func:`parley.gui.text.markdown_blocks.split_blocks`; the
    closing fence may be missing while a reply is still streaming.

    Returns:
        The block's language (first word of the info string, '' if none) and
        code, or None if the chunk is not a fenced code block.
    """
    m = _FENCE_LINE.match(chunk)
    if m is None or (m.group(1)[0] == "`" and "`" in m.group(2)):
        return None
    fence, info = m.group(1), unescapeAll(m.group(2)).strip()
    lines = chunk[m.end() :].rstrip("\n").split("\n") if chunk[m.end() :].strip() else []
    if lines:
        last = lines[-1].strip()
        if last.startswith(fence) and set(last) == {fence[0]}:
            lines.pop()
    code = "\n".join(lines) + ("\n" if lines else "")
    return CodeBlock(info.split(maxsplit=1)[0] if info else "", code)


def render_code_lines(code: str, language: str, style: MarkdownStyle | None = None) -> str:
    """HTML of code lines alone (highlighted, in a ``pre.code``), for code drawn in parts."""
    body = highlight_code(code.rstrip("\n"), language, style or MarkdownStyle())
    return f'<pre class="code">{body}</pre>'


def render_plain(text: str) -> str:
    """Return HTML showing ``text`` verbatim (escaped, line breaks and spaces kept)."""
    return f'<p class="plain">{html.escape(text, quote=False)}</p>'


def document_stylesheet(style: MarkdownStyle) -> str:
    """Return the default style sheet for documents holding :func:`render_markdown` HTML.

    Pass it to ``QTextDocument.setDefaultStyleSheet`` *before* ``setHtml``.
    """
    s = style
    mono = s.mono_family.replace("'", "")
    return (
        f"a {{ color: {s.link}; text-decoration: none; }}"
        f"a.blocked {{ color: {s.muted}; text-decoration: underline; }}"
        f"a.image {{ color: {s.link}; }}"
        f"a.copy {{ color: {s.muted}; }}"
        "p { margin-top: 0px; margin-bottom: 8px; }"
        "p.plain { white-space: pre-wrap; margin-bottom: 0px; }"
        "h1 { font-size: x-large; margin-top: 6px; margin-bottom: 8px; }"
        "h2 { font-size: large; margin-top: 6px; margin-bottom: 6px; }"
        "h3, h4, h5, h6 { font-size: medium; margin-top: 4px; margin-bottom: 4px; }"
        "ul, ol { margin-top: 0px; margin-bottom: 8px; }"
        "li { margin-bottom: 2px; }"
        f"blockquote {{ color: {s.muted}; margin-left: 14px; margin-right: 0px; }}"
        f"code {{ font-family: '{mono}'; background-color: {s.inline_code_bg}; }}"
        f"pre.code {{ font-family: '{mono}'; white-space: pre-wrap; margin: 0px; }}"
        "table.code { margin-top: 2px; margin-bottom: 8px; }"
        "td.codebar { padding-left: 8px; padding-right: 8px; padding-top: 3px;"
        " padding-bottom: 3px; }"
        "td.codebody { padding: 8px; }"
        f"span.codelang {{ color: {s.muted}; }}"
        f"table.md {{ border-collapse: collapse; border-color: {s.border};"
        " margin-bottom: 8px; }"
        "th { font-weight: bold; }"
        f"hr {{ color: {s.border}; }}"
    )

"""Colours derived from the current Qt palette, so Parley follows light and dark systems.

Nothing here hard-codes a light or dark theme: every colour is computed from a
``QPalette`` (the system's, or one the user picked), by mixing its roles.
"""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtGui import QColor, QFontDatabase, QPalette

from parley.gui.text.markdown import MarkdownStyle, pygments_background

LIGHT_CODE_STYLE = "default"
DARK_CODE_STYLE = "github-dark"


def mix(a: QColor, b: QColor, t: float) -> QColor:
    """Return the colour ``t`` of the way from ``a`` to ``b`` (0 → a, 1 → b), alpha included."""
    return QColor.fromRgbF(
        a.redF() + (b.redF() - a.redF()) * t,
        a.greenF() + (b.greenF() - a.greenF()) * t,
        a.blueF() + (b.blueF() - a.blueF()) * t,
        a.alphaF() + (b.alphaF() - a.alphaF()) * t,
    )


def is_dark(palette: QPalette) -> bool:
    """True when the palette's base (text background) is dark."""
    return palette.color(QPalette.ColorRole.Base).lightnessF() < 0.5


def _link(palette: QPalette, dark: bool) -> QColor:
    link = palette.color(QPalette.ColorRole.Link)
    base = palette.color(QPalette.ColorRole.Base)
    if link.rgb() in (0xFF0000FF, 0xFF0000EE):  # Qt's built-in pure blue: use a gentler one
        link = QColor("#58a6ff") if dark else QColor("#0969da")
    # Some palettes keep a pure-blue link on dark bases: lift it until it reads.
    if dark and abs(link.lightnessF() - base.lightnessF()) < 0.35:
        link = QColor("#58a6ff")
    if not dark and abs(link.lightnessF() - base.lightnessF()) < 0.35:
        link = QColor("#0969da")
    return link


@dataclass(frozen=True, slots=True)
class TranscriptColors:
    """Every colour the transcript paints with, for one palette.

    Attributes:
        dark: the palette is dark.
        text / muted: body and secondary text.
        base: the transcript background.
        user_bubble: fill of the user's message bubbles.
        card_bg / card_border: compaction summary cards, folded tool bodies.
        error_fg / error_bg: the inline error and failed tool results.
        warn_fg: the "Stopped — reply incomplete" mark.
        focus: outline of the focused message.
        match_bg: background of search matches.
        markdown: the style handed to :func:`parley.gui.text.markdown.render_markdown`.
        key: a hashable identity of the palette's colours (cache key).
    """

    dark: bool
    text: QColor
    muted: QColor
    base: QColor
    user_bubble: QColor
    card_bg: QColor
    card_border: QColor
    error_fg: QColor
    error_bg: QColor
    warn_fg: QColor
    focus: QColor
    match_bg: QColor
    markdown: MarkdownStyle
    key: tuple[int, ...]


def transcript_colors(palette: QPalette) -> TranscriptColors:
    """Compute the transcript's colours from a palette.

    Args:
        palette: usually the transcript widget's ``palette()``.

    Returns:
        Colours tuned for the palette's lightness (dark or light).
    """
    dark = is_dark(palette)
    base = palette.color(QPalette.ColorRole.Base)
    text = palette.color(QPalette.ColorRole.Text)
    accent = palette.color(QPalette.ColorRole.Highlight)
    muted = mix(text, base, 0.42)
    border = mix(text, base, 0.80)
    code_style = DARK_CODE_STYLE if dark else LIGHT_CODE_STYLE
    code_bg = QColor(pygments_background(code_style))
    if not dark:
        code_bg = mix(base, text, 0.045)
    mono = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont).family()
    md = MarkdownStyle(
        dark=dark,
        text=text.name(),
        muted=muted.name(),
        link=_link(palette, dark).name(),
        border=border.name(),
        code_bg=code_bg.name(),
        code_header_bg=mix(code_bg, text, 0.07).name(),
        inline_code_bg=mix(base, text, 0.09).name(),
        table_header_bg=mix(base, text, 0.05).name(),
        mono_family=mono,
        pygments_style=code_style,
    )
    error_fg = QColor("#ff7b72") if dark else QColor("#b42318")
    key = tuple(
        palette.color(role).rgba()
        for role in (
            QPalette.ColorRole.Base,
            QPalette.ColorRole.Text,
            QPalette.ColorRole.Highlight,
            QPalette.ColorRole.Link,
        )
    )
    return TranscriptColors(
        dark=dark,
        text=text,
        muted=muted,
        base=base,
        user_bubble=mix(mix(base, text, 0.07 if dark else 0.05), accent, 0.06),
        card_bg=mix(base, text, 0.035 if dark else 0.025),
        card_border=border,
        error_fg=error_fg,
        error_bg=mix(base, error_fg, 0.12),
        warn_fg=QColor("#d29922") if dark else QColor("#9a6700"),
        focus=mix(accent, base, 0.25),
        match_bg=QColor(255, 200, 0, 110) if dark else QColor(255, 214, 0, 140),
        markdown=md,
        key=key,
    )

"""Parley's look: colour schemes, the application palette, the style sheet, tinted icons.

Parley follows the system's light or dark colour scheme (Qt's
``QStyleHints.colorScheme``) unless ``PARLEY_THEME`` is ``light`` or ``dark``.
:func:`apply` sets the application palette (``gui.theme`` derives the
transcript's colours from it) and the style sheet
``resources/styles/parley.qss``, whose ``@name`` tokens are replaced by the
colours of the active :class:`Scheme`.
"""

from __future__ import annotations

import functools
import os
import re
from dataclasses import asdict, dataclass
from pathlib import Path

from PySide6.QtCore import QByteArray, QRectF, QSize, Qt
from PySide6.QtGui import QColor, QGuiApplication, QIcon, QPainter, QPalette, QPixmap
from PySide6.QtSvg import QSvgRenderer

RESOURCES = Path(__file__).resolve().parent.parent / "resources"


@dataclass(frozen=True, slots=True)
class Scheme:
    """The colours of one scheme (CSS hex strings)."""

    name: str
    base: str  # transcript / main area (QPalette.Base and Window)
    sidebar: str
    surface: str  # composer, cards, popups
    text: str
    muted: str
    faint: str
    border: str
    hover: str
    selected: str
    accent: str
    accent_text: str
    danger: str
    success: str


LIGHT = Scheme(
    name="light",
    base="#ffffff",
    sidebar="#f7f6f3",
    surface="#ffffff",
    text="#1f1e1c",
    muted="#6f6c66",
    faint="#a19d95",
    border="#e4e1da",
    hover="#eeece6",
    selected="#e6e3dc",
    accent="#c15f3c",
    accent_text="#ffffff",
    danger="#b42318",
    success="#1f7a4d",
)

DARK = Scheme(
    name="dark",
    base="#232321",
    sidebar="#1a1a19",
    surface="#2d2d2b",
    text="#ecebe8",
    muted="#a3a09a",
    faint="#74716b",
    border="#3a3937",
    hover="#2b2b29",
    selected="#353532",
    accent="#d97757",
    accent_text="#1a1a19",
    danger="#f97066",
    success="#47cd89",
)

_current: Scheme = LIGHT


def current() -> Scheme:
    """Return the scheme applied by :func:`apply` (light before that)."""
    return _current


def choose(app: QGuiApplication) -> Scheme:
    """Return the scheme to use: ``PARLEY_THEME`` if set, else the system's."""
    wanted = os.environ.get("PARLEY_THEME", "").lower()
    if wanted in ("light", "dark"):
        return DARK if wanted == "dark" else LIGHT
    return DARK if app.styleHints().colorScheme() == Qt.ColorScheme.Dark else LIGHT


def palette(scheme: Scheme) -> QPalette:
    """Return a QPalette carrying the scheme's colours for every role widgets use."""
    pal = QPalette()
    roles = {
        QPalette.ColorRole.Window: scheme.base,
        QPalette.ColorRole.WindowText: scheme.text,
        QPalette.ColorRole.Base: scheme.base,
        QPalette.ColorRole.AlternateBase: scheme.sidebar,
        QPalette.ColorRole.Text: scheme.text,
        QPalette.ColorRole.Button: scheme.surface,
        QPalette.ColorRole.ButtonText: scheme.text,
        QPalette.ColorRole.Highlight: scheme.accent,
        QPalette.ColorRole.HighlightedText: scheme.accent_text,
        QPalette.ColorRole.ToolTipBase: scheme.surface,
        QPalette.ColorRole.ToolTipText: scheme.text,
        QPalette.ColorRole.PlaceholderText: scheme.faint,
        QPalette.ColorRole.Link: scheme.accent,
        QPalette.ColorRole.Mid: scheme.border,
        QPalette.ColorRole.Midlight: scheme.hover,
        QPalette.ColorRole.Light: scheme.surface,
        QPalette.ColorRole.Dark: scheme.border,
    }
    for role, value in roles.items():
        pal.setColor(role, QColor(value))
    for role in (QPalette.ColorRole.Text, QPalette.ColorRole.WindowText,
                 QPalette.ColorRole.ButtonText):
        pal.setColor(QPalette.ColorGroup.Disabled, role, QColor(scheme.faint))
    return pal


def style_sheet(scheme: Scheme) -> str:
    """Return ``resources/styles/parley.qss`` with its ``@token`` colours filled in."""
    try:
        text = (RESOURCES / "styles" / "parley.qss").read_text(encoding="utf-8")
    except OSError:
        return ""
    values = {**asdict(scheme), "icons": _tinted_icon_dir(scheme).as_posix()}
    return re.sub(r"@([a-z_]+)", lambda m: str(values.get(m.group(1), m.group(0))), text)


def _tinted_icon_dir(scheme: Scheme) -> Path:
    """Write ``<icon>-<scheme>.svg`` copies tinted in the muted colour (style sheets
    cannot tint an SVG) to a cache folder; returns the folder."""
    import tempfile

    user = os.getuid() if hasattr(os, "getuid") else 0
    folder = Path(tempfile.gettempdir()) / f"parley-icons-{user}"
    folder.mkdir(exist_ok=True)
    for name in ("chevron-down",):
        target = folder / f"{name}-{scheme.name}.svg"
        svg = (RESOURCES / "icons" / f"{name}.svg").read_text(encoding="utf-8")
        tinted = svg.replace("currentColor", scheme.muted)
        if not target.exists() or target.read_text(encoding="utf-8") != tinted:
            target.write_text(tinted, encoding="utf-8")
    return folder


#: UI fonts used when the system names none (no desktop platform theme), first found wins.
UI_FONTS = ("Inter", "Noto Sans", "Cantarell", "Ubuntu")
_GENERIC_FONTS = {"DejaVu Sans", "Sans Serif", "Bitstream Vera Sans", ""}


def pick_font(app: QGuiApplication) -> None:
    """Use a modern UI font at 10.5 pt when the system's is only fontconfig's generic default.

    Desktops with a platform theme (Windows, macOS, GNOME, KDE) keep their
    own font; a bare X session (e.g. Xvfb) otherwise gets DejaVu Sans at 9 pt.
    """
    from PySide6.QtGui import QFont, QFontDatabase

    if app.font().family() not in _GENERIC_FONTS:
        return
    families = set(QFontDatabase.families())
    for family in UI_FONTS:
        if family in families:
            font = QFont(family)
            font.setPointSizeF(10.5)
            app.setFont(font)
            return


def apply(app: QGuiApplication, scheme: Scheme | None = None) -> Scheme:
    """Apply the palette and style sheet of ``scheme`` (default: :func:`choose`)."""
    global _current
    scheme = scheme or choose(app)
    _current = scheme
    icon.cache_clear()
    app.setPalette(palette(scheme))
    if hasattr(app, "setStyleSheet"):
        app.setStyleSheet(style_sheet(scheme))
    return scheme


@functools.lru_cache(maxsize=128)
def icon(name: str, color: str | None = None, size: int = 20) -> QIcon:
    """Return ``resources/icons/<name>.svg`` tinted with ``color`` (default: text colour).

    ``currentColor`` in the SVG becomes the colour; the icon is rendered at
    1x and 2x so it stays crisp on high-DPI screens. A missing file gives an
    empty icon (never an error).
    """
    try:
        svg = (RESOURCES / "icons" / f"{name}.svg").read_text(encoding="utf-8")
    except OSError:
        return QIcon()
    renderer = QSvgRenderer(QByteArray(svg.replace("currentColor", color or _current.text)
                                       .encode()))
    out = QIcon()
    for scale in (1, 2):
        pix = QPixmap(QSize(size * scale, size * scale))
        pix.fill(Qt.GlobalColor.transparent)
        painter = QPainter(pix)
        renderer.render(painter, QRectF(0, 0, size * scale, size * scale))
        painter.end()
        pix.setDevicePixelRatio(scale)
        out.addPixmap(pix)
    return out


def app_icon() -> QIcon:
    """Return Parley's application icon (the SVG, any size)."""
    return QIcon(str(RESOURCES / "icons" / "parley.svg"))

"""Parley's look: colour schemes, the application palette, the style sheet, tinted icons.

Parley follows the system's light or dark colour scheme (Qt's
``QStyleHints.colorScheme``) unless the person chose one in Settings →
Appearance (:func:`set_preference`, ``parley.gui.look.view_prefs``) or, with "System"
chosen there, ``PARLEY_THEME`` is ``light`` or ``dark``.
:func:`apply` sets the application palette (``parley.gui.look.theme`` derives the
transcript's colours from it) and the style sheet
``resources/styles/parley.qss``, whose ``@name`` tokens are replaced by the
colours of the active :class:`Scheme`, followed by :data:`DIALOG_RULES` (the
look of the standard controls inside dialogs: Settings, spaces, rename, message
boxes, so they match first-run set-up instead of Qt's plain defaults) and
:data:`MENU_RULES` (the model menu's provider names and notes).
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

from parley import resources

#: The bundled files (``styles/``, ``icons/``), found through importlib.resources.
RESOURCES = resources.folder()


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
_preference = "system"  # Settings → Appearance → Theme: system / light / dark


def set_preference(theme: str) -> None:
    """Remember the theme chosen in Settings (``system``, ``light`` or ``dark``);
    :func:`choose` follows it from now on (call :func:`apply` to show it)."""
    global _preference
    _preference = theme if theme in ("system", "light", "dark") else "system"


def preference() -> str:
    """The theme chosen in Settings (``system`` until one is)."""
    return _preference


def current() -> Scheme:
    """Return the scheme applied by :func:`apply` (light before that)."""
    return _current


def choose(app: QGuiApplication) -> Scheme:
    """Return the scheme to use: the one chosen in Settings, else ``PARLEY_THEME`` if
    set, else the system's."""
    wanted = _preference if _preference != "system" else \
        os.environ.get("PARLEY_THEME", "").lower()
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


#: Controls inside dialogs, in the style of first-run set-up (``#SetupCard``): flat fields
#: with rounded 1 px borders, flat buttons, the default button in the accent colour, and
#: a rounded focus ring of the control's own shape. The ring is 2 px of the accent with the
#: padding 1 px smaller, so a control never changes size when it takes focus. Without
#: these, ``parley.qss``'s app-wide focus rule (``QPushButton:focus, QLineEdit:focus … {
#: border: 2px solid @accent }``) drew a square accent frame around Qt's default-looking
#: controls: the "red rectangles" of dialogs. Item views keep a 1 px accent frame.
DIALOG_RULES = """
/* ---- dialogs: Settings, spaces, rename, message boxes (gui/look/appearance.py) ---- */
QDialog { background: @base; color: @text; }
QDialog QLineEdit, QDialog QComboBox {
    background: @base;
    color: @text;
    border: 1px solid @border;
    border-radius: 6px;
    padding: 5px 8px;
    min-height: 18px;
    selection-background-color: @accent;
    selection-color: @accent_text;
}
QDialog QPlainTextEdit, QDialog QTextEdit {
    background: @base;
    color: @text;
    border: 1px solid @border;
    border-radius: 6px;
    padding: 3px 4px;
    selection-background-color: @accent;
    selection-color: @accent_text;
}
QDialog QLineEdit:hover, QDialog QComboBox:hover,
QDialog QPlainTextEdit:hover, QDialog QTextEdit:hover { border-color: @faint; }
QDialog QLineEdit:focus, QDialog QComboBox:focus {
    border: 2px solid @accent;
    padding: 4px 7px;
}
QDialog QPlainTextEdit:focus, QDialog QTextEdit:focus {
    border: 2px solid @accent;
    padding: 2px 3px;
}
QDialog QLineEdit:disabled, QDialog QComboBox:disabled,
QDialog QPlainTextEdit:disabled { color: @faint; background: @sidebar; }
QDialog QLineEdit:read-only, QDialog QPlainTextEdit[readOnly="true"] { background: @sidebar; }
/* A plain list under the box, tall enough for its entries: the menu-like popup laid over
   the box left one of three entries under a scroll arrow (Settings ▸ Appearance ▸ Theme). */
QDialog QComboBox { combobox-popup: 0; }
QDialog QComboBox::drop-down { border: none; width: 26px; }
QDialog QComboBox::down-arrow {
    image: url(@icons/chevron-down-@name.svg);
    width: 14px;
    height: 14px;
}
QDialog QComboBox QAbstractItemView {
    background: @surface;
    color: @text;
    border: 1px solid @border;
    border-radius: 0;
    padding: 2px;
    selection-background-color: @hover;
    selection-color: @text;
    outline: 0;
}

QDialog QPushButton, QDialog QToolButton {
    background: @surface;
    color: @text;
    border: 1px solid @border;
    border-radius: 8px;
    padding: 6px 14px;
    min-height: 18px;
}
QDialog QPushButton:hover, QDialog QToolButton:hover { background: @hover; border-color: @faint; }
QDialog QPushButton:pressed, QDialog QToolButton:pressed { background: @selected; }
QDialog QPushButton:focus, QDialog QToolButton:focus {
    border: 2px solid @accent;
    padding: 5px 13px;
}
QDialog QPushButton:disabled, QDialog QToolButton:disabled {
    color: @faint;
    background: @base;
    border-color: @border;
}
QDialog QPushButton:default {
    background: @accent;
    color: @accent_text;
    border-color: @accent;
    font-weight: 600;
}
QDialog QPushButton:default:hover { background: @text; color: @base; border-color: @text; }
QDialog QPushButton:default:focus { border: 2px solid @text; }
QDialog QPushButton:default:disabled { background: @border; color: @faint; border-color: @border; }
QDialog QToolButton[popupMode="2"] { padding-right: 30px; }
QDialog QToolButton[popupMode="2"]:focus { padding-right: 29px; }
QDialog QToolButton::menu-indicator {
    image: url(@icons/chevron-down-@name.svg);
    width: 14px;
    height: 14px;
    subcontrol-origin: padding;
    subcontrol-position: center right;
    right: 8px;
}
QDialogButtonBox { dialogbuttonbox-buttons-have-icons: 0; }
/* The file dialog's toolbar (back, forward, up, new folder, list / details): icon-only
   buttons, which the text buttons' padding above left blank. */
QFileDialog QToolButton { padding: 3px; min-height: 0; min-width: 22px; }
QFileDialog QToolButton:focus { padding: 2px; }

QDialog QCheckBox {
    color: @text;
    border: 1px solid transparent;
    border-radius: 6px;
    padding: 2px 4px;
}
QDialog QCheckBox:focus { border: 1px solid @accent; }
/* The box itself (dialogs and the set-up panel alike), drawn here: the style's own box
   kept the light theme's border colour and an unticked box all but vanished on the dark
   theme. Ticked: the accent, a check. */
QCheckBox::indicator, QDialog QAbstractItemView::indicator {
    width: 14px;
    height: 14px;
    border: 1px solid @muted;
    border-radius: 4px;
    background: @base;
}
QCheckBox::indicator:hover, QDialog QAbstractItemView::indicator:hover {
    border-color: @text;
}
QCheckBox::indicator:checked, QDialog QAbstractItemView::indicator:checked {
    border-color: @accent;
    background: @accent;
    image: url(@icons/check-on-@name.svg);
}
QCheckBox::indicator:disabled, QDialog QAbstractItemView::indicator:disabled {
    border-color: @border;
    background: @sidebar;
}

QDialog QListView, QDialog QTreeView, QDialog QTableView {
    background: @base;
    color: @text;
    border: 1px solid @border;
    border-radius: 8px;
    padding: 3px;
    outline: 0;
}
QDialog QListView:focus, QDialog QTreeView:focus, QDialog QTableView:focus {
    border: 1px solid @accent;
}
QDialog QListView::item { padding: 5px 8px; border-radius: 5px; }
#SettingsDialog QScrollArea { border: 1px solid @border; border-radius: 8px; background: @base; }
QDialog QListView::item:hover { background: @hover; }
QDialog QListView::item:selected, QDialog QTreeView::item:selected,
QDialog QTableView::item:selected { background: @selected; color: @text; }
"""


#: The lines of the header's model menu that cannot be chosen
#: (``parley.gui.header.model_picker``): a provider's name, and why its models could not be listed.
MENU_RULES = """
QMenu QLabel#ModelMenuHeading { color: @muted; font-weight: 600; padding: 6px 12px 2px 12px; }
QMenu QLabel#ModelMenuNote { color: @danger; padding: 0 12px 4px 12px; }
"""


def style_sheet(scheme: Scheme) -> str:
    """Return ``resources/styles/parley.qss`` then :data:`DIALOG_RULES` and
    :data:`MENU_RULES`, with their ``@token`` colours filled in."""
    try:
        text = (RESOURCES / "styles" / "parley.qss").read_text(encoding="utf-8")
    except OSError:
        return ""
    text += DIALOG_RULES + MENU_RULES
    values = {**asdict(scheme), "icons": _tinted_icon_dir(scheme).as_posix()}
    return re.sub(r"@([a-z_]+)", lambda m: str(values.get(m.group(1), m.group(0))), text)


def _tinted_icon_dir(scheme: Scheme) -> Path:
    """Write ``<icon>-<scheme>.svg`` copies tinted in the muted colour, and
    ``check-on-<scheme>.svg`` in the accent's text colour (a ticked box), to a cache
    folder (style sheets cannot tint an SVG); returns the folder."""
    import tempfile

    user = os.getuid() if hasattr(os, "getuid") else 0
    folder = Path(tempfile.gettempdir()) / f"parley-icons-{user}"
    folder.mkdir(exist_ok=True)
    for name, source, color in (("chevron-down", "chevron-down", scheme.muted),
                                ("check-on", "check", scheme.accent_text)):
        target = folder / f"{name}-{scheme.name}.svg"
        svg = (RESOURCES / "icons" / f"{source}.svg").read_text(encoding="utf-8")
        tinted = svg.replace("currentColor", color)
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
    """Apply the palette and style sheet of ``scheme`` (default: :func:`choose`), and
    the file dialog's icons where the desktop has no icon theme."""
    global _current
    scheme = scheme or choose(app)
    _current = scheme
    icon.cache_clear()
    app.setPalette(palette(scheme))
    if hasattr(app, "setStyleSheet"):
        app.setStyleSheet(style_sheet(scheme))
        from parley.gui.look.theme_icons import fallback_icons

        fallback_icons(scheme.name, scheme.text, RESOURCES / "icons")
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

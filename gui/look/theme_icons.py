"""The file dialog's toolbar icons where the desktop has no icon theme.

Qt's styles draw the file dialog's back, forward, up, new-folder and view buttons with
icons looked up by their freedesktop names in the desktop's icon theme; with none (a
bare X session, Xvfb, some minimal desktops) they fell back to Qt's tiny black pixmaps,
invisible on the dark theme. Here the app's own icons stand in, tinted for the scheme.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from PySide6.QtGui import QIcon

#: Icons Qt asks the desktop's icon theme for (the file dialog's toolbar: back, forward,
#: up, new folder, list and details views; freedesktop names) -> the app's own icon drawn
#: for them where the desktop has no icon theme.
THEME_ICONS = {"go-previous": "chevron-left", "go-next": "chevron-right", "go-up": "arrow-up",
               "folder-new": "folder-plus", "view-list-details": "list",
               "view-list-icons": "grid"}
#: The icon theme name Parley sets when the desktop names none (so Qt's styles look
#: icons up by name at all, and find :data:`THEME_ICONS` in the fallback path).
FALLBACK_THEME = "parley"


def fallback_icons(scheme_name: str, colour: str, icons: Path) -> None:
    """Without a desktop icon theme, Qt's file dialog drew its toolbar with its own tiny
    black icons (invisible on the dark theme, blank under some styles): give it the
    app's icons, tinted, written to a cache folder (Qt reads theme icons from files).

    Args:
        scheme_name: the colour scheme's name (``light``, ``dark``): one folder each.
        colour: the scheme's text colour (CSS hex) the icons are drawn in.
        icons: the folder of ``resources/icons``.
    """
    if QIcon.themeName() not in ("", FALLBACK_THEME):
        return  # the desktop's own icon theme
    user = os.getuid() if hasattr(os, "getuid") else 0
    folder = Path(tempfile.gettempdir()) / f"parley-icons-{user}" / f"theme-{scheme_name}"
    try:
        folder.mkdir(parents=True, exist_ok=True)
        for wanted, ours in THEME_ICONS.items():
            svg = (icons / f"{ours}.svg").read_text(encoding="utf-8")
            tinted = svg.replace("currentColor", colour)
            target = folder / f"{wanted}.svg"
            if not target.exists() or target.read_text(encoding="utf-8") != tinted:
                target.write_text(tinted, encoding="utf-8")
    except OSError:
        return  # no icons rather than no window
    others = [p for p in QIcon.fallbackSearchPaths() if "parley-icons-" not in p]
    QIcon.setFallbackSearchPaths([*others, str(folder)])
    QIcon.setThemeName(FALLBACK_THEME)  # also drops icons looked up for another scheme

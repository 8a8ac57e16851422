"""The window's icons follow the theme: the "New chat" pencil, the sidebar button and the
model picker's chevron are drawn in the theme's colours after Settings → Appearance
switches it (the pencil was dark on dark, invisible, in the Dark theme)."""

from __future__ import annotations

from typing import Any

import pytest
from PySide6.QtGui import QColor, QIcon
from PySide6.QtWidgets import QApplication

from parley.gui.look import appearance
from tests.gui.helpers import choose, open_appearance

pytestmark = [pytest.mark.timeout(90), pytest.mark.usefixtures("restore_look")]


def _ink(icon: QIcon) -> str:
    """The colour (#rrggbb) of an icon's most opaque pixel."""
    image = icon.pixmap(32, 32).toImage()
    best = max((image.pixelColor(x, y) for y in range(image.height())
                for x in range(image.width())), key=lambda c: c.alpha())
    assert best.alpha() > 128, "the icon draws nothing"
    return QColor(best.red(), best.green(), best.blue()).name()


def _near(a: str, b: str) -> bool:
    ca, cb = QColor(a), QColor(b)
    return max(abs(ca.red() - cb.red()), abs(ca.green() - cb.green()),
               abs(ca.blue() - cb.blue())) <= 8


def test_icons_take_the_dark_themes_colours(driver: Any, qapp: QApplication) -> None:
    w = driver.configured()
    dialog = open_appearance(driver, w)
    choose(driver, dialog, "appearance.theme", "Dark")
    assert appearance.current() is appearance.DARK
    driver.until(lambda: _near(_ink(w.sidebar.new_button.icon()), appearance.DARK.text))
    assert _near(_ink(w.sidebar_button.icon()), appearance.DARK.muted)
    assert _near(_ink(w.model_picker.icon()), appearance.DARK.muted)
    choose(driver, dialog, "appearance.theme", "Light")
    driver.until(lambda: _near(_ink(w.sidebar.new_button.icon()), appearance.LIGHT.text))
    dialog.close()

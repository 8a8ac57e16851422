"""Keys pressed and text typed on whatever has the focus, and a window ready for them."""

from __future__ import annotations

from typing import Any

from PySide6.QtGui import QColor, QImage, QKeySequence
from PySide6.QtWidgets import QApplication

from parley.core.settings import Settings
from parley.gui.look import appearance


def chat_window(driver: Any, fake: Any) -> Any:
    """A window on the fake provider (key from the environment), auto titles off."""
    w = driver.open(env={"ANTHROPIC_API_KEY": "sk-ant-test",
                         "ANTHROPIC_BASE_URL": fake.anthropic_base_url})
    driver.run(Settings.of(w.store).set("chat.auto_title", False))
    w.activateWindow()
    driver.until(w.isActiveWindow)
    driver.until(lambda: w.keymap is not None and w.tasks.pending == 0)
    return w


def key(qtbot: Any, text: str) -> None:
    """Press one key combination ("Ctrl+Shift+F") on whatever has the focus."""
    combo = QKeySequence(text)[0]
    target = QApplication.focusWidget()
    assert target is not None, "nothing has the keyboard focus"
    qtbot.keyClick(target, combo.key(), combo.keyboardModifiers())


def type_text(qtbot: Any, text: str) -> None:
    target = QApplication.focusWidget()
    assert target is not None, "nothing has the keyboard focus"
    qtbot.keyClicks(target, text)


def say(driver: Any, qtbot: Any, w: Any, text: str, reply: str) -> None:
    """Type a message in the focused composer, Enter, and wait for the reply."""
    assert QApplication.focusWidget() is w.composer
    driver.fake.script(reply)
    type_text(qtbot, text)
    key(qtbot, "Return")
    driver.until(lambda: w.chat.turns and w.chat.turns[-1].text() == reply and
                 w.tasks.pending == 0 and not w.composer_bar.busy, timeout=10)


def accent_pixels(image: QImage, left: int, top: int, width: int, height: int,
                  color: QColor | None = None) -> int:
    """How many pixels of the rect are (nearly) the theme's accent colour (or ``color``)."""
    accent = color if color is not None else QColor(appearance.current().accent)
    count = 0
    for y in range(top, top + height):
        for x in range(left, left + width):
            c = image.pixelColor(x, y)
            if (abs(c.red() - accent.red()) + abs(c.green() - accent.green())
                    + abs(c.blue() - accent.blue())) < 60:
                count += 1
    return count

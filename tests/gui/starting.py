"""A window started as the app starts it (shown first, its store opened after the first paint),
and keys sent to it by the window system while it starts."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtTest import QTest


def start(driver, env: dict[str, str] | None = None) -> Any:
    """Show a window and start it as the app does; returns at its first paint."""
    from parley.gui.main_window import MainWindow

    w = MainWindow(home=driver.home, env=env or {})
    driver.windows.append(w)  # shut down by the driver at the end
    painted: list[bool] = []
    from parley.gui.startup.first_paint import when_painted

    when_painted(w, lambda: painted.append(True))
    w.show()
    w.startup.start_after_first_paint()
    driver.until(lambda: painted)
    return w


def type_keys(w, text: str) -> None:
    """Type ``text`` into the window as the window system would (to its focus)."""
    for ch in text:
        QTest.keyClick(w.windowHandle(), ch)


def press(w, key: Qt.Key, modifier=Qt.KeyboardModifier.NoModifier) -> None:
    QTest.keyClick(w.windowHandle(), key, modifier)


def fake_env(fake) -> dict[str, str]:
    return {"ANTHROPIC_API_KEY": "sk-ant-test", "ANTHROPIC_BASE_URL": fake.anthropic_base_url}


def previous_chat(driver, fake_provider, gate) -> str:
    """A first run: set up, one exchange, a draft left in it, closed. Returns its id."""
    gate.set()
    w = driver.configured()
    fake_provider.script("Earlier answer")
    driver.send("An earlier chat", wait=True)
    sid = w.session_id
    type_keys(w, "its draft")
    driver.close(w)
    gate.clear()
    return str(sid)


class FirstPaintSeen:
    """What a window showed when its first Paint event arrived (:func:`start_seeing`):
    its size, its window state, the page its stack showed, the splitter's sizes and
    whether the sidebar (or its frame) was shown, the menu bar's menus (titles) and
    height, where the page stack's top was (window coordinates); ``pages``: the stack's
    pages in the order they were shown from then on."""

    def __init__(self, window) -> None:
        from PySide6.QtCore import QEvent, QObject, QPoint

        self.size = None
        self.state = None
        self.page = None
        self.sizes: list[int] = []
        self.sidebar_shown: bool | None = None
        self.pages: list = []
        self.menus: list[str] = []
        self.menu_bar_height = 0
        self.stack_top = -1
        seen = self

        class Filter(QObject):
            def eventFilter(self, obj, event):  # noqa: N802
                if event.type() == QEvent.Type.Paint and seen.size is None:
                    seen.size = (window.width(), window.height())
                    seen.state = window.windowState()
                    seen.page = window.stack.currentWidget()
                    seen.pages.append(seen.page)
                    seen.sizes = window.splitter.sizes()
                    seen.sidebar_shown = window.splitter.widget(0).isVisible()
                    bar = window.menuBar()
                    seen.menus = [a.text() for a in bar.actions()] if bar.isVisible() else []
                    seen.menu_bar_height = bar.height() if bar.isVisible() else 0
                    seen.stack_top = window.stack.mapTo(window, QPoint(0, 0)).y()
                    window.stack.currentChanged.connect(
                        lambda _i: seen.pages.append(window.stack.currentWidget()))
                return False

        self._filter = Filter(window)
        window.installEventFilter(self._filter)


def start_seeing(driver, env: dict[str, str] | None = None):
    """Start a window as the app does (:func:`start`), noting what its first paint showed;
    returns ``(window, FirstPaintSeen)`` once it painted."""
    from parley.gui.main_window import MainWindow

    w = MainWindow(home=driver.home, env=env or {})
    driver.windows.append(w)  # shut down by the driver at the end
    seen = FirstPaintSeen(w)
    w.show()
    w.startup.start_after_first_paint()
    driver.until(lambda: seen.size is not None)
    return w, seen

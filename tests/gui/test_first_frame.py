"""The first frame is the window as it stays (fresh-user trial 20c under Xvfb): the menu
bar is there at its height from the first paint (it came after it and pushed the header
and the page ~22 px down), its menus filled once the rest of the window is made (a menu
opened before that is filled first); and while the providers load, the header shows no
"No model", no "Choose a model first" and no "0 tokens" for a chat whose model is not
known yet (each restart showing a new chat flashed them for ~0.2 s)."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtWidgets import QApplication, QMenu

from parley.gui.commands.menu_bar import MENUS
from parley.gui.main_window import MainWindow
from tests.gui.starting import fake_env, press, start, start_seeing

pytestmark = pytest.mark.timeout(120)


@pytest.fixture
def providers_gate(monkeypatch: Any) -> Iterator[threading.Event]:
    """While cleared, start-up's opening of the providers waits (their settings, keys and
    tools not loaded: the chat shows first, its hub not taken yet)."""
    import parley.gui.startup.opening as opening

    opened = threading.Event()
    opened.set()
    real = opening.open_providers

    async def held(window: Any) -> Any:
        while not opened.is_set():
            await asyncio.sleep(0.01)
        return await real(window)

    monkeypatch.setattr(opening, "open_providers", held)
    yield opened
    opened.set()


def _ready(driver: Any, w: Any) -> None:
    driver.until(lambda: w.ready and w.tasks.pending == 0, timeout=40)


def _menus(w: Any) -> list[QMenu]:
    return [a.menu() for a in w.menuBar().actions() if isinstance(a.menu(), QMenu)]


def test_the_first_paint_has_the_menu_bar_and_the_page_does_not_move(driver: Any) -> None:
    w = driver.configured()
    driver.close(w)
    w, seen = start_seeing(driver)
    assert seen.menus == [f"&{name}" for name in MENUS]
    assert seen.menu_bar_height > 10
    _ready(driver, w)
    assert w.menuBar().height() == seen.menu_bar_height
    assert w.stack.mapTo(w, QPoint(0, 0)).y() == seen.stack_top  # nothing pushed down
    menus = _menus(w)
    assert [m.title() for m in menus] == [f"&{name}" for name in MENUS]  # no second set
    assert all(m.actions() for m in menus), "every menu has its actions once made"


def test_the_first_starts_welcome_has_the_menu_bar_from_its_first_paint(driver: Any) -> None:
    w, seen = start_seeing(driver)
    assert seen.page.accessibleName() == "Welcome to Parley"
    assert seen.menus == [f"&{name}" for name in MENUS]
    _ready(driver, w)
    assert w.menuBar().height() == seen.menu_bar_height


def test_a_menu_opened_before_its_actions_are_made_shows_them(driver: Any) -> None:
    w = MainWindow(home=driver.home, env={})
    driver.windows.append(w)
    w.show()  # not started: the rest of the window is not made
    assert not w.startup.built
    file_menu = _menus(w)[0]
    assert file_menu.actions() == []
    press(w, Qt.Key.Key_F, Qt.KeyboardModifier.AltModifier)  # the keyboard opens it
    driver.until(lambda: file_menu.isVisible())
    assert w.startup.built
    assert "New chat" in [a.text().split("\t")[0] for a in file_menu.actions()]
    file_menu.close()
    w.startup.start_after_first_paint()
    _ready(driver, w)


def test_while_the_providers_load_a_new_chat_shows_no_missing_model(
        driver: Any, fake_provider: Any, providers_gate: threading.Event) -> None:
    w = driver.configured()
    name = w.model_picker.text()
    assert name and name != "No model"
    driver.close(w)  # a new chat shown: the next start shows one too
    gate = providers_gate  # held until the new chat has shown (a loaded machine: any order)
    gate.clear()

    w = start(driver, fake_env(fake_provider))
    driver.until(lambda: w.chat is not None and not w.chat.adopting)
    QApplication.processEvents()
    assert w.chat.hub is None  # the providers are still loading
    assert w.session_id is None
    assert w.model_picker.text() == ""  # not "No model"
    assert "model" not in w.greeting.text().lower()  # not "Choose a model first…"
    assert "tokens" not in w.context_meter.label.text()  # not "0 tokens"
    gate.set()
    _ready(driver, w)
    assert w.model_picker.text() == name
    assert f"{name} answers" in w.greeting.text()
    assert "tokens" in w.context_meter.label.text() or "/" in w.context_meter.label.text()

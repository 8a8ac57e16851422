"""The first paint is the window the person will use: at the size, place and panes it had
when it closed (kept in the data folder's window.ini, read before the store opens), and
on a first start the set-up's welcome, never a chat-looking window the set-up page
replaces seconds later (fresh-user trial under Xvfb)."""

from __future__ import annotations

from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication

from parley.core.paths import PLACE_NAME
from parley.gui.main_window import MainWindow
from tests.gui.starting import fake_env, start_seeing

pytestmark = pytest.mark.timeout(120)

DEFAULT = (1180, 780)


def _ready(driver: Any, w: Any) -> None:
    driver.until(lambda: w.ready and w.tasks.pending == 0, timeout=40)


def test_the_first_paint_has_the_size_and_panes_the_window_closed_with(driver: Any) -> None:
    w = driver.configured()
    w.resize(700, 500)  # within the offscreen screen (800 x 800)
    driver.until(lambda: (w.width(), w.height()) == (700, 500))
    w.splitter.setSizes([220, 480])
    driver.until(lambda: w.splitter.sizes()[0] == 220)
    driver.close(w)

    w, seen = start_seeing(driver)
    assert seen.size == (700, 500)  # not the default, then a jump once the store opened
    assert seen.sizes[0] == 220 and seen.sidebar_shown
    assert seen.page is w.chat_page
    _ready(driver, w)
    assert (w.width(), w.height()) == (700, 500) and w.splitter.sizes()[0] == 220
    assert (driver.home / PLACE_NAME).is_file()  # beside sessions.db
    assert (driver.home / PLACE_NAME).stat().st_mode & 0o777 == 0o600  # private, as the rest


def test_a_hidden_sidebar_and_a_maximized_window_are_so_at_the_first_paint(driver: Any) -> None:
    w = driver.configured()
    w.splitter.setSizes([0, w.width()])
    w.sidebar.hide()
    w.showMaximized()
    driver.until(lambda: w.isMaximized())
    driver.close(w)

    w, seen = start_seeing(driver)
    assert seen.state & Qt.WindowState.WindowMaximized
    assert seen.sidebar_shown is False
    _ready(driver, w)
    assert w.isMaximized() and not w.sidebar.isVisible()


def test_a_window_kept_larger_than_the_screen_comes_back_on_it(driver: Any) -> None:
    w = driver.configured()
    w.resize(2000, 1500)  # the offscreen screen is 800 x 800: a screen changed since
    w.move(-3000, 40)
    driver.until(lambda: w.width() == 2000)
    driver.close(w)

    w, seen = start_seeing(driver)
    screen = QGuiApplication.primaryScreen().availableGeometry()
    assert seen.size[0] <= screen.width() and seen.size[1] <= screen.height()
    assert screen.intersects(w.frameGeometry())
    _ready(driver, w)


@pytest.mark.parametrize("content", [b"", b"\xff\xfe\x00[window\n=garbage\n",
                                     b"[General]\nwindow.geometry%40x=12\n"])
def test_a_damaged_or_empty_place_file_gives_the_default_size(driver: Any,
                                                                content: bytes) -> None:
    w = driver.configured()
    driver.close(w)
    place = driver.home / PLACE_NAME
    place.write_bytes(content)
    w, seen = start_seeing(driver)
    assert seen.size == DEFAULT
    _ready(driver, w)
    assert w.setup_panel is None  # started as usual


def test_a_first_start_paints_the_welcome_then_the_set_up_page(driver: Any) -> None:
    w, seen = start_seeing(driver)
    assert seen.page is not w.chat_page and seen.page.accessibleName() == "Welcome to Parley"
    assert seen.sidebar_shown is False
    _ready(driver, w)
    assert w.stack.currentWidget() is w.setup_panel
    assert w.chat_page not in seen.pages, "a chat-looking window showed before the set-up"
    assert seen.pages[-1] is w.setup_panel
    driver.set_up_anthropic(w)  # set up from there as before: the chat and its sidebar
    assert w.stack.currentWidget() is w.chat_page and w.sidebar.isVisible()


def test_the_title_is_parley_while_the_welcome_or_the_set_up_page_shows(driver: Any) -> None:
    """Trial 20c: the set-up page read "New chat — Parley" (the chat behind it)."""
    w, seen = start_seeing(driver)
    titles: list[str] = [w.windowTitle()]
    w.windowTitleChanged.connect(titles.append)
    assert seen.page.accessibleName() == "Welcome to Parley" and w.windowTitle() == "Parley"
    _ready(driver, w)
    assert w.stack.currentWidget() is w.setup_panel
    assert set(titles) == {"Parley"}, titles  # never the chat's title behind the set-up
    w.setup_panel.read_first.emit()  # "read my chats first": the chat page, its title
    driver.until(lambda: w.stack.currentWidget() is w.chat_page)
    assert w.windowTitle() == "New chat — Parley"
    w.pages.show_setup()  # sending with no provider: back to the set-up page
    assert w.windowTitle() == "Parley"
    driver.set_up_anthropic(w)
    assert w.stack.currentWidget() is w.chat_page and w.windowTitle() == "New chat — Parley"


def test_when_a_provider_key_is_in_the_environment_the_chat_paints_first(
        driver: Any, fake_provider: Any) -> None:
    w, seen = start_seeing(driver, fake_env(fake_provider))  # not certain: as before
    assert seen.page is w.chat_page and seen.sidebar_shown
    _ready(driver, w)
    assert w.setup_panel is None and w.stack.currentWidget() is w.chat_page


def test_a_second_start_paints_the_chat_first(driver: Any) -> None:
    w = driver.open()  # a first start, closed without setting up: sessions.db is made
    driver.close(w)
    w, seen = start_seeing(driver)
    assert seen.page is w.chat_page
    _ready(driver, w)
    assert w.stack.currentWidget() is w.setup_panel  # still to set up: as before


def test_the_welcome_gives_way_to_the_chat_when_a_provider_is_usable_after_all(
        driver: Any) -> None:
    driver.run(driver.save_provider({}), timeout=60)
    w = MainWindow(home=driver.home, env={})
    driver.windows.append(w)
    w.pages.welcome()  # as if the start had been certain to be a first
    w.show()
    w.startup.start_after_first_paint()
    _ready(driver, w)
    assert w.setup_panel is None
    assert w.stack.currentWidget() is w.chat_page and w.sidebar.isVisible()

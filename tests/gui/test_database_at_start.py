"""The window when the database named at start cannot be used: said in words, what was
typed kept (real window; a real PostgreSQL server where one is needed)."""

from __future__ import annotations

from typing import Any


def _start(driver: Any, home: Any, url: str, typed: str = "") -> Any:
    """A window on ``url``, ``typed`` in the box before start-up, started."""
    from parley.gui.main_window import MainWindow

    w: Any = MainWindow(home=home, env={"PARLEY_DATABASE_URL": url})
    driver.windows.append(w)
    w.show()
    if typed:
        driver.qtbot.keyClicks(w.composer, typed)
    w.start_after_first_paint()
    return w


def test_a_port_that_is_not_a_number_is_said_in_the_window(driver, home):
    w = _start(driver, home, "postgresql://u:secretpw@127.0.0.1:5543x/parley")
    driver.until(lambda: w.stack.currentWidget() is w.loading_page
                 and "the port '5543x' is not a number" in w.loading_page.text(), 20)
    assert "secretpw" not in w.loading_page.text()
    assert w.sidebar.status.text() == ""  # not "Loading chats…" forever

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
    w.startup.start_after_first_paint()
    return w


def test_a_port_that_is_not_a_number_is_said_in_the_window(driver, home):
    w = _start(driver, home, "postgresql://u:secretpw@127.0.0.1:5543x/parley")
    driver.until(lambda: w.stack.currentWidget() is w.loading_page
                 and "the port '5543x' is not a number" in w.loading_page.text(), 20)
    assert "secretpw" not in w.loading_page.text()
    assert w.sidebar.status.text() == ""  # not "Loading chats…" forever
    # The reason wraps inside the page (it was one line, cut on both sides).
    page = w.loading_page
    w.resize(760, 600)
    driver.qtbot.wait(50)
    assert page.wordWrap() and page.fontMetrics().horizontalAdvance(page.text()) > page.width()
    assert page.geometry().right() <= w.stack.width() and page.minimumSizeHint().width() \
        < w.stack.width()


def _typed_file(home: Any) -> Any:
    from parley.core import paths
    from parley.gui.startup.typed_at_start import FILE_NAME

    return paths.data_dir(home) / FILE_NAME


def _send_early(driver: Any, w: Any, text: str) -> None:
    from PySide6.QtCore import Qt

    driver.qtbot.keyClicks(w.composer, text)
    driver.qtbot.keyClick(w.composer, Qt.Key.Key_Return)


def test_a_message_sent_while_the_server_is_away_at_start_is_kept_and_sent_on_try_again(
        postgres_own_server, driver, home, fake_provider):
    from PySide6.QtCore import Qt
    from PySide6.QtWidgets import QPushButton

    from parley.core.store.postgres.store import PgStore

    url = postgres_own_server.new_database()
    postgres_own_server.pause()
    try:
        w = _start(driver, home, url)
        _send_early(driver, w, "sent while it starts")
        driver.until(lambda: w.stack.currentWidget() is w.loading_page
                     and "cannot reach the PostgreSQL server" in w.loading_page.text(), 30)
        kept = _typed_file(home)
        assert kept.read_text(encoding="utf-8") == "sent while it starts\n"
        assert kept.stat().st_mode & 0o077 == 0  # private, like sessions.db
        assert str(kept) in w.loading_page.text()
        button = w.loading_page.findChild(QPushButton, "TryAgain")
        assert button is not None and button.isVisible()
    finally:
        postgres_own_server.resume()
    driver.qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
    driver.until(lambda: w.ready and not w.startup.queue.items, 40)
    assert w.stack.currentWidget() is not w.loading_page
    assert not kept.exists()  # sent as usual in this run: the file is no longer needed
    fake_provider.script("Sent at last.")
    driver.set_up_anthropic(w)  # the message waited for a provider, as at any first start
    driver.until(lambda: driver.last_text(w) == "Sent at last.", 30)
    store = PgStore.open_url(url)
    try:
        chats = store.list_sessions()
        assert [t.text() for t in store.get_turns(chats[0].id)] == [
            "sent while it starts", "Sent at last."]
    finally:
        store.close()


def test_text_kept_at_a_failed_start_comes_back_on_the_next_start(driver, home,
                                                                   closed_port_url,
                                                                   postgres_url):
    port = closed_port_url.rsplit(":", 1)[1]
    w = _start(driver, home, f"postgresql://parley:pw@127.0.0.1:{port}/parley")
    _send_early(driver, w, "the first message")
    driver.qtbot.keyClicks(w.composer, "still in the box")
    driver.until(lambda: "cannot reach the PostgreSQL server" in w.loading_page.text(), 20)
    kept = _typed_file(home)
    assert kept.read_text(encoding="utf-8") == "the first message\n\nstill in the box\n"
    w.close()  # quits without a question: nothing is lost
    driver.until(lambda: not w.isVisible(), 10)
    driver.windows.remove(w)

    again = driver.open(env={"PARLEY_DATABASE_URL": postgres_url})
    assert again.composer.text() == "the first message\n\nstill in the box"
    assert not kept.exists()

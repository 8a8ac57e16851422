"""Parley on a PostgreSQL database chosen by PARLEY_DATABASE_URL (real window, real server)."""

from __future__ import annotations

from typing import Any

from parley.core import paths
from parley.core.content import TextBlock, Turn
from parley.core.store.pg_store import PgStore


def test_the_chats_go_to_the_database_named_by_the_url(driver, fake_provider, postgres_url, home):
    fake_provider.script("Hello from the fake model.")
    window = driver.open(env={"PARLEY_DATABASE_URL": postgres_url})
    assert window.store.on_server
    driver.set_up_anthropic(window)
    driver.send("a question kept on the server", wait=True)
    driver.close(window)

    store = PgStore.open_url(postgres_url)
    try:
        chats = store.list_sessions()
        assert len(chats) == 1
        texts = [t.text() for t in store.get_turns(chats[0].id)]
        assert texts == ["a question kept on the server", "Hello from the fake model."]
    finally:
        store.close()
    assert not paths.db_path(home).exists()  # no sessions.db was made


def test_a_server_away_is_said_at_start_and_the_typed_text_is_kept(driver, closed_port_url,
                                                                     home):
    from parley.gui.main_window import MainWindow

    port = closed_port_url.rsplit(":", 1)[1]
    url = f"postgresql://parley:pw@127.0.0.1:{port}/parley"
    w: Any = MainWindow(home=home, env={"PARLEY_DATABASE_URL": url})
    driver.windows.append(w)
    w.show()
    driver.qtbot.keyClicks(w.composer, "words typed while it starts")
    w.start_after_first_paint()
    driver.until(lambda: w.stack.currentWidget() is w.loading_page
                 and "cannot reach the PostgreSQL server" in w.loading_page.text(), 20)
    assert f"127.0.0.1:{port}/parley" in w.loading_page.text()
    assert "pw@" not in w.loading_page.text()
    assert w.composer.text() == "words typed while it starts"


def test_the_database_option_is_on_the_command_line():
    from parley.gui.app import build_parser, parse_args

    args, _qt = parse_args(["--database", "postgresql://me@db.example/parley"])
    assert args.database == "postgresql://me@db.example/parley"
    assert "PARLEY_DATABASE_URL" in build_parser().format_help()


def test_another_parleys_chat_and_turns_show_without_a_restart(driver, fake_provider,
                                                               postgres_url):
    window = driver.open(env={"PARLEY_DATABASE_URL": postgres_url})
    other = PgStore.open_url(postgres_url)  # another computer's Parley on the same database
    try:
        chat = other.create_session(title="Written on the laptop")
        other.append_turn(chat.id, Turn("user", [TextBlock("first words from the laptop")]))
        driver.until(lambda: window.sidebar.model.has(chat.id), timeout=15)
        window.chat.open_session(chat.id)
        driver.until(lambda: driver.last_text(window) == "first words from the laptop", 15)
        other.append_turn(chat.id, Turn("assistant", [TextBlock("and the reply it got")]))
        driver.until(lambda: driver.last_text(window) == "and the reply it got", timeout=15)
        assert [t.text() for t in window.chat.turns] == [
            "first words from the laptop", "and the reply it got"]
    finally:
        other.close()

"""Parley on a PostgreSQL database chosen by PARLEY_DATABASE_URL (real window, real server)."""

from __future__ import annotations

import re
from typing import Any

from PySide6.QtCore import Qt

from parley.core import paths
from parley.core.content import TextBlock, Turn
from parley.core.store.postgres.store import PgStore
from tests.gui.helpers import selected_session_id, show_section


def test_the_chats_go_to_the_database_named_by_the_url(driver, fake_provider, postgres_url, home):
    fake_provider.script("Hello from the fake model.")
    window = driver.configured(env={"PARLEY_DATABASE_URL": postgres_url})
    assert window.store.on_server
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
    w.startup.start_after_first_paint()
    driver.until(lambda: w.stack.currentWidget() is w.loading_page
                 and "cannot reach the PostgreSQL server" in w.loading_page.text(), 20)
    assert f"127.0.0.1:{port}/parley" in w.loading_page.text()
    assert "pw@" not in w.loading_page.text()
    assert w.composer.text() == "words typed while it starts"


def test_the_database_option_is_on_the_command_line():
    from parley.gui.startup.command_line import build_parser, parse_args

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


def test_a_message_sent_while_the_server_is_away_is_kept_and_not_sent(postgres_own_server,
                                                                       driver, fake_provider):
    url = postgres_own_server.new_database()
    window = driver.configured(env={"PARLEY_DATABASE_URL": url})
    asked = len(fake_provider.requests)
    postgres_own_server.pause()
    try:
        driver.send("typed while the server is away")
        driver.until(lambda: "PostgreSQL server cannot be reached" in _shown_problem(window), 20)
        assert len(fake_provider.requests) == asked  # nothing sent that was not saved first
        assert "typed while the server is away" in window.composer.text()
    finally:
        postgres_own_server.resume()
    # The server back: Enter sends what was kept, saved first as always.
    fake_provider.script("Got it now.")
    window.composer.setFocus()
    driver.qtbot.keyClick(window.composer, Qt.Key.Key_Return)
    driver.until(lambda: driver.last_text(window) == "Got it now.", 20)
    store = PgStore.open_url(url)
    try:
        chat = store.list_sessions()[0]
        assert [t.text() for t in store.get_turns(chat.id)] == [
            "typed while the server is away", "Got it now."]
    finally:
        store.close()


def _shown_problem(window: Any) -> str:
    """What the bar above the composer says is not saved ('' when nothing)."""
    return str(window.chat.save_status.bar.text()) if window.chat is not None else ""


def test_settings_storage_chooses_the_database_for_the_next_start(driver, postgres_url, home):
    from parley.core.store.backends import CHOICE_FILE
    from parley.gui.settings.dialog import SettingsDialog
    from tests.fakes.postgres import PASSWORD

    window = driver.open()
    assert "on this computer" in _storage(driver, window, SettingsDialog).where.text()
    dialog = window.findChild(SettingsDialog)
    page = dialog.storage
    driver.qtbot.keyClicks(page.url, postgres_url.replace(f":{PASSWORD}@", "@"))
    driver.qtbot.keyClicks(page.password, PASSWORD)
    left = Qt.MouseButton.LeftButton
    driver.qtbot.mouseClick(page.test_button, left)
    driver.until(lambda: page.status.text().startswith("Connected to parley@127.0.0.1:"), 15)
    assert "0 chats there" in page.status.text()
    driver.qtbot.mouseClick(page.use_button, left)
    driver.until(lambda: "from the next start" in page.status.text(), 15)
    saved = (home / CHOICE_FILE).read_text()
    assert PASSWORD not in saved and "@127.0.0.1:" in saved
    assert (home / CHOICE_FILE).stat().st_mode & 0o077 == 0
    dialog.close()
    driver.close(window)

    again = driver.open()  # no --database: the choice made in Settings
    assert again.store.on_server
    assert "PostgreSQL database parley@127.0.0.1:" in _storage(driver, again,
                                                                  SettingsDialog).where.text()
    page = again.findChild(SettingsDialog).storage
    driver.qtbot.mouseClick(page.file_button, left)
    driver.until(lambda: "sessions.db from the next start" in page.status.text(), 15)
    assert not (home / CHOICE_FILE).exists()


def _storage(driver: Any, window: Any, dialog_class: Any) -> Any:
    dialog = dialog_class(window.store, window.hub, window)
    dialog.show()
    driver.until(lambda: dialog.ready, 10)
    show_section(dialog, "Storage")
    return dialog.storage


def test_settings_storage_copies_the_chats_into_the_database(driver, fake_provider,
                                                             postgres_url):
    from parley.gui.settings.dialog import SettingsDialog

    window = driver.configured()
    fake_provider.script("Kept on the server too.")
    driver.send("copy me", wait=True)
    page = _storage(driver, window, SettingsDialog)
    driver.qtbot.keyClicks(page.url, postgres_url)
    left = Qt.MouseButton.LeftButton
    driver.qtbot.mouseClick(page.copy_button, left)
    copied = "Copied 1 chat, 2 messages, 0 attached files, 1 space, 0 compactions;"
    driver.until(lambda: page.status.text().startswith(copied), 20)
    assert "the original unchanged" in page.status.text()
    store = PgStore.open_url(postgres_url)
    try:
        chat = store.list_sessions()[0]
        assert [t.text() for t in store.get_turns(chat.id)] == ["copy me",
                                                                "Kept on the server too."]
    finally:
        store.close()
    assert [t.text() for t in window.chat.turns] == ["copy me", "Kept on the server too."]
    driver.qtbot.mouseClick(page.copy_button, left)  # a second copy: refused, nothing mixed
    driver.until(lambda: "already holds 1 chat;" in page.status.text(), 20)
    window.findChild(SettingsDialog).close()


def test_settings_storage_copies_the_chats_back_out_to_a_file(driver, fake_provider,
                                                              postgres_url, home, monkeypatch):
    from PySide6.QtWidgets import QFileDialog, QLineEdit

    from parley.core.paths import DB_NAME
    from parley.core.store.store import Store
    from parley.core.store.transfer import turns_digest
    from parley.gui.settings import storage
    from parley.gui.settings.dialog import SettingsDialog

    fake_provider.script("Kept in the file too.")
    window = driver.open(env={"PARLEY_DATABASE_URL": postgres_url})
    driver.set_up_anthropic(window)
    driver.send("move me back out", wait=True)
    source = PgStore.open_url(postgres_url)
    try:
        before = (source._r(turns_digest), len(source.list_sessions(include_archived=True)))
    finally:
        source.close()
    shown: list[str] = []
    real_label = storage.QProgressDialog.setLabelText

    def seen(dialog: Any, text: str) -> None:
        shown.append(text)
        real_label(dialog, text)

    monkeypatch.setattr(storage.QProgressDialog, "setLabelText", seen)
    page = _storage(driver, window, SettingsDialog)
    assert page.to_file_button.isVisible()
    driver.qtbot.mouseClick(page.to_file_button, Qt.MouseButton.LeftButton)
    driver.until(lambda: any(d.isVisible() for d in page.findChildren(QFileDialog)), 10)
    dlg = next(d for d in page.findChildren(QFileDialog) if d.isVisible())
    assert dlg.acceptMode() == QFileDialog.AcceptMode.AcceptSave
    assert dlg.findChild(QLineEdit, "fileNameEdit").text() == DB_NAME  # none there yet
    dlg.accept()
    copied = "Copied 1 chat, 2 messages, 0 attached files, 1 space, 0 compactions to "
    driver.until(lambda: page.status.text().startswith(copied), 30)
    assert "the database unchanged" in page.status.text()
    counts = [re.fullmatch(r"Copying your chats to sessions\.db: (\d+) of (\d+) rows", t)
              for t in shown]
    assert all(counts) and len(counts) > 1, shown  # the counts, as they go
    # never back: the dialog's setValue runs the event loop, where the next count may come
    assert [int(c[1]) for c in counts if c] == sorted(int(c[1]) for c in counts if c), shown
    assert counts[-1] is not None and counts[-1][1] == counts[-1][2]
    assert page.progress is None and page.to_file_button.isEnabled() \
        and page.file_button.isEnabled()
    # the address field is empty: the buttons needing an address stay off (issue 35)
    assert not any(b.isEnabled() for b in (page.test_button, page.use_button,
                                            page.copy_button))

    copy = Store.open(home / DB_NAME)
    try:
        chat = copy.list_sessions()[0]
        assert [t.text() for t in copy.get_turns(chat.id)] == ["move me back out",
                                                               "Kept in the file too."]
    finally:
        copy.close()
    source = PgStore.open_url(postgres_url)
    try:  # the database as it was
        assert (source._r(turns_digest), len(source.list_sessions(include_archived=True))) \
            == before
    finally:
        source.close()

    # A second copy into the same file is refused; the file keeps its one chat.
    driver.qtbot.mouseClick(page.to_file_button, Qt.MouseButton.LeftButton)
    driver.until(lambda: any(d.isVisible() for d in page.findChildren(QFileDialog)), 10)
    dlg = next(d for d in page.findChildren(QFileDialog) if d.isVisible())
    assert dlg.findChild(QLineEdit, "fileNameEdit").text() == "sessions-from-database-1.db"
    dlg.findChild(QLineEdit, "fileNameEdit").setText(str(home / DB_NAME))
    dlg.accept()
    driver.until(lambda: "already holds 1 chat;" in page.status.text(), 30)
    window.findChild(SettingsDialog).close()


def test_the_copy_to_a_file_is_offered_only_when_the_chats_are_in_a_database(driver):
    from parley.gui.settings.dialog import SettingsDialog

    window = driver.open()
    page = _storage(driver, window, SettingsDialog)
    assert not page.to_file_button.isVisible()
    window.findChild(SettingsDialog).close()


def test_drafts_typed_and_a_chat_switch_while_the_server_is_away_lose_nothing(
        postgres_own_server, driver):
    from parley.gui.composer.drafts import draft_key

    url = postgres_own_server.new_database()
    setup = PgStore.open_url(url)
    try:
        first = setup.create_session(title="First chat")
        setup.append_turn(first.id, Turn("user", [TextBlock("the first chat's question")]))
        second = setup.create_session(title="Second chat")
        setup.append_turn(second.id, Turn("user", [TextBlock("the second chat's question")]))
    finally:
        setup.close()
    window = driver.open(env={"PARLEY_DATABASE_URL": url})
    window.chat.open_session(first.id)
    driver.until(lambda: driver.last_text(window) == "the first chat's question", 15)
    postgres_own_server.pause()
    try:
        window.composer.setFocus()
        driver.qtbot.keyClicks(window.composer, "a draft typed while the server is away")
        # The draft is written a moment after typing stops: refused, and said so.
        driver.until(lambda: "PostgreSQL server cannot be reached" in _shown_problem(window), 20)
        assert "stays in the box" in _shown_problem(window)
        # A switch in the list: the other chat cannot be read while the server is away.
        window.sidebar.tree.setCurrentIndex(window.sidebar.model.index_of(second.id))
        driver.until(lambda: _shown_problem(window).startswith(
            "That chat could not be opened: the PostgreSQL server cannot be reached."), 20)
        assert "nothing was lost" in _shown_problem(window)
        assert selected_session_id(window.sidebar) == first.id
        assert window.chat.session_id == first.id  # still the chat the draft belongs to
        assert driver.last_text(window) == "the first chat's question"
        assert window.composer.text() == "a draft typed while the server is away"
    finally:
        postgres_own_server.resume()
    # The server back: the switch works, the draft is written and comes back with its chat.
    window.chat.open_session(second.id)
    driver.until(lambda: driver.last_text(window) == "the second chat's question", 20)
    assert window.composer.text() == ""
    window.chat.open_session(first.id)
    driver.until(lambda: driver.last_text(window) == "the first chat's question", 20)
    assert window.composer.text() == "a draft typed while the server is away"
    store = PgStore.open_url(url)
    try:
        assert store.get_state(draft_key(first.id)) == "a draft typed while the server is away"
    finally:
        store.close()

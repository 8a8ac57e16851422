"""A PostgreSQL server that stops answering mid-reply (a proxy on 127.0.0.1 that holds
every byte and closes nothing), on the real window: within a few seconds the bar says
"The database is not answering — Parley keeps trying"; Esc stops the reply, Ctrl+N
opens a new chat and search answers in words, none of them waiting for the server;
once it answers again the notice goes and the stopped reply is saved whole."""

from __future__ import annotations

import time
from typing import Any

import pytest
from PySide6.QtCore import Qt

from parley.core.store.answering import SLOW_S
from parley.core.store.postgres.store import PgStore
from tests.fakes.freezing_proxy import FreezingProxy

pytestmark = pytest.mark.timeout(120)


@pytest.fixture
def proxy(postgres_server):
    p = FreezingProxy(postgres_server.port).start()
    yield p
    p.close()


def _bar(window: Any) -> str:
    return str(window.chat.save_status.bar.text())


def test_a_frozen_server_is_told_and_esc_new_chat_and_search_still_work(
        proxy, driver, fake_provider, postgres_url, qtbot):  # the proxy outlives the window
    url = proxy.url_of(postgres_url)
    window = driver.configured(env={"PARLEY_DATABASE_URL": url})
    fake_provider.script("word " * 800, token_delay_ms=25)
    driver.send("tell me a long story")
    driver.until(lambda: "word word word" in driver.transcript_text(window), 20)
    sid = window.chat.session_id

    proxy.freeze()
    frozen_at = time.monotonic()
    try:
        driver.until(lambda: "The database is not answering — Parley keeps trying"
                     in _bar(window), SLOW_S + 3)
        # a journal write waits within 250 ms of the freeze; the notice follows SLOW_S later
        assert time.monotonic() - frozen_at <= SLOW_S + 1.5
        assert window.composer_bar.busy  # the reply still streams from the model

        window.composer.setFocus()
        qtbot.keyClick(window.composer, Qt.Key.Key_Escape)
        driver.until(lambda: not window.composer_bar.busy, 2)  # stopped at once
        shown = window.chat.turns[-1].text()  # the stopped reply, as shown
        assert shown.startswith("word word") and len(shown) < len("word " * 800)
        assert "not saved yet" in _bar(window)

        qtbot.keyClick(window.composer, Qt.Key.Key_N, Qt.KeyboardModifier.ControlModifier)
        driver.until(lambda: window.chat.session_id is None, 2)  # the new chat is shown
        qtbot.keyClicks(window.composer, "typed in the new chat")
        assert window.composer.text() == "typed in the new chat"

        assert window.window_commands.open_search()
        popup = window.search_popup
        qtbot.keyClicks(popup.edit, "story")
        driver.until(lambda: "not answered" in popup.status.text()
                     or "not answering" in popup.status.text(), 3)
        popup.hide()
        assert "The database is not answering" in _bar(window)
    finally:
        proxy.resume()
    driver.until(lambda: _bar(window) == "", 3)  # the notice and "not saved" go at once

    store = PgStore.open_url(postgres_url)
    try:
        turns = store.get_turns(sid)
        assert [(t.role, t.aborted) for t in turns] == [("user", False), ("assistant", True)]
        assert turns[1].text() == shown  # what was shown when Esc was pressed, whole
        assert not turns[1].cut_off
    finally:
        store.close()

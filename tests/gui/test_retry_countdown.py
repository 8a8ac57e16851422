"""A rate-limited request's wait is shown and can be cancelled (real window, store and SDKs
against the fake provider server answering 429 with retry-after)."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt

from parley.gui.notices.retry_notice import wait_text


def bar_text(w: Any) -> str:
    return str(w.chat.runs.retry_notice.bar.text())


def test_the_wait_counts_down_then_the_reply_comes(driver: Any) -> None:
    w = driver.configured()
    driver.fake.fail("rate_limit", retry_after=2.5)
    driver.fake.script("Here after the wait.")
    driver.send("hello", w)
    driver.until(lambda: bar_text(w) == "Rate limited — retrying in 3 s", timeout=5)
    bar = w.chat.runs.retry_notice.bar
    assert bar.isVisible() and bar.cancel.isVisible() and "rate-limiting" in bar.toolTip()
    driver.until(lambda: bar_text(w) == "Rate limited — retrying in 1 s", timeout=4)
    driver.until(lambda: driver.last_text(w) == "Here after the wait.", timeout=10)
    driver.settle(w)
    assert bar_text(w) == "" and not bar.isVisible()


def test_cancel_stops_the_wait_and_keeps_the_message(driver: Any) -> None:
    w = driver.configured()
    driver.fake.fail("rate_limit", retry_after=30)
    driver.send("hello", w)
    driver.until(lambda: bar_text(w).startswith("Rate limited — retrying in 30 s")
                 or bar_text(w).startswith("Rate limited — retrying in 29 s"), timeout=5)
    sid = w.chat.session_id
    bar = w.chat.runs.retry_notice.bar
    driver.qtbot.mouseClick(bar.cancel, Qt.MouseButton.LeftButton)
    driver.until(lambda: not w.composer_bar.busy, timeout=3)  # not 30 s later
    assert not bar.isVisible()
    turns = driver.run(w.store.get_turns(sid))
    assert [t.role for t in turns] == ["user"] and turns[0].text() == "hello"
    assert len(driver.fake.model_requests) == 1  # never sent again


def test_another_chat_does_not_show_the_wait_and_coming_back_shows_whats_left(
    driver: Any,
) -> None:
    w = driver.configured()
    driver.fake.fail("rate_limit", retry_after=20)
    driver.send("hello", w)
    driver.until(lambda: bar_text(w).startswith("Rate limited"), timeout=5)
    sid = w.chat.session_id
    w.chat.new_session()
    driver.until(lambda: w.chat.session_id is None)
    assert bar_text(w) == ""
    w.chat.open_session(sid)
    driver.until(lambda: w.chat.session_id == sid)
    driver.until(lambda: bar_text(w).startswith("Rate limited — retrying in 1"), timeout=3)
    w.chat.runs.stop()
    driver.settle(w)


def test_wait_text_rounds_up_and_says_when_it_is_over() -> None:
    assert wait_text(11.2, True) == "Rate limited — retrying in 12 s"
    assert wait_text(0.0, True) == "Retrying now…"
    assert wait_text(2.0, False) == "The server did not answer — retrying in 2 s"

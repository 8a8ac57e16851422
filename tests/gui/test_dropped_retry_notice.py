"""Errors and retries in the window, as a person meets them (real window, store and SDKs
against the fake provider server):

- a reply whose connection dropped before any of it came is sent again by itself, and
  the window says so: "The connection dropped; trying again…" above the composer until
  the reply starts, and a line in the status bar that stays after it;
- a reply cut off after text is not replaced by a retry: the text stays, marked cut off;
- with the Anthropic provider at a proxy (``ANTHROPIC_BASE_URL``-style address that is not
  Anthropic's), the error names the server the person set up, not "Anthropic".
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

import pytest

from parley.core.providers.naming import ENV_ANTHROPIC_URLS
from parley.gui.chat.run_events import DROPPED_STATUS
from parley.gui.notices.retry_notice import DROPPED
from tests.gui.transcript_reading import text_of_last

pytestmark = pytest.mark.timeout(90)
STORY = "Once upon a time, in a land far far away, there lived a fox"


def bar_text(w: Any) -> str:
    return str(w.chat.runs.retry_notice.bar.text())


def replies_asked(driver: Any, since: int) -> int:
    """How many requests for the chat's reply came after the first ``since`` (not the
    title's, which asks for no story)."""
    return sum(1 for r in driver.fake.model_requests[since:]
               if "Tell me a story" in r.raw.decode() and "no preamble" not in r.raw.decode())


def test_a_dropped_connection_is_retried_and_said(driver: Any, tmp_path: Any) -> None:
    w = driver.configured()
    driver.fake.fail("cut", reply=STORY, after_chars=0)  # drops before any of the reply
    driver.fake.script("A whole story, told slowly.", token_delay_ms=150)
    before = len(driver.fake.model_requests)
    driver.send("Tell me a story", w)
    driver.until(lambda: bar_text(w) == DROPPED, timeout=10)
    assert w.chat.runs.retry_notice.bar.isVisible()
    assert w.statusBar().currentMessage() == DROPPED_STATUS
    w.grab().save(str(tmp_path / "dropped.png"))
    driver.until(lambda: driver.last_text(w) == "A whole story, told slowly.", timeout=20)
    driver.settle(w)
    assert bar_text(w) == ""  # gone with the reply
    assert w.statusBar().currentMessage() == DROPPED_STATUS  # still said afterwards
    assert replies_asked(driver, before) == 2  # the dropped one, and once more
    assert not driver.error_text(w)


def test_a_reply_cut_after_text_keeps_its_text(driver: Any) -> None:
    w = driver.configured()
    driver.fake.fail("cut", reply=STORY, after_chars=20)
    driver.fake.script("A different story.")  # what a silent retry would have shown
    before = len(driver.fake.model_requests)
    driver.send("Tell me a story", w)
    driver.until(lambda: driver.error_text(w) and not w.composer_bar.busy, timeout=15)
    driver.settle(w)
    assert replies_asked(driver, before) == 1  # never sent again by itself
    assert driver.last_text(w).startswith(STORY[:20])
    assert "Cut off" in text_of_last(w.transcript)
    assert "A different story." not in text_of_last(w.transcript)


def test_an_error_names_the_proxy_not_anthropic(driver: Any, monkeypatch: Any,
                                                tmp_path: Any) -> None:
    monkeypatch.delenv(ENV_ANTHROPIC_URLS, raising=False)  # the fake server is a proxy here
    w = driver.configured()
    driver.fake.fail("permission")
    driver.send("Hello?", w)
    driver.until(lambda: driver.error_text(w), timeout=15)
    address = urlsplit(driver.fake.anthropic_base_url).netloc
    first = w.transcript.error_bar.label.text()
    assert first.startswith(f"The server at {address} refused the request"), first
    assert "Anthropic" not in driver.error_text(w)
    w.grab().save(str(tmp_path / "proxy-error.png"))

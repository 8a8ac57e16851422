"""A reply that ends while another process holds sessions.db locked is "not saved yet"
within seconds, not after SQLite's lock waits (real window, real file, the default busy
timeout; the lock is a real write lock held by another process)."""

from __future__ import annotations

import time

import pytest

from tests.core.faults import Locker
from tests.gui.transcript_reading import save_mark

pytestmark = pytest.mark.timeout(90)

REPLY = "word " * 400  # streamed in about four seconds


def test_a_locked_file_shows_not_saved_yet_within_5_s_and_the_reply_is_saved_once(driver):
    w = driver.open(env={"ANTHROPIC_API_KEY": "sk-ant-test",
                         "ANTHROPIC_BASE_URL": driver.fake.anthropic_base_url})
    driver.fake.script("First answer.")
    driver.send("first question", wait=True)
    driver.settle(w)
    sid = w.chat.session_id
    before = driver.run(w.store.get_session(sid)).usage.output_tokens
    driver.fake.script(REPLY, token_delay_ms=10, chunk_size=5)
    driver.send("second question")
    # The lock is taken about a second before the reply ends (300 of its 400 words shown).
    driver.until(lambda: driver.transcript_text(w).count("word") >= 300, timeout=15)
    locker = Locker(w.store.path)  # held for as long as the test lets it (60 s at most)
    locked_at = time.monotonic()
    bar = w.chat.save_status.bar
    try:
        # Within 5 s of the lock, so within 5 s of the reply's end (which comes after it).
        driver.until(lambda: "not saved yet" in bar.text(), timeout=6)
        assert time.monotonic() - locked_at < 5.0
        assert not w.composer_bar.busy  # the run is over: not "a reply is still coming"
        kept = w.runner.saves.pending()
        assert [u.turn.text() for u in kept] == [REPLY]
        assert save_mark(w.transcript, kept[0].turn.id) == "unsaved"
    finally:
        locker.release()
    released_at = time.monotonic()
    driver.until(lambda: not w.runner.saves.pending() and bar.text() == "", timeout=20)
    assert time.monotonic() - released_at < 6.0  # the write waiting on the lock went on
    assert save_mark(w.transcript, kept[0].turn.id) is None
    turns = driver.run(w.store.get_turns(sid))
    assert [(t.text(), t.aborted) for t in turns if t.role == "assistant"] == [
        ("First answer.", False), (REPLY, False)]
    after = driver.run(w.store.get_session(sid)).usage.output_tokens
    assert after - before == kept[0].turn.usage.output_tokens > 0  # its usage counted once


def test_the_bar_clears_the_moment_the_kept_reply_is_saved(driver):
    """A refusal told in the bar meanwhile (a draft, a message: 15 s of words) goes too."""
    from parley.core.store.errors import DiskFull
    from tests.core.faults import page_limit
    from tests.gui.disk_full import disk_full_reply, saving_window

    w = saving_window(driver)
    disk_full_reply(driver, w)
    status = w.chat.save_status
    status.problem(DiskFull(w.store.path))  # e.g. a draft refused by the same full disk
    assert "not saved yet" in status.bar.text()
    driver.run(page_limit(w.store, None))  # space freed: the kept reply is written
    driver.until(lambda: not w.runner.saves.pending(), timeout=10)
    saved_at = time.monotonic()
    driver.until(lambda: status.bar.text() == "", timeout=5)
    assert time.monotonic() - saved_at < 1.0

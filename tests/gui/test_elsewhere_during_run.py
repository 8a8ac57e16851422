"""Changes another computer's Parley makes to the open chat while a reply streams here
(two Parleys on one real PostgreSQL database) are shown when the run ends: the chat is
read again then, once (gui/database/elsewhere.py)."""

from __future__ import annotations

import pytest

from parley.core.content import TextBlock, Turn
from parley.core.store.postgres.store import PgStore
from tests.gui.transcript_reading import text_of_last

pytestmark = pytest.mark.timeout(90)


def test_a_turn_written_elsewhere_mid_reply_is_shown_when_the_reply_ends(
        driver, fake_provider, postgres_url):
    window = driver.configured(env={"PARLEY_DATABASE_URL": postgres_url})
    fake_provider.script("word " * 300, token_delay_ms=20)
    driver.send("a question asked here")
    driver.until(lambda: "word word" in driver.transcript_text(window), 20)
    sid = window.chat.session_id
    reloads = []
    opener = window.chat.opener
    real_reload = opener.reload

    async def counted_reload(*args, **kwargs):
        reloads.append(sid)
        return await real_reload(*args, **kwargs)

    opener.reload = counted_reload
    other = PgStore.open_url(postgres_url)  # the laptop's Parley, same database
    try:
        other.append_turn(sid, Turn("user", [TextBlock("a note written on the laptop")]))
        driver.qtbot.wait(1500)  # heard (LISTEN/NOTIFY) while the reply still streams
        assert window.composer_bar.busy
        assert "a note written on the laptop" not in [t.text() for t in window.chat.turns]
        driver.until(lambda: not window.composer_bar.busy, 30)  # the reply ends
        driver.until(lambda: "a note written on the laptop"
                     in [t.text() for t in window.chat.turns], 5)
        texts = [t.text() for t in window.chat.turns]
        assert texts[0] == "a question asked here"
        assert texts.count("a note written on the laptop") == 1
        assert any(t.startswith("word word") for t in texts)
        driver.qtbot.wait(500)
        assert reloads == [sid]  # read again once, not per change heard
    finally:
        other.close()


def test_another_computers_reply_still_streaming_is_shown_in_progress(driver, fake_provider,
                                                                      postgres_url):
    from parley.core.content import Usage
    from parley.gui.transcript.specs import CUT_OFF_MARK, ELSEWHERE_MARK, STOPPED_MARK

    window = driver.configured(env={"PARLEY_DATABASE_URL": postgres_url})
    laptop = PgStore.open_url(postgres_url)  # its Parley streams a reply into this chat
    try:
        sid = laptop.create_session(title="Shared").id
        laptop.append_turn(sid, Turn("user", [TextBlock("asked on the laptop")]))
        reply = Turn("assistant", [TextBlock("half of the laptop's answer")], aborted=True,
                     cut_off=True, model="anthropic:claude-sonnet-4-6")
        laptop.upsert_turn(sid, reply)  # as its journal writes it
        driver.until(lambda: window.sidebar.model.has(sid), 15)
        window.chat.open_session(sid)
        driver.until(lambda: driver.last_text(window) == "half of the laptop's answer", 15)
        shown = text_of_last(window.transcript)
        assert ELSEWHERE_MARK in shown
        assert CUT_OFF_MARK not in shown and STOPPED_MARK not in shown
        assert "Continue" not in shown  # nothing to resume here: it is not stopped
        # it finishes there: shown whole, with no mark, without a restart
        usage = Usage(input_tokens=3, output_tokens=8)
        laptop.finish_turn(sid, Turn("assistant", [TextBlock("the laptop's whole answer")],
                                     id=reply.id, model=reply.model, usage=usage), usage)
        driver.until(lambda: driver.last_text(window) == "the laptop's whole answer", 15)
        assert ELSEWHERE_MARK not in text_of_last(window.transcript)
    finally:
        laptop.close()

"""Starting again after Parley died mid-compaction or mid-reply: the notice names an
interrupted compaction, and a cut-off reply is marked as cut off (not as stopped)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from parley.core.recovery.restart_notice import COMPACTION
from tests.gui.chats import long_chat
from tests.gui.damage import as_if_killed
from tests.gui.long_chats import N, rows
from tests.gui.transcript_reading import text_of_last

pytestmark = pytest.mark.timeout(120)


def test_a_compaction_cut_off_by_a_kill_is_named_on_the_next_start(
    driver: Any, home: Path,
) -> None:
    w = driver.configured()
    sid, _turns = long_chat(driver, w, N)
    w.chat.open_session(sid)
    driver.until(lambda: w.session_id == sid and rows(w))
    driver.fake.script("A summary that takes its time. " * 50, token_delay_ms=200,
                       chunk_size=5)
    assert w.window_commands.compact_now() is True
    driver.until(lambda: driver.run(w.store.get_state("recovery.compacting")) is not None,
                 timeout=20)
    as_if_killed(driver, w, home)

    again = driver.open()
    assert COMPACTION in again.toast.message
    assert again.toast.isVisible(), "told but not shown"


def test_a_reply_cut_off_by_a_kill_says_cut_off_and_one_stopped_says_stopped(
    driver: Any, home: Path,
) -> None:
    from parley.gui.transcript.specs import CUT_OFF_MARK, STOPPED_MARK

    w = driver.configured()
    driver.fake.script("Words that keep coming. " * 200, token_delay_ms=20, chunk_size=10)
    driver.send("tell me a long story")
    driver.until(lambda: w.chat.session_id is not None, timeout=10)
    sid = w.chat.session_id

    def journalled() -> bool:
        turns = driver.run(w.store.get_turns(sid))
        return len(turns) == 2 and turns[-1].aborted and bool(turns[-1].text())

    driver.until(journalled, timeout=20)
    as_if_killed(driver, w, home)

    again = driver.open()
    again.chat.open_session(sid)
    driver.until(lambda: again.session_id == sid and again.transcript.last_turn() is not None)
    [reply] = [t for t in driver.run(again.store.get_turns(sid)) if t.role == "assistant"]
    assert reply.aborted and reply.cut_off
    shown = text_of_last(again.transcript)
    assert CUT_OFF_MARK in shown and STOPPED_MARK not in shown

    driver.fake.script("Another slow answer. " * 200, token_delay_ms=20, chunk_size=10)
    driver.send("and another")
    driver.until(lambda: again.chat.runs.running(sid), timeout=10)
    driver.qtbot.wait(300)
    assert again.chat.runs.stop()  # Esc
    driver.until(lambda: not again.chat.runs.running(sid), timeout=10)
    driver.settle(again)
    last = driver.run(again.store.get_turns(sid))[-1]
    assert last.aborted and not last.cut_off
    shown = text_of_last(again.transcript)
    assert STOPPED_MARK in shown and CUT_OFF_MARK not in shown

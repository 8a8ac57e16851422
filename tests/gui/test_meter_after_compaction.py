"""The context meter after "Compact now": the figure rests on the provider's count of the
compacted request, not on the local estimate alone, so it grows as messages and replies
are added instead of falling at the next reply (real window, store, SDK and the fake
provider server, which reports usage and counts requests its own way)."""

from __future__ import annotations

from typing import Any

import pytest

from parley.gui.chat import opening
from tests.gui.chats import long_chat
from tests.gui.long_chats import SUMMARY, rows

pytestmark = pytest.mark.timeout(120)


def meter_after(driver: Any, w: Any, text: str) -> int:
    """Send ``text``, wait for the reply and the meter; return the meter's figure."""
    driver.fake.script("A reply of a few words: " + "noted " * 20)
    driver.send(text, wait=True)
    driver.until(lambda: w.tasks.pending == 0)
    driver.settle(w)
    return int(w.context_meter.used)


@pytest.mark.parametrize("open_turns", [None, 3], ids=["opened-in-full", "opened-in-part"])
def test_the_meter_grows_with_each_message_after_compact_now(
        driver: Any, monkeypatch: Any, open_turns: int | None) -> None:
    if open_turns is not None:
        monkeypatch.setattr(opening, "OPEN_TURNS", open_turns)
    w = driver.configured()
    sid, _turns = long_chat(driver, w, 60)
    w.chat.open_session(sid)
    driver.until(lambda: w.session_id == sid and rows(w))
    before = meter_after(driver, w, "First question before compacting.")
    driver.fake.script(SUMMARY)
    assert w.window_commands.compact_now() is True
    driver.until(lambda: "Compacted" in w.toast.message, timeout=30)
    driver.settle(w)
    driver.until(lambda: w.tasks.pending == 0)
    if open_turns is not None:  # left and opened again: its last 3 items read
        w.chat.new_session()
        driver.until(lambda: w.chat.session_id is None and w.tasks.pending == 0)
        w.chat.open_session(sid)
        driver.until(lambda: w.session_id == sid and w.tasks.pending == 0)
    assert (w.chat.older > 0) == (open_turns is not None)  # _measure_all counts it in part
    figures = [int(w.context_meter.used)]
    assert figures[0] < before  # the summary stands for 56 turns
    for n in range(3):
        figures.append(meter_after(driver, w, f"Question {n} after compacting: " + "word " * 30))
        assert w.context_meter.measured
    assert all(b > a for a, b in zip(figures, figures[1:], strict=False)), figures

    # The figure after the compaction was the request the provider then counted, less
    # the message added to it (Parley's estimate of a short message is close).
    replies = [t for t in w.chat.turns if t.role == "assistant" and t.usage]
    reported = [t.usage.total_input_tokens for t in replies[-3:] if t.usage]
    assert figures[0] < reported[0] < figures[0] * 1.1, (figures, reported)


def test_after_a_restart_the_compacted_chat_is_counted_again(driver: Any) -> None:
    from tests.gui.long_chats import restart

    w = driver.configured()
    sid, _turns = long_chat(driver, w, 60)
    w.chat.open_session(sid)
    driver.until(lambda: w.session_id == sid and rows(w))
    meter_after(driver, w, "First question before compacting.")
    driver.fake.script(SUMMARY)
    assert w.window_commands.compact_now() is True
    driver.until(lambda: "Compacted" in w.toast.message, timeout=30)
    driver.settle(w)
    driver.until(lambda: w.tasks.pending == 0 and w.context_meter.measured)
    compacted = w.context_meter.used

    w2 = restart(driver, w, sid)  # the count was kept in memory only: asked again
    driver.until(lambda: w2.tasks.pending == 0 and w2.context_meter.measured, timeout=20)
    assert w2.context_meter.used == compacted
    assert meter_after(driver, w2, "And after the restart?") > compacted

"""The meter of a chat opened in part after a message and an edit: what the next request
sends, worked out from the turns read at opening and those shown since (issue 36: no
read of the chat's context is queued before the request's own)."""

from __future__ import annotations

from typing import Any

from parley.gui.chat import opening
from tests.gui.chats import context_count, long_chat


def test_the_meter_of_a_long_chat_follows_a_message_and_an_edit_without_reading_it(
        driver: Any, monkeypatch: Any) -> None:
    monkeypatch.setattr(opening, "OPEN_TURNS", 20)  # opened in part: its last 20 items
    w = driver.configured()
    sid, _turns = long_chat(driver, w, 40)
    w.chat.open_session(sid)
    driver.until(lambda: w.session_id == sid and w.chat.older > 0)
    expected = context_count(driver, w, sid)
    driver.until(lambda: w.context_meter.used == expected, timeout=10)

    reads: list[str] = []
    read = w.store.context_turns

    async def counted(session_id: str, **kwargs: Any) -> Any:
        reads.append(session_id)
        return await read(session_id, **kwargs)

    monkeypatch.setattr(w.store, "context_turns", counted)
    driver.send("One more question, please.", wait=True)
    driver.until(lambda: w.tasks.pending == 0)
    assert reads == []  # counted from the turns read at opening and those shown since
    monkeypatch.setattr(w.store, "context_turns", read)
    expected = context_count(driver, w, sid)
    assert w.context_meter.used == expected

    # An edit of that message: the path is cut above it; the meter follows.
    w.chat.editor.edit_last()
    w.composer.set_text("A different question.")
    driver.send("", wait=True)
    driver.until(lambda: w.tasks.pending == 0 and w.chat.turns[-2].text()
                 == "A different question.")
    expected = context_count(driver, w, sid)
    driver.until(lambda: w.context_meter.used == expected, timeout=10)

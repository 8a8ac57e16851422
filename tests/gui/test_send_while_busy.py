"""Enter while a reply is still coming: nothing is sent before it ends, nothing is lost
(real window, real store, real SDK against the fake provider server)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt

from tests.gui.helpers import drop, ready


def test_enter_with_a_file_while_a_reply_streams_queues_both_and_sends_nothing_yet(
        driver: Any, tmp_path: Path) -> None:
    """Was: the message with its file stayed in the box. Since the queue took files
    (README, Queue while replying) it is queued with them, saved, and nothing is sent
    before the reply ends; Esc in the now empty box pauses the queue, losing nothing."""
    w = driver.configured()
    driver.fake.script("slow " * 600, token_delay_ms=20, chunk_size=2)  # ~12 s: stopped below
    driver.send("Tell me a long story", w)
    driver.until(lambda: w.composer_bar.busy and w.chat.partial, timeout=10)
    sid = w.chat.session_id
    notes = tmp_path / "notes.txt"
    notes.write_text("a note\n", encoding="utf-8")
    assert drop(w.composer, [notes])
    driver.until(lambda: len(ready(w)) == 1)  # read (the reply still streams)

    driver.qtbot.keyClicks(w.composer, "And then?")
    driver.qtbot.keyClick(w.composer, Qt.Key.Key_Return)

    driver.until(lambda: [m.text for m in w.chat.runs.queue.messages(sid)] == ["And then?"])
    assert w.composer.text() == "" and not w.chat.attachments.pending()
    (saved,) = driver.run(w.store.queued_messages(sid))
    assert (saved.text, [f.name for f in saved.files]) == ("And then?", ["notes.txt"])
    driver.qtbot.wait(100)
    assert w.composer_bar.busy  # still streaming
    assert len(driver.fake.model_requests) == 1  # …and nothing sent

    driver.qtbot.keyClick(w.composer, Qt.Key.Key_Escape)  # pauses the queue
    driver.qtbot.keyClick(w.composer, Qt.Key.Key_Escape)  # stops the reply
    driver.settle(w)
    turns = driver.run(w.store.get_turns(sid))
    assert [t.role for t in turns] == ["user", "assistant"]  # the queued one not sent
    (kept,) = driver.run(w.store.queued_messages(sid))
    assert (kept.text, [f.name for f in kept.files]) == ("And then?", ["notes.txt"])


def test_enter_in_an_empty_box_while_a_reply_streams_says_nothing(driver: Any) -> None:
    w = driver.configured()
    driver.fake.script("slow " * 400, token_delay_ms=20, chunk_size=2)  # stopped below
    driver.send("Go on", w)
    driver.until(lambda: w.composer_bar.busy and w.chat.partial, timeout=10)
    w.statusBar().clearMessage()
    driver.qtbot.keyClick(w.composer, Qt.Key.Key_Return)
    assert w.statusBar().currentMessage() == ""  # nothing to send: nothing to explain
    assert len(driver.fake.model_requests) == 1
    driver.qtbot.keyClick(w.composer, Qt.Key.Key_Escape)
    driver.settle(w)

"""Enter while a reply is still coming: nothing is sent, nothing is lost, and the status bar
says why (real window, real store, real SDK against the fake provider server)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt

from tests.gui.helpers import drop, ready


def test_enter_while_a_reply_streams_keeps_the_message_and_says_why(driver: Any,
                                                                    tmp_path: Path) -> None:
    w = driver.configured()
    driver.fake.script("slow " * 600, token_delay_ms=20, chunk_size=2)  # ~12 s: stopped below
    driver.send("Tell me a long story", w)
    driver.until(lambda: w.composer_bar.busy and w.chat.partial, timeout=10)
    sid = w.chat.session_id
    notes = tmp_path / "notes.txt"
    notes.write_text("a note\n", encoding="utf-8")
    assert drop(w.composer, [notes])
    driver.until(lambda: len(ready(w)) == 1)  # read (the reply still streams)
    w.statusBar().clearMessage()

    driver.qtbot.keyClicks(w.composer, "And then?")
    driver.qtbot.keyClick(w.composer, Qt.Key.Key_Return)

    shown = w.statusBar().currentMessage()
    assert shown.startswith("A reply is still coming: press Esc to stop it, or wait")
    assert "your message stays here" in shown
    assert w.composer.text() == "And then?"  # nothing lost…
    assert [p.name for p in w.chat.attachments.pending()] == ["notes.txt"]
    driver.qtbot.wait(100)
    assert w.composer_bar.busy  # still streaming
    assert len(driver.fake.model_requests) == 1  # …and nothing sent

    driver.qtbot.keyClick(w.composer, Qt.Key.Key_Escape)  # as the message says
    driver.settle(w)
    turns = driver.run(w.store.get_turns(sid))
    assert [t.role for t in turns] == ["user", "assistant"]
    assert w.composer.text() == "And then?"

    driver.fake.script("The end.")  # once the reply has stopped, Enter sends it
    driver.qtbot.keyClick(w.composer, Qt.Key.Key_Return)
    driver.until(lambda: driver.last_text(w) == "The end." and w.tasks.pending == 0, timeout=10)
    # the last request to the chat's model (its first complete reply is then titled too)
    model = w.chat.current_model().split(":", 1)[1]
    chat = [r for r in driver.fake.model_requests if r.body["model"] == model]
    sent = chat[-1].body["messages"][-1]["content"]
    assert "a note" in sent[-2]["text"] and sent[-1]["text"] == "And then?"  # file, message
    assert w.composer.text() == ""


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

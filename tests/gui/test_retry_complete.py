"""Retry after a complete reply: nothing is sent and the status bar points to Regenerate
(real window, store and SDK against the fake provider server)."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt


def test_retry_on_a_complete_reply_sends_nothing_and_names_regenerate(driver: Any) -> None:
    w = driver.configured()
    driver.fake.script("Lisbon.")
    driver.send("Where should I go in May?", w, wait=True)
    driver.until(lambda: w.tasks.pending == 0)
    sid, sent = w.chat.session_id, len(driver.fake.model_requests)

    w.transcript.setFocus()
    driver.qtbot.keyClick(w, Qt.Key.Key_R, Qt.KeyboardModifier.ControlModifier)  # Ctrl+R
    driver.qtbot.wait(200)

    assert "nothing to retry" in w.statusBar().currentMessage()
    assert f"Regenerate ({w.keymap.shown('run.regenerate')})" in w.statusBar().currentMessage()
    assert not w.composer_bar.busy and len(driver.fake.model_requests) == sent
    turns = driver.run(w.store.get_turns(sid))
    assert [t.role for t in turns] == ["user", "assistant"]


def test_retry_after_a_stopped_reply_still_resends(driver: Any) -> None:
    w = driver.configured()
    driver.fake.script("slow " * 400, token_delay_ms=20, chunk_size=2)
    driver.send("Tell me a story", w)
    driver.until(lambda: w.composer_bar.busy and w.chat.partial, timeout=10)
    driver.qtbot.keyClick(w.composer, Qt.Key.Key_Escape)
    driver.until(lambda: not w.composer_bar.busy and w.tasks.pending == 0, timeout=10)

    driver.fake.script("Once upon a time.")
    assert w.window_commands.retry_run()
    driver.until(lambda: driver.last_text(w) == "Once upon a time." and w.tasks.pending == 0,
                 timeout=10)

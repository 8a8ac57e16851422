"""Parley killed right after an edited message was sent: the draft written while it
was edited must not come back as a plain draft (Enter would send it again as a new
message). The kill is played as ``test_restart_after_kill`` does: the file as it is
at that moment becomes sessions.db."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt

from tests.gui.damage import as_if_killed

pytestmark = pytest.mark.timeout(90)


def test_an_edit_sent_just_before_a_kill_leaves_no_draft(driver: Any, home: Path) -> None:
    from parley.gui.composer.drafts import draft_key

    w = driver.configured()
    driver.fake.script("An answer.")
    driver.send("short msg fig", w, wait=True)
    sid = w.chat.session_id
    driver.qtbot.keyClick(w.composer, Qt.Key.Key_Up)  # edit the last message
    assert w.composer.text() == "short msg fig" and w.chat.editor.editing is not None
    # The box's text is written as the chat's draft a moment later (an edit draft:
    # the text and the message it edits).
    edited = w.chat.editor.editing.id
    driver.until(lambda: driver.run(w.store.get_state(draft_key(sid))) == {
        "text": "short msg fig", "edits": edited}, timeout=10)
    w.composer.clear()
    driver.qtbot.keyClicks(w.composer, "fig edited before crash")
    driver.fake.script("Another answer.", token_delay_ms=200, chunk_size=2)
    driver.qtbot.keyClick(w.composer, Qt.Key.Key_Return)

    def edit_saved() -> bool:
        return [t.text() for t in driver.run(w.store.get_turns(sid))][:1] == [
            "fig edited before crash"]

    driver.until(edit_saved, timeout=10)  # the edit is in the file: killed now
    as_if_killed(driver, w, home)

    again = driver.open()
    again.chat.open_session(sid)
    driver.until(lambda: again.session_id == sid and again.tasks.pending == 0, timeout=10)
    assert again.composer.text() == ""
    assert again.chat.editor.editing is None
    assert driver.run(again.store.get_state(draft_key(sid))) is None

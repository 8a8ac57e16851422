"""A long chat typed in the real window, against a provider that enforces a 20,000-token
window and never answers a summary request with a usable summary: every message is
answered, no request is refused as over the window, the failure is one line, and the note "The
model no longer sees the N earlier turns above" stands before the first turn sent — also
after the window is closed and opened again (real store, SDK and fake provider)."""

from __future__ import annotations

from typing import Any

import pytest
from PySide6.QtCore import Qt

from parley.core.compaction.unseen import load_unseen
from tests.core.unseen_support import message, small_enforced_window
from tests.gui.long_chats import rows
from tests.gui.transcript_reading import unseen_row

pytestmark = [pytest.mark.timeout(300), pytest.mark.slow]

MESSAGES = 15


def note(w: Any) -> tuple[str, str] | None:
    """(the turn after the note, the note's text), or None when there is no note."""
    row = unseen_row(w.transcript)
    if row is None:
        return None
    return (rows(w)[row + 1].key,
            str(w.transcript.list_view.layout_of(row, fresh=True).plain_text()))


@pytest.mark.parametrize("answers", ["chatty", "error"])
def test_a_long_chat_goes_on_and_says_what_the_model_no_longer_sees(
        driver: Any, answers: str) -> None:
    small_enforced_window(driver.fake, answers)
    w = driver.configured()
    bar = w.statusBar()
    said: list[str] = []
    bar.messageChanged.connect(lambda text: said.append(text) if text else None)
    for n in range(MESSAGES):
        w.composer.set_text(message(n))  # pasted: ~8,000 characters each
        driver.qtbot.keyClick(w.composer, Qt.Key.Key_Return)
        driver.until(lambda n=n: len(w.chat.turns) == 2 * (n + 1)
                     and w.chat.turns[-1].role == "assistant" and w.tasks.pending == 0
                     and not w.composer_bar.busy, timeout=30)
        assert driver.error_text(w) == ""  # answered, no inline error

    sid = w.chat.session_id
    assert driver.fake.windows.refused == 0  # no request refused as over the window
    stored = driver.run(w.store.get_turns(sid))
    assert len(stored) == 2 * MESSAGES and stored[-1].role == "assistant"
    record = driver.run(load_unseen(w.store, sid))
    assert record is not None and record.hidden_turns >= 2
    assert w.chat.state.unseen == record  # live from the run's event
    first, text = note(w) or ("", "")
    assert first == record.first_seen_turn_id
    assert f"The model no longer sees the {record.hidden_turns} earlier turns above" in text
    assert "Claude" in text and "anthropic:" not in text and "Try compacting again" in text
    assert [n.kind for n in rows(w)].count("unseen") == 1
    # the failure was told in one line, naming no raw id; no paragraph over the box
    failed = [s for s in said if s.startswith("Couldn't summarize this chat")]
    assert failed and all("\n" not in s and "anthropic:" not in s for s in failed)
    assert any(s.startswith("Couldn't summarize this chat — the model now sees the newest ")
               for s in failed)
    assert not w.toast.isVisible() or "compaction" not in w.toast.message.lower()

    driver.close(w)
    again = driver.open()
    driver.until(lambda: again.chat.session_id == sid and note(again) is not None, timeout=20)
    assert note(again) == (first, text)

"""The status bar shows one message at a time: a message shown while a compaction's
progress is on the line is drawn instead of it (not over it), and the progress comes
back once the message goes."""

from __future__ import annotations

from typing import Any

import pytest

from parley.core.content import TextBlock, Turn
from parley.gui.transcript.specs import BRANCH_PREV_HREF
from tests.gui.answers import branches_shown, click_anchor, regenerate_answering

pytestmark = pytest.mark.timeout(90)


def _both_drawn(w: Any) -> bool:
    label = w.chat.editor.progress_label
    return label.isVisible() and bool(w.statusBar().currentMessage())


def test_a_message_during_a_compaction_is_not_drawn_over_its_progress(driver: Any) -> None:
    from parley.gui.chat.opening import BUSY_SWITCHING

    w = driver.configured()
    driver.fake.script("Castles and trams.")
    driver.send("What to see in Lisbon?", w, wait=True)
    sid = w.session_id
    regenerate_answering(driver, w, "Tiles and viewpoints.")  # ‹ 2/2 › under the answer

    async def talk_on() -> None:
        for i in range(12):
            role = "user" if i % 2 == 0 else "assistant"
            await w.store.append_turn(sid, Turn(role, [TextBlock(f"more talk {i} " * 5)]))

    driver.run(talk_on(), timeout=30)
    driver.run(w.chat.opener.reload())  # the window reads the chat again
    driver.until(lambda: len(w.chat.turns) == 14 and w.tasks.pending == 0, timeout=10)
    driver.until(lambda: branches_shown(w)[1] == (2, 2))
    answer = w.chat.turns[1].id

    driver.fake.script("A summary that takes its time. " * 30, token_delay_ms=100,
                       chunk_size=4)
    assert w.window_commands.compact_now() is True
    label = w.chat.editor.progress_label
    driver.until(lambda: label.isVisible() and "characters" in label.text(), timeout=20)
    click_anchor(driver, w, answer, BRANCH_PREV_HREF)  # ‹ while the summary is written
    bar = w.statusBar()
    assert bar.currentMessage() == BUSY_SWITCHING
    assert not _both_drawn(w)
    progress = label.text()
    driver.until(lambda: label.text() != progress, timeout=10)  # the summary grew meanwhile
    assert not _both_drawn(w), "a progress update drew itself over the message"
    bar.clearMessage()  # the message's time is up
    assert label.isVisible() and "Compacting" in label.text()
    driver.until(lambda: not label.isVisible() and not w.chat.editor.compacting, timeout=30)

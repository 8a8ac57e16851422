"""The context meter counts the path on screen (trial 21: after ‹ 1/2 › or a switch at
another fork point it counted the path left): a long answer and a short one to the same
message, then an edit further up, switched between with ‹ › (the link, the message's
buttons) in a chat shown whole and in one opened in part, and after a restart; and a
branch compacted while the other was not: back on the compacted one, opened in part, the
meter counted the uncompacted path left (its turns were worked out from those read for
that path, and the summary was not among the turns shown).

Real window, store and SDK against the fake provider server (which reports usage).
"""

from __future__ import annotations

from typing import Any

import pytest
from PySide6.QtCore import Qt

from parley.gui.chat import opening
from parley.gui.transcript.specs import BRANCH_PREV_HREF
from tests.gui.answers import click_anchor, regenerate_answering, until_answered
from tests.gui.chats import context_count, long_chat
from tests.gui.long_chats import SUMMARY

pytestmark = pytest.mark.timeout(120)

LONG = " ".join(["word"] * 3000)  # about 3,750 tokens more than the short answer


def _shown_counted(driver: Any, w: Any) -> int:
    """Wait for the switch to settle; check the path counted is the one on screen (its
    end, the turns the window holds) and that the meter shows its count; return it."""
    sid = w.session_id
    driver.until(lambda: w.tasks.pending == 0, timeout=20)
    path = driver.run(w.store.context_turns(sid))
    shown = [t.id for t in w.chat.turns]
    assert [t.id for t in path][-len(shown):] == shown[-len(path):]
    expected = context_count(driver, w, sid)
    driver.until(lambda: w.context_meter.used == expected, timeout=10)
    return expected


def _switch(driver: Any, w: Any, row_of: Any, name: str, last_text: str) -> int:
    w.transcript.message_action(name, row_of())
    driver.until(lambda: w.chat.turns[-1].text() == last_text and w.tasks.pending == 0)
    return _shown_counted(driver, w)


def _near(a: int, b: int) -> bool:
    """The same path counted again: equal but for the estimate of its last request's
    framing (the last request sent was another path's)."""
    return abs(a - b) <= max(20, b // 50)


def _opened_long_chat(driver: Any, monkeypatch: Any, open_turns: int | None,
                      turns: int) -> tuple[Any, str]:
    """A window with a chat of ``turns`` turns open (read in part, its last ``open_turns``,
    when given); returns (window, chat id)."""
    if open_turns is not None:
        monkeypatch.setattr(opening, "OPEN_TURNS", open_turns)
    w = driver.configured()
    sid, _ = long_chat(driver, w, turns)
    w.chat.open_session(sid)
    driver.until(lambda: w.session_id == sid and w.tasks.pending == 0)
    return w, sid


def _row_of(w: Any, turn_id: str) -> int:
    return next(i for i, n in enumerate(w.transcript.model.rows)
                if n.kind == "turn" and n.turn.id == turn_id)


@pytest.mark.parametrize("open_turns", [None, 20], ids=["shown-whole", "opened-in-part"])
def test_the_meter_counts_the_alternative_and_the_fork_point_shown(
        driver: Any, monkeypatch: Any, open_turns: int | None) -> None:
    w, sid = _opened_long_chat(driver, monkeypatch, open_turns, 40)
    assert (w.chat.older > 0) == (open_turns is not None)

    driver.fake.script(LONG, chunk_size=2000)
    driver.send("Tell me a long story", w, wait=True)
    until_answered(driver, w, LONG)
    long_path = _shown_counted(driver, w)
    regenerate_answering(driver, w, "Short.")
    short_path = _shown_counted(driver, w)
    assert long_path - short_path > 3000  # the long answer counted on its path only

    # ‹ 1/2 › on the answer: its first alternative, the long one
    click_anchor(driver, w, w.chat.turns[-1].id, BRANCH_PREV_HREF)
    driver.until(lambda: w.chat.turns[-1].text() == LONG and w.tasks.pending == 0)
    assert _near(_shown_counted(driver, w), long_path)

    # Another fork point: the message two above edited, answered shortly.
    asked = w.chat.turns[-4]
    w.transcript.editRequested.emit(asked.id)
    w.composer.set_text("Edited question")
    driver.fake.script("Edited answer.")
    driver.qtbot.keyClick(w.composer, Qt.Key.Key_Return)
    until_answered(driver, w, "Edited answer.")
    edited = _shown_counted(driver, w)
    assert edited < short_path
    edited_id = w.chat.turns[-2].id

    back = _switch(driver, w, lambda: _row_of(w, edited_id), "version_previous", LONG)
    assert _near(back, long_path)  # the path left at that point: its long answer
    assert _near(_switch(driver, w, lambda: _row_of(w, w.chat.turns[-1].id), "version_next",
                         "Short."), short_path)
    fork_id = w.chat.turns[-4].id
    assert _near(_switch(driver, w, lambda: _row_of(w, fork_id), "version_next",
                         "Edited answer."), edited)


def test_after_a_restart_the_meter_follows_the_branch_shown(driver: Any) -> None:
    w = driver.configured()
    driver.fake.script(LONG, chunk_size=2000)
    driver.send("Tell me a long story", w, wait=True)
    until_answered(driver, w, LONG)
    driver.fake.script("Ok.")
    driver.send("Thanks", w, wait=True)
    until_answered(driver, w, "Ok.")
    sid = w.session_id
    w.transcript.editRequested.emit(w.chat.turns[0].id)  # the fork point: the first message
    w.composer.set_text("Say hi")
    driver.fake.script("Hi.")
    driver.qtbot.keyClick(w.composer, Qt.Key.Key_Return)
    until_answered(driver, w, "Hi.")
    short_path = _shown_counted(driver, w)

    driver.close(w)
    w = driver.open()
    driver.until(lambda: w.session_id == sid and w.tasks.pending == 0, timeout=20)
    assert _near(_shown_counted(driver, w), short_path)
    long_path = _switch(driver, w, lambda: 0, "version_previous", "Ok.")
    assert long_path - short_path > 3000
    assert _near(_switch(driver, w, lambda: 0, "version_next", "Hi."), short_path)


def _answer_row(w: Any, text: str) -> int:
    return next(i for i, n in enumerate(w.transcript.model.rows)
                if n.kind == "turn" and n.turn.text() == text)


@pytest.mark.parametrize("open_turns", [None, 3], ids=["shown-whole", "opened-in-part"])
def test_back_on_a_compacted_branch_the_meter_counts_its_summary(
        driver: Any, monkeypatch: Any, open_turns: int | None) -> None:
    w, sid = _opened_long_chat(driver, monkeypatch, open_turns, 60)
    driver.fake.script("First answer.")
    driver.send("One more question", w, wait=True)
    until_answered(driver, w, "First answer.")
    regenerate_answering(driver, w, "Second answer.")
    driver.fake.script(SUMMARY)
    assert w.window_commands.compact_now() is True  # the second answer's branch only
    driver.until(lambda: "Compacted" in w.toast.message, timeout=30)
    driver.settle(w)
    driver.until(lambda: w.tasks.pending == 0)
    if open_turns is not None:  # left and opened again: its last 3 items read
        w.chat.new_session()
        driver.until(lambda: w.chat.session_id is None and w.tasks.pending == 0)
        w.chat.open_session(sid)
        driver.until(lambda: w.session_id == sid and w.tasks.pending == 0)
        assert w.chat.older > 0
    driver.settle(w)
    compacted = int(w.context_meter.used)

    w.transcript.message_action("version_previous", _answer_row(w, "Second answer."))
    driver.until(lambda: w.chat.turns[-1].text() == "First answer." and w.tasks.pending == 0)
    whole = _shown_counted(driver, w)  # no summary on this branch: all 60 turns and more
    assert whole > compacted * 1.5

    w.transcript.message_action("version_next", _answer_row(w, "First answer."))
    # (the summary is stored below the answer: it may be the last turn held)
    driver.until(lambda: "Second answer." in [t.text() for t in w.chat.turns]
                 and w.tasks.pending == 0)
    driver.settle(w)
    assert _near(int(w.context_meter.used), compacted)  # was the whole branch's count

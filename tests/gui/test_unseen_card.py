"""The note "The model no longer sees the N earlier turns above" in the real window: read
from sessions.db when a chat opens (and after a restart), changed live by the run's
``OlderTurnsUnseen`` event, gone after "Try compacting again" saved a summary; and a
failed compaction told in one line with Details (real store, SDK and fake provider)."""

from __future__ import annotations

from typing import Any

import pytest
from PySide6.QtCore import Qt

from parley.core.chat.events import OlderTurnsUnseen
from parley.core.compaction.unseen import Unseen, load_unseen, save_unseen
from tests.gui.chats import long_chat
from tests.gui.long_chats import SUMMARY, restart, rows
from tests.gui.transcript_reading import unseen_row as unseen_row_of

pytestmark = pytest.mark.timeout(120)

N = 24


def unseen_row(w: Any) -> int | None:
    return unseen_row_of(w.transcript)


def row_text(w: Any, row: int) -> str:
    return str(w.transcript.list_view.layout_of(row, fresh=True).plain_text())


def record(sid: str, turns: list[Any], first: int, detail: str = "") -> Unseen:
    return Unseen(sid, turns[first].id, first, "summary-refused", detail,
                  ("anthropic:claude-haiku-4-5 for the whole conversation",
                   "anthropic:claude-haiku-4-5 in 2 parts"))


def test_the_note_stands_before_the_first_turn_seen_after_opening_and_a_restart(
        driver: Any) -> None:
    w = driver.configured()
    sid, turns = long_chat(driver, w, N)
    detail = "Claude Haiku 4.5 did not answer with a summary"
    driver.run(save_unseen(w.store, sid, record(sid, turns, 16, detail)))
    w.chat.open_session(sid)

    def check(win: Any) -> None:
        driver.until(lambda: win.session_id == sid and unseen_row(win) is not None, timeout=10)
        keys = [n.key for n in rows(win)]
        row = unseen_row(win)
        assert keys[row + 1] == turns[16].id and keys[row - 1] == turns[15].id
        assert sum(1 for n in rows(win) if n.kind == "unseen") == 1  # once
        text = row_text(win, row)
        assert "The model no longer sees the 16 earlier turns above" in text
        assert f"{detail}." in text and "Try compacting again" in text
        # the turns are all still there, in order
        assert [t.id for t in win.chat.turns] == [t.id for t in turns]
        assert win.transcript.turn_ids() == [t.id for t in turns]

    check(w)
    check(restart(driver, w, sid))


def test_the_note_follows_the_runs_event_and_goes_with_none(driver: Any) -> None:
    w = driver.configured()
    sid, turns = long_chat(driver, w, N)
    w.chat.open_session(sid)
    driver.until(lambda: w.session_id == sid and rows(w))
    assert unseen_row(w) is None
    focused = w.transcript.focused_turn_id()
    w.chat.runs.events.on_event(OlderTurnsUnseen(sid, record(sid, turns, 10)))
    assert rows(w)[unseen_row(w) + 1].key == turns[10].id
    assert "no longer sees the 10 earlier turns" in row_text(w, unseen_row(w))
    assert w.transcript.focused_turn_id() == focused  # nothing else moved
    # moved forward: still once, before the new first turn seen
    w.chat.runs.events.on_event(OlderTurnsUnseen(sid, record(sid, turns, 14)))
    assert [n.kind for n in rows(w)].count("unseen") == 1
    assert rows(w)[unseen_row(w) + 1].key == turns[14].id
    # an event of another chat changes nothing here
    w.chat.runs.events.on_event(OlderTurnsUnseen("another-chat", None))
    assert unseen_row(w) is not None
    w.chat.runs.events.on_event(OlderTurnsUnseen(sid, None))
    assert unseen_row(w) is None and len(rows(w)) == N


def test_try_compacting_again_saves_a_summary_and_the_note_goes(driver: Any) -> None:
    w = driver.configured()
    sid, turns = long_chat(driver, w, N)
    driver.run(save_unseen(w.store, sid, record(sid, turns, 12)))
    w.chat.open_session(sid)
    driver.until(lambda: w.session_id == sid and unseen_row(w) is not None)
    driver.fake.script(SUMMARY)
    lv = w.transcript.list_view
    click = w.transcript.anchor_point(rows(w)[unseen_row(w)].key, "parley:compact-again")
    assert click is not None
    driver.qtbot.mouseClick(lv.viewport(), Qt.MouseButton.LeftButton, pos=click)
    driver.until(lambda: len(driver.run(w.store.list_compactions(sid))) == 1, timeout=30)
    driver.until(lambda: unseen_row(w) is None and rows(w)[0].kind == "card", timeout=10)
    driver.settle(w)
    assert "Compacted" in w.toast.message
    assert not any(n.kind == "unseen" for n in rows(w))


def test_the_note_is_reached_by_the_keyboard_and_r_compacts(driver: Any) -> None:
    w = driver.configured()
    sid, turns = long_chat(driver, w, N)
    driver.run(save_unseen(w.store, sid, record(sid, turns, 12)))
    w.chat.open_session(sid)
    driver.until(lambda: w.session_id == sid and unseen_row(w) is not None)
    lv = w.transcript.list_view
    lv.setFocus(Qt.FocusReason.ShortcutFocusReason)
    row = unseen_row(w)
    lv.setCurrentIndex(w.transcript.model.index(row + 1))
    driver.qtbot.keyClick(lv, Qt.Key.Key_K)  # up one message: onto the note
    assert lv.currentIndex().row() == row
    sent = len(driver.fake.model_requests)
    driver.qtbot.keyClick(lv, Qt.Key.Key_Space)  # no fold to open: nothing is asked
    driver.qtbot.wait(100)
    assert len(driver.fake.model_requests) == sent and unseen_row(w) == row
    # Tab goes into its buttons: "Try compacting again" only
    driver.qtbot.keyClick(lv, Qt.Key.Key_Tab)
    actions = w.transcript.actions_row
    shown = [n for n, b in actions.buttons.items() if not b.isHidden()]
    assert shown == ["compact"]
    assert actions.buttons["compact"].hasFocus()
    assert actions.buttons["compact"].accessibleName() == "Try compacting again"
    driver.fake.script(SUMMARY)
    driver.qtbot.keyClick(actions.buttons["compact"], Qt.Key.Key_Space)
    driver.until(lambda: len(driver.run(w.store.list_compactions(sid))) == 1, timeout=30)
    driver.until(lambda: unseen_row(w) is None, timeout=10)
    driver.settle(w)


def test_a_failed_compaction_is_one_line_with_details_naming_models(driver: Any) -> None:
    w = driver.configured()
    sid, turns = long_chat(driver, w, N)
    w.chat.open_session(sid)
    driver.until(lambda: w.session_id == sid and rows(w))
    bar = w.statusBar()
    driver.qtbot.wait(50)
    one_line = bar.height()
    driver.fake.summary_answers = "chatty"  # not a summary, however it is asked for
    assert w.window_commands.compact_now() is True
    driver.until(lambda: bar.currentMessage().startswith("Couldn't summarize this chat")
                 and w.tasks.pending == 0, timeout=30)
    line = bar.currentMessage()
    haiku = w.model_picker.label_of("anthropic:claude-haiku-4-5")
    assert haiku and ":" not in haiku  # a display name ("Claude Haiku 4.5")
    assert line == f"Couldn't summarize this chat — {haiku} did not answer with a summary"
    assert not w.toast.isVisible() and bar.height() <= one_line + 1
    assert bar.details_button is not None and bar.details_button.isVisible()
    driver.qtbot.mouseClick(bar.details_button, Qt.MouseButton.LeftButton)
    dialog = bar.dialog
    assert dialog is not None and dialog.isModal()
    text = dialog.text()
    assert f"Summary model: {haiku}." in text
    assert "Attempt 1: " in text and "Attempt 2: " in text
    assert "anthropic:" not in text and "claude-haiku" not in text  # no raw ids
    assert "Nothing was lost" in text and "Settings → Compaction" in text
    dialog.close()
    driver.until(lambda: bar.dialog is None)

    # The run then goes on without the oldest turns: the line says how many it sees.
    w.chat.unseen.failed(sid, w.chat.unseen.failures[sid][0], auto=True)
    w.chat.runs.events.on_event(OlderTurnsUnseen(sid, record(sid, turns, 18)))
    assert bar.currentMessage() == \
        "Couldn't summarize this chat — the model now sees the newest 6 turns"
    details = "\n".join(bar.details().lines)
    assert "The 18 earlier turns stay in the chat" in details
    assert "will not try again on its own" in details
    assert driver.run(load_unseen(w.store, sid)) is None  # the window writes no record


def test_in_a_long_chat_the_note_shows_once_its_turn_is_read(driver: Any) -> None:
    """The first turn the model sees is further back than what a chat reads when it
    opens: no note yet (and nothing read for it); Home reads the rest, and it is there."""
    from parley.gui.chat import paging

    w = driver.configured()
    total = paging.OPEN_TURNS + 60
    sid, turns = long_chat(driver, w, total)
    driver.run(save_unseen(w.store, sid, record(sid, turns, 30)))
    w.chat.open_session(sid)
    driver.until(lambda: w.session_id == sid and rows(w))
    assert w.chat.older == total - paging.OPEN_TURNS and w.chat.state.unseen is not None
    assert unseen_row(w) is None  # its turn is not read yet
    lv = w.transcript.list_view
    lv.setFocus()
    driver.qtbot.keyClick(lv, Qt.Key.Key_Home)
    driver.until(lambda: w.chat.older == 0 and unseen_row(w) is not None, timeout=10)
    assert rows(w)[unseen_row(w) + 1].key == turns[30].id
    assert [n.kind for n in rows(w)].count("unseen") == 1


def test_r_on_the_note_compacts(driver: Any) -> None:
    w = driver.configured()
    sid, turns = long_chat(driver, w, N)
    driver.run(save_unseen(w.store, sid, record(sid, turns, 12)))
    w.chat.open_session(sid)
    driver.until(lambda: w.session_id == sid and unseen_row(w) is not None)
    lv = w.transcript.list_view
    lv.setFocus(Qt.FocusReason.ShortcutFocusReason)
    lv.setCurrentIndex(w.transcript.model.index(unseen_row(w)))
    driver.fake.script(SUMMARY)
    driver.qtbot.keyClick(lv, Qt.Key.Key_R)
    driver.until(lambda: len(driver.run(w.store.list_compactions(sid))) == 1, timeout=30)
    driver.until(lambda: unseen_row(w) is None, timeout=10)
    driver.settle(w)


def test_counts_of_turns_no_longer_seen_are_written_with_thousands_separators() -> None:
    """Fresh-user trial at 100,000 turns: the failure line said "100004 earlier turns"."""
    from parley.gui.chat.compact_notice import details, one_line

    unseen = Unseen("s", "t", 100_004, "summary-refused", "The model did not answer.")
    line = one_line(None, unseen, None, str)
    assert "100,004 earliest turns" in line
    shown = details(None, unseen, str)
    assert any("100,004 earlier turns" in text for text in shown.lines), shown


def test_one_turn_is_said_in_the_singular() -> None:
    """Fresh-user trial 15: "the model now sees the newest 1 turn"."""
    from parley.gui.chat.compact_notice import details, one_line

    unseen = Unseen("s", "t", 1, "summary-refused", "The model did not answer.")
    assert one_line(None, unseen, 1, str).endswith("the model now sees only the newest turn")
    assert one_line(None, unseen, 4, str).endswith("the model now sees the newest 4 turns")
    assert one_line(None, unseen, None, str).endswith(
        "the model no longer sees the earliest turn")
    shown = details(None, unseen, str)
    assert any("The earlier turn stays in the chat" in text for text in shown.lines), shown

"""Edits and regenerations as branches inside the chat (‹ n/m › on the message), in the
real window: one session, one row in the list; ‹ › switches the path shown, which is
remembered; a search hit in another branch (search pane, command palette) shows it.

Real window, real sessions.db, real Anthropic SDK against the fake provider server.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from PySide6.QtCore import Qt

from parley.gui import dialogs
from parley.gui.commands.palette import open_palette
from parley.gui.transcript.specs import (
    BRANCH_NEXT_HREF,
    BRANCH_PREV_HREF,
    BRANCH_TARGET_PX,
    REGENERATE_HREF,
)
from tests.gui.answers import branches_shown, click_anchor, regenerate_answering, until_answered
from tests.gui.helpers import forks_of, selected_session_id
from tests.gui.transcript_reading import text_of_last

pytestmark = pytest.mark.timeout(90)
LEFT = Qt.MouseButton.LeftButton
ALT = Qt.KeyboardModifier.AltModifier


def _edit_first(driver: Any, w: Any, text: str, answer: str) -> None:
    before = w.session_id
    w.transcript.editRequested.emit(w.chat.turns[0].id)
    w.composer.set_text(text)
    driver.fake.script(answer)
    driver.qtbot.keyClick(w.composer, Qt.Key.Key_Return)
    until_answered(driver, w, answer)
    assert w.session_id == before  # the same chat: the edit is a branch of it


def _texts(w: Any) -> list[str]:
    return [t.text() for t in w.chat.turns]


def _focus_row(w: Any, row: int) -> None:
    lv = w.transcript.list_view
    lv.setFocus(Qt.FocusReason.TabFocusReason)
    lv.set_current_row(row)


def _stored(driver: Any, w: Any, sid: str) -> list[str]:
    """The path the store shows for ``sid`` (what a restart opens)."""
    return [t.text() for t in driver.run(w.store.get_turns(sid))]


def _sessions(driver: Any, w: Any) -> list[str]:
    return [s.id for s in driver.run(w.store.list_sessions())]


def test_edits_and_regenerations_are_branches_on_the_message(driver: Any) -> None:
    w = driver.configured()
    driver.fake.script("Lisbon.")
    driver.send("Where to go in May?", w, wait=True)
    chat = w.session_id

    _edit_first(driver, w, "Where to go in June?", "Oslo.")
    driver.until(lambda: branches_shown(w) == [(2, 2), None])  # ‹ 2/2 › on the edited message
    assert w.sidebar.model.session_ids() == [chat] and _sessions(driver, w) == [chat]
    # ‹ shows the first branch with its own reply, › goes back.
    click_anchor(driver, w, w.chat.turns[0].id, BRANCH_PREV_HREF)
    driver.until(lambda: _texts(w) == ["Where to go in May?", "Lisbon."] and w.tasks.pending == 0)
    assert branches_shown(w) == [(1, 2), None] and w.session_id == chat
    assert _stored(driver, w, chat) == ["Where to go in May?", "Lisbon."]
    click_anchor(driver, w, w.chat.turns[0].id, BRANCH_NEXT_HREF)
    driver.until(lambda: _texts(w) == ["Where to go in June?", "Oslo."] and w.tasks.pending == 0)
    assert w.sidebar.model.session_ids() == [chat]

    _edit_first(driver, w, "Where to go in July?", "Faro.")
    regenerate_answering(driver, w, "Porto.")
    regenerate_answering(driver, w, "Braga.")

    # One chat in the list and in the store, the branches on the messages.
    assert w.sidebar.model.session_ids() == [chat] and _sessions(driver, w) == [chat]
    assert selected_session_id(w.sidebar) == chat
    assert _texts(w) == ["Where to go in July?", "Braga."]
    driver.until(lambda: branches_shown(w) == [(3, 3), (3, 3)])
    assert "3/3" in text_of_last(w.transcript)
    assert w.windowTitle().startswith(driver.run(w.store.get_session(chat)).title)

    # Keyboard: Alt+Left on the focused reply shows the answer before.
    _focus_row(w, 1)
    driver.qtbot.keyClick(w.transcript.list_view, Qt.Key.Key_Left, ALT)
    driver.until(lambda: _texts(w) == ["Where to go in July?", "Porto."])
    driver.until(lambda: branches_shown(w) == [(3, 3), (2, 3)] and w.tasks.pending == 0)
    assert w.transcript.list_view.hasFocus()  # Alt+Left again works on the same message
    assert w.transcript.focused_turn_id() == w.chat.turns[1].id

    # The ‹ under the first message: the branch of the first edit, with its own reply.
    click_anchor(driver, w, w.chat.turns[0].id, BRANCH_PREV_HREF)
    driver.until(lambda: _texts(w) == ["Where to go in June?", "Oslo."])
    driver.until(lambda: branches_shown(w) == [(2, 3), None] and w.tasks.pending == 0)
    click_anchor(driver, w, w.chat.turns[0].id, BRANCH_PREV_HREF)
    driver.until(lambda: _texts(w) == ["Where to go in May?", "Lisbon."])
    driver.until(lambda: branches_shown(w) == [(1, 3), None] and w.tasks.pending == 0)
    assert w.transcript.anchor_point(w.chat.turns[0].id, BRANCH_PREV_HREF) is None  # 1 of 3
    click_anchor(driver, w, w.chat.turns[0].id, BRANCH_NEXT_HREF)
    driver.until(lambda: _texts(w) == ["Where to go in June?", "Oslo."] and
                 w.tasks.pending == 0)
    assert w.session_id == chat and w.sidebar.model.session_ids() == [chat]

    # Sending continues the branch shown.
    driver.fake.script("Bergen.")
    driver.send("And in August?", w, wait=True)
    assert w.session_id == chat
    shown = ["Where to go in June?", "Oslo.", "And in August?", "Bergen."]
    assert _texts(w) == shown == _stored(driver, w, chat)
    sent = json.dumps(driver.fake.model_requests[-1].body["messages"])
    assert "June" in sent and "Oslo" in sent and "July" not in sent and "May" not in sent

    # An explicit fork is a chat, listed under its chat (folded until opened).
    w.transcript.forkRequested.emit(w.chat.turns[1].id)
    driver.until(lambda: w.session_id not in (None, chat) and w.tasks.pending == 0)
    fork = w.session_id
    assert forks_of(w.sidebar.model, chat) == [fork]
    assert w.sidebar.model.session_ids() == [chat, fork]

    # Back to the chat from the list: the branch chosen, and again after a restart.
    w.sidebar.select(chat)
    w.chat.open_session(chat)
    driver.until(lambda: w.session_id == chat and w.tasks.pending == 0)
    assert _texts(w) == shown
    driver.close(w)
    w = driver.open()
    driver.until(lambda: w.session_id == chat and w.tasks.pending == 0)
    assert _texts(w) == shown
    assert branches_shown(w)[:2] == [(2, 3), None]
    assert w.sidebar.model.session_ids()[0] == chat
    tree = w.sidebar.tree
    assert forks_of(w.sidebar.model, chat) == [fork]
    # Its forks as they were left (opening the fork unfolded them): kept across the restart.
    assert tree.isExpanded(w.sidebar.model.index_of(chat))


def test_regenerate_is_a_branch_under_the_answer_not_a_row(driver: Any) -> None:
    w = driver.configured()
    driver.fake.script("Castles and trams.")
    driver.send("What to see in Lisbon?", w, wait=True)
    chat = w.session_id
    regenerate_answering(driver, w, "Tiles and viewpoints.")
    assert w.session_id == chat and _texts(w) == ["What to see in Lisbon?",
                                                  "Tiles and viewpoints."]
    driver.until(lambda: branches_shown(w) == [None, (2, 2)])
    assert "2/2" in text_of_last(w.transcript)
    assert w.sidebar.model.session_ids() == [chat] and _sessions(driver, w) == [chat]
    assert _stored(driver, w, chat) == ["What to see in Lisbon?", "Tiles and viewpoints."]

    # The buttons over the reply offer the branches too (Tab reaches them).
    lv, bar = w.transcript.list_view, w.transcript.actions_row
    w.composer.set_text("Half a thought")  # being written: it stays with the chat
    _focus_row(w, 1)
    driver.until(lambda: bar.isVisible() and bar.row == 1)
    prev, nxt = bar.buttons["version_previous"], bar.buttons["version_next"]
    assert not prev.isHidden() and prev.isEnabled() and not nxt.isEnabled()
    assert prev.toolTip() == "Previous branch (Alt+Left, [)"
    driver.qtbot.keyClick(lv, Qt.Key.Key_Tab)
    assert prev.hasFocus()
    driver.qtbot.keyClick(prev, Qt.Key.Key_Space)
    driver.until(lambda: _texts(w)[-1] == "Castles and trams." and w.tasks.pending == 0)
    assert branches_shown(w) == [None, (1, 2)]
    assert w.composer.text() == "Half a thought"
    w.chat.open_session(chat)  # the chat's row: no-op, the branch shown stays
    driver.settle(w)
    assert _texts(w)[-1] == "Castles and trams."
    _focus_row(w, 1)
    driver.qtbot.keyClick(lv, Qt.Key.Key_Right, ALT)
    driver.until(lambda: _texts(w)[-1] == "Tiles and viewpoints." and w.tasks.pending == 0)
    assert w.composer.text() == "Half a thought"

    # Restart: the branch chosen last is shown, with the draft.
    _focus_row(w, 1)
    driver.qtbot.keyClick(lv, Qt.Key.Key_Left, ALT)
    driver.until(lambda: _texts(w)[-1] == "Castles and trams." and w.tasks.pending == 0)
    driver.close(w)
    w = driver.open()
    driver.until(lambda: w.session_id == chat and w.tasks.pending == 0)
    assert _texts(w) == ["What to see in Lisbon?", "Castles and trams."]
    assert branches_shown(w) == [None, (1, 2)]
    assert w.composer.text() == "Half a thought"
    assert w.sidebar.model.session_ids() == [chat]

    # Deleting the chat deletes every branch of it.
    w.composer.clear()
    dialogs.answers.append(True)  # "Delete chat?" → Delete
    w.window_commands.delete_current_session()
    driver.until(lambda: not w.sidebar.model.has(chat) and w.session_id != chat
                 and w.tasks.pending == 0)
    driver.run(w.undo.flush())
    assert _sessions(driver, w) == []


def _two_answers(driver: Any, w: Any) -> tuple[str, str]:
    """A chat whose reply was regenerated, showing the new answer; returns the chat and
    the id of the first answer (in the branch not shown)."""
    driver.fake.script("Castles and trams.")
    driver.send("What to see in Lisbon?", w, wait=True)
    chat, first = w.session_id, w.chat.turns[1].id
    regenerate_answering(driver, w, "Tiles and viewpoints.")
    driver.until(lambda: branches_shown(w) == [None, (2, 2)])
    return chat, first


def _other_chat(driver: Any, w: Any, chat: str) -> str:
    w.chat.new_session()
    driver.until(lambda: w.session_id is None and w.tasks.pending == 0)
    driver.fake.script("Sure.")
    driver.send("Something else entirely", w, wait=True)
    assert w.session_id != chat
    return str(w.session_id)


def _shown_at(w: Any, turn_id: str, term: str) -> bool:
    """The transcript shows ``turn_id`` focused with ``term`` marked in it."""
    return w.transcript.focused_turn_id() == turn_id and \
        w.transcript.list_view.delegate.highlight == (turn_id, term)


def test_a_search_hit_in_another_branch_opens_that_branch(driver: Any) -> None:
    w = driver.configured()
    chat, first = _two_answers(driver, w)
    [hit] = [h for h in driver.run(w.store.search("castles")) if h.turn_id is not None]
    assert (hit.session_id, hit.turn_id) == (chat, first)  # each message once

    # From the search pane, in the chat open: the path goes through the hit.
    assert w.window_commands.open_search()
    popup = w.search_popup
    driver.qtbot.keyClicks(popup.edit, "castles")
    driver.until(lambda: popup.search.settled
                 and popup.model.rowCount() == 1)
    driver.qtbot.keyClick(popup.edit, Qt.Key.Key_Return)
    driver.until(lambda: _texts(w) == ["What to see in Lisbon?", "Castles and trams."]
                 and w.tasks.pending == 0)
    driver.until(lambda: _shown_at(w, first, "Castles"))
    assert branches_shown(w) == [None, (1, 2)] and w.session_id == chat
    assert selected_session_id(w.sidebar) == chat
    assert _stored(driver, w, chat)[-1] == "Castles and trams."  # remembered

    # A hit on the path shown only scrolls to it: the branch stays.
    [hit] = [h for h in driver.run(w.store.search("Lisbon")) if h.turn_id is not None]
    w.chat.open_at(hit.session_id, hit.turn_id, "Lisbon")
    driver.until(lambda: w.tasks.pending == 0 and _shown_at(w, hit.turn_id, "Lisbon"))
    assert _texts(w)[-1] == "Castles and trams."

    # From the search pane with another chat open: that chat opens on the hit's branch.
    click_anchor(driver, w, first, BRANCH_NEXT_HREF)
    driver.until(lambda: _texts(w)[-1] == "Tiles and viewpoints." and w.tasks.pending == 0)
    other = _other_chat(driver, w, chat)
    assert w.window_commands.open_search()
    popup.edit.clear()
    driver.qtbot.keyClicks(popup.edit, "castles")
    driver.until(lambda: popup.search.settled
                 and popup.model.rowCount() == 1)
    driver.qtbot.keyClick(popup.edit, Qt.Key.Key_Return)
    driver.until(lambda: w.session_id == chat and w.tasks.pending == 0)
    assert _texts(w) == ["What to see in Lisbon?", "Castles and trams."]
    driver.until(lambda: _shown_at(w, first, "Castles"))
    assert selected_session_id(w.sidebar) == chat and w.sidebar.model.has(other)


def test_a_palette_hit_in_another_branch_opens_that_branch(driver: Any) -> None:
    """The palette opened the chat on whatever branch was shown last; it shows the
    hit's branch now, with the message marked and focused."""
    w = driver.configured()
    chat, first = _two_answers(driver, w)
    _other_chat(driver, w, chat)

    palette = open_palette(w, w)
    driver.qtbot.keyClicks(palette.input, "castles")
    driver.until(lambda: any(e.kind == "message" for e in palette.entries()), timeout=10)
    row = next(i for i, e in enumerate(palette.entries()) if e.kind == "message")
    assert palette.entries()[row].ref == first
    palette.activate(row)
    driver.until(lambda: w.session_id == chat and w.tasks.pending == 0)
    driver.until(lambda: _texts(w) == ["What to see in Lisbon?", "Castles and trams."])
    driver.until(lambda: _shown_at(w, first, "Castles") and w.transcript.list_view.hasFocus())
    assert branches_shown(w) == [None, (1, 2)]

    # In the chat open, on the branch not shown: the path switches in place.
    click_anchor(driver, w, first, BRANCH_NEXT_HREF)
    driver.until(lambda: _texts(w)[-1] == "Tiles and viewpoints." and w.tasks.pending == 0)
    palette = open_palette(w, w)
    driver.qtbot.keyClicks(palette.input, "castles")
    driver.until(lambda: any(e.kind == "message" for e in palette.entries()), timeout=10)
    palette.activate(next(i for i, e in enumerate(palette.entries()) if e.kind == "message"))
    driver.until(lambda: _texts(w)[-1] == "Castles and trams." and w.tasks.pending == 0)
    driver.until(lambda: _shown_at(w, first, "Castles"))
    assert w.session_id == chat and branches_shown(w) == [None, (1, 2)]


def test_the_branch_switcher_is_easy_to_hit_and_sits_under_the_message(driver: Any) -> None:
    """‹ › are click targets of 24 px or more, hit off their glyph's centre too, and the
    switcher sits right under the message (above Regenerate), on a bubble as on a reply."""
    w = driver.configured()
    driver.fake.script("Lisbon.")
    driver.send("Where to go in May?", w, wait=True)
    _edit_first(driver, w, "Where to go in June?", "Oslo.")
    regenerate_answering(driver, w, "Porto.")
    driver.until(lambda: branches_shown(w) == [(2, 2), (2, 2)])
    lv = w.transcript.list_view
    for row in (0, 1):
        layout = lv.layout_of(row, fresh=True)
        box = layout.anchor_box(BRANCH_PREV_HREF)  # at 2/2 only ‹ is a link
        assert box is not None and layout.anchor_box(BRANCH_NEXT_HREF) is None
        assert box.width() >= BRANCH_TARGET_PX and box.height() >= BRANCH_TARGET_PX, box
    reply = lv.layout_of(1, fresh=True)
    assert reply.anchor_box(BRANCH_PREV_HREF).bottom() <= reply.anchor_box(REGENERATE_HREF).top()

    # A click near the edge of the bubble's ‹ (not on the glyph) still switches.
    turn = w.chat.turns[0].id
    assert w.transcript.anchor_point(turn, BRANCH_PREV_HREF) is not None  # scrolled to it
    box = lv.layout_of(0, fresh=True).anchor_box(BRANCH_PREV_HREF)
    point = box.topLeft() + lv.visualRect(w.transcript.model.index(0)).topLeft()
    point.setX(point.x() + 3)
    point.setY(point.y() + box.height() - 4)
    driver.qtbot.mouseClick(lv.viewport(), LEFT, pos=point)
    driver.until(lambda: _texts(w) == ["Where to go in May?", "Lisbon."])
    driver.until(lambda: branches_shown(w)[0] == (1, 2))
    box = lv.layout_of(0, fresh=True).anchor_box(BRANCH_NEXT_HREF)
    assert box is not None
    assert box.width() >= BRANCH_TARGET_PX and box.height() >= BRANCH_TARGET_PX, box


def test_branches_made_before_a_compaction_stay_on_their_messages(driver: Any) -> None:
    """The trial: edit, regenerate, talk on, Compact now, restart: every ‹ n/m › was gone,
    also in the expanded summary card. They stay, inside the card too."""
    from tests.gui.long_chats import restart, rows

    w = driver.configured()
    driver.fake.script("Answer one.")
    driver.send("alpha question", w, wait=True)
    _edit_first(driver, w, "beta question", "Answer two.")
    regenerate_answering(driver, w, "Answer three.")
    for n in range(3):  # replies long enough that a summary makes the context smaller
        driver.fake.script(f"Reply {n}. " + "It goes on at some length. " * 12)
        driver.send(f"more {n}", w, wait=True)
    sid = w.session_id
    beta, reply = w.chat.turns[0].id, w.chat.turns[1].id
    assert branches_shown(w)[:2] == [(2, 2), (2, 2)]
    driver.fake.script("<summary>The user asked beta, then more 0 to 2; each was answered "
                       "in a few words, and nothing else was said.</summary>")
    assert w.window_commands.compact_now() is True
    driver.until(lambda: "Compacted" in w.toast.message and rows(w)[0].kind == "card",
                 timeout=30)

    w2 = restart(driver, w, sid)
    card = rows(w2)[0]
    assert card.kind == "card"
    w2.transcript.model.set_expanded(0, True)  # the replaced turns are read as it opens
    driver.until(lambda: {beta, reply} <= {n.key for n in rows(w2)}, timeout=10)
    assert w2.transcript.branch_of(beta) == (2, 2)
    assert w2.transcript.branch_of(reply) == (2, 2)
    assert all(w2.transcript.branch_of(n.key) is None for n in rows(w2)
               if n.key not in (beta, reply))


def test_no_switching_branches_while_a_reply_is_written(driver: Any) -> None:
    """The reply being written goes below the path's end: ‹ › waits for it (it says so),
    and the branch shown stays."""
    w = driver.configured()
    chat, first = _two_answers(driver, w)
    driver.fake.script("slow " * 40, token_delay_ms=25, chunk_size=2)
    driver.send("And in the evening?", w)
    driver.until(lambda: w.composer_bar.busy and w.chat.partial, timeout=10)
    reply = w.chat.turns[1].id
    assert w.chat.opener.switch_branch(reply, -1) is False
    assert "A reply is being written" in w.statusBar().currentMessage()
    until_answered(driver, w, "slow " * 40)
    assert _texts(w)[1] == "Tiles and viewpoints." and w.session_id == chat
    assert _stored(driver, w, chat)[1:] == ["Tiles and viewpoints.", "And in the evening?",
                                            ("slow " * 40)]
    assert w.chat.opener.switch_branch(reply, -1)  # now it can
    driver.until(lambda: _texts(w) == ["What to see in Lisbon?", "Castles and trams."]
                 and w.tasks.pending == 0)
    assert w.transcript.branch_of(first) == (1, 2)


def test_a_switch_that_takes_a_while_says_so_until_the_version_shows(
        driver: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """Near the start of a long chat a switch rewrites the path below it (~2 s at 100,000
    turns; trial 15b: nothing said it was working). Said from a moment on (here at once),
    and no longer once the other version shows."""
    from parley.gui.chat import opening

    monkeypatch.setattr(opening, "SWITCHING_AFTER_S", 0.0)
    w = driver.configured()
    _chat, first = _two_answers(driver, w)
    said: list[str] = []
    w.statusBar().messageChanged.connect(said.append)
    reply = w.chat.turns[1].id
    assert w.chat.opener.switch_branch(reply, -1)
    driver.until(lambda: _texts(w) == ["What to see in Lisbon?", "Castles and trams."]
                 and w.tasks.pending == 0)
    assert opening.SWITCHING in said
    assert w.statusBar().currentMessage() != opening.SWITCHING

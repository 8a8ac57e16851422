"""Edits and regenerations as versions ‹ n/m › on the message, in the real window.

Real window, real sessions.db, real Anthropic SDK against the fake provider server.
"""

from __future__ import annotations

from typing import Any

import pytest
from PySide6.QtCore import Qt

from parley.gui import dialogs
from parley.gui.transcript.specs import (
    REGENERATE_HREF,
    VERSION_NEXT_HREF,
    VERSION_PREV_HREF,
    VERSION_TARGET_PX,
)

pytestmark = pytest.mark.timeout(90)
LEFT = Qt.MouseButton.LeftButton
ALT = Qt.KeyboardModifier.AltModifier


def _answered(driver: Any, w: Any, text: str) -> None:
    driver.until(lambda: driver.last_text(w) == text and not w.composer_bar.busy
                 and w.tasks.pending == 0, timeout=10)


def _edit_first(driver: Any, w: Any, text: str, answer: str) -> None:
    before = w.session_id
    w.transcript.editRequested.emit(w.chat.turns[0].id)
    w.composer.set_text(text)
    driver.fake.script(answer)
    driver.qtbot.keyClick(w.composer, Qt.Key.Key_Return)
    driver.until(lambda: w.session_id != before)
    _answered(driver, w, answer)


def _regenerate(driver: Any, w: Any, answer: str) -> None:
    driver.fake.script(answer)
    assert w.regenerate_reply()
    _answered(driver, w, answer)


def _texts(w: Any) -> list[str]:
    return [t.text() for t in w.chat.turns]


def _versions(w: Any) -> list[tuple[int, int] | None]:
    return [w.transcript.version_of(t.id) for t in w.chat.turns]


def _click(driver: Any, w: Any, turn_id: str, href: str) -> None:
    point = w.transcript.anchor_point(turn_id, href)
    assert point is not None, f"no {href} link on the row"
    driver.qtbot.mouseClick(w.transcript.list_view.viewport(), LEFT, pos=point)


def _focus_row(w: Any, row: int) -> None:
    lv = w.transcript.list_view
    lv.setFocus(Qt.FocusReason.TabFocusReason)
    lv.set_current_row(row)


def test_edits_and_regenerations_are_versions_on_the_message(driver: Any) -> None:
    w = driver.configured()
    driver.fake.script("Lisbon.")
    driver.send("Where to go in May?", w, wait=True)
    chat = w.session_id

    _edit_first(driver, w, "Where to go in June?", "Oslo.")
    _edit_first(driver, w, "Where to go in July?", "Faro.")
    _regenerate(driver, w, "Porto.")
    _regenerate(driver, w, "Braga.")

    # One chat in the list, the versions on the messages.
    assert w.sidebar.model.session_ids() == [chat]
    assert w.sidebar.current_session_id() == chat
    assert _texts(w) == ["Where to go in July?", "Braga."]
    driver.until(lambda: _versions(w) == [(3, 3), (3, 3)])
    assert "3/3" in w.transcript.text_of_last()
    assert w.windowTitle().startswith(driver.run(w.store.get_session(chat)).title)

    # Keyboard: Alt+Left on the focused reply shows the answer before.
    _focus_row(w, 1)
    driver.qtbot.keyClick(w.transcript.list_view, Qt.Key.Key_Left, ALT)
    driver.until(lambda: _texts(w) == ["Where to go in July?", "Porto."])
    driver.until(lambda: _versions(w) == [(3, 3), (2, 3)] and w.tasks.pending == 0)
    assert w.transcript.list_view.hasFocus()  # Alt+Left again works on the same message
    assert w.transcript.focused_turn_id() == w.chat.turns[1].id

    # The ‹ under the first message: the branch of the first edit, with its own reply.
    _click(driver, w, w.chat.turns[0].id, VERSION_PREV_HREF)
    driver.until(lambda: _texts(w) == ["Where to go in June?", "Oslo."])
    driver.until(lambda: _versions(w) == [(2, 3), None] and w.tasks.pending == 0)
    _click(driver, w, w.chat.turns[0].id, VERSION_PREV_HREF)
    driver.until(lambda: _texts(w) == ["Where to go in May?", "Lisbon."])
    driver.until(lambda: _versions(w) == [(1, 3), None] and w.tasks.pending == 0)
    assert w.transcript.anchor_point(w.chat.turns[0].id, VERSION_PREV_HREF) is None  # 1 of 3
    _click(driver, w, w.chat.turns[0].id, VERSION_NEXT_HREF)
    driver.until(lambda: _texts(w) == ["Where to go in June?", "Oslo."] and
                 w.tasks.pending == 0)
    chosen = w.session_id
    assert w.sidebar.model.session_ids() == [chat]

    # Sending continues the branch shown.
    driver.fake.script("Bergen.")
    driver.send("And in August?", w, wait=True)
    assert w.session_id == chosen
    assert _texts(w) == ["Where to go in June?", "Oslo.", "And in August?", "Bergen."]

    # An explicit fork is a chat, listed under its chat (folded until opened).
    w.transcript.forkRequested.emit(w.chat.turns[1].id)
    driver.until(lambda: w.session_id not in (None, chosen) and w.tasks.pending == 0)
    fork = w.session_id
    assert w.sidebar.model.forks_of(chat) == [fork]
    assert w.sidebar.model.session_ids() == [chat, fork]

    # Back to the chat from the list: the version chosen, and again after a restart.
    w.sidebar.select(chat)
    w.chat.open_session(chat)
    driver.until(lambda: w.session_id == chosen and w.tasks.pending == 0)
    driver.close(w)
    w = driver.open()
    driver.until(lambda: w.session_id == chosen and w.tasks.pending == 0)
    assert _texts(w) == ["Where to go in June?", "Oslo.", "And in August?", "Bergen."]
    assert _versions(w)[0] == (2, 3)
    assert w.sidebar.model.session_ids()[0] == chat
    tree = w.sidebar.tree
    assert w.sidebar.model.forks_of(chat) == [fork]
    assert not tree.isExpanded(w.sidebar.model.index_of(chat))  # forks start folded


def test_a_search_hit_in_another_version_opens_that_version(driver: Any) -> None:
    w = driver.configured()
    driver.fake.script("Castles and trams.")
    driver.send("What to see in Lisbon?", w, wait=True)
    chat = w.session_id
    _regenerate(driver, w, "Tiles and viewpoints.")
    assert w.session_id == chat and _texts(w)[-1] == "Tiles and viewpoints."

    # The buttons over the reply offer the versions too (Tab reaches them).
    lv, bar = w.transcript.list_view, w.transcript.actions_row
    w.composer.set_text("Half a thought")  # being written: it stays with the chat
    _focus_row(w, 1)
    driver.until(lambda: bar.isVisible() and bar.row == 1)
    prev, nxt = bar.buttons["version_previous"], bar.buttons["version_next"]
    assert not prev.isHidden() and prev.isEnabled() and not nxt.isEnabled()
    assert prev.toolTip() == "Previous version (Alt+Left, [)"
    driver.qtbot.keyClick(lv, Qt.Key.Key_Tab)
    assert prev.hasFocus()
    driver.qtbot.keyClick(prev, Qt.Key.Key_Space)
    driver.until(lambda: _texts(w)[-1] == "Castles and trams." and w.tasks.pending == 0)
    assert _versions(w) == [None, (1, 2)]
    assert w.composer.text() == "Half a thought"
    w.chat.open_session(chat)  # the chat's row: the version shown stays
    driver.settle(w)
    assert _texts(w)[-1] == "Castles and trams."
    _focus_row(w, 1)
    driver.qtbot.keyClick(lv, Qt.Key.Key_Right, ALT)
    driver.until(lambda: _texts(w)[-1] == "Tiles and viewpoints." and w.tasks.pending == 0)
    assert w.composer.text() == "Half a thought"
    w.composer.clear()

    [hit] = driver.run(w.store.search("castles"))
    w.chat.open_at(hit.session_id, hit.turn_id, "castles")
    driver.until(lambda: _texts(w) == ["What to see in Lisbon?", "Castles and trams."]
                 and w.tasks.pending == 0)
    assert w.transcript.focused_turn_id() == w.chat.turns[1].id
    assert _versions(w) == [None, (1, 2)]
    assert w.sidebar.current_session_id() == chat

    # A message every version shares opens in the version shown now.
    [hit] = [h for h in driver.run(w.store.search("Lisbon")) if h.turn_id is not None]
    w.chat.open_at(hit.session_id, hit.turn_id, "Lisbon")
    driver.until(lambda: w.tasks.pending == 0)
    assert _texts(w)[-1] == "Castles and trams."

    # Deleting the chat (a version of it open) deletes its versions with it.
    version = w.session_id
    assert version != chat
    dialogs.answers.append(True)  # "Delete chat?" → Delete
    w.delete_current_session()
    driver.until(lambda: not w.sidebar.model.has(chat) and w.session_id not in (chat, version)
                 and w.tasks.pending == 0)
    driver.run(w.undo.flush())
    assert driver.run(w.store.list_sessions(include_versions=True)) == []


def test_the_version_switcher_is_easy_to_hit_and_sits_under_the_message(driver: Any) -> None:
    """‹ › are click targets of 24 px or more, hit off their glyph's centre too, and the
    switcher sits right under the message (above Regenerate), on a bubble as on a reply."""
    w = driver.configured()
    driver.fake.script("Lisbon.")
    driver.send("Where to go in May?", w, wait=True)
    _edit_first(driver, w, "Where to go in June?", "Oslo.")
    _regenerate(driver, w, "Porto.")
    driver.until(lambda: _versions(w) == [(2, 2), (2, 2)])
    lv = w.transcript.list_view
    for row in (0, 1):
        layout = lv.layout_of(row, fresh=True)
        box = layout.anchor_box(VERSION_PREV_HREF)  # at 2/2 only ‹ is a link
        assert box is not None and layout.anchor_box(VERSION_NEXT_HREF) is None
        assert box.width() >= VERSION_TARGET_PX and box.height() >= VERSION_TARGET_PX, box
    reply = lv.layout_of(1, fresh=True)
    assert reply.anchor_box(VERSION_PREV_HREF).bottom() <= reply.anchor_box(REGENERATE_HREF).top()

    # A click near the edge of the bubble's ‹ (not on the glyph) still switches.
    turn = w.chat.turns[0].id
    assert w.transcript.anchor_point(turn, VERSION_PREV_HREF) is not None  # scrolled to it
    box = lv.layout_of(0, fresh=True).anchor_box(VERSION_PREV_HREF)
    point = box.topLeft() + lv.visualRect(w.transcript.model.index(0)).topLeft()
    point.setX(point.x() + 3)
    point.setY(point.y() + box.height() - 4)
    driver.qtbot.mouseClick(lv.viewport(), LEFT, pos=point)
    driver.until(lambda: _texts(w) == ["Where to go in May?", "Lisbon."])
    driver.until(lambda: _versions(w)[0] == (1, 2))
    box = lv.layout_of(0, fresh=True).anchor_box(VERSION_NEXT_HREF)
    assert box is not None
    assert box.width() >= VERSION_TARGET_PX and box.height() >= VERSION_TARGET_PX, box


def test_versions_made_before_a_compaction_stay_on_their_messages(driver: Any) -> None:
    """The trial: edit, regenerate, talk on, Compact now, restart: every ‹ n/m › was gone,
    also in the expanded summary card. They stay, inside the card too."""
    from tests.gui.test_long_chat_transcript import restart, rows

    w = driver.configured()
    driver.fake.script("Answer one.")
    driver.send("alpha question", w, wait=True)
    _edit_first(driver, w, "beta question", "Answer two.")
    _regenerate(driver, w, "Answer three.")
    for n in range(3):  # replies long enough that a summary makes the context smaller
        driver.fake.script(f"Reply {n}. " + "It goes on at some length. " * 12)
        driver.send(f"more {n}", w, wait=True)
    sid = w.session_id
    beta, reply = w.chat.turns[0].id, w.chat.turns[1].id
    assert _versions(w)[:2] == [(2, 2), (2, 2)]
    driver.fake.script("<summary>The user asked beta, then more 0 to 2; each was answered "
                       "in a few words, and nothing else was said.</summary>")
    assert w.compact_now() is True
    driver.until(lambda: "Compacted" in w.toast.message and rows(w)[0].kind == "card",
                 timeout=30)

    w2 = restart(driver, w, sid)
    card = rows(w2)[0]
    assert card.kind == "card"
    w2.transcript.model.set_expanded(0, True)  # the replaced turns are read as it opens
    driver.until(lambda: {beta, reply} <= {n.key for n in rows(w2)}, timeout=10)
    assert w2.transcript.version_of(beta) == (2, 2)
    assert w2.transcript.version_of(reply) == (2, 2)
    assert all(w2.transcript.version_of(n.key) is None for n in rows(w2)
               if n.key not in (beta, reply))

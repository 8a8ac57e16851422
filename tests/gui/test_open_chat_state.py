"""The open chat's turns are held once (parley.gui.chat.state.OpenChatState) and the
transcript shows them by reading that state: focused tests of the state, and the real
window streaming a reply against the fake provider server."""

from __future__ import annotations

from typing import Any

import pytest

from parley.core.content import TextBlock, Turn
from parley.core.store.outline import Window
from parley.gui.chat.state import OpenChatState
from parley.gui.transcript.view import TranscriptView
from tests.gui.transcript_reading import text_of_last


def t(role: str, tid: str, text: str | None = None) -> Turn:
    return Turn(role, [TextBlock(text or tid)], id=tid)


def following(qtbot: Any) -> tuple[OpenChatState, TranscriptView]:
    state = OpenChatState()
    view = TranscriptView()
    qtbot.addWidget(view)
    view.follow(state)
    state.reset.connect(view.show_reset)
    state.grown.connect(view.show_grown)
    state.turn_changed.connect(view.show_changed)
    return state, view


def test_the_view_shows_what_the_state_holds_in_order(qtbot: Any) -> None:
    state, view = following(qtbot)
    state.load("s1", Window([t("user", "u1"), t("assistant", "a1")], {"u1": 0, "a1": 1}))
    state.show()
    assert view.turn_ids() == ["u1", "a1"]

    state.show_unsaved("s1", t("user", "u2"))  # being saved: shown, not yet a saved turn
    state.stream("s1", t("assistant", "a2", "Once"))
    assert view.turn_ids() == ["u1", "a1", "u2", "a2"]
    assert [x.id for x in state.turns] == ["u1", "a1"]

    state.remember("s1", t("user", "u2"))  # saved: a turn of the chat now, in place
    state.stream("s1", t("assistant", "a2", "Once upon"))
    assert [x.id for x in state.turns] == ["u1", "a1", "u2"]
    assert view.turn_ids() == ["u1", "a1", "u2", "a2"]
    assert text_of_last(view).startswith("Once upon")

    state.show()  # shown afresh mid-stream: the streaming reply stays last
    assert view.turn_ids() == ["u1", "a1", "u2", "a2"]
    assert view.model.rowCount() == 4


def test_another_chats_changes_are_not_shown(qtbot: Any) -> None:
    state, view = following(qtbot)
    state.load("s1", Window([t("user", "u1")], {"u1": 0}))
    state.show()
    state.stream("s2", t("assistant", "x"))
    state.remember("s2", t("user", "y"))
    state.show_unsaved("s2", t("user", "z"))
    assert view.turn_ids() == ["u1"] and [x.id for x in state.turns] == ["u1"]
    assert "s2" in state.partial  # kept for when that chat is opened


def test_older_turns_merge_by_stored_position_and_drops_show_on_reset(qtbot: Any) -> None:
    state, view = following(qtbot)
    state.load("s1", Window([t("user", "u3"), t("assistant", "a3")], {"u3": 4, "a3": 5},
                            older=2, first_key=4))
    state.show()
    assert view.list_view.more_above == 2
    grown: list[object] = []
    state.grown.connect(grown.append)
    state.take(Window([t("user", "u1"), t("assistant", "a1")], {"u1": 0, "a1": 1},
                      older=0, first_key=0), older=True)
    assert grown == [None]
    assert [x.id for x in state.turns] == ["u1", "a1", "u3", "a3"] == view.turn_ids()
    assert state.older == 0 == view.list_view.more_above and state.first_key == 0

    state.drop(["a3"])
    assert view.turn_ids() == ["u1", "a1", "u3", "a3"]  # until shown again
    state.show()
    assert view.turn_ids() == ["u1", "a1", "u3"]


def test_kept_replies_replace_what_the_file_holds(qtbot: Any) -> None:
    state, _view = following(qtbot)
    state.load("s1", Window([t("user", "u1"), t("assistant", "a1", "Once")],
                            {"u1": 0, "a1": 1}))
    state.keep_unsaved([t("assistant", "a1", "Once upon a time"), t("user", "u2")])
    assert [(x.id, x.text()) for x in state.turns] == [
        ("u1", "u1"), ("a1", "Once upon a time"), ("u2", "u2")]


def test_a_view_following_a_chat_refuses_turns_given_to_it(qtbot: Any) -> None:
    _state, view = following(qtbot)
    with pytest.raises(TypeError, match="open chat"):
        view.update_turn(t("user", "u1"))  # turns given to the view itself, not the chat's


def test_the_window_transcript_reads_the_chat_state_while_a_reply_streams(driver: Any) -> None:
    w = driver.configured()
    assert w.transcript.model.source is w.chat.state
    # ~190 chunks 10 ms apart: still streaming when first seen, done well within
    # settle's 10 s under load (2-character chunks took 7.5 s at best and timed out)
    driver.fake.script("slow " * 300, token_delay_ms=10, chunk_size=8)
    driver.send("Tell me a story", w)
    driver.until(lambda: bool(w.chat.partial), timeout=10)
    running = w.chat.partial[w.chat.session_id]
    assert w.transcript.turn_ids() == [x.id for x in w.chat.state.shown_turns()]
    assert w.transcript.turn_ids()[-1] == running.id
    assert running.id not in [x.id for x in w.chat.turns]  # not saved yet
    driver.until(lambda: not w.chat.partial, timeout=30)  # the reply finished
    driver.settle(w)
    assert [x.role for x in w.chat.turns] == ["user", "assistant"]
    assert w.transcript.turn_ids() == [x.id for x in w.chat.turns]

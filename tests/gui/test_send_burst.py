"""Enter pressed again and again in a fast burst (xdotool, a paste and Enter, a fast typist):
the first message is sent, the next ones are queued behind its reply, nothing is lost.

Trial finding (session 13): "one" Enter "two" Enter "three" Enter in one xdotool burst in
an existing chat showed the modal "Parley is still answering in this session…"
(``RunInProgress``), lost what was typed while it was open, and left the window looking
idle (no Stop) while the reply streamed. Keys here are sent with no event-loop turn
between them, as xdotool's reach the window.
"""

from __future__ import annotations

from typing import Any

import pytest
from PySide6.QtCore import Qt

from parley.gui.chat.queue_view import GOING_AFTER_SUMMARY
from tests.gui.helpers import type_and_enter
from tests.gui.keyboard import key
from tests.gui.queue_helpers import SLOW, queued, user_texts

pytestmark = pytest.mark.timeout(120)
CTRL_SHIFT = Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier


def sidebar_dot(w: Any, sid: str) -> bool:
    """The sidebar row's "answering" dot."""
    from parley.gui.sidebar.model import RUNNING

    item = w.sidebar.model._sessions[sid]  # noqa: SLF001 - the row of one chat
    return bool(item.data(RUNNING))



def test_a_burst_of_enters_in_a_chat_sends_one_and_queues_the_rest(
        driver: Any, problems: list[str]) -> None:
    w = driver.configured()
    driver.send("hello", w, wait=True)  # an existing chat, idle
    sid = w.chat.session_id
    driver.fake.script(SLOW, token_delay_ms=20, chunk_size=2)
    w.composer.setFocus()
    type_and_enter(driver, w, "one")
    type_and_enter(driver, w, "two")
    type_and_enter(driver, w, "three")
    assert w.composer.text() == ""
    assert w.composer_bar.busy  # Stop from the Enter on
    driver.until(lambda: queued(w, sid) == ["two", "three"] and bool(w.chat.partial),
                 timeout=15)
    assert problems == []
    assert w.composer_bar.busy and w.chat.runs.running(sid)
    assert sidebar_dot(w, sid)
    driver.until(lambda: user_texts(driver, w, sid) == ["hello", "one", "two", "three"]
                 and not w.chat.runs.running(sid) and w.tasks.pending == 0, timeout=60)
    assert problems == []
    assert not w.composer_bar.busy


def test_a_burst_of_enters_in_a_new_chat_makes_one_chat_and_queues_the_rest(
        driver: Any, problems: list[str]) -> None:
    w = driver.configured()
    assert w.chat.session_id is None  # a new chat: the first Enter makes its row
    driver.fake.script(SLOW, token_delay_ms=20, chunk_size=2)
    w.composer.setFocus()
    type_and_enter(driver, w, "one")
    type_and_enter(driver, w, "two")
    type_and_enter(driver, w, "three")
    assert w.composer.text() == ""
    driver.until(lambda: w.chat.session_id is not None and w.tasks.pending == 0
                 or bool(w.chat.partial), timeout=15)
    sid = w.chat.session_id
    driver.until(lambda: queued(w, sid) == ["two", "three"], timeout=15)
    assert w.composer_bar.busy and sidebar_dot(w, sid)
    driver.until(lambda: user_texts(driver, w, sid) == ["one", "two", "three"]
                 and not w.chat.runs.running(sid) and w.tasks.pending == 0, timeout=60)
    assert len(driver.run(w.store.list_sessions())) == 1  # one chat, not one per Enter
    assert problems == [] and w.composer.text() == ""


def test_regenerate_or_edit_right_after_enter_waits_for_the_reply(
        driver: Any, problems: list[str]) -> None:
    w = driver.configured()
    driver.send("hello", w, wait=True)
    sid = w.chat.session_id
    driver.fake.script(SLOW, token_delay_ms=20, chunk_size=2)
    w.composer.setFocus()
    type_and_enter(driver, w, "one")
    key(driver.qtbot, "Ctrl+Shift+R")  # Regenerate, at once
    key(driver.qtbot, "Up")  # edit the last message, at once
    assert w.chat.editor.editing is None and w.composer.text() == ""
    assert w.composer_bar.busy
    driver.until(lambda: bool(w.chat.partial), timeout=15)
    w.chat.runs.stop()  # Esc: no need to wait for the whole reply
    driver.until(lambda: not w.chat.runs.running(sid) and w.tasks.pending == 0, timeout=30)
    assert problems == []
    turns = driver.run(w.store.get_tree(sid))
    assert [t.turn.role for t in turns] == ["user", "assistant", "user", "assistant"]
    assert user_texts(driver, w, sid) == ["hello", "one"]
    assert not w.composer_bar.busy


def test_a_run_refused_by_the_core_gives_the_text_back_and_says_so_in_one_line(
        driver: Any, problems: list[str]) -> None:
    """What the window did not know was busy (held in the core only) refuses in the
    status line, and nothing typed is lost: the message goes back before what was
    typed since."""
    w = driver.configured()
    driver.send("hello", w, wait=True)
    sid = w.chat.session_id
    w.composer.setFocus()
    type_and_enter(driver, w, "one")  # held by the window from the Enter on…
    w.chat.runner.claim(sid)  # …while something else takes the chat in the core first
    driver.qtbot.keyClicks(w.composer, "typed since")
    try:
        driver.until(lambda: not w.chat.runs.active and w.tasks.pending == 0, timeout=15)
    finally:
        w.chat.runner.release(sid)
    assert problems == []
    assert w.composer.text() == "one\n\ntyped since"
    assert "still answering" in w.statusBar().currentMessage()
    assert not w.composer_bar.busy and not sidebar_dot(w, sid)
    assert user_texts(driver, w, sid) == ["hello"]


def test_enter_while_a_compaction_holds_the_chat_queues_until_it_lets_go(
        driver: Any, problems: list[str]) -> None:
    """Before its "compact:start" too (held in the core only): the messages are queued, as
    while a reply streams, nothing is sent while the compaction holds the chat, and they go
    in order once it lets go (fresh-user trial: Enter was refused during a compaction but
    queued during a reply)."""
    w = driver.configured()
    driver.send("hello", w, wait=True)
    sid = w.chat.session_id
    w.chat.runner.claim(sid, "compaction")  # a compaction's first moments (Compact now)
    try:
        w.composer.setFocus()
        type_and_enter(driver, w, "one")
        type_and_enter(driver, w, "two")
        driver.until(lambda: queued(w, sid) == ["one", "two"], timeout=15)
        assert w.composer.text() == ""
        driver.qtbot.wait(300)
        assert user_texts(driver, w, sid) == ["hello"]  # held: nothing sent yet
    finally:
        w.chat.runner.release(sid)
    driver.until(lambda: user_texts(driver, w, sid) == ["hello", "one", "two"]
                 and not w.chat.runs.running(sid) and w.tasks.pending == 0, timeout=30)
    assert queued(w, sid) == [] and problems == []


def test_enter_during_a_real_compaction_is_sent_once_the_summary_is_saved(
        driver: Any, problems: list[str]) -> None:
    """Compact now, its summary streaming slowly; Enter meanwhile queues the message, which
    is sent after the summary is saved (so its request carries the summary)."""
    from tests.gui.long_chats import rows

    w = driver.configured()
    for n in range(3):  # replies long enough that a summary makes the context smaller
        driver.fake.script(f"Reply {n}. " + "It goes on at some length. " * 12)
        driver.send(f"more {n}", w, wait=True)
    sid = w.chat.session_id
    driver.fake.script("<summary>The user said more 0 to 2; each was answered at some "
                       "length, and nothing else was said.</summary>",
                       token_delay_ms=40, chunk_size=2)
    assert w.window_commands.compact_now() is True
    driver.until(lambda: sid in w.chat.editor.compacting, timeout=15)
    w.composer.setFocus()
    type_and_enter(driver, w, "after the summary")
    driver.until(lambda: queued(w, sid) == ["after the summary"], timeout=15)
    assert sid in w.chat.editor.compacting  # still summarizing: queued, not sent
    assert w.chat.runs.queue.view.heading.text() == GOING_AFTER_SUMMARY
    assert w.composer.text() == ""
    driver.until(lambda: user_texts(driver, w, sid)[-1] == "after the summary"
                 and not w.chat.runs.running(sid) and w.tasks.pending == 0, timeout=60)
    assert rows(w)[0].kind == "card" and queued(w, sid) == [] and problems == []
    sent = [t for t in driver.run(w.chat.store.history(sid)) if t.role == "user"][-1]
    driver.qtbot.wait(300)  # the transcript read again after the summary: all of it shown
    assert sent.id in {n.key for n in rows(w)}  # (trial: the message's bubble was gone)
    asked = [str(r.body) for r in driver.fake.model_requests if "after the summary" in str(r.body)]
    assert len(asked) == 1 and "The user said more 0 to 2" in asked[0]  # sent after the summary


def test_enter_right_after_compact_now_is_sent_and_the_refusal_is_one_line(
        driver: Any, problems: list[str]) -> None:
    w = driver.configured()
    driver.send("hello", w, wait=True)
    sid = w.chat.session_id
    assert w.window_commands.compact_now() is True
    w.composer.setFocus()
    type_and_enter(driver, w, "one")  # before the compaction holds the chat
    driver.until(lambda: user_texts(driver, w, sid) == ["hello", "one"]
                 and not w.chat.runs.running(sid) and w.tasks.pending == 0, timeout=30)
    assert problems == [] and w.composer.text() == ""


def test_enter_right_after_asking_several_models_is_queued_behind_their_answers(
        driver: Any, problems: list[str]) -> None:
    w = driver.configured()  # a new chat
    driver.until(lambda: len(w.model_picker.choices) >= 2, timeout=10)
    for _label, ref in w.chat.regen.model_choices()[:2]:
        driver.fake.script("word " * 40, model=ref.split(":", 1)[1], token_delay_ms=20)
    w.composer.setFocus()
    driver.qtbot.keyClicks(w.composer, "Where to?")
    driver.qtbot.keyClick(w.composer, Qt.Key.Key_Return, CTRL_SHIFT)
    several = w.chat.several
    driver.until(lambda: getattr(several, "picker", None) is not None
                 and several.picker.isVisible())
    picker = several.picker
    for k in (Qt.Key.Key_1, Qt.Key.Key_2):
        driver.qtbot.keyClick(picker.models, k)
    driver.qtbot.keyClick(picker.models, Qt.Key.Key_Return)  # asked…
    type_and_enter(driver, w, "next")  # …and this at once
    assert w.composer.text() == ""
    driver.until(lambda: w.chat.session_id is not None, timeout=15)
    sid = w.chat.session_id
    driver.until(lambda: user_texts(driver, w, sid) == ["Where to?", "next"]
                 and not w.chat.runs.running(sid) and w.tasks.pending == 0, timeout=60)
    assert problems == []
    assert len(driver.run(w.store.list_sessions())) == 1


def test_esc_right_after_enter_stops_the_reply_and_keeps_the_message(
        driver: Any, problems: list[str]) -> None:
    """The Stop shown from the Enter on stops: Esc before the run reached the core
    (it used to do nothing there, and the reply came in full)."""
    w = driver.configured()
    driver.send("hello", w, wait=True)
    sid = w.chat.session_id
    asked = len(driver.fake.model_requests)
    w.composer.setFocus()
    type_and_enter(driver, w, "one")
    driver.qtbot.keyClick(w.composer, Qt.Key.Key_Escape)  # at once
    driver.until(lambda: not w.chat.runs.running(sid) and w.tasks.pending == 0, timeout=30)
    assert problems == [] and not w.composer_bar.busy and not sidebar_dot(w, sid)
    assert user_texts(driver, w, sid) == ["hello", "one"]  # the message stays, saved
    roles = [t.role for t in driver.run(w.store.get_turns(sid))]
    assert roles == ["user", "assistant", "user"]  # no reply
    assert len(driver.fake.model_requests) == asked  # nothing asked

"""A chat whose first reply never finished is still titled (real window, store and SDK
against the fake provider server): from its first message at once, and by the title
model after its first complete reply."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt

FIRST = "Plan a three day trip to Lisbon in May please"
GENERATED = "Plan three day trip Lisbon"  # the fake server's title: its subject words
LEFT = Qt.MouseButton.LeftButton


def _title_requests(driver: Any) -> list[Any]:
    return [r for r in driver.fake.model_requests
            if "Write a title for this conversation." in str(r.body)]


def _row_title(w: Any, sid: str) -> str:
    return str(w.sidebar.model.index_of(sid).data())


def test_a_chat_cut_off_by_quitting_is_titled_then_and_after_its_first_reply(driver: Any) -> None:
    w = driver.configured()
    driver.fake.script("slow " * 600, token_delay_ms=20, chunk_size=2)  # quit during it
    driver.send(FIRST, w)
    driver.until(lambda: w.composer_bar.busy and w.chat.partial, timeout=10)
    sid = w.chat.session_id
    driver.until(lambda: _row_title(w, sid) == FIRST)  # not "New chat" while it answers
    driver.close(w)

    w = driver.open()
    driver.until(lambda: w.sidebar.model.has(sid) and w.chat.session_id == sid)
    assert _row_title(w, sid) == FIRST
    turns = driver.run(w.store.get_turns(sid))
    assert [(t.role, t.aborted) for t in turns] == [("user", False), ("assistant", True)]
    assert _title_requests(driver) == []

    driver.fake.script("Day one: Alfama.")
    driver.send("Go on", w, wait=True)
    driver.until(lambda: _row_title(w, sid) == GENERATED, timeout=10)
    assert driver.run(w.store.get_session(sid)).title == GENERATED
    assert len(_title_requests(driver)) == 1

    driver.fake.script("Day two: Belém.")  # later replies leave the title alone
    driver.send("And then?", w, wait=True)
    driver.until(lambda: w.tasks.pending == 0)
    assert len(_title_requests(driver)) == 1 and _row_title(w, sid) == GENERATED


def test_regenerating_a_titled_chats_first_answer_asks_for_no_new_title(driver: Any) -> None:
    w = driver.configured()
    driver.fake.script("Lisbon it is.")
    driver.send(FIRST, w, wait=True)
    sid = w.chat.session_id
    driver.until(lambda: _row_title(w, sid) == GENERATED, timeout=10)
    asked = len(_title_requests(driver))

    driver.fake.script("Porto, then.")
    assert w.window_commands.regenerate_reply(w.chat.current_model())
    driver.until(lambda: driver.last_text(w) == "Porto, then." and w.tasks.pending == 0,
                 timeout=10)
    assert len(_title_requests(driver)) == asked == 1
    assert _row_title(w, sid) == GENERATED


def _cut_first_reply(driver: Any) -> tuple[Any, str]:
    """A new chat whose first reply the connection cut after a few words."""
    w = driver.configured()
    driver.fake.fail("cut", reply="Day one: start in Alfama, then walk", after_chars=12)
    driver.send(FIRST, w)
    driver.until(lambda: w.transcript.error_bar.retry_button.isVisible()
                 and w.tasks.pending == 0 and not w.composer_bar.busy, timeout=10)
    sid = w.chat.session_id
    assert _row_title(w, sid) == FIRST and _title_requests(driver) == []
    return w, sid


def test_retry_after_a_cut_first_reply_titles_the_chat_once(driver: Any) -> None:
    w, sid = _cut_first_reply(driver)

    driver.fake.script("Day one: Alfama.")
    driver.qtbot.mouseClick(w.transcript.error_bar.retry_button, LEFT)  # the banner's Retry
    driver.until(lambda: _row_title(w, sid) == GENERATED, timeout=10)
    assert driver.run(w.store.get_session(sid)).title == GENERATED
    driver.until(lambda: w.tasks.pending == 0)
    assert len(_title_requests(driver)) == 1

    driver.fake.script("Day two: Belém.")  # later replies leave the title alone
    driver.send("And then?", w, wait=True)
    driver.until(lambda: w.tasks.pending == 0)
    assert len(_title_requests(driver)) == 1 and _row_title(w, sid) == GENERATED


def test_ctrl_r_after_stopping_before_any_reply_titles_the_chat(driver: Any) -> None:
    w = driver.configured()
    driver.fake.fail("hang", seconds=30)  # no reply comes: Esc stops the wait
    driver.send(FIRST, w)
    driver.until(lambda: w.composer_bar.busy and w.chat.session_id is not None, timeout=10)
    sid = w.chat.session_id
    driver.qtbot.keyClick(w.composer, Qt.Key.Key_Escape)
    driver.until(lambda: not w.chat.runs.running(sid) and w.tasks.pending == 0, timeout=10)
    assert [t.role for t in driver.run(w.store.get_turns(sid))] == ["user"]
    driver.fake.reset()  # the server lets the stopped request go (it held the next one back)

    driver.fake.script("Day one: Alfama.")
    w.transcript.setFocus()
    driver.qtbot.keyClick(w, Qt.Key.Key_R, Qt.KeyboardModifier.ControlModifier)  # Ctrl+R
    driver.until(lambda: _row_title(w, sid) == GENERATED, timeout=10)
    driver.until(lambda: w.tasks.pending == 0)
    assert len(_title_requests(driver)) == 1


def test_a_chat_answered_after_restarting_with_its_first_reply_cut_is_titled(
    driver: Any,
) -> None:
    w, sid = _cut_first_reply(driver)
    driver.close(w)

    w = driver.open()
    driver.until(lambda: w.sidebar.model.has(sid) and w.chat.session_id == sid)
    driver.fake.script("Day one: Alfama.")
    assert w.window_commands.retry_run()
    driver.until(lambda: _row_title(w, sid) == GENERATED, timeout=10)
    driver.until(lambda: w.tasks.pending == 0)
    assert len(_title_requests(driver)) == 1

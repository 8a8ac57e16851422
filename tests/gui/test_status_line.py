"""A status-bar message too long for one line is shown whole (wrapped), not cut off."""

from __future__ import annotations

from typing import Any

LONG = ("This chat is being compacted: your message stays here; send it when that is done. "
        "If it takes long, another program may hold sessions.db: close the other taker.")


def test_a_long_refusal_wraps_and_is_the_tooltip(driver: Any) -> None:
    w = driver.open()
    w.resize(600, 760)
    bar = w.statusBar()
    driver.qtbot.wait(50)
    one_line = bar.height()
    bar.showMessage(LONG, 8_000)
    driver.until(lambda: bar.height() > one_line * 1.5
                 and bar.geometry().bottom() < w.height() and bar.y() < w.height() - one_line * 1.5)
    assert bar.wraps() and bar.toolTip() == LONG
    room = bar.width() - 12
    lines = bar.fontMetrics().boundingRect(0, 0, room, 10_000, 0x1000, LONG).height()
    assert bar.height() >= lines  # every line fits: the end ("taker.") is shown
    bar.showMessage("Saved.", 8_000)
    driver.until(lambda: bar.height() <= one_line + 1)
    assert not bar.wraps()


def test_a_message_goes_when_another_chat_opens_and_stays_in_its_own(driver: Any) -> None:
    from tests.gui.chats import long_chat

    w = driver.configured()
    bar = w.statusBar()
    bar.showMessage("Something about the first chat.", 15_000)  # shown in a new chat
    driver.fake.script("Hi.")
    driver.send("first chat", w, wait=True)  # which gets its id now: the message stays
    first = w.chat.session_id
    assert bar.currentMessage() == "Something about the first chat."

    other, _turns = long_chat(driver, w, 4, title="Other chat")
    w.chat.open_session(other)
    driver.until(lambda: w.chat.session_id == other)
    assert bar.currentMessage() == ""  # not left ~15 s over the other chat

    bar.showMessage("About the other chat.", 15_000)
    w.chat.open_session(other)  # already open: nothing changes
    assert bar.currentMessage() == "About the other chat."
    w.chat.new_session()
    driver.until(lambda: w.chat.session_id is None)
    assert bar.currentMessage() == ""
    w.chat.open_session(first)
    driver.until(lambda: w.chat.session_id == first)
    assert bar.currentMessage() == ""

"""The status bar says one line at most: a longer message ends in "…" and its whole text
is behind "Details" (a modal dialog) and in the tooltip."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt

LONG = ("This chat is being compacted: your message stays here; send it when that is done. "
        "If it takes long, another program may hold sessions.db: close the other taker.")


def test_a_long_message_takes_one_line_and_details_show_it_whole(driver: Any) -> None:
    w = driver.open()
    w.resize(600, 760)
    bar = w.statusBar()
    driver.qtbot.wait(50)
    one_line = bar.height()
    bar.showMessage(LONG, 8_000)
    driver.until(lambda: bar.details_button is not None and bar.details_button.isVisible())
    driver.qtbot.wait(50)
    assert bar.height() <= one_line + 1  # the bar never grows
    assert bar.elided() and bar.shown_text().endswith("…") and bar.toolTip() == LONG
    assert len(bar.shown_text()) < len(LONG)
    driver.qtbot.mouseClick(bar.details_button, Qt.MouseButton.LeftButton)
    dialog = bar.dialog
    assert dialog is not None and dialog.isModal() and dialog.isVisible()
    assert LONG in dialog.text()  # the end ("taker.") is there
    driver.qtbot.keyClick(dialog.close_button, Qt.Key.Key_Return)  # Return closes it
    driver.until(lambda: bar.dialog is None)
    bar.showMessage("Saved.", 8_000)
    driver.until(lambda: not bar.details_button.isVisible())
    assert not bar.elided() and bar.shown_text() == "Saved." and bar.details() is None


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

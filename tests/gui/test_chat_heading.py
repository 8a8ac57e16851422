"""The header names the open chat and its space, renames it in place (click or F2, Enter
saves, Esc cancels), and a new chat greets with its space, model and a few keys (real
window, real sessions.db, the fake provider server)."""

from __future__ import annotations

from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QFontMetrics
from PySide6.QtWidgets import QApplication

from parley.gui.text.names import elided_title
from tests.gui.chats import long_chat
from tests.gui.keyboard import chat_window, key, type_text

pytestmark = pytest.mark.timeout(90)


def test_the_header_shows_the_title_and_space_and_renames_in_place(
    driver: Any, fake_provider: Any, qtbot: Any
) -> None:
    w = chat_window(driver, fake_provider)
    sid, _ = long_chat(driver, w, 2, title="Trip notes")
    w.chat.open_session(sid)
    driver.until(lambda: w.chat.session_id == sid)
    heading = w.chat_heading
    assert heading.button.text() == "Trip notes" and heading.isVisible()
    space = w.chat.organizer.spaces[w.chat.space_id].name
    assert heading.space.text() == f"· {space}" and heading.space.isVisible()

    w.composer.setFocus()
    key(qtbot, "F2")  # in place, not a dialog
    assert QApplication.focusWidget() is heading.editor and heading.editor.selectedText()
    type_text(qtbot, "Never mind")
    key(qtbot, "Esc")
    assert not heading.editing and heading.button.text() == "Trip notes"
    assert driver.run(w.store.get_session(sid)).title == "Trip notes"

    qtbot.mouseClick(heading.button, Qt.MouseButton.LeftButton)
    assert QApplication.focusWidget() is heading.editor
    key(qtbot, "Ctrl+A")
    type_text(qtbot, "Lisbon in May")
    key(qtbot, "Return")
    driver.until(lambda: driver.run(w.store.get_session(sid)).title == "Lisbon in May")
    session = driver.run(w.store.get_session(sid))
    assert session.title_source == "user"
    assert heading.button.text() == "Lisbon in May" and not heading.editing
    driver.until(lambda: w.sidebar.model.index_of(sid).data() == "Lisbon in May")
    assert w.windowTitle() == "Lisbon in May — Parley"
    assert QApplication.focusWidget() is w.composer  # back to writing


def test_a_new_chat_greets_with_its_space_model_and_keys_until_the_first_message(
    driver: Any, fake_provider: Any
) -> None:
    w = chat_window(driver, fake_provider)
    w.chat.new_session()
    driver.until(lambda: w.chat.session_id is None and w.tasks.pending == 0)
    greeting = w.greeting
    driver.until(lambda: greeting.isVisible())
    space = w.chat.organizer.spaces[w.chat.space_id].name
    model = w.model_picker.label_of(w.chat.current_model())
    lines = greeting.text().split("\n")
    assert lines[0] == f"New chat in {space}"
    assert lines[1] == f"{model} answers"
    assert lines[2] == "Ctrl+K finds chats, messages and commands"
    # Enter and Shift+Enter are said once, under the message box, not repeated here.
    assert "Enter" in w.composer_bar.hint.text() and "Enter" not in greeting.text()
    assert not w.chat_heading.button.isEnabled()  # nothing to rename yet

    driver.fake.script("Hello!")
    driver.send("hi", w, wait=True)
    assert not greeting.isVisible() and greeting.text() == ""
    assert w.chat_heading.button.isEnabled()


def test_a_long_title_is_cut_to_the_room_and_never_widens_the_window(
    driver: Any, fake_provider: Any
) -> None:
    w = chat_window(driver, fake_provider)
    title = "A very long title about " + "many things " * 20
    sid, _ = long_chat(driver, w, 2, title=title.strip())
    w.chat.open_session(sid)
    driver.until(lambda: w.chat.session_id == sid)
    heading = w.chat_heading
    driver.until(lambda: heading.button.text().endswith("…"))
    assert title.strip() in heading.button.toolTip()
    assert w.minimumSizeHint().width() < 700
    w.resize(640, w.height())
    driver.until(lambda: w.width() == 640)
    driver.qtbot.wait(50)
    assert heading.button.text().endswith("…") and heading.geometry().right() <= w.header.width()


def test_a_long_fork_title_keeps_its_fork_mark_where_it_is_cut(
    driver: Any, fake_provider: Any, qapp: Any
) -> None:
    """Fresh-user trial: a fork's title is "<parent title> (fork 2)"; cut at its end in the
    header and the chat list, "(fork 2)" and "(fork 3)" looked alike. The part before
    the mark is cut instead, and the tooltip has the whole title."""
    w = chat_window(driver, fake_provider)
    base = "A very long title about " + "many things " * 20
    shown = {}
    heading = w.chat_heading
    for n in (2, 3):
        title = f"{base.strip()} (fork {n})"
        sid, _ = long_chat(driver, w, 2, title=title)
        w.chat.open_session(sid)
        driver.until(lambda sid=sid: w.chat.session_id == sid)
        driver.until(lambda title=title: heading.button.toolTip().startswith(title))
        shown[n] = heading.button.text()
        assert shown[n].endswith(f"… (fork {n})"), shown[n]
        assert f"{base.strip()} (fork {n})" in heading.button.toolTip()
    assert shown[2] != shown[3]

    metrics = QFontMetrics(qapp.font())
    for n in (2, 3):  # the chat list's rows, the palette: the same rule
        cut = elided_title(f"{base.strip()} (fork {n})", metrics, 200)
        assert cut.endswith(f"… (fork {n})") and metrics.horizontalAdvance(cut) <= 200
    assert elided_title("Short (fork 2)", metrics, 200) == "Short (fork 2)"
    assert elided_title(base, metrics, 200).endswith("…")  # no mark: cut at its end
    tiny = elided_title(f"{base.strip()} (fork 12)", metrics, 40)
    assert tiny.startswith("…") and metrics.horizontalAdvance(tiny) <= 40

"""Waiting for answers and clicking the links on them: shared by the regenerate, branch,
continue and focus tests."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

from parley.core.content import TextBlock, Turn
from parley.gui.transcript.specs import RESUME_HREF

LEFT = Qt.MouseButton.LeftButton


def click_anchor(driver: Any, w: Any, turn_id: str, href: str) -> None:
    point = w.transcript.anchor_point(turn_id, href)
    assert point is not None, f"no {href} link on the row"
    driver.qtbot.mouseClick(w.transcript.list_view.viewport(), LEFT, pos=point)


def until_answered(driver: Any, w: Any, text: str) -> None:
    driver.until(lambda: driver.last_text(w) == text and not w.composer_bar.busy
                 and w.tasks.pending == 0, timeout=10)


def chat_with_answer(driver: Any) -> Any:
    w = driver.configured()
    driver.fake.script("The first answer.")
    driver.send("Name a colour", w, wait=True)
    assert driver.last_text(w) == "The first answer."
    return w


def open_chat_with(driver: Any, blocks: list[Any]) -> tuple[Any, str]:
    w = driver.configured()
    session = driver.run(w.store.create_session(model=w.chat.current_model()))
    turn = driver.run(w.store.append_turn(session.id, Turn("user", blocks)))
    driver.run(w.store.append_turn(session.id, Turn("assistant", [TextBlock("Got it.")])))
    w.chat.remember_session(session)
    w.window_commands.open_session(session.id)
    driver.until(lambda: w.chat.session_id == session.id and len(w.chat.turns) == 2)
    return w, turn.id


def type_on_focus(driver: Any, text: str) -> None:
    """Type on whatever has the focus, as a keyboard does."""
    for char in text:
        target = QApplication.focusWidget()
        assert target is not None, "nothing has the keyboard focus"
        driver.qtbot.keyClicks(target, char)


def open_chat(driver: Any, w: Any, turns: list[Turn]) -> list[Turn]:
    s = driver.run(w.store.create_session(title="Story", model=w.chat.current_model()))
    stored = [driver.run(w.store.append_turn(s.id, t)) for t in turns]
    driver.run(w.chat.load_sidebar())
    w.chat.open_session(s.id)
    driver.until(lambda: w.session_id == s.id and len(w.chat.turns) == len(turns)
                 and w.tasks.pending == 0)
    w.activateWindow()
    driver.until(w.isActiveWindow)
    return stored


def continue_a_stopped_reply(driver: Any, w: Any) -> None:
    """Open a chat whose reply was stopped, click its Continue and wait for the rest."""
    _, stopped = open_chat(driver, w, [
        Turn("user", [TextBlock("Long story please")]),
        Turn("assistant", [TextBlock("Once upon a time, in a far")], aborted=True)])
    driver.fake.script("away land.")
    click_anchor(driver, w, stopped.id, RESUME_HREF)
    until_answered(driver, w, "away land.")


def regenerate_answering(driver: Any, w: Any, answer: str) -> None:
    driver.fake.script(answer)
    assert w.window_commands.regenerate_reply()
    until_answered(driver, w, answer)


def branches_shown(w: Any) -> list[tuple[int, int] | None]:
    return [w.transcript.branch_of(t.id) for t in w.chat.turns]

"""Enter on a message longer than the model's context window: nothing is sent or saved, the
window says why (as for other refusals of a send), and the text and files stay in the
composer (real window, real sessions.db, real SDK against the fake provider server, which
enforces no context limit)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt

from tests.gui.helpers import drop, problem_boxes, ready

pytestmark = pytest.mark.timeout(60)

HAIKU = "anthropic:claude-haiku-4-5"  # 200,000-token context window
PASTE = "lorem ipsum dolor sit amet consectetur adipiscing elit\n" * 52_000  # 2.8 MB, ~703k tokens


def attach_note(driver: Any, w: Any, tmp_path: Path) -> None:
    note = tmp_path / "notes.txt"
    note.write_text("a note\n", encoding="utf-8")
    assert drop(w.composer, [note])
    driver.until(lambda: len(ready(w)) == 1 and w.tasks.pending == 0)


def press_enter(driver: Any, w: Any) -> None:
    w.composer.setFocus()
    driver.qtbot.keyClick(w.composer, Qt.Key.Key_Return)


def test_a_paste_too_long_for_a_new_chat_is_refused_and_kept(driver: Any, tmp_path: Path) -> None:
    w = driver.configured()
    w.chat.models.choose_model(HAIKU)
    driver.settle(w)
    attach_note(driver, w, tmp_path)
    driver.fake.script("Here it is.")  # for the shortened message, below
    w.composer.set_text(PASTE)

    press_enter(driver, w)
    driver.until(lambda: problem_boxes(w) and w.tasks.pending == 0, timeout=20)

    (box,) = problem_boxes(w)
    text = box.text()
    assert "too long for Claude Haiku 4.5" in text and "200,000 tokens" in text
    assert "Nothing was sent or saved" in text and "larger context window" in text
    assert w.composer.text() == PASTE  # not a character lost
    assert [p.name for p in w.chat.attachments.pending()] == ["notes.txt"]
    assert driver.fake.model_requests == []
    assert w.chat.session_id is None  # no empty chat was made for it
    assert driver.run(w.store.list_sessions()) == []
    assert not w.composer_bar.busy
    box.close()

    # Shortened, it goes out with the file, in a new chat as usual.
    w.composer.set_text("Just the first chapter, then.")
    press_enter(driver, w)
    driver.until(lambda: driver.last_text(w) == "Here it is." and w.tasks.pending == 0,
                 timeout=10)
    sent = driver.fake.model_requests[0].body["messages"][-1]["content"]
    assert "a note" in sent[-2]["text"] and sent[-1]["text"] == "Just the first chapter, then."


def test_a_paste_too_long_in_a_chat_leaves_the_chat_as_it_was(driver: Any) -> None:
    w = driver.configured()
    w.chat.models.choose_model(HAIKU)
    driver.fake.script("Hello!")
    driver.send("Hi", w, wait=True)
    sid = w.chat.session_id
    before = driver.run(w.store.get_turns(sid))
    requests = len(driver.fake.model_requests)
    driver.fake.script("Read it.")  # what a fake server that takes anything would answer
    w.composer.set_text(PASTE)

    press_enter(driver, w)
    driver.until(lambda: problem_boxes(w) and w.tasks.pending == 0, timeout=20)

    assert "too long for Claude Haiku 4.5" in problem_boxes(w)[0].text()
    assert w.composer.text() == PASTE
    assert driver.run(w.store.get_turns(sid)) == before
    assert [t.id for t in w.chat.turns] == [t.id for t in before]  # nothing shown as sent
    assert len(driver.fake.model_requests) == requests
    assert driver.error_text(w) == ""  # a refusal, not a failed reply


def test_an_edit_too_long_for_the_model_makes_no_fork(driver: Any) -> None:
    w = driver.configured()
    w.chat.models.choose_model(HAIKU)
    driver.fake.script("Short answer.")
    driver.send("A short question", w, wait=True)
    sid = w.chat.session_id
    assert w.window_commands.edit_last_message()
    driver.until(lambda: w.chat.editor.editing is not None)
    w.composer.set_text(PASTE)

    press_enter(driver, w)
    driver.until(lambda: problem_boxes(w) and w.tasks.pending == 0, timeout=20)

    (box,) = problem_boxes(w)
    assert "too long for Claude Haiku 4.5" in box.text()
    assert w.composer.text() == PASTE
    assert driver.run(w.store.list_forks(sid)) == []  # the fork was not made
    chat = [r for r in driver.fake.model_requests
            if "Write a title for this conversation." not in str(r.body)]
    assert w.chat.session_id == sid and len(chat) == 1  # the first answer only
    box.close()

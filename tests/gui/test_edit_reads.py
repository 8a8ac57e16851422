"""Sending an edited message shows its branch from what the window holds: the chat is not
read again (``Store.transcript_window``, ``Store.branches``) before the request goes out,
whatever its length (issue 36), and ‹ n/m › on the edited message is what the store says.

Real window, real sessions.db, real Anthropic SDK against the fake provider server.
"""

from __future__ import annotations

from typing import Any

import pytest
from PySide6.QtCore import Qt

from tests.gui.answers import branches_shown, until_answered

pytestmark = pytest.mark.timeout(90)


def _note_calls(monkeypatch: pytest.MonkeyPatch, store: Any, names: list[str],
                asked: Any, calls: list[tuple[str, bool]]) -> None:
    """Note each call of these store methods in ``calls``, with ``asked()`` (whether the
    request had reached the provider then); they still run."""
    for name in names:
        real = getattr(store, name)

        def noted(*a: Any, _real: Any = real, _name: str = name, **k: Any) -> Any:
            calls.append((_name, asked()))
            return _real(*a, **k)

        monkeypatch.setattr(store, name, noted)


def _edit(driver: Any, w: Any, turn_id: str, text: str, answer: str) -> None:
    w.transcript.editRequested.emit(turn_id)
    w.composer.set_text(text)
    driver.fake.script(answer)
    driver.qtbot.keyClick(w.composer, Qt.Key.Key_Return)
    until_answered(driver, w, answer)
    driver.until(lambda: w.tasks.pending == 0)


def test_an_edit_is_shown_without_reading_the_chat_again(
        driver: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    w = driver.configured()
    for question, answer in (("First?", "One."), ("Second?", "Two."), ("Third?", "Three.")):
        driver.fake.script(answer)
        driver.send(question, w, wait=True)
    sid = w.session_id
    _edit(driver, w, w.chat.turns[2].id, "Second, again?", "Two again.")  # a branch above
    sent = len(driver.fake.model_requests)
    calls: list[tuple[str, bool]] = []
    _note_calls(monkeypatch, w.store, ["transcript_window", "branches"],
                lambda: len(driver.fake.model_requests) > sent, calls)
    w.transcript.editRequested.emit(w.chat.turns[2].id)
    w.composer.set_text("Second, once more?")
    driver.fake.script("Two once more.")
    driver.qtbot.keyClick(w.composer, Qt.Key.Key_Return)
    until_answered(driver, w, "Two once more.")
    driver.until(lambda: w.tasks.pending == 0)

    # Nothing of the chat read before the request; the branch points once, after the reply.
    assert calls == [("branches", True)]
    assert [t.text() for t in w.chat.turns] == ["First?", "One.", "Second, once more?",
                                                "Two once more."]
    assert branches_shown(w) == [None, None, (3, 3), None]
    stored = driver.run(w.store.branches(sid))
    assert w.chat.opener.branches == stored
    # ‹ goes back to the branch before, with its own reply.
    assert w.chat.opener.switch_branch(w.chat.turns[2].id, -1)
    driver.until(lambda: [t.text() for t in w.chat.turns][2:] == ["Second, again?",
                                                                 "Two again."]
                 and w.tasks.pending == 0)
    assert branches_shown(w) == [None, None, (2, 3), None]


def test_an_edit_shows_its_branch_points_before_the_reply(driver: Any) -> None:
    w = driver.configured()
    driver.fake.script("One.")
    driver.send("First?", w, wait=True)
    w.transcript.editRequested.emit(w.chat.turns[0].id)
    w.composer.set_text("First, again?")
    driver.fake.script("One again.", token_delay_ms=40.0)
    driver.qtbot.keyClick(w.composer, Qt.Key.Key_Return)
    # ‹ 2/2 › under the edited message while its reply is still being written.
    driver.until(lambda: bool(w.chat.turns) and w.chat.turns[0].text() == "First, again?"
                 and w.transcript.branch_of(w.chat.turns[0].id) == (2, 2))
    assert w.chat.runs.running(w.session_id)
    until_answered(driver, w, "One again.")

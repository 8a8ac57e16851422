"""A message sent (Enter) before the chats are open is on screen all the way: in the
message box, in the note that says it is kept, or in the transcript (trial 21a: for
~0.35 s it was in none of them). Real window, store and SDK against the fake provider
server; the window is looked at on every turn of the event loop."""

from __future__ import annotations

from typing import Any

import pytest
import shiboken6
from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import QLabel

from tests.gui.starting import fake_env, press, start, type_keys

pytestmark = pytest.mark.timeout(90)

TEXT = "Are you there?"


def where_shown(w: Any, text: str) -> str | None:
    """Where ``text`` is on screen: "box", "note" or "transcript"; None: nowhere."""
    if text in w.composer.text() and w.composer.isVisible():
        return "box"
    if kept_notes(w):
        return "note"  # on the placeholder, or over the transcript
    view = w.transcript
    if view is not None and view.isVisible():
        model = view.model
        for row in range(model.rowCount()):
            if text in view.list_view.layout_of(row, fresh=True).plain_text():
                return "transcript"
    return None


def test_a_message_sent_while_starting_is_always_on_screen(driver, fake_provider, gate):
    fake_provider.script("Hi.")
    w = start(driver, fake_env(fake_provider))
    type_keys(w, TEXT)
    assert where_shown(w, TEXT) == "box"
    press(w, Qt.Key.Key_Return)  # the chats are not open yet
    assert w.composer.text() == ""
    seen: list[tuple[str | None, str]] = []

    def look() -> None:
        seen.append((where_shown(w, TEXT), w.startup.stage.value))

    watch = QTimer()
    watch.timeout.connect(look)
    watch.start(0)  # every turn of the event loop
    look()
    driver.until(lambda: seen[-1][0] == "transcript", timeout=30)
    gate.set()
    driver.until(lambda: w.ready and w.tasks.pending == 0 and not w.composer_bar.busy,
                 timeout=30)
    driver.until(lambda: driver.last_text() == "Hi.")
    watch.stop()
    look()
    nowhere = [stage for shown, stage in seen if shown is None]
    assert not nowhere, f"the message was on screen nowhere while {sorted(set(nowhere))}"
    assert seen[-1][0] == "transcript"
    assert not kept_notes(w)  # the note went once the transcript showed it


def kept_notes(w: Any) -> list[QLabel]:
    """The "Your message is kept" notes on screen."""
    return [label for label in w.findChildren(QLabel)
            if shiboken6.isValid(label) and label.isVisible()
            and "Your message is kept" in label.text()]


def test_enter_after_the_transcript_is_made_but_before_its_chat_shows_says_kept(
        driver, fake_provider, monkeypatch):
    import asyncio

    from parley.gui.chat.controller import ChatController

    shown = asyncio.Event()
    real = ChatController.show_first

    async def held(self: ChatController, **kw: Any) -> None:
        await shown.wait()
        await real(self, **kw)

    monkeypatch.setattr(ChatController, "show_first", held)  # the chat is read slowly
    fake_provider.script("Answered.")
    w = start(driver, fake_env(fake_provider))
    driver.until(lambda: w.transcript is not None and w.chat is not None)
    type_keys(w, "Quick one")
    press(w, Qt.Key.Key_Return)
    assert w.composer.text() == ""
    assert where_shown(w, "Quick one") == "note"
    (note,) = kept_notes(w)
    assert note.geometry() == w.transcript.rect()  # it covers the empty transcript
    press(w, Qt.Key.Key_Escape)  # taken back: in the box, no note
    assert w.composer.text() == "Quick one" and not kept_notes(w)
    press(w, Qt.Key.Key_Return)
    assert where_shown(w, "Quick one") == "note"
    shown.set()
    driver.until(lambda: w.ready and w.tasks.pending == 0 and not w.composer_bar.busy,
                 timeout=30)
    assert where_shown(w, "Quick one") == "transcript" and not kept_notes(w)

"""Text typed at once after switching chats goes to the chat switched to, all of it.

Trial finding 2 (session 14): chat A open (empty box), Ctrl+Tab to chat B and at once
"CCC0123456789xyz" typed: B's box held only "yz" and "CCC0123456789x" became A's draft.
Cause: the box stayed A's until B's opening had read B's chat (several store reads),
then B's draft replaced the box's text, which was kept as A's. Now the switch key
itself gives the box to B (A's draft kept from the box then, the box emptied), and what
is typed before B's draft is read is kept after it. Keys are sent with no event-loop
turn between them, as xdotool's reach the window.
"""

from __future__ import annotations

from typing import Any

import pytest
from PySide6.QtCore import Qt

from parley.gui.composer.drafts import draft_key
from tests.gui.keyboard import key

pytestmark = pytest.mark.timeout(120)
TYPED = "CCC0123456789xyz"


def _two_chats(driver: Any) -> tuple[Any, str, str]:
    """A window with chats A and B (answered), A open with an empty box."""
    w = driver.configured()
    driver.send("chat A", w, wait=True)
    a = w.chat.session_id
    w.chat.new_session()
    driver.until(lambda: w.chat.session_id is None and w.tasks.pending == 0)
    driver.send("chat B", w, wait=True)
    b = w.chat.session_id
    w.chat.open_session(a)
    driver.until(lambda: w.chat.session_id == a and w.tasks.pending == 0)
    assert w.composer.text() == ""
    return w, str(a), str(b)


def _switch_and_type(driver: Any, w: Any, text: str) -> None:
    w.composer.setFocus()
    key(driver.qtbot, "Ctrl+Tab")
    driver.qtbot.keyClicks(w.composer, text)


def _stored(driver: Any, w: Any, sid: str) -> Any:
    return driver.run(w.store.get_state(draft_key(sid)))


def test_what_is_typed_at_once_after_switching_goes_to_the_chat_switched_to(
        driver: Any) -> None:
    w, a, b = _two_chats(driver)
    _switch_and_type(driver, w, TYPED)
    driver.until(lambda: w.chat.session_id == b and w.tasks.pending == 0, timeout=10)
    assert w.composer.text() == TYPED
    driver.until(lambda: _stored(driver, w, b) == TYPED, timeout=5)
    assert _stored(driver, w, a) is None  # A's draft unchanged (none)
    w.chat.open_session(a)
    driver.until(lambda: w.chat.session_id == a and w.tasks.pending == 0)
    assert w.composer.text() == ""


def test_typed_at_once_after_switching_comes_after_the_chats_draft(driver: Any) -> None:
    w, a, b = _two_chats(driver)
    w.chat.open_session(b)
    driver.until(lambda: w.chat.session_id == b and w.tasks.pending == 0)
    driver.qtbot.keyClicks(w.composer, "B's old draft")
    w.chat.open_session(a)
    driver.until(lambda: w.chat.session_id == a and w.tasks.pending == 0)
    driver.qtbot.keyClicks(w.composer, "A's draft")
    _switch_and_type(driver, w, TYPED)
    driver.until(lambda: w.chat.session_id == b and w.tasks.pending == 0, timeout=10)
    assert w.composer.text() == f"B's old draft\n\n{TYPED}"
    driver.until(lambda: _stored(driver, w, a) == "A's draft", timeout=5)
    driver.until(lambda: _stored(driver, w, b) == f"B's old draft\n\n{TYPED}", timeout=5)


def test_enter_pressed_before_the_chat_switched_to_is_shown_sends_there(
        driver: Any) -> None:
    w, a, b = _two_chats(driver)
    driver.fake.script("Answered in B.")
    _switch_and_type(driver, w, "for B")
    driver.qtbot.keyClick(w.composer, Qt.Key.Key_Return)
    driver.until(lambda: w.chat.session_id == b and w.tasks.pending == 0
                 and not w.chat.runs.running(b), timeout=15)
    texts = [t.text() for t in driver.run(w.store.history(b)) if t.role == "user"]
    assert texts == ["chat B", "for B"]
    assert [t.text() for t in driver.run(w.store.history(a)) if t.role == "user"] == ["chat A"]
    assert w.composer.text() == ""

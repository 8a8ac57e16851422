"""A draft typed while a reply streams, or right after Enter, is written and survives a kill.

Trial finding (session 14): in a chat, a message sent, and within 0.5 s "DRAFT7 while
streaming" typed in the box; ~40 s later (the reply done) kill -9; the next start had an
empty box and ``app_state`` never held ``draft:<session id>``. Cause: the sent message's
draft was forgotten by a task started by the send (``Drafts.discard``): it dropped the
chat's draft from memory, whatever had been typed since Enter, and wrote an empty draft,
so the draft timer found nothing to write until the next key. Now ``Drafts.sent`` writes
what was typed since instead. The kill is played as ``test_restart_after_kill`` does.
Keys are sent with no event-loop turn between them, as xdotool's reach the window.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt

from parley.gui.composer.drafts import draft_key
from tests.gui.damage import as_if_killed
from tests.gui.queue_helpers import SLOW, queued, stream_slowly

pytestmark = pytest.mark.timeout(120)
DRAFT = "DRAFT7 while streaming"


def _stored(driver: Any, w: Any, sid: str | None) -> Any:
    return driver.run(w.store.get_state(draft_key(sid)))


def _enter_then_type(driver: Any, w: Any, sent: str, typed: str) -> None:
    """``sent``, Enter, then ``typed`` at once (no event-loop turn in between)."""
    w.composer.setFocus()
    driver.qtbot.keyClicks(w.composer, sent)
    driver.qtbot.keyClick(w.composer, Qt.Key.Key_Return)
    driver.qtbot.keyClicks(w.composer, typed)


def _reopened_box(driver: Any, home: Path, w: Any) -> str:
    """Kill (as the file is now), start again on the same home: the box's text."""
    as_if_killed(driver, w, home)
    again = driver.open()
    driver.until(lambda: again.tasks.pending == 0 and again.chat.session_id is not None,
                 timeout=15)
    return str(again.composer.text())


def test_a_draft_typed_right_after_enter_is_written_while_the_reply_streams(
        driver: Any, home: Path) -> None:
    w = driver.configured()
    driver.send("hello", w, wait=True)  # an existing chat, idle
    sid = w.chat.session_id
    driver.fake.script(SLOW, token_delay_ms=20, chunk_size=2)
    _enter_then_type(driver, w, "a long one", DRAFT)
    driver.until(lambda: bool(w.chat.partial), timeout=15)
    driver.until(lambda: _stored(driver, w, sid) == DRAFT, timeout=5)
    assert w.chat.runs.running(sid)  # written while the reply still streams
    assert w.composer.text() == DRAFT
    assert _reopened_box(driver, home, w) == DRAFT  # killed while it streams: kept


def test_a_draft_typed_right_after_enter_is_still_there_when_the_reply_ends(
        driver: Any, home: Path) -> None:
    w = driver.configured()
    driver.fake.script("An answer.")
    driver.send("hello", w, wait=True)
    sid = w.chat.session_id
    driver.fake.script("A second answer.")
    _enter_then_type(driver, w, "again", DRAFT)
    driver.until(lambda: not w.chat.runs.running(sid) and w.tasks.pending == 0, timeout=15)
    driver.until(lambda: _stored(driver, w, sid) == DRAFT, timeout=5)
    assert _reopened_box(driver, home, w) == DRAFT


def test_a_draft_typed_right_after_an_enter_that_queued_is_not_erased(
        driver: Any, home: Path) -> None:
    w = driver.configured()
    sid = stream_slowly(driver, w, "first")
    driver.send("queued first", w)
    driver.until(lambda: queued(w, sid) == ["queued first"])
    w.composer.setFocus()
    driver.qtbot.keyClick(w.composer, Qt.Key.Key_Escape)  # the queue paused; the reply goes on
    _enter_then_type(driver, w, "queued behind", DRAFT)
    driver.until(lambda: queued(w, sid) == ["queued first", "queued behind"], timeout=15)
    driver.until(lambda: _stored(driver, w, sid) == DRAFT, timeout=5)
    assert w.composer.text() == DRAFT
    assert _reopened_box(driver, home, w) == DRAFT


def test_a_draft_typed_right_after_the_first_enter_of_a_new_chat_is_that_chats(
        driver: Any, home: Path) -> None:
    w = driver.configured()
    assert w.chat.session_id is None
    driver.fake.script(SLOW, token_delay_ms=20, chunk_size=2)
    _enter_then_type(driver, w, "a new chat", DRAFT)
    driver.until(lambda: w.chat.session_id is not None and bool(w.chat.partial), timeout=15)
    sid = w.chat.session_id
    driver.until(lambda: _stored(driver, w, sid) == DRAFT, timeout=5)
    assert _stored(driver, w, None) is None  # not left as the next new chat's
    assert _reopened_box(driver, home, w) == DRAFT


def test_a_draft_typed_right_after_sending_an_edit_is_not_erased(
        driver: Any, home: Path) -> None:
    w = driver.configured()
    driver.fake.script("An answer.")
    driver.send("the first wording", w, wait=True)
    sid = w.chat.session_id
    driver.qtbot.keyClick(w.composer, Qt.Key.Key_Up)  # edit the message sent
    assert w.chat.editor.editing is not None
    w.composer.clear()
    driver.fake.script("A second answer.")
    _enter_then_type(driver, w, "the second wording", DRAFT)
    driver.until(lambda: not w.chat.runs.running(sid) and w.tasks.pending == 0, timeout=15)
    assert [t.text() for t in w.chat.turns] == ["the second wording", "A second answer."]
    driver.until(lambda: _stored(driver, w, sid) == DRAFT, timeout=5)  # a plain draft
    assert _reopened_box(driver, home, w) == DRAFT

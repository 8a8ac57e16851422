"""Deleting (or archiving) the open chat opens its neighbour in the same space, never a chat
of another space; with none left there, the new-chat page of that space (real window)."""

from __future__ import annotations

from typing import Any

import pytest

from parley.core.content import TextBlock, Turn
from parley.gui import dialogs

pytestmark = pytest.mark.timeout(60)


def _chats(driver: Any, w: Any, space_id: str, *titles: str) -> list[str]:
    ids = []
    for title in titles:
        s = driver.run(w.store.create_session(title=title, space_id=space_id))
        for role in ("user", "assistant"):
            driver.run(w.store.append_turn(s.id, Turn(role, [TextBlock(f"{title} {role}")])))
        ids.append(s.id)
    return ids


def _two_spaces(driver: Any, general_titles: tuple[str, ...]) -> tuple[Any, str, str, list[str]]:
    """A window with chats in General (the default space, listed first) and in Research
    (listed after it); returns (window, general id, research id, General's ids in the
    sidebar's order)."""
    w = driver.configured()
    general = w.chat.organizer.default_space_id
    research = driver.run(w.store.create_space("Research")).id
    _chats(driver, w, general, *general_titles)
    _chats(driver, w, research, "R1", "R2")
    driver.run(w.chat.load_sidebar())
    model = w.sidebar.model
    assert model.space_ids().index(general) < model.space_ids().index(research)
    order = [i for i in model.session_ids() if model.space_of(i) == general]
    return w, general, research, order


def _delete_open(driver: Any, w: Any, sid: str) -> None:
    w.chat.open_session(sid)
    driver.until(lambda: w.session_id == sid)
    dialogs.answers.append(True)  # "Delete chat?" → Delete
    w.window_commands.delete_current_session()
    driver.until(lambda: not w.sidebar.model.has(sid) and w.session_id != sid
                 and w.tasks.pending == 0)


def test_deleting_the_last_chat_of_a_space_opens_the_one_above_it(driver: Any) -> None:
    w, general, _research, order = _two_spaces(driver, ("G1", "G2"))
    _delete_open(driver, w, order[-1])  # the bottom chat of General: Research's come next
    assert w.session_id == order[-2]
    assert w.chat.space_id == general


def test_deleting_a_chat_opens_the_next_one_in_its_space(driver: Any) -> None:
    w, general, _research, order = _two_spaces(driver, ("G1", "G2", "G3"))
    _delete_open(driver, w, order[1])
    assert w.session_id == order[2]  # the row below it
    assert w.sidebar.model.space_of(w.session_id) == general


def test_deleting_the_only_chat_of_a_space_shows_a_new_chat_there(driver: Any) -> None:
    w, general, research, order = _two_spaces(driver, ("G1",))
    _delete_open(driver, w, order[0])
    assert w.session_id is None  # the new-chat page…
    assert w.chat.space_id == general  # …of General, not a chat of Research
    assert w.chat.turns == [] and w.transcript.model.rowCount() == 0
    driver.fake.script("Hello in General.")
    driver.send("Hello", w, wait=True)
    assert driver.run(w.store.get_session(w.session_id)).space_id == general
    assert w.sidebar.model.space_of(w.session_id) != research


def test_archiving_the_open_chat_stays_in_its_space_too(driver: Any) -> None:
    w, general, _research, order = _two_spaces(driver, ("G1", "G2"))
    w.chat.open_session(order[-1])
    driver.until(lambda: w.session_id == order[-1])
    w.window_commands.close_chat()  # Ctrl+W, "Archive chat"
    driver.until(lambda: not w.sidebar.model.has(order[-1]) and w.session_id != order[-1]
                 and w.tasks.pending == 0)
    assert w.session_id == order[-2] and w.chat.space_id == general

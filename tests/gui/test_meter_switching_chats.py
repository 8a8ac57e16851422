"""While another chat opens, the context meter shows no figure of the chat shown before:
it says it is counting from the moment the chat is chosen, then shows the new chat's figure
(real window, store and SDK against the fake provider server)."""

from __future__ import annotations

import asyncio
from typing import Any

from parley.gui.chat import opening
from tests.gui.chats import context_count, long_chat


def test_the_meter_shows_no_figure_of_the_chat_left_while_another_opens(
        driver: Any, monkeypatch: Any) -> None:
    monkeypatch.setattr(opening, "OPEN_TURNS", 20)  # both opened in part
    w = driver.configured()
    first, _ = long_chat(driver, w, 30, title="Short one")
    second, _ = long_chat(driver, w, 200, title="Long one")
    w.chat.open_session(first)
    driver.until(lambda: w.session_id == first and w.tasks.pending == 0)
    before = context_count(driver, w, first)
    driver.until(lambda: w.context_meter.used == before, timeout=10)
    meter = w.context_meter

    # The new chat's reads are held: the meter has nothing of it to show yet.
    held = asyncio.Event()
    read = w.store.transcript_window

    async def slow(*args: Any, **kwargs: Any) -> Any:
        await held.wait()
        return await read(*args, **kwargs)

    monkeypatch.setattr(w.store, "transcript_window", slow)
    shown: list[tuple[int, str]] = []
    real_set = meter.set_usage

    def spy(used: int, *args: Any, **kwargs: Any) -> None:
        real_set(used, *args, **kwargs)
        shown.append((used, meter.label.text()))

    monkeypatch.setattr(meter, "set_usage", spy)
    w.chat.open_session(second)  # as a click in the list does
    assert "counting" in meter.label.text()  # at once, before any read
    assert str(before) not in meter.toolTip().replace(",", "")
    w.chat.models.update_title()
    w.chat.meter.update()  # anything asking for the meter meanwhile (a model list) waits
    driver.qtbot.wait(300)
    assert "counting" in meter.label.text() and w.session_id == first
    held.set()
    driver.until(lambda: w.session_id == second and w.tasks.pending == 0, timeout=10)
    after = context_count(driver, w, second)  # (its tools and system prompt learnt)
    driver.until(lambda: meter.used == after, timeout=10)
    assert "counting" not in meter.label.text()
    assert all(used != before for used, _ in shown), shown


def test_a_chat_that_cannot_be_opened_leaves_the_meter_of_the_chat_still_shown(
        driver: Any, monkeypatch: Any) -> None:
    from pathlib import Path

    from parley.core.store.errors import DatabaseBusy

    w = driver.configured()
    first, _ = long_chat(driver, w, 30, title="Shown")
    second, _ = long_chat(driver, w, 30, title="Locked")
    w.chat.open_session(first)
    driver.until(lambda: w.session_id == first and w.tasks.pending == 0)
    before = context_count(driver, w, first)
    driver.until(lambda: w.context_meter.used == before, timeout=10)

    async def locked(*args: Any, **kwargs: Any) -> Any:
        raise DatabaseBusy(Path("sessions.db"))  # the store away for a while

    monkeypatch.setattr(w.store, "transcript_window", locked)
    w.chat.open_session(second)
    driver.until(lambda: "could not be opened" in w.statusBar().currentMessage()
                 or w.tasks.pending == 0, timeout=10)
    driver.until(lambda: w.tasks.pending == 0)
    assert w.session_id == first  # the chat shown stays, and its figure with it
    driver.until(lambda: w.context_meter.used == before
                 and "counting" not in w.context_meter.label.text(), timeout=5)

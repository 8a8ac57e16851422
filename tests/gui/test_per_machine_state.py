"""The window's size and place, its panes and the chat left open stay on their machine:
two (then three) "machines" — machine names — open the real window on one database (a
sessions.db file, then a real PostgreSQL server), one after the other
(``parley.core.machine``)."""

from __future__ import annotations

from typing import Any

import pytest

from parley.core import machine
from parley.core.app_state import LAST_SESSION, WINDOW_GEOMETRY, WINDOW_SPLITTER
from tests.gui.chats import long_chat

pytestmark = pytest.mark.timeout(120)


@pytest.fixture(params=["sqlite", "postgresql"])
def env(request: pytest.FixtureRequest) -> dict[str, str]:
    """The window's environment: the data folder's sessions.db, or a PostgreSQL database."""
    if request.param == "sqlite":
        return {}
    return {"PARLEY_DATABASE_URL": str(request.getfixturevalue("postgres_url"))}


def _on(monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    monkeypatch.setattr(machine, "machine_name", lambda: name)


def test_a_wide_window_and_the_last_chat_do_not_follow_to_another_machine(
        driver: Any, monkeypatch: pytest.MonkeyPatch, env: dict[str, str]) -> None:
    _on(monkeypatch, "laptop")
    w = driver.configured(env)
    first_width = w.width()
    sid, _ = long_chat(driver, w, 2, title="Laptop chat")
    other, _ = long_chat(driver, w, 2, title="Desktop chat")
    w.chat.open_session(sid)
    driver.until(lambda: w.session_id == sid)
    # Within the offscreen screen (800 px wide): restoreGeometry keeps a window on it.
    laptop_width, desktop_width = 760, 700
    w.resize(laptop_width, 560)
    driver.until(lambda: w.width() == laptop_width)
    w.splitter.setSizes([220, laptop_width - 220])
    driver.until(lambda: w.splitter.sizes()[0] == 220)
    driver.close(w)

    _on(monkeypatch, "desktop")
    w = driver.open(env)
    assert w.width() == first_width != laptop_width  # not the laptop's window
    assert w.session_id != sid
    w.chat.open_session(other)
    driver.until(lambda: w.session_id == other)
    assert w.splitter.sizes()[0] != 220
    w.resize(desktop_width, 560)
    driver.until(lambda: w.width() == desktop_width)
    driver.close(w)

    _on(monkeypatch, "laptop")
    w = driver.open(env)
    assert w.width() == laptop_width and w.session_id == sid
    assert w.splitter.sizes()[0] == 220  # its panes as it left them
    laptop_geometry = driver.run(w.store.get_state(f"{WINDOW_GEOMETRY.name}@laptop"))
    assert laptop_geometry and driver.run(w.store.get_state(f"{WINDOW_SPLITTER.name}@laptop"))
    assert driver.run(w.store.get_state(WINDOW_GEOMETRY.name)) is None  # nothing shared written
    driver.close(w)

    _on(monkeypatch, "desktop")
    w = driver.open(env)
    assert w.width() == desktop_width and w.session_id == other
    driver.close(w)


def test_a_machine_with_none_of_its_own_reads_the_shared_state_once(
        driver: Any, monkeypatch: pytest.MonkeyPatch, env: dict[str, str]) -> None:
    _on(monkeypatch, "laptop")
    w = driver.configured(env)
    sid, _ = long_chat(driver, w, 2, title="Left open by an older Parley")
    later, _ = long_chat(driver, w, 2, title="Later")
    # What a Parley before per-machine state kept, shared by every machine.
    driver.run(w.store.set_state(LAST_SESSION.name, sid))
    driver.close(w)

    _on(monkeypatch, "tablet")
    w = driver.open(env)
    assert w.session_id == sid  # its last chat, from the shared key
    driver.close(w)
    assert driver.run(_own(driver, env, LAST_SESSION.name, "tablet")) == sid
    # From now on the tablet's own value counts: the shared key no longer moves it.
    _on(monkeypatch, "laptop")
    w = driver.open(env)
    driver.run(w.store.set_state(LAST_SESSION.name, later))
    driver.close(w)
    _on(monkeypatch, "tablet")
    w = driver.open(env)
    assert w.session_id == sid


async def _own(driver: Any, env: dict[str, str], key: str, name: str) -> Any:
    from parley.core.store.async_store import AsyncStore

    store = await AsyncStore.open(env.get("PARLEY_DATABASE_URL") or driver.home / "sessions.db")
    try:
        return await store.get_state(f"{key}@{name}")
    finally:
        await store.close()

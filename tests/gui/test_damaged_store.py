"""The window when sessions.db turns out damaged while it is open (core.store.damage)."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import pytest

from core import paths
from core.content import TextBlock, Turn
from core.store import Store
from core.store.errors import DatabaseCorrupt
from gui import dialogs
from tests.core.damaged import damage_search_index

pytestmark = pytest.mark.timeout(60)
PAGE = 4096


@pytest.fixture
def dialogs_shown(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The texts of the problem dialogs the window opens."""
    shown: list[str] = []
    monkeypatch.setattr(dialogs, "show_problem", lambda parent, title, text: shown.append(text))
    return shown


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _set_up_then_closed(driver: Any, home: Path) -> Path:
    """A home past first-run set-up, its window closed; returns its sessions.db."""
    driver.close(driver.configured())
    return paths.db_path(home)


def test_damage_found_while_open_is_told_once_and_nothing_more_is_written(
    driver: Any, home: Path, dialogs_shown: list[str]
) -> None:
    path = _set_up_then_closed(driver, home)
    with Store.open(path) as store:
        sound = store.create_session().id
        store.append_turn(sound, Turn("user", [TextBlock("an early question")]))
        for i in range(300):
            store.append_turn(sound, Turn("user", [TextBlock(f"word{i} " * 80)]))
    damage_search_index(path)

    w = driver.open()
    with pytest.raises(DatabaseCorrupt):
        driver.run(w.store.search("word7"))  # what the search panel runs
    driver.until(lambda: dialogs_shown)
    assert "stopped saving" in dialogs_shown[0] and "start it again" in dialogs_shown[0]
    before = _digest(path)

    w.open_session(sound)
    driver.until(lambda: w.session_id == sound and w.tasks.pending == 0)
    driver.send("one more message")  # the draft save and the send are both refused
    driver.until(lambda: w.tasks.pending == 0)
    driver.until(lambda: "Not saved" in w.statusBar().currentMessage())
    assert _digest(path) == before
    assert len(dialogs_shown) == 1  # said once, not at every refused write


def test_damage_met_while_starting_says_what_to_do_then_recovery_is_offered(
    driver: Any, home: Path, dialogs_shown: list[str]
) -> None:
    path = _set_up_then_closed(driver, home)
    with Store.open(path) as store:
        long_chat = store.create_session(title="Long chat")
        for i in range(300):
            store.append_turn(long_chat.id, Turn("user", [TextBlock(f"turn {i} " + "x" * 500)]))
        store.set_state("session.last", long_chat.id)  # reopened at start
    data = bytearray(path.read_bytes())
    for start in range(len(data) - 30 * PAGE, len(data), PAGE):
        data[start : start + PAGE] = b"\x5a" * PAGE
    path.write_bytes(bytes(data))

    from gui.main_window import MainWindow

    w = MainWindow(home=home, env={})
    driver.windows.append(w)
    w.show()
    w.start_after_first_paint()
    driver.until(lambda: "start it again" in w.loading_page.text() and w.tasks.pending == 0)
    assert w.stack.currentWidget() is w.loading_page and w.store is None
    assert "found damaged while Parley was using it" in w.loading_page.text()
    assert len(dialogs_shown) <= 1
    driver.close(w)

    again = MainWindow(home=home, env={})
    driver.windows.append(again)
    again.show()
    again.start_after_first_paint()
    driver.until(lambda: again.recovery_page is not None)  # restore a backup / start anew
    assert path.exists()  # nothing moved until the person chooses

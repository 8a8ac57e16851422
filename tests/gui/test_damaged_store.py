"""The window when sessions.db is damaged: one recovery page, at start or while in use.

Real files throughout: the damage is garbage written over pages through a file
handle of its own (as ``dd conv=notrunc`` does), the backups are the window's
own automatic ones, salvage reads the damaged file with SQLite.
"""

from __future__ import annotations

import logging
import time
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt

from parley.core.content import TextBlock, Turn
from parley.core.store import Store
from parley.core.store.errors import DatabaseCorrupt
from parley.core.store.sqlite import backups
from parley.core.store.sqlite.kept import WRITTEN_OVER
from parley.gui import dialogs
from parley.gui.database.recovery_page import AT_START, FOUND_WHILE_RUNNING, WHILE_RUNNING
from parley.gui.startup.phases import WHOLE_CHECK_ENV
from tests.core.damaged import damage_search_index, overwrite_pages, pages_of
from tests.gui.damage import (
    made_chat,
    set_up_then_closed,
    start_window,
    stored_long_chat,
    successor_of,
)

pytestmark = pytest.mark.timeout(90)
LEFT = Qt.MouseButton.LeftButton


@pytest.fixture
def dialogs_shown(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The texts of the problem dialogs the window opens."""
    shown: list[str] = []
    monkeypatch.setattr(dialogs, "show_problem", lambda parent, title, text: shown.append(text))
    return shown


def _all_turns(path: Path) -> dict[str, list[Turn]]:
    with Store.open(path) as store:
        return {s.id: store.get_turns(s.id) for s in store.list_sessions(include_archived=True)}


def test_damage_found_while_open_goes_straight_to_the_recovery_page(
    driver: Any, home: Path, dialogs_shown: list[str]
) -> None:
    path = set_up_then_closed(driver, home)
    with Store.open(path, watch_closed=True) as store:  # as the app left it
        sound = store.create_session().id
        store.append_turn(sound, Turn("user", [TextBlock("an early question")]))
        for i in range(300):
            store.append_turn(sound, Turn("user", [TextBlock(f"word{i} " * 80)]))
    damage_search_index(path)

    w = driver.open(env={WHOLE_CHECK_ENV: "0"})  # the check at start left out: a read meets it
    with pytest.raises(DatabaseCorrupt):
        driver.run(w.store.search("word7"))  # what the search panel runs
    driver.until(lambda: w.recovery_page is not None and w.recovery_page.isVisible(), 20)
    assert w.recovery_page.message.text().startswith(WHILE_RUNNING)  # and where it was kept
    heading = w.recovery_page.heading  # a title first
    assert heading.isVisible() and heading.text() == "Your chats file is damaged"
    assert heading.y() < w.recovery_page.message.y()
    assert w.store is None and not w.composer_bar.isEnabled()  # nothing more is written
    assert dialogs_shown == []  # the page says it, once


def test_pages_overwritten_while_open_are_caught_before_the_next_save_and_recovered(
    driver: Any, home: Path, dialogs_shown: list[str], caplog: pytest.LogCaptureFixture
) -> None:
    path = set_up_then_closed(driver, home)
    stored_long_chat(path, 200)
    w = driver.open()
    made = driver.run(w.backups.backup_now(), timeout=20)  # the automatic backup's way
    assert made is not None and made.turns == 200
    time.sleep(0.02)  # file times tick every few ms
    overwrite_pages(path, pages_of(path, "turns")[20:26])  # another program, in place

    driver.send("typed after the damage")
    driver.until(lambda: w.recovery_page is not None and w.recovery_page.isVisible(), 20)
    page = w.recovery_page
    assert page.message.text().startswith(FOUND_WHILE_RUNNING.format(why=WRITTEN_OVER))
    assert dialogs_shown == []
    for name in (path.name, path.name + "-wal"):  # the message was never saved
        assert b"typed after the damage" not in (path.parent / name).read_bytes() \
            if (path.parent / name).exists() else True

    driver.qtbot.mouseClick(page.salvage_button, LEFT)  # salvage, merged with the backup
    new = successor_of(driver, w)
    assert "Salvaged 200 messages in 1 chat" in new.toast.message
    turns = driver.run(new.store.get_turns(made_chat(new, driver)))
    assert [t.text().split()[:2] for t in turns] == [["turn", str(i)] for i in range(200)]
    assert new.composer.text() == "typed after the damage"  # back in the box, not saved
    aside = [p for p in home.iterdir()
             if ".corrupt-" in p.name and not p.name.endswith(("-wal", "-shm"))]
    assert len(aside) == 1  # the damaged file is kept
    driver.until(lambda: w.workspace.stage.name == "CLOSED", 20)  # the window it replaced
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING
            and "clean exit" in r.getMessage()] == []  # not written into the closed file


def test_a_file_damaged_while_closed_reaches_the_page_on_the_first_start(
    driver: Any, home: Path, dialogs_shown: list[str]
) -> None:
    path = set_up_then_closed(driver, home)
    other = stored_long_chat(path, 150, title="Other chat")
    sid = stored_long_chat(path)  # reopened at start; the damage is in the other chat only
    time.sleep(0.02)
    overwrite_pages(path, pages_of(path, "turns")[5:9])

    w = start_window(driver, home)
    driver.until(lambda: w.recovery_page is not None and w.recovery_page.isVisible(), 30)
    page = w.recovery_page
    assert page.message.text() == AT_START
    assert "while Parley was using it" not in page.message.text()
    assert path.exists() and dialogs_shown == []  # nothing moved until the person chooses
    assert page.salvage_button.isEnabled() and page.fresh_button.isEnabled()
    # The only backup is the one made when set-up was quit: before the chats existed.
    assert ["0 messages in 0 chats" in b.accessibleName() for b in page.restore_buttons] == [True]
    # damaged while closed: nothing was kept, a restore brings the backup alone
    assert [line.text().endswith("0 messages in 0 chats") for line in page.backup_lines] == [True]

    driver.qtbot.mouseClick(page.salvage_button, LEFT)
    if w.chat is not None:
        w = successor_of(driver, w)
    else:
        driver.until(lambda: w.ready and w.tasks.pending == 0, 40)
    assert "Salvaged" in w.toast.message and "kept as" in w.toast.message
    assert len(driver.run(w.store.get_turns(sid))) == 300
    kept = driver.run(w.store.get_turns(other))
    assert 100 < len(kept) < 150  # what was on the damaged pages is lost, the rest is back
    assert all(t.text().startswith(f"turn {t.text().split()[1]} ") for t in kept)
    newest = backups.list_backups(path)[0]  # what was salvaged is in a backup at once
    assert newest.turns == 300 + len(kept)


@pytest.mark.parametrize("where", ["turns", "first page"])
def test_a_backup_made_while_in_use_restores_every_turn_in_one_click(
    driver: Any, home: Path, dialogs_shown: list[str], where: str
) -> None:
    w = driver.configured()
    for text in ("first question", "second question", "third question"):
        driver.send(text, wait=True)
    path = w.store.path
    driver.close(w)  # quitting makes a backup (something changed since the last)
    before = _all_turns(path)
    assert sum(len(t) for t in before.values()) == 6

    (sid,) = before
    with Store.open(path) as store:
        store.set_state("session.last", sid)
    # The chat reopened at start; or the header (not even SQLite any more).
    overwrite_pages(path, pages_of(path, "turns") if where == "turns" else [1])
    w = start_window(driver, home)
    driver.until(lambda: w.recovery_page is not None and w.recovery_page.isVisible(), 30)
    page = w.recovery_page
    assert page.restore_buttons and page.restore_buttons[0].isEnabled()
    assert "6 messages in 1 chat" in page.restore_buttons[0].accessibleName()

    driver.qtbot.mouseClick(page.restore_buttons[0], LEFT)
    if w.chat is not None:
        w = successor_of(driver, w)
    else:
        driver.until(lambda: w.ready and w.tasks.pending == 0, 30)
    assert "was restored" in w.toast.message and "kept as" in w.toast.message
    after = {s: driver.run(w.store.get_turns(s)) for s in before}
    assert after == before  # every turn, equal

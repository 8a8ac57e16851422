"""A sessions.db damaged before Parley opened it (fresh-user trial, finding A).

The trial overwrote pages in the middle of a closed file, then started Parley: the
damage was found only when a search reached it, the recovery page said the file was
damaged "while Parley was using it" and that "the backup fills in" what was lost
though there was no backup, the search popup stayed over the page, and the toast after
the salvage did not say how many messages could not be saved.

Real files: garbage written over pages in place (``dd conv=notrunc``), no record of a
clean close (a file Parley never closed: copied in, or left by a crash), no backups.
"""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt

from parley.core.content import TextBlock, Turn
from parley.core.store import Store
from parley.core.store.sqlite.overwrite import closed_record
from parley.gui import dialogs
from parley.gui.database.recovery_page import FOUND_BY_CHECK, WHILE_RUNNING
from parley.gui.dialogs.search import open_search
from parley.gui.startup.phases import WHOLE_CHECK_ENV
from tests.core.damaged import damage_search_index, overwrite_pages, pages_of
from tests.gui.damage import set_up_then_closed, start_window, stored_long_chat

pytestmark = pytest.mark.timeout(90)
LEFT = Qt.MouseButton.LeftButton


@pytest.fixture
def dialogs_shown(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    shown: list[str] = []
    monkeypatch.setattr(dialogs, "show_problem", lambda parent, title, text: shown.append(text))
    return shown


def _closed_without_record(driver: Any, home: Path) -> Path:
    """A set-up home whose sessions.db has no record of a clean close and no backups."""
    path = set_up_then_closed(driver, home)
    shutil.rmtree(home / "backups", ignore_errors=True)
    closed_record(path).unlink(missing_ok=True)
    return path


def _count(path: Path, sql: str) -> int:
    con = sqlite3.connect(path)
    try:
        return int(con.execute(sql).fetchone()[0])
    finally:
        con.close()


def test_damage_done_while_closed_is_found_at_start_and_told_truly(
    driver: Any, home: Path, dialogs_shown: list[str]
) -> None:
    path = _closed_without_record(driver, home)
    stored_long_chat(path, 150, title="Other chat")
    sid = stored_long_chat(path)  # reopened at start; the damage is in the other chat
    total = _count(path, "SELECT count(*) FROM turns")
    overwrite_pages(path, pages_of(path, "turns")[5:9])

    w = start_window(driver, home)  # no search, no read of the damaged chat
    driver.until(lambda: w.recovery_page is not None and w.recovery_page.isVisible(), 30)
    page = w.recovery_page
    said = page.message.text()
    assert said.startswith(FOUND_BY_CHECK)
    assert "while Parley was using it" not in said and dialogs_shown == []
    assert page.restore_buttons == []
    whole = " ".join(label.text() for label in page.findChildren(type(page.message)))
    assert "backup fills in" not in whole and "No backups found" in whole

    driver.qtbot.mouseClick(page.salvage_button, LEFT)
    if w.chat is not None:
        driver.until(lambda: w.successor is not None, 30)
        new = w.successor
        driver.windows.remove(w)
        driver.windows.append(new)
        w = new
    driver.until(lambda: w.ready and w.tasks.pending == 0, 40)
    kept = _count(path, "SELECT count(*) FROM turns")
    assert 300 <= kept < total
    assert f"{total - kept} messages could not be saved" in w.toast.message
    assert "there was no backup" in w.toast.message
    assert len(driver.run(w.store.get_turns(sid))) == 300


def test_damage_a_search_meets_closes_the_popup_and_does_not_say_when_it_was_done(
    driver: Any, home: Path, dialogs_shown: list[str]
) -> None:
    path = _closed_without_record(driver, home)
    with Store.open(path) as store:
        chat = store.create_session().id
        for i in range(300):
            store.append_turn(chat, Turn("user", [TextBlock(f"word{i} " * 80)]))
    damage_search_index(path)  # the file's times kept: nothing says it was written

    w = driver.open(env={WHOLE_CHECK_ENV: "0"})  # the check left out: the search meets it
    assert open_search(w, w)
    popup = w.search_popup
    driver.qtbot.keyClicks(popup.edit, "word7")
    driver.until(lambda: w.recovery_page is not None and w.recovery_page.isVisible(), 20)
    assert not popup.isVisible()  # nothing of the chats stays over the page
    said = w.recovery_page.message.text()
    assert said.startswith(WHILE_RUNNING)
    assert "damaged while Parley was using it" not in said
    assert dialogs_shown == []

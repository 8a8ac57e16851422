"""Salvage from the recovery page when the first page of a table is damaged (the tester's
``dd … seek=3 count=4``): it ends, and the chats come back."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt

from tests.core.damaged import overwrite_pages, pages_of
from tests.gui.damage import made_chat, set_up_then_closed, stored_long_chat, successor_of

pytestmark = pytest.mark.timeout(90)


def test_salvage_with_the_settings_tables_first_pages_damaged_ends_with_every_chat(
    driver: Any, home: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    from parley.gui import dialogs

    monkeypatch.setattr(dialogs, "show_problem", lambda *a: None)
    path = set_up_then_closed(driver, home)
    stored_long_chat(path, 120)
    w = driver.open()
    time.sleep(0.02)  # file times tick every few ms
    hit = pages_of(path, "settings") + pages_of(path, "app_state")
    assert hit and max(hit) < min(pages_of(path, "turns"))
    overwrite_pages(path, hit)

    driver.send("typed after the damage")
    driver.until(lambda: w.recovery_page is not None and w.recovery_page.isVisible(), 20)
    page = w.recovery_page
    driver.qtbot.mouseClick(page.salvage_button, Qt.MouseButton.LeftButton)
    assert page.stop_button.isVisible()
    new = successor_of(driver, w)  # before the fix: "Salvaging…" for ever
    assert "Salvaged 120 messages in 1 chat" in new.toast.message
    assert len(driver.run(new.store.get_turns(made_chat(new, driver)))) == 120


def test_backups_made_in_the_same_minute_are_listed_apart(driver: Any, home: Path) -> None:
    from parley.core.store.sqlite import backups as B
    from tests.gui.damage import start_window

    path = set_up_then_closed(driver, home)
    stored_long_chat(path, 10)
    time.sleep(1.1)  # after the backup made when set-up was quit
    B.make_backup(path)
    time.sleep(1.1)  # the next second (backups made at most every 30 min: here by hand)
    stored_long_chat(path, 12, title="Second chat")
    B.make_backup(path)
    overwrite_pages(path, [1])  # not even SQLite any more
    w = start_window(driver, home)
    driver.until(lambda: w.recovery_page is not None and w.recovery_page.isVisible(), 30)
    names = [b.accessibleName() for b in w.recovery_page.restore_buttons]
    when = [n.split(" — ")[0] for n in names]
    assert len(set(when)) == len(when), names  # none reads like another

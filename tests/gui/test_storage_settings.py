"""Settings → Storage follows its address field (issue 35, item 4).

With the field empty the database buttons are off; a mistyped address keeps them off
and the page says what is wrong in its own words (no command-line flag); a usable
address turns them on. "Use sessions.db" while the chats are already there says so and
writes nothing.
"""

from __future__ import annotations

from typing import Any

import pytest
from PySide6.QtCore import Qt

from parley.core.store.backends import CHOICE_FILE
from tests.gui.helpers import show_section

pytestmark = pytest.mark.timeout(60)


def _storage(driver: Any, window: Any) -> Any:
    from parley.gui.settings.dialog import SettingsDialog

    dialog = SettingsDialog(window.store, window.hub, window)
    dialog.show()
    driver.until(lambda: dialog.ready, 10)
    show_section(dialog, "Storage")
    return dialog


def _database_buttons(page: Any) -> list[bool]:
    return [b.isEnabled() for b in (page.test_button, page.use_button, page.copy_button)]


def test_the_buttons_follow_the_address_field(driver):
    window = driver.open()
    dialog = _storage(driver, window)
    page = dialog.storage
    assert page.url.text() == ""
    assert _database_buttons(page) == [False, False, False]
    assert page.file_button.isEnabled()

    driver.qtbot.keyClicks(page.url, "mysql://me@db.example/parley")
    assert _database_buttons(page) == [False, False, False]
    said = page.status.text()
    assert said.startswith("This is not a PostgreSQL database address: it starts with")
    assert "Use sessions.db" in said and "--" not in said

    page.url.clear()
    driver.qtbot.keyClicks(page.url, "postgresql://me@db.example:5432/parley")
    assert _database_buttons(page) == [True, True, True]
    assert page.status.text() == ""  # the complaint went with the mistake

    page.url.selectAll()
    driver.qtbot.keyClick(page.url, Qt.Key.Key_Delete)
    assert _database_buttons(page) == [False, False, False]
    dialog.close()


def test_use_sessions_db_while_on_it_says_so_and_changes_nothing(driver, home):
    window = driver.open()
    dialog = _storage(driver, window)
    page = dialog.storage
    driver.qtbot.mouseClick(page.file_button, Qt.MouseButton.LeftButton)
    driver.until(lambda: "already in sessions.db" in page.status.text())
    assert "Nothing was changed." in page.status.text()
    assert "next start" not in page.status.text()
    assert not (home / CHOICE_FILE).exists()
    dialog.close()


def test_use_sessions_db_after_choosing_a_database_forgets_the_choice(driver, home):
    from parley.core.store.backends import save_database_choice

    window = driver.open()
    save_database_choice(home, "postgresql://me@db.example:5432/parley")
    dialog = _storage(driver, window)
    page = dialog.storage
    assert page.url.text() == "postgresql://me@db.example:5432/parley"
    assert _database_buttons(page) == [True, True, True]
    driver.qtbot.mouseClick(page.file_button, Qt.MouseButton.LeftButton)
    driver.until(lambda: "not used at the next start" in page.status.text())
    assert not (home / CHOICE_FILE).exists()
    assert page.url.text() == "" and _database_buttons(page) == [False, False, False]
    dialog.close()

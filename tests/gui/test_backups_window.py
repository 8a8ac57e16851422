"""Automatic backups as the window makes them, and the Settings page that shows them."""

from __future__ import annotations

import stat
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt

from parley.core.store.sqlite import backups as B
from tests.gui.helpers import show_section

pytestmark = pytest.mark.timeout(90)


def test_settings_show_where_backups_are_and_back_up_now(driver: Any, home: Path) -> None:
    w = driver.configured()
    driver.send("a question worth keeping", wait=True)
    dlg = w.window_commands.open_settings()
    driver.until(lambda: dlg.ready and dlg.tasks.pending == 0, 10)
    show_section(dlg, "Backups")
    info = dlg.backups_info
    assert str(home / "backups") in info.where.text()
    assert "backups.interval_minutes" in dlg.editors
    assert dlg.editors["backups.interval_minutes"].isVisible()

    driver.qtbot.mouseClick(info.now_button, Qt.MouseButton.LeftButton)
    driver.until(lambda: "Last backup: today" in info.last.text() and dlg.tasks.pending == 0,
                 20)
    assert "(2 messages in 1 chat)" in info.last.text()
    (made,) = B.automatic_backups(home / "backups")
    assert stat.S_IMODE(made.path.stat().st_mode) == 0o600
    dlg.close()


def test_quitting_after_a_change_leaves_a_backup_and_an_unchanged_quit_none(
    driver: Any, home: Path
) -> None:
    w = driver.configured()
    driver.send("one", wait=True)
    driver.close(w)
    first = B.automatic_backups(home / "backups")
    assert [B.describe(b).turns for b in first] == [2]
    w = driver.open()
    driver.close(w)  # opened and closed: nothing changed, no new backup
    assert B.automatic_backups(home / "backups") == first

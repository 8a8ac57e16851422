"""What was saved elsewhere is found again at the next start (real windows, real files):
a rescue copy saved on quitting with a reply not saved (the disk full) is offered back and
merged once; a missing sessions.db with a backup and a rescue copy is said, with both
offered for Restore, instead of an empty Parley."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMessageBox

from parley.core.content import TextBlock, Turn
from parley.core.recovery import rescued
from parley.core.store import Store
from parley.core.store.sqlite import backups
from parley.gui.database.rescued_offer import TITLE
from tests.core.faults import BIG
from tests.gui.disk_full import answer_question, disk_full_reply, saving_window

pytestmark = pytest.mark.timeout(120)


def _start(driver: Any) -> Any:
    """A window started on the test's home, not waited for (a question or a page may wait)."""
    from parley.gui.main_window import MainWindow

    w = MainWindow(home=driver.home, env={"ANTHROPIC_API_KEY": "sk-ant-test",
                                          "ANTHROPIC_BASE_URL": driver.fake.anthropic_base_url})
    driver.windows.append(w)
    w.show()
    w.startup.start_after_first_paint()
    return w


def _box(w: Any) -> QMessageBox | None:
    found = [b for b in w.findChildren(QMessageBox) if b.isVisible() and b.windowTitle() == TITLE]
    return found[0] if found else None


def _replies(db: Path, sid: str, turn_id: str) -> list[tuple[str, bool]]:
    with Store.open(db) as store:
        return [(t.text(), t.aborted) for t in store.get_turns(sid) if t.id == turn_id]


def test_a_rescue_copy_saved_on_quit_is_offered_at_the_next_start_and_merged_once(
    driver: Any, tmp_path: Path
) -> None:
    w = saving_window(driver)
    reply = disk_full_reply(driver, w)
    sid, db = w.chat.session_id, w.store.path
    copy = tmp_path / "other disk" / "rescued.db"
    copy.parent.mkdir()
    w.qactions["app.quit"].trigger()
    answer_question(driver, w, "Save a rescue copy…", save_as=copy)
    driver.until(lambda: w.quitting.closed, timeout=15)
    assert [c.path for c in rescued.found(db)] == [copy.resolve()]  # recorded
    assert (BIG, False) not in _replies(db, sid, reply.id)  # sessions.db lacks it

    again = _start(driver)
    driver.until(lambda: _box(again) is not None, timeout=40)
    box = _box(again)
    assert box is not None
    assert str(copy) in box.text() and "as Parley quit" in box.text()
    assert ("It holds 1 message that sessions.db does not have" in box.text()
            or "the whole of 1 reply cut off there" in box.text())
    next(b for b in box.buttons() if b.text() == "Bring them back").click()
    driver.until(lambda: _replies(db, sid, reply.id) == [(BIG, False)], timeout=20)
    driver.until(lambda: "Brought back from the rescue copy" in again.toast.message)
    if again.chat.session_id == sid:  # the open chat shows it whole
        driver.until(lambda: driver.last_text(again) == BIG)
    driver.close(again)

    third = driver.open()  # waits for no pending work: no question this time
    assert _box(third) is None and rescued.found(db) == []
    assert _replies(db, sid, reply.id) == [(BIG, False)]  # once


def test_a_missing_sessions_db_points_to_its_backup_and_rescue_copy(
    driver: Any, tmp_path: Path
) -> None:
    w = driver.open()
    db = w.store.path
    sid = driver.run(w.store.create_session(title="kept chat")).id
    driver.run(w.store.append_turn(sid, Turn("user", [TextBlock("a message to keep")])))
    driver.close(w)  # quitting made a backup
    [backup] = backups.list_backups(db)
    copy = tmp_path / "elsewhere.db"
    shutil.copy(backup.path, copy)
    rescued.record(db, copy, "moved")
    for p in db.parent.iterdir():
        if p.name.startswith(db.name):
            p.unlink()  # deleted while Parley was closed

    again = _start(driver)
    driver.until(lambda: getattr(again, "missing_page", None) is not None, timeout=40)
    page = again.missing_page
    assert page.heading.text() == "Your chats file is missing" and page.heading.isVisible()
    assert "sessions.db is not in" in page.message.text()
    assert [k for k, _p in page.rows] == ["Rescue copy", "Backup"]
    assert [p for _k, p in page.rows] == [copy.resolve(), backup.path]
    assert not db.exists()  # no empty file was made meanwhile
    driver.qtbot.mouseClick(page.restore_buttons[1], Qt.MouseButton.LeftButton)
    driver.until(lambda: again.ready and again.tasks.pending == 0, timeout=40)
    assert "Restored the backup" in again.toast.message
    with Store.open(db) as store:
        assert [t.text() for t in store.get_turns(sid)] == ["a message to keep"]
    assert _box(again) is None  # the rescue copy holds nothing more: not asked about

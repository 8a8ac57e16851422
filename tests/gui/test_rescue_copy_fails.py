"""Quitting with a reply the full disk refused: a rescue copy that cannot be saved says so in
the question, and the Save dialog starts away from the data folder's disk."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtWidgets import QFileDialog

from parley.core.store import Store
from parley.gui.database import rescue
from tests.gui.disk_full import BIG, answer_question, disk_full_reply, question_box, saving_window

pytestmark = pytest.mark.timeout(90)


def test_a_rescue_copy_that_fails_is_told_in_the_question_then_another_place_works(
    driver, problems, tmp_path: Path
):
    w = saving_window(driver)
    reply = disk_full_reply(driver, w)
    sid = w.chat.session_id
    w.qactions["app.quit"].trigger()

    answer_question(driver, w, "Save a rescue copy…")  # no answer queued: the real Save dialog
    driver.until(lambda: any(d.isVisible() for d in w.findChildren(QFileDialog)))
    dlg = next(d for d in w.findChildren(QFileDialog) if d.isVisible())
    start = Path(dlg.directory().absolutePath())
    assert start == rescue.elsewhere(w.store.path) and start != w.store.path.parent
    dlg.reject()  # cancelled: asked again

    blocked = tmp_path / "a-file"
    blocked.write_text("in the way")
    text = answer_question(driver, w, "Save a rescue copy…", save_as=blocked / "copy.db")
    assert "The rescue copy was not saved" not in text  # nothing failed yet
    driver.until(lambda: question_box(w) is not None, timeout=10)
    again = question_box(w).text()
    assert again.startswith("The rescue copy was not saved.")
    assert str(blocked / "copy.db") in again and "another disk" in again
    assert problems == []  # in the question, not a dialog behind it

    good = tmp_path / "elsewhere.db"
    answer_question(driver, w, "Save a rescue copy…", save_as=good)
    driver.until(lambda: w.quitting.closed and not w.isVisible(), timeout=15)
    with Store.open(good) as rescued:
        last = rescued.get_turns(sid)[-1]
        assert (last.id, last.text()) == (reply.id, BIG)

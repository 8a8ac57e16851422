"""Problems are told in one dialog at a time (issue 35, item 5).

Three bad imports in a row used to leave three non-modal "Parley" boxes open and
Return went to the message box. Now: one box, modal to the window, listing the
three; Return closes it and nothing was typed into the message box.
"""

from __future__ import annotations

from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QMessageBox

from parley.gui.dialogs import export_dialog
from parley.gui.dialogs.problem_box import ProblemBox

pytestmark = pytest.mark.timeout(60)


@pytest.fixture(autouse=True)
def _no_scripted_files():
    yield
    export_dialog.answers.clear()


def _boxes(w: Any) -> list[QMessageBox]:
    return [b for b in w.findChildren(QMessageBox) if b.isVisible()]


def test_three_bad_imports_make_one_modal_dialog_that_return_closes(driver, tmp_path, qtbot):
    w = driver.configured()
    names = ["first.json", "second.json", "third.json"]
    for name in names:
        bad = tmp_path / name
        bad.write_text("this is not a chat history {", encoding="utf-8")
        export_dialog.answers.append(bad)
        assert w.window_commands.import_conversation() is True
        driver.until(lambda: w.tasks.pending == 0 and w.import_progress is None, timeout=15)
    driver.until(lambda: len(_boxes(w)) == 1
                 and len(getattr(_boxes(w)[0], "problems", ())) == 3)
    qtbot.wait(100)
    boxes = _boxes(w)
    assert len(boxes) == 1, [b.text() for b in boxes]
    box = boxes[0]
    assert isinstance(box, ProblemBox)
    text = box.text()
    assert text.startswith("3 problems:")
    assert all(name in text for name in names), text
    assert box.windowModality() == Qt.WindowModality.WindowModal
    driver.until(lambda: QApplication.activeModalWidget() is box)

    # Return goes to the box (its OK button), not to the message box under it.
    w.composer.setPlainText("")
    focused = QApplication.focusWidget() or box
    assert focused is box or box.isAncestorOf(focused), focused
    qtbot.keyClick(focused, Qt.Key.Key_Return)
    driver.until(lambda: not _boxes(w))
    assert w.composer.toPlainText() == ""
    assert not w.chat.turns  # nothing was sent


def test_a_problem_after_the_box_was_closed_opens_a_new_one(driver, qtbot):
    w = driver.configured()
    from parley.core.errors import ParleyError

    w.show_problem(ParleyError("The first thing went wrong."))
    w.show_problem(ParleyError("The first thing went wrong."))  # the same again: listed once
    (box,) = _boxes(w)
    assert box.text() == "The first thing went wrong."
    qtbot.keyClick(box, Qt.Key.Key_Escape)
    driver.until(lambda: not _boxes(w))
    w.show_problem(ParleyError("Another thing went wrong."))
    driver.until(lambda: len(_boxes(w)) == 1)
    assert _boxes(w)[0].text() == "Another thing went wrong."

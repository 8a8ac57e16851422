"""The screenshots of issue 35's cosmetic fixes, light and dark, from the real window
(offscreen): the buttons over a message that called a tool, "↓ Latest" in its strip, the
check boxes of Settings, the file dialog's toolbar. Not part of the test run (the file
name is not test_*); run it by name::

    QT_QPA_PLATFORM=offscreen .venv/bin/python -m pytest -q tests/gui/screenshot_newcomer.py

Files: ``resources/screenshots/newcomer-<what>-<scheme>.png``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QPoint, QRect
from PySide6.QtWidgets import QApplication, QFileDialog

from parley.gui.look import appearance
from tests.gui.chats import long_chat, tool_chat
from tests.gui.helpers import hover, show_section

OUT = Path(__file__).resolve().parents[2] / "resources" / "screenshots"


@pytest.mark.usefixtures("restore_look")
def test_shots(driver: Any, qapp: QApplication) -> None:
    w = driver.configured()
    w.resize(900, 640)
    for scheme in ("light", "dark"):
        appearance.apply(qapp, getattr(appearance, scheme.upper()))
        shoot(driver, w, scheme)


def shoot(driver: Any, w: Any, scheme: str) -> None:
    """The four pictures in ``scheme``."""
    tool_chat(driver, w)
    lv = w.transcript.list_view
    for key in lv.layout_of(1).fold_keys():
        w.transcript.toggle_fold(1, key)
    layout = lv.layout_of(1, fresh=True)
    driver.until(lambda: lv.visualRect(lv.model().index(1, 0)).height() >= layout.height)
    hover(driver, w, 1)
    driver.qtbot.wait(200)
    tp = w.transcript.mapTo(w, QPoint(0, 0))
    w.grab(QRect(tp, w.transcript.size())).save(f"{OUT}/newcomer-buttons-{scheme}.png")

    sid, _ = long_chat(driver, w, 60, title="Long chat")
    w.chat.open_session(sid)
    driver.until(lambda: w.session_id == sid and lv.verticalScrollBar().maximum() > 0)
    lv.verticalScrollBar().setValue(lv.verticalScrollBar().maximum() // 2)
    driver.until(lambda: w.transcript.jump_button.isVisible())
    driver.qtbot.wait(200)
    w.grab(QRect(tp, w.transcript.size())).save(f"{OUT}/newcomer-latest-{scheme}.png")

    d = w.window_commands.open_settings()
    driver.until(lambda: d.ready and d.tasks.pending == 0)
    show_section(d, "Experimental")
    driver.qtbot.wait(200)
    d.grab().save(f"{OUT}/newcomer-checkboxes-{scheme}.png")
    d.close()

    dlg = QFileDialog(w, "Attach files", str(driver.home))
    dlg.setOption(QFileDialog.Option.DontUseNativeDialog)
    dlg.resize(700, 420)
    dlg.show()
    QApplication.processEvents()
    driver.qtbot.wait(200)
    dlg.grab().save(f"{OUT}/newcomer-file-dialog-{scheme}.png")
    dlg.close()

"""What a newcomer saw wrong (issue 35, item 6), each in the real window or dialog:

* the buttons over a message sat on a tool's output: now they go to the message's top
  right when its bottom right holds a box, a code block or text, and stay at the bottom
  right when that is free;
* "↓ Latest" covered the end of a message line: now the list keeps a strip under its
  rows for the button while it shows, and gives it back at the bottom;
* unticked check boxes all but vanished in the dark theme: the box is drawn with a
  border in the muted colour, ticked in the accent;
* the file dialog's toolbar buttons were blank: the dialogs' text-button padding left
  their icons no room.
"""

from __future__ import annotations

from typing import Any

import pytest
from PySide6.QtCore import QRect
from PySide6.QtGui import QColor, QImage
from PySide6.QtWidgets import QApplication, QCheckBox, QFileDialog, QToolButton

from parley.gui.look import appearance
from parley.gui.transcript.actions_row import covers
from tests.gui.chats import long_chat, tool_chat
from tests.gui.helpers import hover, show_section

pytestmark = pytest.mark.timeout(90)


def test_the_buttons_over_a_message_leave_a_tools_output_clear(driver: Any) -> None:
    w = driver.configured()
    w.resize(900, 700)
    tool_chat(driver, w)
    lv = w.transcript.list_view
    row = 1  # the reply that called the tool, its output shown under the call
    for key in lv.layout_of(row).fold_keys():
        w.transcript.toggle_fold(row, key)
    layout = lv.layout_of(row, fresh=True)
    assert layout.code_boxes  # the input and output, unfolded
    driver.until(lambda: lv.visualRect(lv.model().index(row, 0)).height() >= layout.height)
    bar, rect = hover(driver, w, row)
    box = bar.geometry().translated(-rect.topLeft())
    bottom_right = QRect(box.x(), rect.height() - box.height() - 4, box.width(), box.height())
    assert covers(layout, bottom_right)  # where the buttons used to sit: on the output
    assert not covers(layout, box)
    assert not any(code.intersects(box) for code, _bar in layout.code_boxes)
    assert box.top() < layout.code_boxes[0][0].top()  # at the top right, over no box

    last = lv.model().rowCount() - 1  # a short reply: its bottom right is free
    bar, rect = hover(driver, w, last)
    assert bar.geometry().bottom() > rect.center().y()
    assert not covers(lv.layout_of(last), bar.geometry().translated(-rect.topLeft()))


def test_latest_sits_in_a_strip_of_its_own_and_covers_no_line(driver: Any) -> None:
    w = driver.configured()
    w.resize(900, 700)
    sid, _ = long_chat(driver, w, 80)
    w.chat.open_session(sid)
    driver.until(lambda: w.session_id == sid and bool(w.chat.turns))
    lv = w.transcript.list_view
    button = w.transcript.jump_button
    driver.until(lambda: lv.verticalScrollBar().maximum() > 0)
    w.transcript.jump_to_latest()
    driver.until(lambda: not button.isVisible())
    assert lv.viewportMargins().bottom() == 0

    lv.verticalScrollBar().setValue(lv.verticalScrollBar().maximum() // 2)
    driver.until(lambda: button.isVisible())
    viewport = lv.viewport().geometry()
    assert lv.viewportMargins().bottom() >= button.height()
    assert button.geometry().top() > viewport.bottom()  # under the rows, not over them
    assert not button.geometry().intersects(viewport)

    button.click()
    driver.until(lambda: not button.isVisible(), timeout=10)
    assert lv.viewportMargins().bottom() == 0  # the room is given back at the end


def contrast_pixels(image: QImage, area: QRect, background: QColor) -> int:
    """Pixels of ``area`` at least 40 (of 255) from ``background`` in some channel."""
    count = 0
    for y in range(area.top(), area.bottom() + 1):
        for x in range(area.left(), area.right() + 1):
            c = image.pixelColor(x, y)
            if max(abs(c.red() - background.red()), abs(c.green() - background.green()),
                   abs(c.blue() - background.blue())) >= 40:
                count += 1
    return count


def test_an_unticked_box_shows_in_the_dark_theme(
    driver: Any, qapp: QApplication, restore_look: None
) -> None:
    w = driver.configured()
    appearance.apply(qapp, appearance.DARK)
    dialog = w.window_commands.open_settings()
    driver.until(lambda: dialog.ready and dialog.tasks.pending == 0)
    show_section(dialog, "Experimental")
    box = next(b for b in dialog.findChildren(QCheckBox) if b.isVisible())
    box.setChecked(False)
    QApplication.processEvents()
    image = box.grab().toImage()
    base = QColor(appearance.DARK.base)
    indicator = QRect(0, 0, 24, box.height())  # the box, left of its words
    assert contrast_pixels(image, indicator, base) >= 30  # its border, all round
    box.setChecked(True)
    QApplication.processEvents()
    ticked = box.grab().toImage()
    accent = QColor(appearance.DARK.accent)
    assert any(ticked.pixelColor(x, y) == accent for x in range(24)
               for y in range(box.height()))
    dialog.close()


@pytest.mark.parametrize("scheme", ["LIGHT", "DARK"])
def test_the_file_dialogs_toolbar_shows_its_icons(
    driver: Any, qapp: QApplication, restore_look: None, scheme: str
) -> None:
    w = driver.configured()
    appearance.apply(qapp, getattr(appearance, scheme))
    dlg = QFileDialog(w, "Attach files", str(driver.home))
    dlg.setOption(QFileDialog.Option.DontUseNativeDialog)
    dlg.resize(700, 450)
    dlg.show()
    QApplication.processEvents()
    names = ("toParentButton", "newFolderButton", "listModeButton", "detailModeButton")
    for name in ("backButton", "forwardButton", *names):  # back, forward: disabled here
        button = dlg.findChild(QToolButton, name)
        assert button is not None and not button.icon().isNull(), name
    for name in names:
        button = dlg.findChild(QToolButton, name)
        image = button.grab().toImage()
        middle = QRect(image.width() // 2 - 4, image.height() // 2 - 4, 8, 8)
        background = image.pixelColor(2, 2)
        assert contrast_pixels(image, middle, background) > 0, f"{name} is blank"
    dlg.close()


def test_the_set_up_panels_box_shows_in_the_dark_theme(
    driver: Any, qapp: QApplication, restore_look: None
) -> None:
    w = driver.open()  # first start: the set-up panel
    appearance.apply(qapp, appearance.DARK)
    box = w.setup_panel.custom_url
    assert isinstance(box, QCheckBox) and box.isVisible() and not box.isChecked()
    QApplication.processEvents()
    image = box.grab().toImage()
    background = image.pixelColor(image.width() - 2, 1)  # the panel behind it
    assert contrast_pixels(image, QRect(0, 0, 24, box.height()), background) >= 30

"""A narrow window (trial 16, shot-72): it would not go below 641 px, the model's name
read "Cl….5", the chat's title was gone from the header and the message's buttons
covered "with several models…". At 520 px the header cuts the title (the space's
name and the meter's words go first), never the model's name; nothing overlaps.
Trial 17 (420 px): the sidebar kept 200 px and the chat read a few words a line; it
now steps aside below its least width plus the chat's room, and comes back."""

from __future__ import annotations

from typing import Any

import pytest
from PySide6.QtCore import QRect

from parley.gui.transcript.actions_row import INSET, covers
from parley.gui.transcript.specs import ACTION_BUTTON_PX, ACTIONS_EDGE_PX, ACTIONS_HEIGHT_PX
from tests.gui.helpers import hover

pytestmark = pytest.mark.timeout(60)

TITLE = "Garden space first chat"


def _rect(w: Any, widget: Any) -> QRect:
    return QRect(widget.mapTo(w, widget.rect().topLeft()), widget.size())


def test_a_520_px_window_keeps_the_model_the_title_and_clear_buttons(driver, qtbot):
    w = driver.configured()
    driver.send(TITLE, wait=True)
    heading, picker, meter, bar = w.chat_heading, w.model_picker, w.context_meter, w.composer_bar
    driver.until(lambda: heading.title == TITLE or bool(heading.title), timeout=10)
    w.resize(1100, 700)
    driver.until(lambda: "cache warm" in meter.label.text() or "/" in meter.label.text())
    name = picker.label_of(w.chat.current_model())
    assert picker.text() == name

    assert w.minimumSizeHint().width() <= 520
    w.resize(520, 700)
    qtbot.wait(100)
    driver.until(lambda: w.width() == 520)
    assert picker.text() == name  # the model's name whole: the title was cut instead
    title = heading.button
    assert title.isVisible() and title.width() >= 40
    shown = title.text()  # whole, or cut at its end (the sidebar steps aside at 520 px)
    assert TITLE.startswith(shown.removesuffix("…")) and len(shown) >= 4, shown
    # left to right, nothing over anything: picker, title, meter, inside the header
    p, t, m = _rect(w, picker), _rect(w, title), _rect(w, meter)
    assert p.right() < t.left() and t.right() < m.left() and m.right() <= _rect(w, w.header).right()
    assert meter.label.text() == "" or meter.label.isVisible()
    # the line under the message box wraps inside the box's width
    hint, frame = _rect(w, bar.hint), _rect(w, bar.frame)
    assert hint.left() >= frame.left() and hint.right() <= frame.right()
    assert bar.hint.height() >= bar.hint.heightForWidth(bar.hint.width())  # not cut

    w.resize(1100, 700)  # wide again: everything back
    driver.until(lambda: title.text() == TITLE and "·" in meter.label.text())


def test_the_message_buttons_cover_none_of_regenerates_links(driver):
    # shot-72: at 641 px the buttons over the last reply covered "with several models…".
    w = driver.configured()
    driver.send(TITLE, wait=True)
    lv = w.transcript.list_view
    last = lv.model().rowCount() - 1
    for width in (520, 641, 1100):
        w.resize(width, 700)
        driver.until(lambda width=width: w.width() == width)
        driver.qtbot.wait(50)
        layout = lv.layout_of(last, fresh=True)
        assert "with several models" in layout.plain_text()
        bar, rect = hover(driver, w, last)
        box = bar.geometry().translated(-rect.topLeft())
        assert not covers(layout, box), (width, box)
        assert box.bottom() > layout.height // 2  # in its place at the bottom right
        # the room kept for them in the layout is what the widget takes
        assert bar.width() <= 3 * ACTION_BUTTON_PX + ACTIONS_EDGE_PX - INSET
        assert bar.height() <= ACTIONS_HEIGHT_PX + INSET // 2 - 4


def test_the_sidebar_steps_aside_in_a_narrow_window_and_comes_back(driver, qtbot):
    from parley.gui.window.layout import CHAT_ROOM_PX, SIDEBAR_MIN_PX
    from tests.gui.keyboard import key

    w = driver.configured()
    driver.send(TITLE, wait=True)
    sidebar = w.sidebar

    def width(px: int) -> None:
        w.resize(px, 700)
        driver.until(lambda: w.width() == px)
        qtbot.wait(50)

    width(1100)
    assert sidebar.isVisible()
    width(420)  # under its least width plus the chat's room: it steps aside
    assert SIDEBAR_MIN_PX + CHAT_ROOM_PX > 420
    assert not sidebar.isVisible()
    assert w.stack.width() >= 400  # the chat has the window
    width(1100)  # wide again: back, as it was
    assert sidebar.isVisible()

    width(420)
    w.composer.setFocus()
    key(qtbot, "Ctrl+B")  # shown by hand in the narrow window: it stays
    assert sidebar.isVisible()
    width(410)
    assert sidebar.isVisible()
    key(qtbot, "Ctrl+B")  # hidden by hand: widening does not bring it back
    assert not sidebar.isVisible()
    width(1100)
    assert not sidebar.isVisible()

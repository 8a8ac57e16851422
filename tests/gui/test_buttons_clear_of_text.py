"""The buttons over a message (copy, fork, ‹ ›, edit…) never cover its text, at any
window width (trial 21: over a reply they covered the end of its first line).

Where a message's text reaches both its bottom-right and top-right corners, its row
keeps a strip under the text and the buttons sit there; a short message keeps its
height and its buttons at its bottom right, as before. Checked in the real window on
the pixels painted under the buttons, with the buttons hidden.
"""

from __future__ import annotations

from typing import Any

import pytest
from PySide6.QtCore import QRect
from PySide6.QtGui import QColor, QImage

from parley.core.content import TextBlock, Turn
from parley.gui.transcript.actions_row import covers
from tests.gui.answers import regenerate_answering, until_answered
from tests.gui.helpers import hover

pytestmark = pytest.mark.timeout(90)

LONG = ("Teal is a medium blue-green colour, named after the common teal duck whose head "
        "has a stripe of this colour across it; it pairs well with ochre, cream and a "
        "deep rust red, and it reads well on paper as on a screen.")
ASKED = ("Could you name a colour for the kitchen walls that goes with oak floors, white "
         "cupboards and a lot of morning light, and say why it works in a room like that?")
WIDTHS = (520, 700, 900, 1100, 1400)


def _chat(driver: Any, w: Any) -> None:
    texts = ["Name a colour", LONG, ASKED, "Ochre.", "And a third", LONG]
    session = driver.run(w.store.create_session(title="Colours", model=w.chat.current_model()))
    for i, text in enumerate(texts):
        role = "user" if i % 2 == 0 else "assistant"
        driver.run(w.store.append_turn(session.id, Turn(role, [TextBlock(text)])))
    driver.run(w.chat.load_sidebar())
    w.chat.open_session(session.id)
    driver.until(lambda: w.session_id == session.id and len(w.chat.turns) == len(texts)
                 and w.tasks.pending == 0)


def _ink_under(w: Any, bar: Any) -> int:
    """Pixels of text (or anything unlike the background) painted where ``bar`` is,
    with ``bar`` hidden."""
    viewport = w.transcript.list_view.viewport()
    area = bar.geometry().intersected(viewport.rect())
    bar.hide()
    try:
        image = viewport.grab().toImage()
    finally:
        bar.show()
    ratio = image.devicePixelRatio()
    background = image.pixelColor(1, int(area.center().y() * ratio))
    return _contrast(image, QRect(int(area.x() * ratio), int(area.y() * ratio),
                                  int(area.width() * ratio), int(area.height() * ratio)),
                     background)


def _contrast(image: QImage, area: QRect, background: QColor) -> int:
    count = 0
    for y in range(area.top(), area.bottom() + 1):
        for x in range(area.left(), area.right() + 1):
            c = image.pixelColor(x, y)
            if max(abs(c.red() - background.red()), abs(c.green() - background.green()),
                   abs(c.blue() - background.blue())) >= 40:
                count += 1
    return count


def test_the_buttons_cover_no_text_at_any_width(driver: Any) -> None:
    w = driver.configured()
    _chat(driver, w)
    lv = w.transcript.list_view
    for width in WIDTHS:
        w.resize(width, 800)
        driver.until(lambda width=width: w.width() == width)
        driver.qtbot.wait(50)
        for row in (1, 2, 3, 5):  # long replies, a long message, a short reply, the last
            bar, rect = hover(driver, w, row)
            layout = lv.layout_of(row)
            box = bar.geometry().translated(-rect.topLeft())
            assert not covers(layout, box), (width, row, box)
            assert _ink_under(w, bar) == 0, (width, row)

        # The long reply's text fills both corners: the buttons sit in a strip under it.
        bar, rect = hover(driver, w, 1)
        text_bottom = max(p.rect.bottom() for p in lv.layout_of(1).pieces)
        assert bar.geometry().top() > rect.top() + text_bottom, width
        assert bar.geometry().bottom() <= rect.bottom()  # inside its own row

    # A short reply keeps its height: its buttons at its bottom right cover nothing.
    w.resize(900, 800)
    driver.until(lambda: w.width() == 900)
    short = lv.layout_of(3, fresh=True)
    line = max(p.rect.bottom() for p in short.pieces)
    assert short.height < line + 20


def test_a_reply_with_branches_keeps_room_for_its_four_buttons(driver: Any) -> None:
    w = driver.configured()
    driver.fake.script(LONG)
    driver.send("Name a colour", w, wait=True)
    until_answered(driver, w, LONG)
    regenerate_answering(driver, w, LONG + " Second answer.")
    driver.fake.script(LONG)
    driver.send("Another one, please", w, wait=True)
    until_answered(driver, w, LONG)
    lv = w.transcript.list_view
    for width in (520, 900, 1400):
        w.resize(width, 800)
        driver.until(lambda width=width: w.width() == width)
        driver.qtbot.wait(50)
        bar, rect = hover(driver, w, 1)  # ‹ 2/2 ›, copy, fork: not the last reply
        assert not bar.buttons["version_previous"].isHidden()
        assert not covers(lv.layout_of(1), bar.geometry().translated(-rect.topLeft()))
        assert _ink_under(w, bar) == 0, width

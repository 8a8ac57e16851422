"""A reply streaming into the transcript repaints only what changed on screen
(``parley.gui.transcript.damage``), and the screen then shows what a full repaint shows."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QEvent, QObject, QRect
from PySide6.QtGui import QImage
from PySide6.QtWidgets import QLabel

from parley.core.content import TextBlock, Turn
from tests.gui.transcript_reading import show_turns, text_of_last

WORDS = ["streaming", "keeps", "the", "window", "responsive", "while", "a", "long",
         "answer", "is", "written"]


class PaintedRects(QObject):
    """Notes the rect of every paint event of a widget."""

    def __init__(self) -> None:
        super().__init__()
        self.rects: list[QRect] = []

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:  # noqa: N802
        if event.type() == QEvent.Type.Paint:
            self.rects.append(QRect(event.rect()))
        return False


def reply(text: str) -> Turn:
    return Turn("assistant", [TextBlock(text)], id="live", model="anthropic:claude-sonnet-4-6")


def on_screen(view) -> QImage:
    """The viewport's pixels as last painted (the window's backing store)."""
    lv = view.list_view
    window = view.window().windowHandle()
    shot = window.screen().grabWindow(window.winId()).toImage()
    top_left = lv.viewport().mapTo(view.window(), lv.viewport().rect().topLeft())
    ratio = shot.devicePixelRatio()
    size = lv.viewport().size()
    return shot.copy(int(top_left.x() * ratio), int(top_left.y() * ratio),
                     int(size.width() * ratio), int(size.height() * ratio))


def test_words_added_to_a_reply_repaint_a_band_not_the_viewport(view, qtbot):
    show_turns(view, [Turn("user", [TextBlock("Tell me about streaming.")], id="u1")])
    text = "A first paragraph that stays as it is.\n\n```python\nprint('kept')\n```\n\nThe last"
    for word in ("grows", "on"):  # first updates (the view settles in)
        text += " " + word
        view.update_turn(reply(text))
        qtbot.wait(300)
    viewport = view.list_view.viewport()
    painted = PaintedRects()
    viewport.installEventFilter(painted)
    for word in WORDS[:6]:  # the last paragraph grows on its line: the row keeps its height
        text += " " + word
        view.update_turn(reply(text))
        qtbot.wait(40)
    qtbot.wait(300)  # a layout laid out less often (it was slow) is painted when due
    viewport.removeEventFilter(painted)
    assert painted.rects, "the updates were painted"
    assert all(r.height() < viewport.height() // 4 for r in painted.rects), painted.rects
    assert "responsive" in text_of_last(view)


@pytest.mark.parametrize(("batch", "floating"), [(1, False), (3, False), (1, True)])
def test_the_screen_after_streaming_shows_what_a_full_repaint_shows(view, qtbot, batch,
                                                                      floating):
    """Painted after each update, and after every third (updates between paints: their
    bands add up, and the pixels moved keep the bands not painted yet); with something
    floating over the view (a toast) Qt cannot move the pixels and paints them all."""
    show_turns(view, [Turn("user", [TextBlock("Write some code.")], id="u1")])
    if floating:
        toast = QLabel("floating over the view", view)
        toast.setGeometry(20, view.height() - 60, 300, 30)
        toast.show()
    text = ""
    for i, word in enumerate(WORDS * 8):  # taller than the view: it scrolls too
        text += word + (" " if i % 9 else "\n\n```python\nx = 1\n```\n\n")
        view.update_turn(reply(text))
        if i % batch == 0:
            qtbot.wait(5)
    qtbot.wait(100)
    bar = view.list_view.verticalScrollBar()
    assert bar.maximum() > 0 and bar.value() == bar.maximum()
    seen = on_screen(view)
    view.list_view.viewport().repaint()  # everything painted again
    assert on_screen(view) == seen

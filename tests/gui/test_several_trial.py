"""Ask several models, as the fresh-user trial of #34 used it (findings M4, M5, M9).

M4: the side-by-side view takes the keyboard when it opens: 1–4 / Enter / ← → pressed
on whatever has the focus choose an answer, they do not go into the message box behind.
(The offscreen platform activates any window shown; the failure shows on X without a
window manager, as in the trial: ``Xvfb :97 &`` then ``DISPLAY=:97 QT_QPA_PLATFORM=xcb``
for the first two tests, which time out without ``CompareView.present``.)
M5: a new chat asked with several models is titled (sidebar, header, window title) and
names the space documents it was given, as after an ordinary send, without leaving it.
M9: the model picker is as wide as its longest name (no sideways scrolling).

Real window, real store file, real Anthropic SDK against the fake provider server.
"""

from __future__ import annotations

from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QWidget

from parley.gui.chat.several_picker import SeveralPicker
from tests.gui.keyboard import chat_window, key, type_text

pytestmark = pytest.mark.timeout(120)

MODELS = ("claude-sonnet-4-6", "claude-opus-4-6", "claude-haiku-4-5")


def _inside(widget: QWidget | None, window: QWidget) -> bool:
    return widget is not None and widget.window() is window


def _ask(driver: Any, w: Any, text: str, count: int) -> Any:
    """Type ``text`` in the focused message box, Ctrl+Shift+Enter, check the first
    ``count`` models with their numbers and Enter, all on whatever has the focus.
    Returns the side-by-side view once it shows."""
    driver.until(lambda: len(w.model_picker.choices) >= count, timeout=10)
    assert QApplication.focusWidget() is w.composer
    type_text(driver.qtbot, text)
    key(driver.qtbot, "Ctrl+Shift+Return")
    several = w.chat.several
    driver.until(lambda: several.picker is not None and several.picker.isVisible()
                 and _inside(QApplication.focusWidget(), several.picker))
    for n in range(1, count + 1):
        key(driver.qtbot, str(n))
    key(driver.qtbot, "Return")
    driver.until(lambda: several.view is not None and several.view.isVisible())
    return several.view


def _ready(driver: Any, fake: Any, words: int = 20) -> Any:
    """A window with auto titles off, each model's answer (``words`` long) scripted."""
    for name in MODELS:
        fake.script(f"{name} says: " + "word " * words, model=name, token_delay_ms=20)
    w = chat_window(driver, fake)
    w.composer.setFocus()
    driver.until(lambda: QApplication.focusWidget() is w.composer)
    return w


def test_the_view_takes_the_keyboard_when_it_opens(driver: Any, fake_provider: Any) -> None:
    w = _ready(driver, fake_provider)
    view = _ask(driver, w, "Where to?", 3)

    # The keys now go to the view, not to the message box behind it (finding M4).
    driver.until(lambda: QApplication.activeWindow() is view
                 and _inside(QApplication.focusWidget(), view))
    driver.until(lambda: all(c.usable for c in view.columns), timeout=30)
    key(driver.qtbot, "Right")
    assert view.selected == 1
    key(driver.qtbot, "Right")
    key(driver.qtbot, "Left")
    key(driver.qtbot, "Return")  # the second answer continues the chat
    second = view.columns[1].turn_id
    driver.until(lambda: bool(w.chat.turns) and w.chat.turns[-1].id == second)
    driver.settle(w)
    assert w.composer.text() == ""
    assert not view.isVisible()


def test_the_number_keys_choose_an_answer_without_a_click(driver: Any,
                                                           fake_provider: Any) -> None:
    w = _ready(driver, fake_provider)
    view = _ask(driver, w, "Which one?", 3)
    driver.until(lambda: all(c.usable for c in view.columns), timeout=30)
    key(driver.qtbot, "3")
    third = view.columns[2].turn_id
    driver.until(lambda: bool(w.chat.turns) and w.chat.turns[-1].id == third)
    driver.settle(w)
    assert w.composer.text() == ""


def test_a_new_chat_asked_with_several_models_is_titled_and_names_its_documents(
        driver: Any, fake_provider: Any) -> None:
    w = _ready(driver, fake_provider, words=300)  # ~6 s: the title shows before the end
    space = driver.run(w.store.create_space("Research"))
    driver.run(w.store.add_space_document(space.id, "notes.txt", b"Dates are 1 March 2026."))
    driver.run(w.chat.load_sidebar())
    w.chat.new_session(space.id)
    driver.until(lambda: w.chat.space_id == space.id)
    w.activateWindow()
    w.composer.setFocus()
    driver.until(lambda: QApplication.focusWidget() is w.composer)
    view = _ask(driver, w, "What date style?", 2)

    # Still in the chat, never switched away: it is titled everywhere as soon as the
    # message is saved, as a send is, while the answers still stream (finding M5).
    sid = w.chat.session_id
    assert sid is not None
    driver.until(lambda: w.sidebar.model.index_of(sid).data() not in (None, "New chat"))
    title = w.sidebar.model.index_of(sid).data()
    assert not all(c.usable for c in view.columns), "the answers ended before the title"
    assert w.windowTitle() == f"{title} — Parley"
    assert w.chat.sessions[sid].title == title
    driver.until(lambda: all(c.usable for c in view.columns), timeout=30)
    driver.settle(w)
    assert driver.run(w.store.get_session(sid)).title == title
    chip = w.chat.models.heading.documents
    driver.until(lambda: chip.isVisible() and chip.text() == "· 1 document")
    assert "notes.txt" in chip.toolTip()


def test_the_model_picker_shows_long_names_whole(qtbot: Any) -> None:
    parent = QWidget()
    qtbot.addWidget(parent)
    parent.resize(900, 600)
    labels = [f"Claude {name.title()} 4.6  ·  Anthropic (Second) at claude.example.org"
              for name in ("sonnet", "opus", "haiku")]
    picker = SeveralPicker(parent, [(label, f"p{i}:m") for i, label in enumerate(labels)], [])
    picker.show()
    qtbot.waitExposed(picker)
    view = picker.models
    assert view.viewport().width() >= view.sizeHintForColumn(0)  # finding M9
    assert view.horizontalScrollBar().maximum() == 0 or not view.horizontalScrollBar().isVisible()
    for row in range(view.count()):
        assert view.visualItemRect(view.item(row)).width() >= \
            view.fontMetrics().horizontalAdvance(view.item(row).text())
    qtbot.keyClick(view, Qt.Key.Key_2)
    qtbot.keyClick(view, Qt.Key.Key_3)
    with qtbot.waitSignal(picker.chosen) as got:
        qtbot.keyClick(view, Qt.Key.Key_Return)
    assert got.args == [["p1:m", "p2:m"]]

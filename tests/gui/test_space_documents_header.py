"""The chat header with a long title and a space's documents keeps the model's name
whole (the title is cut instead), and the space dialog names the model as its menu
does (real window, keys, fake provider)."""

from __future__ import annotations

from typing import Any

import pytest
from PySide6.QtWidgets import QApplication

from tests.gui.keyboard import chat_window, key, say, type_text

pytestmark = pytest.mark.timeout(90)


def test_the_title_is_cut_before_the_model_name(driver: Any, fake_provider: Any,
                                                qtbot: Any) -> None:
    w = chat_window(driver, fake_provider)
    space = driver.run(w.store.create_space("Research and development"))
    for n in range(4):
        driver.run(w.store.add_space_document(space.id, f"notes-{n}.txt", b"Notes %d." % n))
    driver.run(w.chat.load_sidebar())
    w.chat.new_session(space.id)
    driver.until(lambda: w.chat.space_id == space.id)
    w.composer.setFocus()
    say(driver, qtbot, w, "Hello", "Hi.")
    heading, picker = w.chat_heading, w.model_picker
    driver.until(lambda: heading.documents.text() == "· 4 documents")
    key(qtbot, "F2")
    driver.until(lambda: heading.editing)
    type_text(qtbot, "Should the quarterly report cover the purple elephant project in depth")
    key(qtbot, "Return")
    driver.until(lambda: not heading.editing)
    name = picker.label_of(picker.current)
    for width in (w.width(), 900):
        w.resize(width, w.height())
        driver.until(lambda width=width: w.width() == width)
        driver.qtbot.wait(50)
        QApplication.processEvents()
        assert picker.text() == name, (picker.text(), name, width)
        assert heading.button.text().endswith("…")
        assert heading.documents.isVisible() and heading.documents.width() >= \
            heading.documents.sizeHint().width()
        assert heading.geometry().right() <= w.header.width()


def test_the_space_dialog_names_the_model_by_its_display_name(driver: Any, fake_provider: Any,
                                                              qtbot: Any) -> None:
    w = chat_window(driver, fake_provider)
    driver.run(w.store.set_setting("spaces.documents_max_share", 0.01))  # the least: 1% of 1M
    space = driver.run(w.store.create_space("Big"))
    driver.run(w.store.add_space_document(space.id, "notes.txt", b"Many words here. " * 5000))
    driver.run(w.chat.load_sidebar())
    w.chat.new_session(space.id)
    driver.until(lambda: w.chat.space_id == space.id)
    w.composer.setFocus()
    key(qtbot, "Ctrl+Shift+D")
    dlg = w.chat.organizer.dialog
    panel = dlg.documents
    driver.until(lambda: dlg.isVisible() and "too large for" in panel.status.text())
    picker = w.model_picker
    name = picker.label_of(picker.current)
    assert name != picker.current.split(":", 1)[1]  # a display name, not the id
    assert f"too large for {name}'s window" in panel.status.text()
    key(qtbot, "Escape")
    driver.until(lambda: not dlg.isVisible())

"""Long names never widen the window: a 300-character model name (as an import or
another machine can bring) in the header's model picker and its menu, a long space
name in the heading — elided, whole in their tooltips. Real window, real SDK, the fake
provider server listing the model."""

from __future__ import annotations

from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

from parley.gui.transcript.menu import models_menu
from tests.fakes.server import DEFAULT_ANTHROPIC_MODELS

pytestmark = pytest.mark.timeout(90)

LONG_ID = "gguf-" + "/models/very/deep/folder/" * 11 + "x" * 20  # 300 characters
LONG_NAME = "Llama " + "ultra-long-quantised-variant-" * 10 + "Q4_K_M" * 4  # 320 characters


def test_a_300_character_model_name_does_not_widen_the_window(driver: Any) -> None:
    assert len(LONG_ID) == 300
    driver.fake.anthropic_models = [*DEFAULT_ANTHROPIC_MODELS,
                                    {"id": LONG_ID, "display_name": LONG_NAME}]
    w = driver.configured()
    ref = f"anthropic:{LONG_ID}"
    picker = w.model_picker
    driver.until(lambda: any(c.ref == ref for c in picker.choices), timeout=20)
    driver.settle(w)
    QApplication.processEvents()
    width, least = w.width(), w.minimumSizeHint().width()

    entry = next(a for a in picker.menu().actions() if a.data() == ref)
    entry.trigger()  # chosen from the menu, as a click would
    driver.until(lambda: picker.current == ref)
    QApplication.processEvents()
    assert w.width() == width and w.minimumSizeHint().width() <= least
    assert picker.width() < 400 and picker.sizeHint().width() < 400
    assert picker.text() != LONG_NAME and "…" in picker.text()
    assert LONG_NAME in picker.toolTip()  # the whole name, on hover
    assert LONG_NAME in picker.accessibleDescription()
    # In the menu: cut too, whole in the entry's tooltip; the menu fits a screen.
    assert "…" in entry.text() and entry.toolTip() == LONG_NAME
    assert picker.menu().sizeHint().width() < 700
    # "Regenerate with" lists the same names: cut, whole in the tooltip.
    regenerate = models_menu(w.transcript, w)
    long_entry = next(a for a in regenerate.actions() if a.toolTip().startswith(LONG_NAME))
    assert "…" in long_entry.text() and regenerate.sizeHint().width() < 700
    # A narrow window cuts the name further instead of growing.
    wide_text = picker.text()
    w.resize(least, w.height())
    driver.until(lambda: picker.text() != wide_text)
    assert w.width() == least and "…" in picker.text()
    assert picker.fontMetrics().horizontalAdvance(picker.text()) < picker.width()
    w.resize(width, w.height())
    driver.until(lambda: picker.text() == wide_text)

    # A long space's name in the heading: cut, whole in the tooltip, window unchanged.
    space = driver.run(w.store.create_space("Space " + "with a very long name " * 14))
    s = driver.run(w.store.create_session(title="Chat", space_id=space.id, model=ref))
    driver.run(w.chat.load_sidebar())
    w.chat.open_session(s.id)
    driver.until(lambda: w.session_id == s.id)
    QApplication.processEvents()
    heading = w.chat_heading
    assert "…" in heading.space.text() and space.name in heading.space.toolTip()
    assert w.width() == width and w.minimumSizeHint().width() <= least


def test_a_long_model_name_in_a_spaces_dialog_and_at_first_run(driver: Any, qtbot: Any) -> None:
    driver.fake.anthropic_models = [*DEFAULT_ANTHROPIC_MODELS,
                                    {"id": LONG_ID, "display_name": LONG_NAME}]
    # First run: the set-up panel lists the models in the window itself.
    w = driver.open()
    width, least = w.width(), w.minimumSizeHint().width()
    panel = w.setup_panel
    qtbot.mouseClick(panel.kind_buttons[0], Qt.MouseButton.LeftButton)
    panel.custom_url.setChecked(True)
    qtbot.keyClicks(panel.url_edit, driver.fake.anthropic_base_url)
    qtbot.keyClicks(panel.key_edit, "sk-ant-test-key")
    qtbot.mouseClick(panel.test_button, Qt.MouseButton.LeftButton)
    driver.until(lambda: panel.model_combo.count() > 1, timeout=30)
    at = panel.model_combo.findData(LONG_ID)
    assert panel.model_combo.itemData(at, Qt.ItemDataRole.ToolTipRole) == LONG_NAME
    panel.model_combo.setCurrentIndex(at)
    QApplication.processEvents()
    assert w.width() == width and w.minimumSizeHint().width() <= least
    assert panel.model_combo.sizeHint().width() < 400
    panel.model_combo.setCurrentIndex(0)
    qtbot.mouseClick(panel.start_button, Qt.MouseButton.LeftButton)
    driver.until(lambda: w.stack.currentWidget() is w.chat_page and w.tasks.pending == 0,
                 timeout=10)
    # A space's dialog lists every model: it stays a dialog's width, names whole on hover.
    driver.until(lambda: any(c.ref.endswith(LONG_ID) for c in w.model_picker.choices),
                 timeout=20)
    w.window_commands.new_space()
    dlg = w.chat.organizer.dialog
    combo = dlg.model_combo
    index = next(i for i in range(combo.count()) if str(combo.itemData(i)).endswith(LONG_ID))
    assert combo.itemData(index, Qt.ItemDataRole.ToolTipRole).startswith(LONG_NAME)
    combo.setCurrentIndex(index)
    QApplication.processEvents()
    assert combo.sizeHint().width() < 400 and dlg.sizeHint().width() < 800
    dlg.reject()


def test_a_normal_model_name_is_shown_whole_on_every_chat_switch(driver: Any) -> None:
    """At the default window size every listed model's name fits: it is never cut,
    whichever chat was open before (each chat uses another model)."""
    w = driver.configured()
    picker = w.model_picker
    driver.until(lambda: len(picker.choices) >= len(DEFAULT_ANTHROPIC_MODELS), timeout=20)
    driver.settle(w)
    width = w.width()
    chats = []
    for choice in picker.choices:
        s = driver.run(w.store.create_session(title=choice.label, model=choice.ref))
        chats.append((s.id, choice.ref, choice.label))
    driver.run(w.chat.load_sidebar())
    for _ in range(2):
        for sid, ref, label in chats:
            w.chat.open_session(sid)
            driver.until(lambda sid=sid, ref=ref: w.session_id == sid and picker.current == ref)
            QApplication.processEvents()  # the picker's fit to the room it was given
            assert picker.text() == label, (picker.text(), label, picker.width())
            assert "…" not in picker.text() and w.width() == width

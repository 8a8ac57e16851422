"""Right after first-run set-up the header names the chosen model as the connection test
listed it, with its context window: never its raw id and a default "200k" window while the
provider is asked for its models again (trial 21: "claude-…" and "0 / 200k" for ~0.3 s)."""

from __future__ import annotations

from typing import Any

import pytest
from PySide6.QtCore import Qt, QTimer

pytestmark = pytest.mark.timeout(90)

FRESH = {"id": "claude-fresh-5", "display_name": "Claude Fresh 5",
         "max_input_tokens": 500_000, "max_tokens": 64_000}


def test_the_model_set_up_is_named_from_the_start(driver: Any, fake_provider: Any) -> None:
    # A model the built-in catalog does not know: only the server's list names it.
    fake_provider.anthropic_models = [FRESH, *fake_provider.anthropic_models]
    w = driver.open()
    panel = w.setup_panel
    left = Qt.MouseButton.LeftButton
    driver.qtbot.mouseClick(panel.kind_buttons[0], left)
    panel.custom_url.setChecked(True)
    driver.qtbot.keyClicks(panel.url_edit, fake_provider.anthropic_base_url)
    driver.qtbot.keyClicks(panel.key_edit, "sk-ant-test-key")
    driver.qtbot.mouseClick(panel.test_button, left)
    driver.until(lambda: panel.model_combo.count() > 0, timeout=30)
    assert panel.model_combo.currentText() == "Claude Fresh 5"
    fake_provider.models_delay_s = 1.0  # the models listed again after set-up come late
    seen: list[tuple[str, str]] = []

    def sample() -> None:
        if w.stack.currentWidget() is w.chat_page and w.model_picker.isVisible():
            shown = (w.model_picker.text(), w.context_meter.label.text())
            if not seen or seen[-1] != shown:
                seen.append(shown)

    timer = QTimer()
    timer.timeout.connect(sample)
    timer.start(1)
    driver.qtbot.mouseClick(panel.start_button, left)
    driver.until(lambda: w.stack.currentWidget() is w.chat_page and w.tasks.pending == 0,
                 timeout=15)
    sample()
    timer.stop()
    assert seen and all(picker == "Claude Fresh 5" for picker, _meter in seen), seen
    assert all("200k" not in meter for _picker, meter in seen), seen
    assert seen[-1][1] == "0 / 500k"

"""Up (edit the last message) while a reply is being written: nothing is edited, and
the status bar says why and what to do, so what is typed next is not taken for an
edit."""

from __future__ import annotations

from typing import Any

import pytest
from PySide6.QtCore import Qt

pytestmark = pytest.mark.timeout(90)


def test_up_while_a_reply_is_written_says_why_nothing_is_edited(driver: Any) -> None:
    """Up in the empty box during a reply edited nothing and said nothing: the
    correction typed next went out as a new message."""
    from parley.gui.chat.edit import EDIT_AFTER_REPLY

    w = driver.configured()
    driver.fake.script("First answer.")
    driver.send("short msg fig", w, wait=True)
    driver.fake.script("slow " * 60, token_delay_ms=25, chunk_size=2)
    driver.send("a second message", w)
    driver.until(lambda: w.composer_bar.busy and w.chat.partial, timeout=10)
    w.composer.setFocus()
    driver.qtbot.keyClick(w.composer, Qt.Key.Key_Up)
    assert w.statusBar().currentMessage() == EDIT_AFTER_REPLY
    assert w.chat.editor.editing is None and w.composer.text() == ""
    assert not w.composer_bar.banner.isVisible()
    driver.settle(w)
    w.statusBar().clearMessage()
    driver.qtbot.keyClick(w.composer, Qt.Key.Key_Up)  # once the reply is written: editing
    assert w.chat.editor.editing is not None and w.composer.text() == "a second message"
    assert w.statusBar().currentMessage() == ""

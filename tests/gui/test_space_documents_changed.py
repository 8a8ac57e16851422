"""A space's documents changed while a chat is open: a new chat's context meter counts
them before its first message, and a chat's header says at once (no reopening) that it
keeps the older set it was given, while a new chat names the set it will be given (real
window, store and dialog; fake provider)."""

from __future__ import annotations

from typing import Any

import pytest
from PySide6.QtWidgets import QApplication

from parley.core.context.tokens import text_tokens
from parley.core.tools.space_documents import OLDER_NOTE
from parley.gui import dialogs
from tests.gui.keyboard import chat_window, key, say

pytestmark = pytest.mark.timeout(90)

GUIDE = "The harbour ferry leaves at seven every morning. " * 60


def open_documents(driver: Any, qtbot: Any, w: Any) -> Any:
    """Ctrl+Shift+D: the space's dialog with the focus in its documents."""
    w.activateWindow()
    w.composer.setFocus()
    key(qtbot, "Ctrl+Shift+D")
    dlg = w.chat.organizer.dialog
    driver.until(lambda: dlg.isVisible() and QApplication.focusWidget() is dlg.documents.list)
    return dlg


def test_a_new_chats_meter_counts_its_spaces_documents(driver, fake_provider, qtbot, tmp_path):
    w = chat_window(driver, fake_provider)
    space = driver.run(w.store.create_space("Harbour"))
    driver.run(w.chat.load_sidebar())
    w.chat.new_session(space.id)
    driver.until(lambda: w.session_id is None and w.chat.space_id == space.id)
    driver.until(lambda: w.context_meter.used < 50)

    guide = tmp_path / "guide.txt"
    guide.write_text(GUIDE)
    dlg = open_documents(driver, qtbot, w)
    dialogs.answers.append([guide])
    key(qtbot, "Insert")  # added in the dialog: the meter behind it counts it at once
    driver.until(lambda: dlg.documents.list.count() == 1, timeout=20)
    driver.until(lambda: w.context_meter.used >= text_tokens(GUIDE) > 500)

    dlg.documents.list.setCurrentRow(0)
    key(qtbot, "Delete")
    driver.until(lambda: w.context_meter.used < 50)
    key(qtbot, "Escape")


def test_the_header_says_when_a_chat_keeps_an_older_set(driver, fake_provider, qtbot,
                                                        tmp_path):
    w = chat_window(driver, fake_provider)
    space = driver.run(w.store.create_space("Harbour"))
    driver.run(w.store.add_space_document(space.id, "guide.txt", GUIDE.encode()))
    driver.run(w.chat.load_sidebar())
    w.chat.new_session(space.id)
    driver.until(lambda: w.chat.space_id == space.id)
    chip = w.chat.models.heading.documents
    driver.until(lambda: chip.isVisible() and chip.text() == "· 1 document")
    assert "will be given" in chip.toolTip()  # a new chat: what its space gives

    w.composer.setFocus()
    say(driver, qtbot, w, "When does the ferry leave?", "At seven.")
    driver.until(lambda: "Given to this chat: guide.txt" in chip.toolTip())
    assert chip.text() == "· 1 document"

    timetable = tmp_path / "timetable.md"
    timetable.write_text("# Timetable\nSundays: nine.\n")
    dlg = open_documents(driver, qtbot, w)
    dialogs.answers.append([timetable])
    key(qtbot, "Insert")  # the chat stays open: its header says it keeps the older set
    driver.until(lambda: chip.text() == "· 1 document (older set)", timeout=20)
    assert "guide.txt" in chip.toolTip() and OLDER_NOTE in chip.toolTip()
    key(qtbot, "Escape")
    driver.until(lambda: not dlg.isVisible())
    w.activateWindow()
    driver.until(w.isActiveWindow)
    w.composer.setFocus()
    driver.until(lambda: QApplication.focusWidget() is w.composer)
    say(driver, qtbot, w, "And on Sundays?", "I was not given that.")  # frozen: still v1
    system = str(fake_provider.model_requests[-1].body["system"])
    assert "harbour ferry" in system and "Sundays: nine." not in system
    assert chip.text() == "· 1 document (older set)"

    w.chat.new_session(space.id)  # a new chat names the set it will be given
    driver.until(lambda: chip.text() == "· 2 documents" and "will be given" in chip.toolTip())

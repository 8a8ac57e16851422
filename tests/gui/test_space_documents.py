"""A space's documents on the real window: Ctrl+Shift+D opens the space's dialog on its
documents; Insert adds, Replace… puts another file in one's place, Delete removes; the
dialog says which way they go; a chat shows the documents it was given (fake provider)."""

from __future__ import annotations

from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

from parley.gui import dialogs
from tests.core.images import make_pdf, png
from tests.gui.keyboard import chat_window, key, say

pytestmark = pytest.mark.timeout(90)


def names(w: Any, space_id: str, driver: Any) -> list[str]:
    return [d.name for d in driver.run(w.store.space_documents(space_id))]


def test_documents_are_added_replaced_and_removed_in_the_space_dialog(driver, fake_provider,
                                                                      qtbot, tmp_path):
    w = chat_window(driver, fake_provider)
    space = driver.run(w.store.create_space("Research"))
    driver.run(w.chat.load_sidebar())
    w.chat.new_session(space.id)
    driver.until(lambda: w.chat.space_id == space.id)
    report = tmp_path / "report.pdf"
    report.write_bytes(make_pdf(["Intro.", "The purple elephant shipped.", "End."]))
    notes = tmp_path / "notes.md"
    notes.write_text("# Notes\nDates are written 2026-03-01.\n")
    photo = tmp_path / "photo.png"
    photo.write_bytes(png((200, 30, 30), (64, 48)))
    blob = tmp_path / "data.bin"
    blob.write_bytes(b"\0\1\2\3" * 64)

    w.composer.setFocus()
    key(qtbot, "Ctrl+Shift+D")
    dlg = w.chat.organizer.dialog
    panel = dlg.documents
    driver.until(lambda: dlg.isVisible() and QApplication.focusWidget() is panel.list)
    driver.until(lambda: "No documents" in panel.status.text())

    dialogs.answers.append([report, notes, photo, blob])
    key(qtbot, "Insert")
    driver.until(lambda: panel.list.count() == 3, timeout=20)
    assert names(w, space.id, driver) == ["report.pdf", "notes.md", "photo.png"]
    assert "can't be a space document: it is a binary file" in panel.problem.text()
    assert panel.list.item(0).text().startswith("report.pdf · 3 pages · ")
    assert panel.list.item(2).text() == "photo.png · image · 5 tokens"
    driver.until(lambda: "3 documents" in panel.status.text()
                 and "sent with every message" in panel.status.text())

    panel.list.setCurrentRow(1)
    newer = tmp_path / "notes-v2.txt"
    newer.write_text("Dates are written 1 March 2026.")
    dialogs.answers.append([newer])
    qtbot.mouseClick(panel.replace_button, Qt.MouseButton.LeftButton)
    driver.until(lambda: names(w, space.id, driver) == ["report.pdf", "notes-v2.txt",
                                                        "photo.png"])
    driver.until(lambda: panel.list.item(1).text().startswith("notes-v2.txt"))

    panel.list.setCurrentRow(0)
    panel.list.setFocus()
    key(qtbot, "Delete")
    driver.until(lambda: names(w, space.id, driver) == ["notes-v2.txt", "photo.png"])
    driver.until(lambda: panel.list.count() == 2 and "2 documents," in panel.status.text())
    key(qtbot, "Escape")  # the dialog closes; the documents stay saved
    driver.until(lambda: not dlg.isVisible())

    # A chat of the space is given them: its header says so, the request carries them.
    w.activateWindow()
    driver.until(w.isActiveWindow)
    w.composer.setFocus()
    driver.until(lambda: QApplication.focusWidget() is w.composer)
    say(driver, qtbot, w, "What date style?", "1 March 2026.")
    system = str(fake_provider.model_requests[-1].body["system"])
    assert "Dates are written 1 March 2026." in system
    first = fake_provider.model_requests[-1].body["messages"][0]["content"]
    assert first[0]["type"] == "image" and first[0]["source"]["media_type"] == "image/png"
    chip = w.chat.models.heading.documents
    driver.until(lambda: chip.isVisible() and chip.text() == "· 2 documents")
    assert "notes-v2.txt" in chip.toolTip() and "sent with every message" in chip.toolTip()

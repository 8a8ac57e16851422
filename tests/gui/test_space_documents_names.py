"""Files the space dialog adds as something other than they look (fake provider, keys):
two files of the same name get told-apart names, an empty file is refused, and a text
file named .pdf is added as text, each said in the panel's line."""

from __future__ import annotations

from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

from parley.gui import dialogs
from tests.gui.keyboard import chat_window, key

pytestmark = pytest.mark.timeout(90)


def names(w: Any, space_id: str, driver: Any) -> list[str]:
    return [d.name for d in driver.run(w.store.space_documents(space_id))]


def test_same_names_empty_files_and_fake_pdfs_are_told(driver, fake_provider, qtbot, tmp_path):
    w = chat_window(driver, fake_provider)
    space = driver.run(w.store.create_space("Research"))
    driver.run(w.chat.load_sidebar())
    w.chat.new_session(space.id)
    driver.until(lambda: w.chat.space_id == space.id)
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    first, second = tmp_path / "a" / "notes.txt", tmp_path / "b" / "notes.txt"
    first.write_text("Notes from team A.")
    second.write_text("Notes from team B.")
    empty = tmp_path / "empty.txt"
    empty.write_text("")
    fake = tmp_path / "fake.pdf"
    fake.write_text("Plain text in disguise.")

    w.composer.setFocus()
    key(qtbot, "Ctrl+Shift+D")
    dlg = w.chat.organizer.dialog
    panel = dlg.documents
    driver.until(lambda: dlg.isVisible() and QApplication.focusWidget() is panel.list)
    dialogs.answers.append([first, second, empty, fake])
    key(qtbot, "Insert")
    driver.until(lambda: panel.list.count() == 3, timeout=20)
    assert names(w, space.id, driver) == ["notes.txt", "notes (2).txt", "fake.pdf"]
    told = panel.problem.text()
    assert "The space has a “notes.txt” already: this one was added as “notes (2).txt”." in told
    assert "“empty.txt” can't be a space document: it is empty" in told
    assert "“fake.pdf” is not a PDF: it was added as text." in told
    assert [panel.list.item(i).text().split(" · ")[0] for i in range(3)] == [
        "notes.txt", "notes (2).txt", "fake.pdf"]

    # Replacing "notes (2).txt" by a file named notes.txt keeps the names apart too.
    panel.list.setCurrentRow(1)
    dialogs.answers.append([first])
    qtbot.mouseClick(panel.replace_button, Qt.MouseButton.LeftButton)
    driver.until(lambda: "empty.txt" not in panel.problem.text())  # told anew
    assert "added as “notes (2).txt”" in panel.problem.text()
    assert names(w, space.id, driver) == ["notes.txt", "notes (2).txt", "fake.pdf"]
    replaced = driver.run(w.store.space_documents(space.id))[1]
    assert driver.run(w.store.space_document_pages(replaced.id)) == ["Notes from team A."]
    key(qtbot, "Escape")
    driver.until(lambda: not dlg.isVisible())

"""Quitting after the data folder was deleted while Parley runs (parley.gui.database.rescue,
parley.core.store.sqlite.faults).

The report: start on a home folder, send a message, ``rm -rf`` the folder, send
another, Ctrl+Q. The window closed without a word, no copy was saved and the
unsent text was lost. Here the folder is deleted for real and the window is
closed through its Quit action; the questions are real window-modal message
boxes, clicked as a person would (the Save dialog is answered through
``parley.gui.dialogs.answers``, except in the menu test, which fills the real one).
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtWidgets import QFileDialog, QLineEdit, QMessageBox

from parley.core import paths
from parley.core.store import Store
from parley.gui import dialogs
from parley.gui.composer.drafts import draft_key
from parley.gui.database.rescue import TITLE

pytestmark = pytest.mark.timeout(60)


@pytest.fixture
def problems(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The texts of the (non-modal) problem dialogs the window shows."""
    shown: list[str] = []
    monkeypatch.setattr(dialogs, "show_problem", lambda parent, title, text: shown.append(text))
    return shown


def _window(driver: Any) -> Any:
    """A window that skipped set-up through ANTHROPIC_* variables, as in the report."""
    return driver.open(env={"ANTHROPIC_API_KEY": "sk-ant-test",
                            "ANTHROPIC_BASE_URL": driver.fake.anthropic_base_url})


def _delete_home_then_send(driver: Any, w: Any, home: Path, text: str) -> str:
    """rm -rf the data folder, then send ``text`` (refused); returns the open chat's id."""
    driver.send("first question", wait=True)
    sid = w.session_id
    assert paths.db_path(home).exists()
    shutil.rmtree(home)
    driver.send(text)
    driver.until(lambda: w.tasks.pending == 0 and w.composer.text() == text)
    return str(sid)


def _box(w: Any) -> QMessageBox | None:
    boxes = [b for b in w.findChildren(QMessageBox) if b.isVisible() and b.windowTitle() == TITLE]
    return boxes[0] if boxes else None


def _click(driver: Any, w: Any, label: str, *, save_as: Any = "unused") -> str:
    """Wait for the rescue question, click ``label``; returns the question's text.

    ``save_as``: the answer of the Save dialog that the click opens (a path, or None).
    """
    driver.until(lambda: _box(w) is not None, timeout=10)
    box = _box(w)
    assert box is not None
    text = box.text()
    if save_as != "unused":
        dialogs.answers.append(save_as)
    next(b for b in box.buttons() if b.text() == label).click()
    driver.until(lambda: _box(w) is None)
    return text


def _quit(w: Any) -> None:
    w.qactions["app.quit"].trigger()  # Ctrl+Q


def _closed(driver: Any, w: Any) -> None:
    driver.until(lambda: w.quitting.closed and not w.isVisible(), timeout=10)
    driver.windows.remove(w)
    w.deleteLater()


def _saved(copy: Path, sid: str) -> tuple[list[str], Any]:
    with Store.open(copy) as store:
        return [t.text() for t in store.get_turns(sid)], store.get_state(draft_key(sid))


def test_quit_saves_the_copy_in_the_deleted_folder_with_the_unsent_text(
        driver: Any, home: Path, problems: list[str]) -> None:
    w = _window(driver)
    sid = _delete_home_then_send(driver, w, home, "second question")
    assert any("Save a copy now" in p for p in problems)  # the warning, as reported

    _quit(w)
    told = _click(driver, w, "Quit")
    [copy] = [p for p in home.iterdir() if p.name.startswith("sessions.db.rescued-")]
    assert str(copy) in told and "with your unsent message" in told
    assert "rename the copy to sessions.db" in told
    _closed(driver, w)
    turns, draft = _saved(copy, sid)
    assert turns[0] == "first question" and "second question" not in turns
    assert draft == "second question"  # what was in the message box


def test_when_no_copy_can_be_saved_quitting_asks_and_can_be_cancelled(
        driver: Any, home: Path, tmp_path: Path, problems: list[str]) -> None:
    w = _window(driver)
    sid = _delete_home_then_send(driver, w, home, "second question")
    home.write_text("a file where the data folder was")  # the folder cannot be made again

    _quit(w)
    asked = _click(driver, w, "Keep Parley open")
    assert "could not be saved" in asked and "a file is in the way" in asked
    driver.until(lambda: w.isEnabled() and not w.quitting.closing)
    assert w.isVisible() and not w.quitting.closed
    assert w.composer.text() == "second question"  # nothing stopped, nothing lost

    elsewhere = tmp_path / "elsewhere.db"
    _quit(w)
    _click(driver, w, "Save a copy…", save_as=None)  # the Save dialog cancelled: asked again
    _click(driver, w, "Save a copy…", save_as=elsewhere)
    told = _click(driver, w, "Quit")
    assert str(elsewhere) in told
    _closed(driver, w)
    turns, draft = _saved(elsewhere, sid)
    assert turns[0] == "first question" and draft == "second question"
    assert home.is_file()  # nothing was written over the file in the way


def test_save_a_copy_now_is_in_the_file_menu_and_works_in_a_healthy_window(
        driver: Any, home: Path, tmp_path: Path) -> None:
    w = _window(driver)
    driver.send("kept question", wait=True)
    sid = w.session_id
    w.composer.set_text("not sent yet")
    action = w.qactions["app.save_copy"]
    file_menu = next(m for m in w.menuBar().actions() if m.text() == "&File").menu()
    assert action in file_menu.actions() and action.text() == "Save a copy now…"

    action.trigger()
    driver.until(lambda: any(d.isVisible() for d in w.findChildren(QFileDialog)))
    dlg = next(d for d in w.findChildren(QFileDialog) if d.isVisible())
    target = tmp_path / "my-copy.db"
    assert dlg.acceptMode() == QFileDialog.AcceptMode.AcceptSave
    assert Path(dlg.directory().absolutePath()) == home  # where sessions.db is
    dlg.findChild(QLineEdit, "fileNameEdit").setText(str(target))  # typed, then Save
    dlg.accept()
    driver.until(lambda: "Saved a copy" in w.toast.message and w.tasks.pending == 0)
    assert str(target) in w.toast.message
    turns, draft = _saved(target, sid)
    assert turns[0] == "kept question" and draft == "not sent yet"
    assert [p.name for p in home.iterdir() if ".rescued-" in p.name] == []


def test_quit_without_a_copy_closes_when_chosen(driver: Any, home: Path,
                                                problems: list[str]) -> None:
    w = _window(driver)
    _delete_home_then_send(driver, w, home, "second question")
    home.write_text("a file where the data folder was")

    _quit(w)
    asked = _click(driver, w, "Quit without a copy")
    assert "Quit without a copy only if you still have the file elsewhere" in asked
    _closed(driver, w)
    assert home.read_text() == "a file where the data folder was"


def test_writes_refused_after_the_delete_are_told_once_then_in_the_status_bar(
    driver: Any, home: Path, problems: list[str]
) -> None:
    w = _window(driver)
    _delete_home_then_send(driver, w, home, "second question")
    assert len(problems) == 1 and "Save a copy now" in problems[0]
    w.composer.set_text("")
    driver.send("third question")  # refused again: the status bar says it, no new dialog
    driver.until(lambda: w.tasks.pending == 0 and w.composer.text() == "third question")
    assert len(problems) == 1
    assert "Not saved: sessions.db was moved or deleted" in w.statusBar().currentMessage()
    _quit(w)
    _click(driver, w, "Quit")
    _closed(driver, w)

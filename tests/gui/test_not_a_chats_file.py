"""At start, sessions.db is not a chats file at all: a folder, or a file that does not
start as an SQLite database does (trial 20). The window says which, truly, never
"damaged"; nothing of the folder or the file is changed, and the ways it offers work.

Real files throughout; the backups are the window's own, made when it quit.
"""

from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QPushButton

from parley.core import paths
from parley.core.store import Store
from tests.gui.damage import start_window

pytestmark = pytest.mark.timeout(120)
LEFT = Qt.MouseButton.LeftButton


def _chats_then_closed(driver: Any) -> tuple[Path, list[str]]:
    """A configured home with one chat of two messages, closed (quitting backed it up);
    returns its sessions.db and the chat's texts."""
    w = driver.configured()
    driver.send("a message to keep", wait=True)
    path = w.store.path
    sid = str(w.chat.session_id)
    driver.close(w)
    with Store.open(path) as store:
        texts = [t.text() for t in store.get_turns(sid)]
    assert len(texts) == 2
    for p in path.parent.iterdir():  # gone: what is there now is another thing
        if p.name.startswith(path.name) and p.name != path.name + ".closed":
            p.unlink()
    return path, texts


def _texts_in(path: Path) -> list[list[str]]:
    with Store.open(path) as store:
        return [[t.text() for t in store.get_turns(s.id)] for s in store.list_sessions()]


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _aside(home: Path) -> list[Path]:
    return [p for p in home.iterdir() if ".corrupt-" in p.name
            and not p.name.endswith(("-wal", "-shm"))]


def test_a_folder_in_the_chats_files_place_is_named_and_left_alone(
        driver: Any, home: Path) -> None:
    path, texts = _chats_then_closed(driver)
    path.mkdir()  # rm sessions.db; mkdir sessions.db
    (path / "inside.txt").write_text("not Parley's")

    w = start_window(driver, home)
    driver.until(lambda: w.stack.currentWidget() is w.loading_page
                 and "folder" in w.loading_page.text(), 30)
    said = w.loading_page.text()
    assert f"Parley keeps its chats in the file {path}, but that is a folder" in said
    assert "will not delete it" in said and "Move or rename the folder" in said
    assert "damaged" not in said.lower()
    assert w.recovery_page is None  # no "damaged" page, none of its buttons
    button = w.loading_page.findChild(QPushButton, "TryAgain")
    assert button is not None and button.isVisible()

    driver.qtbot.mouseClick(button, LEFT)  # not moved yet: said again, nothing changed
    driver.until(lambda: "that is a folder" in w.loading_page.text() and button.isVisible(), 30)
    assert [p.name for p in path.iterdir()] == ["inside.txt"]

    moved = home / "moved-folder"
    path.rename(moved)  # what the page says to do
    driver.qtbot.mouseClick(button, LEFT)
    driver.until(lambda: getattr(w, "missing_page", None) is not None
                 and w.missing_page.isVisible(), 40)
    driver.qtbot.mouseClick(w.missing_page.restore_buttons[0], LEFT)
    driver.until(lambda: w.ready and w.tasks.pending == 0, 40)
    assert "Restored the backup" in w.toast.message
    assert _texts_in(path) == [texts]
    assert [p.name for p in moved.iterdir()] == ["inside.txt"]
    assert (moved / "inside.txt").read_text() == "not Parley's"


@pytest.mark.parametrize("content", ["text", "random"])
def test_a_file_that_is_not_sqlite_is_said_so_and_a_backup_restores(
        driver: Any, home: Path, content: str) -> None:
    path, texts = _chats_then_closed(driver)
    path.write_bytes(b"my shopping list\neggs\nmilk\n" * 30 if content == "text"
                     else bytes((i * 7919) % 251 for i in range(20_000)))
    sha = _sha(path)

    w = start_window(driver, home)
    driver.until(lambda: w.recovery_page is not None and w.recovery_page.isVisible(), 30)
    page = w.recovery_page
    assert page.heading.text() == "sessions.db is not a chats file"
    said = page.message.text()
    assert said.startswith(f"{path} is not a chats file: it does not start as an SQLite "
                           "database does.")
    assert all("damaged" not in label.text().lower() for label in page.findChildren(
        type(page.heading)) if label.isVisible())
    assert not page.salvage_button.isVisible()  # nothing of it can be read as chats
    assert page.fresh_button.isVisible() and page.fresh_button.isEnabled()
    assert _sha(path) == sha  # nothing changed until the person chooses

    driver.qtbot.mouseClick(page.restore_buttons[0], LEFT)
    driver.until(lambda: w.ready and w.tasks.pending == 0, 40)
    assert "was restored" in w.toast.message and "damaged" not in w.toast.message
    assert _texts_in(path) == [texts]
    [aside] = _aside(home)  # kept under a new name, as it was
    assert _sha(aside) == sha and aside.name in w.toast.message


def test_a_text_file_and_no_backup_offers_a_new_file_and_keeps_the_text(
        driver: Any, home: Path) -> None:
    path = paths.db_path(home)
    home.mkdir(parents=True, exist_ok=True)
    path.write_text("notes saved under the wrong name\n")

    w = start_window(driver, home)
    driver.until(lambda: w.recovery_page is not None and w.recovery_page.isVisible(), 30)
    page = w.recovery_page
    assert "is not a chats file" in page.message.text()
    assert page.restore_buttons == [] and not page.salvage_button.isVisible()
    driver.qtbot.mouseClick(page.fresh_button, LEFT)
    driver.until(lambda: w.ready and w.tasks.pending == 0, 40)  # set-up shows: ready too
    assert "A new, empty file was started" in w.toast.message
    [aside] = _aside(home)
    assert aside.read_text() == "notes saved under the wrong name\n"
    assert _texts_in(path) == []


def test_a_folder_with_files_inside_is_as_it_was_after_quitting(
        driver: Any, home: Path, tmp_path: Path) -> None:
    """The page shown, then Parley quit: every file in the folder is as it was."""
    path, _texts = _chats_then_closed(driver)
    src = tmp_path / "tree"
    (src / "sub").mkdir(parents=True)
    (src / "sub" / "a.db").write_bytes(b"SQLite format 3\x00" + b"\0" * 200)
    shutil.copytree(src, path)
    w = start_window(driver, home)
    driver.until(lambda: "that is a folder" in w.loading_page.text(), 30)
    driver.close(w)
    assert sorted(str(p.relative_to(path)) for p in path.rglob("*")) == ["sub", "sub/a.db"]


def _other_programs_sqlite(path: Path) -> None:
    """sqlite3 sessions.db "create table t(x)": a sound SQLite file, not Parley's."""
    import sqlite3

    con = sqlite3.connect(path)
    con.execute("CREATE TABLE t (x)")
    con.commit()
    con.close()


@pytest.mark.parametrize("kind", ["other sqlite", "emptied"])
def test_another_programs_database_or_an_emptied_file_is_said_so_and_a_backup_restores(
        driver: Any, home: Path, kind: str) -> None:
    """Trial 20: both were called damaged at start, and Salvage then failed with "its first
    pages are damaged"."""
    path, texts = _chats_then_closed(driver)  # the record of the clean close stays
    if kind == "other sqlite":
        _other_programs_sqlite(path)
    else:
        path.write_bytes(b"")  # truncate -s 0 sessions.db while Parley was closed
    sha = _sha(path)

    w = start_window(driver, home)
    driver.until(lambda: w.recovery_page is not None and w.recovery_page.isVisible(), 30)
    page = w.recovery_page
    said = page.message.text()
    if kind == "other sqlite":
        assert page.heading.text() == "sessions.db is not a chats file"
        assert said.startswith(f"{path} is an SQLite database, but not a chats file: it "
                               "holds another program's tables, not Parley's.")
    else:
        assert page.heading.text() == "sessions.db is empty"
        assert said.startswith(f"{path} is empty (0 bytes): it held your chats when Parley "
                               "last closed it and was emptied since")
    assert all("damaged" not in label.text().lower() for label in page.findChildren(
        type(page.heading)) if label.isVisible())
    assert not page.salvage_button.isVisible()  # nothing of the chats to salvage in it
    assert page.fresh_button.isVisible() and _sha(path) == sha

    driver.qtbot.mouseClick(page.restore_buttons[0], LEFT)
    driver.until(lambda: w.ready and w.tasks.pending == 0, 40)
    assert "was restored" in w.toast.message and "damaged" not in w.toast.message
    assert _texts_in(path) == [texts]
    [aside] = _aside(home)  # kept under a new name, unchanged
    assert _sha(aside) == sha and aside.name in w.toast.message


def test_another_programs_database_and_no_backup_offers_a_new_file(
        driver: Any, home: Path) -> None:
    path = paths.db_path(home)
    home.mkdir(parents=True, exist_ok=True)
    _other_programs_sqlite(path)
    sha = _sha(path)

    w = start_window(driver, home)
    driver.until(lambda: w.recovery_page is not None and w.recovery_page.isVisible(), 30)
    page = w.recovery_page
    assert "is an SQLite database, but not a chats file" in page.message.text()
    assert page.restore_buttons == [] and not page.salvage_button.isVisible()
    driver.qtbot.mouseClick(page.fresh_button, LEFT)
    driver.until(lambda: w.ready and w.tasks.pending == 0, 40)
    assert "A new, empty file was started" in w.toast.message
    [aside] = _aside(home)
    assert _sha(aside) == sha
    assert _texts_in(path) == []


def test_a_link_to_a_folder_is_named_with_where_it_points(
        driver: Any, home: Path, tmp_path: Path) -> None:
    """Trial 20: a link named sessions.db pointing to a folder was called a folder."""
    path, texts = _chats_then_closed(driver)
    folder = tmp_path / "elsewhere"
    folder.mkdir()
    (folder / "inside.txt").write_text("not Parley's")
    path.symlink_to(folder)

    w = start_window(driver, home)
    driver.until(lambda: "link" in w.loading_page.text(), 30)
    said = w.loading_page.text()
    assert f"Parley keeps its chats in the file {path}, but that is a link to the folder " \
        f"{folder}." in said
    assert "Remove or rename the link" in said and "damaged" not in said.lower()
    path.unlink()  # what the page says to do
    driver.qtbot.mouseClick(w.loading_page.findChild(QPushButton, "TryAgain"), LEFT)
    driver.until(lambda: getattr(w, "missing_page", None) is not None
                 and w.missing_page.isVisible(), 40)
    driver.qtbot.mouseClick(w.missing_page.restore_buttons[0], LEFT)
    driver.until(lambda: w.ready and w.tasks.pending == 0, 40)
    assert _texts_in(path) == [texts]
    assert [p.name for p in folder.iterdir()] == ["inside.txt"]


def test_a_link_to_nothing_is_said_so_not_deleted_or_moved_away(
        driver: Any, home: Path) -> None:
    """Trial 20: a dangling link named sessions.db was "deleted or moved away"."""
    path, texts = _chats_then_closed(driver)
    gone = home / "gone" / "chats.db"
    path.symlink_to(gone)

    w = start_window(driver, home)
    driver.until(lambda: getattr(w, "missing_page", None) is not None
                 and w.missing_page.isVisible(), 40)
    said = w.missing_page.message.text()
    assert said.startswith(f"sessions.db in {home} is a link to {gone}, and there is nothing "
                           "there")
    assert "deleted or moved away" not in said
    driver.qtbot.mouseClick(w.missing_page.restore_buttons[0], LEFT)
    driver.until(lambda: w.ready and w.tasks.pending == 0, 40)
    assert _texts_in(path) == [texts] and not path.is_symlink()
    [aside] = [p for p in home.iterdir() if ".corrupt-" in p.name]
    assert aside.is_symlink() and Path(os.readlink(aside)) == gone  # the link, kept

"""A sessions.db that cannot be written (fresh-user trial, finding B).

The trial made sessions.db immutable (``chattr +i``, tested here too where it works): the
window showed a modal dialog and the same text again behind it, listed no chats though they
could be read, and "New chat" did nothing. Expected: the chats listed and readable, one
notice saying why nothing can be saved and what to do, and every action that would write
saying so, what was typed kept in the box.

How the file is made to refuse writes: the tests run as root in the sandbox, and root
ignores file modes; Parley counts a file with no write permission bit as read-only even
for root (``parley.core.store.sqlite.opening.check_writable``) and then opens it with
SQLite's ``mode=ro`` / ``immutable=1`` (SQLite itself refuses every write). The folder
case uses a read-only bind mount where this process may mount (root), else ``chmod``.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt

from parley.gui import dialogs
from tests.gui.damage import set_up_then_closed, stored_long_chat

pytestmark = pytest.mark.timeout(90)


@pytest.fixture
def dialogs_shown(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    shown: list[str] = []
    monkeypatch.setattr(dialogs, "show_problem", lambda parent, title, text: shown.append(text))
    return shown


@contextlib.contextmanager
def _read_only_folder(folder: Path) -> Iterator[None]:
    """``folder`` refuses writes: a read-only bind mount of itself (as root), else chmod."""
    if os.geteuid() != 0:
        folder.chmod(0o500)
        try:
            yield
        finally:
            folder.chmod(0o700)
        return
    done = subprocess.run(["mount", "--bind", str(folder), str(folder)], capture_output=True)
    if done.returncode != 0:
        pytest.skip(f"cannot bind-mount here: {done.stderr.decode().strip()}")
    try:
        subprocess.run(["mount", "-o", "remount,ro,bind", str(folder)], check=True)
        yield
    finally:
        subprocess.run(["umount", str(folder)], check=False)


@contextlib.contextmanager
def _refusing(case: str, path: Path) -> Iterator[None]:
    if case == "immutable":  # what the trial did: chattr +i (root may not write it either)
        done = subprocess.run(["chattr", "+i", str(path)], capture_output=True)
        if done.returncode != 0:
            pytest.skip(f"chattr +i does not work here: {done.stderr.decode().strip()}")
        try:
            yield
        finally:
            subprocess.run(["chattr", "-i", str(path)], check=True)
        return
    if case == "file":
        path.chmod(0o444)
        try:
            yield
        finally:
            path.chmod(0o600)
        return
    with _read_only_folder(path.parent):
        yield


@pytest.mark.parametrize("case", ["immutable", "file", "folder"])
def test_chats_that_cannot_be_saved_are_shown_read_only_and_every_write_says_why(
    driver: Any, home: Path, dialogs_shown: list[str], case: str
) -> None:
    path = set_up_then_closed(driver, home)
    sid = stored_long_chat(path, 6, title="Readable chat")
    before = path.read_bytes()
    with _refusing(case, path):
        w = driver.open()
        listed = w.sidebar.model.session_ids()
        assert sid in listed and w.chat.session_id == sid  # listed, and open
        assert "turn 5" in driver.transcript_text(w)
        notice = w.chat.save_status.bar.text()
        named = path.parent if case == "folder" else path
        assert "read-only" in notice.lower() and str(named) in notice
        assert ("chmod" in notice or "mount" in notice) if case != "immutable" \
            else "chattr -i" in notice  # what to do
        assert dialogs_shown == []  # one notice, not a dialog too
        assert w.stack.currentWidget() is w.chat_page

        w.qactions["session.new"].trigger()  # New chat
        driver.until(lambda: "Not saved" in w.statusBar().currentMessage(), 5)
        assert w.chat.session_id == sid and w.sidebar.model.session_ids() == listed
        w.statusBar().clearMessage()
        driver.qtbot.mouseClick(w.sidebar.new_button, Qt.MouseButton.LeftButton)  # its button
        driver.until(lambda: "Not saved" in w.statusBar().currentMessage(), 5)
        driver.settle(w)
        assert w.chat.session_id == sid  # trial 15b: the button opened an empty new chat

        driver.qtbot.keyClicks(w.composer, "a question kept in the box")
        driver.qtbot.keyClick(w.composer, Qt.Key.Key_Return)
        driver.until(lambda: "Not saved" in w.statusBar().currentMessage(), 5)
        driver.settle(w)
        assert w.composer.text() == "a question kept in the box"
        assert "a question kept" not in driver.transcript_text(w)
        assert dialogs_shown == [] and w.chat.save_status.bar.text() == notice
        for action in ("session.rename", "session.delete"):  # asks nothing it cannot do
            w.statusBar().clearMessage()
            w.qactions[action].trigger()
            driver.until(lambda: "Not saved" in w.statusBar().currentMessage(), 5)
        assert w.sidebar.model.session_ids() == listed and dialogs_shown == []
        driver.close(w)
    assert path.read_bytes() == before  # nothing was written to it


def test_a_folder_where_no_file_can_be_made_is_said_once_in_the_window(
    driver: Any, home: Path, dialogs_shown: list[str]
) -> None:
    from tests.gui.damage import start_window

    path = set_up_then_closed(driver, home)
    for made in home.iterdir():  # nothing to read, no backup: a new file must be made
        if made.name.startswith(path.name) or made.name == "backups":
            subprocess.run(["rm", "-rf", str(made)], check=True)
    with _read_only_folder(home):
        w = start_window(driver, home)
        driver.until(lambda: w.stack.currentWidget() is w.loading_page, 20)
        driver.settle(w)
        said = w.loading_page.text()
        assert str(home) in said and "cannot write" in said
        assert dialogs_shown == []  # said on the page only, not in a dialog too
        driver.close(w)

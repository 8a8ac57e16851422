"""The window when another program empties or replaces sessions.db while it runs.

Real files and the fake provider over real HTTP: turns saved in the newest automatic
backup, after it, and the message being sent when the damage is found. The window
shows the recovery page with the words for what happened; one click on Restore brings
back every turn saved before the damage (the backup plus what was kept when it was
found), and the message that met the damage is back in the message box.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt

from parley.core.content import TextBlock, Turn
from parley.core.store import Store
from parley.gui import dialogs
from parley.gui.database.recovery_page import FOUND_WHILE_RUNNING, PLUS_KEPT, REPLACED

pytestmark = pytest.mark.timeout(120)
LEFT = Qt.MouseButton.LeftButton
SENT = "typed when the file was damaged"


@pytest.fixture
def dialogs_shown(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    shown: list[str] = []
    monkeypatch.setattr(dialogs, "show_problem", lambda parent, title, text: shown.append(text))
    return shown


def _turns(w: Any, driver: Any) -> list[tuple[str, str]]:
    sessions = driver.run(w.store.list_sessions(include_archived=True))
    return [(t.id, t.text()) for s in sessions for t in driver.run(w.store.get_turns(s.id))]


def _damage(case: str, path: Path, tmp_path: Path) -> None:
    time.sleep(0.02)  # file times tick every few ms
    if case == "emptied":
        os.truncate(path, 0)  # truncate -s 0 sessions.db
        return
    other = tmp_path / "elsewhere" / "sessions.db"
    with Store.open(other) as store:  # another Parley's file, copied over this one in place
        chat = store.create_session(title="someone else's")
        store.append_turn(chat.id, Turn("user", [TextBlock("not yours")]))
    data = other.read_bytes()
    with open(path, "r+b") as fh:
        fh.truncate(0)
        fh.write(data)


@pytest.mark.parametrize("case", ["emptied", "replaced"])
def test_damage_while_sending_keeps_the_message_and_restore_brings_back_every_turn(
    driver: Any, home: Path, tmp_path: Path, dialogs_shown: list[str], case: str
) -> None:
    w = driver.configured()
    driver.send("saved before the backup", wait=True)
    made = driver.run(w.backups.backup_now(), timeout=20)  # the automatic backup's way
    assert made is not None and made.turns == 2
    for text in ("saved after the backup", "and one more"):
        driver.send(text, wait=True)
    saved = _turns(w, driver)
    assert len(saved) == 6
    path = w.store.path

    _damage(case, path, tmp_path)
    driver.send(SENT)
    driver.until(lambda: w.recovery_page is not None and w.recovery_page.isVisible(), 30)
    page = w.recovery_page
    said = page.message.text()
    assert said.startswith(REPLACED if case == "replaced" else FOUND_WHILE_RUNNING.format(
        why="it is empty: another program cut it to 0 bytes"))
    assert ".damaged-" in said
    assert "What was in the message box (the message you were sending, or writing)" in said
    assert dialogs_shown == []
    assert "Your chats are safe" not in w.statusBar().currentMessage()
    # Restore also reads what was kept when the damage was found: each backup says so
    # (trial 20c: "— 0 messages in 0 chats" read as "nothing will come back").
    assert page.backup_lines[0].text().endswith("— 2 messages in 1 chat" + PLUS_KEPT)
    assert PLUS_KEPT in page.restore_buttons[0].accessibleName()

    driver.qtbot.mouseClick(page.restore_buttons[0], LEFT)  # the newest: the one made above
    driver.until(lambda: w.successor is not None, 30)
    new = w.successor
    driver.windows.remove(w)
    driver.windows.append(new)
    driver.until(lambda: new.ready and new.tasks.pending == 0, 40)
    assert "was restored, with what was saved after it" in new.toast.message
    assert _turns(new, driver) == saved  # every turn, ids and texts; nothing of the other file
    assert new.composer.text() == SENT  # the message is back in the box, not saved


def test_restore_keeps_the_sidebar_shown_or_hidden_as_the_window_had_it(
    driver: Any, home: Path, tmp_path: Path, dialogs_shown: list[str]
) -> None:
    """Trial 20c: the sidebar came back as the restored file held it; it is a setting of
    this computer's window, not chat data."""
    w = driver.configured()
    driver.send("saved before the backup", wait=True)
    assert driver.run(w.backups.backup_now(), timeout=20) is not None
    driver.run(w.widgets.save_geometry())  # the store and window.ini: the sidebar shown
    w.window_commands.toggle_sidebar()
    assert not w.sidebar.isVisible()
    _damage("emptied", w.store.path, tmp_path)
    driver.send(SENT)
    driver.until(lambda: w.recovery_page is not None and w.recovery_page.isVisible(), 30)
    driver.qtbot.mouseClick(w.recovery_page.restore_buttons[0], LEFT)
    driver.until(lambda: w.successor is not None, 30)
    new = w.successor
    driver.windows.remove(w)
    driver.windows.append(new)
    driver.until(lambda: new.ready and new.tasks.pending == 0, 40)
    assert "was restored" in new.toast.message
    assert new.isVisible() and not new.sidebar.isVisible()
    new.window_commands.toggle_sidebar()  # and back: shown as the window has it
    assert new.sidebar.isVisible()


def test_the_page_names_only_the_files_really_copied(tmp_path: Path) -> None:
    """Trial 20: the page said what Parley could still read was copied when it was not."""
    from parley.core.store.sqlite import damage
    from parley.core.store.sqlite import kept as kept_files
    from parley.gui.database.recovery_page import AT_START, NOT_READ_COPY, words

    path = tmp_path / "sessions.db"
    with Store.open(path) as store:
        store.create_session(title="kept")
    kept = kept_files.keep(path, kept_files.UNREADABLE)  # the file alone: no -wal, no copy
    damage.mark(path, "found", kept)
    said = words(path, AT_START)
    assert f" The file was copied to {kept.folder.name} beside it then" in said
    assert "could still read" not in said.split(NOT_READ_COPY)[0]
    assert said.endswith(NOT_READ_COPY)

    (kept.folder / "read-by-parley.db").write_bytes(path.read_bytes())
    (kept.folder / "sessions.db-wal").write_bytes(b"")
    said = words(path, AT_START)
    assert (" The file, its -wal and what Parley could still read were copied to "
            f"{kept.folder.name}") in said and NOT_READ_COPY not in said

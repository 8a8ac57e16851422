"""The draft kept when sessions.db is found damaged comes back in the chat it was typed in.

Trial 20: a draft typed in chat Beta, the file damaged while Parley ran, then Restore:
the draft came back in the box of Gamma, the chat the restored backup reopened, was saved
as Gamma's draft, and Gamma's own draft was lost. Here what was kept when the damage was
found cannot be read (as when the damage hit the file's list of tables), so the backup
alone is restored, and it reopens Gamma.

Real files throughout; the backup is the window's own.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt

from parley.core.store.sqlite.damage import marked_kept
from parley.gui.composer.drafts import draft_key
from parley.gui.database.queued_kept import NOT_IN_FILE
from tests.gui.damage import start_window, successor_of

pytestmark = pytest.mark.timeout(180)
LEFT = Qt.MouseButton.LeftButton
GAMMA_DRAFT = "gamma's own draft"


def _new_chat_with(driver: Any, w: Any, text: str) -> str:
    """A new chat with ``text`` sent and answered; returns its id."""
    w.chat.new_session()
    driver.until(lambda: w.chat.session_id is None and w.composer.text() == "")
    driver.send(text, w, wait=True)
    return str(w.chat.session_id)


def _type_draft(driver: Any, w: Any, sid: str, text: str) -> None:
    """Type ``text`` in the open chat's box and wait until it is saved as its draft."""
    w.composer.setFocus()
    driver.qtbot.keyClicks(w.composer, text)
    driver.until(lambda: driver.run(w.store.get_state(draft_key(sid))) == text)


def _gamma_with_a_draft_backed_up(driver: Any, w: Any) -> str:
    gamma = _new_chat_with(driver, w, "in gamma")
    _type_draft(driver, w, gamma, GAMMA_DRAFT)
    assert driver.run(w.backups.backup_now(), timeout=20) is not None  # reopens Gamma
    return gamma


def _damage_while_typing(driver: Any, w: Any) -> None:
    """Another program empties sessions.db; the draft's next save meets it."""
    time.sleep(0.02)
    os.truncate(w.store.path, 0)
    driver.qtbot.keyClicks(w.composer, " and more")
    driver.until(lambda: w.recovery_page is not None and w.recovery_page.isVisible(), 60)


def _kept_unreadable(path: Path) -> None:
    """What was kept when the damage was found cannot be read (garbage in its place)."""
    kept = marked_kept(path)
    assert kept is not None
    for f in kept.folder.iterdir():
        if f.name.startswith(("sessions.db", "read-by-parley")):
            f.write_bytes(b"\x5a" * max(f.stat().st_size, 4096))


def _draft(driver: Any, w: Any, sid: str | None) -> Any:
    return driver.run(w.store.get_state(draft_key(sid)))


@pytest.mark.parametrize("how", ["at once", "after a quit"])
def test_the_draft_comes_back_in_the_chat_it_was_typed_in(
        driver: Any, home: Path, how: str) -> None:
    w = driver.configured()
    driver.send("in beta", wait=True)
    beta = str(w.chat.session_id)
    gamma = _gamma_with_a_draft_backed_up(driver, w)
    w.chat.opener.open_session(beta)
    driver.until(lambda: w.chat.session_id == beta and w.composer.text() == "")
    _type_draft(driver, w, beta, "typed in beta")
    _damage_while_typing(driver, w)
    path = w.store.path if w.store is not None else home / "sessions.db"
    _kept_unreadable(path)
    if how == "after a quit":
        driver.close(w)
        w = start_window(driver, home)
        driver.until(lambda: w.recovery_page is not None and w.recovery_page.isVisible(), 40)

    driver.qtbot.mouseClick(w.recovery_page.restore_buttons[0], LEFT)
    new = successor_of(driver, w) if how == "at once" else w
    driver.until(lambda: new.ready and new.tasks.pending == 0, 40)
    driver.until(lambda: new.chat.session_id == beta and new.composer.text(), 20)
    driver.settle(new)
    assert new.composer.text() == "typed in beta and more"  # once, in its own chat
    assert _draft(driver, new, gamma) == GAMMA_DRAFT  # Gamma's own draft untouched
    assert NOT_IN_FILE not in new.toast.message
    assert "was restored. Nothing could be read from sessions.db.damaged-" in \
        new.toast.message  # not "with what was saved after it": nothing of it was read
    new.chat.opener.open_session(gamma)  # Gamma's box: its own draft, nothing else
    driver.until(lambda: new.chat.session_id == gamma and new.composer.text() == GAMMA_DRAFT)


def test_a_draft_whose_chat_the_backup_lacks_comes_back_in_a_new_chat(
        driver: Any, home: Path) -> None:
    w = driver.configured()
    gamma = _gamma_with_a_draft_backed_up(driver, w)
    beta = _new_chat_with(driver, w, "in beta, after the backup")
    _type_draft(driver, w, beta, "typed in beta")
    _damage_while_typing(driver, w)
    _kept_unreadable(home / "sessions.db")

    driver.qtbot.mouseClick(w.recovery_page.restore_buttons[0], LEFT)
    new = successor_of(driver, w)
    driver.until(lambda: new.composer.text() == "typed in beta and more", 20)
    driver.settle(new)
    assert new.chat.session_id is None  # a new chat's box, not another chat's
    assert NOT_IN_FILE in new.toast.message and "was restored" in new.toast.message
    assert _draft(driver, new, gamma) == GAMMA_DRAFT
    assert [s.id for s in driver.run(new.store.list_sessions())] == [gamma]

"""Messages queued behind a streaming reply when sessions.db is damaged: none is lost.

A person asks for a long reply, queues three messages while it streams (the second with
a picture dropped on the box), and another program empties sessions.db meanwhile
(``truncate -s 0``). Parley finds it at its next save and shows the recovery page; the
queued messages are written to ``typed-at-start.txt`` (before the page shows: a kill
then keeps them), and after Salvage, Restore or a quit and "Start a new file" they are
back in the message box, in order, once each: not in their chat's queue as well. The
picture comes back to the tray when the recovered file still holds it; otherwise the
text says which file the message had. The one leaving when the damage is met comes back
first; one being edited in the box comes back once, as edited.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt

from parley.gui.composer.drafts import draft_key
from parley.gui.database.queued_kept import FILE_NAME
from parley.gui.startup.typed_at_start import FILE_NAME as TYPED
from tests.gui.damage import start_window, successor_of
from tests.gui.helpers import png
from tests.gui.queue_helpers import attach, queued

pytestmark = pytest.mark.timeout(180)
LEFT = Qt.MouseButton.LeftButton
QUEUED = ("queued one", "queued two, about the picture", "queued three")
BOX = "\n\n".join(QUEUED)


def _queue_three_then_empty_the_file(driver: Any, tmp_path: Path) -> tuple[Any, str]:
    """A configured window with a backup, a reply streaming, three messages queued behind
    it, then sessions.db emptied; returns the window once its recovery page shows."""
    w = driver.configured()
    driver.send("saved before the backup", wait=True)
    assert driver.run(w.backups.backup_now(), timeout=20) is not None
    driver.fake.script("slow " * 150, token_delay_ms=20, chunk_size=2)
    driver.send("tell me a long story", w)
    driver.until(lambda: w.composer_bar.busy and bool(w.chat.partial), timeout=15)
    sid = str(w.chat.session_id)
    driver.send(QUEUED[0], w)
    attach(driver, w, [png(tmp_path / "photo.png")])
    driver.send(QUEUED[1], w)
    driver.send(QUEUED[2], w)
    driver.until(lambda: queued(w, sid) == list(QUEUED))
    time.sleep(0.02)  # file times tick every few ms
    os.truncate(w.store.path, 0)  # another program: truncate -s 0 sessions.db
    driver.until(lambda: w.recovery_page is not None and w.recovery_page.isVisible(), 60)
    return w, sid


def _queue_behind_a_reply(driver: Any, texts: tuple[str, ...], w: Any = None, *,
                          prompt: str = "tell me a long story", words: int = 150
                          ) -> tuple[Any, str]:
    """A slow reply to ``prompt`` streaming in ``w`` (a configured window by default), and
    ``texts`` queued behind it; returns the window and its chat's id."""
    w = w or driver.configured()
    driver.fake.script("slow " * words, token_delay_ms=20, chunk_size=2)
    driver.send(prompt, w)
    driver.until(lambda: w.composer_bar.busy and bool(w.chat.partial), timeout=15)
    sid = str(w.chat.session_id)
    for text in texts:
        driver.send(text, w)
    driver.until(lambda: queued(w, sid) == list(texts))
    return w, sid


def _comes_back_once(driver: Any, w: Any, sid: str, box: str) -> None:
    """The chat ``sid`` open in ``w``: ``box`` in the message box, nothing queued."""
    driver.until(lambda: w.chat.session_id == sid and w.composer.text() == box, 20)
    driver.settle(w)
    assert queued(w, sid) == [] and not w.chat.runs.queue.view.isVisible()
    assert driver.run(w.store.queued_sessions()) == {}  # not queued a second time
    assert not (w.home / FILE_NAME).exists() and not (w.home / TYPED).exists()


@pytest.mark.parametrize("how", ["salvage", "backup"])
def test_queued_messages_come_back_in_the_box_once_after_salvage_or_restore(
        driver: Any, home: Path, tmp_path: Path, how: str) -> None:
    w, sid = _queue_three_then_empty_the_file(driver, tmp_path)
    page = w.recovery_page
    assert "The 3 messages you queued behind the reply were not sent" in page.message.text()
    kept = (home / TYPED).read_text(encoding="utf-8")  # written before the page showed
    assert kept == ("queued one\n\nqueued two, about the picture\n[it had photo.png attached]"
                    "\n\nqueued three\n")
    assert (home / FILE_NAME).exists()  # which they were: a kill now keeps them too

    driver.qtbot.mouseClick(page.salvage_button if how == "salvage"
                            else page.restore_buttons[0], LEFT)
    new = successor_of(driver, w)
    _comes_back_once(driver, new, sid, BOX)  # the recovered file held the picture:
    assert [p.name for p in new.chat.attachments.pending()] == ["photo.png"]  # in the tray


def test_queued_messages_survive_a_quit_and_a_new_file(
        driver: Any, home: Path, tmp_path: Path) -> None:
    w, sid = _queue_three_then_empty_the_file(driver, tmp_path)
    driver.close(w)  # quit at the page

    w = start_window(driver, home)  # the next start: the page again
    driver.until(lambda: w.recovery_page is not None and w.recovery_page.isVisible(), 40)
    driver.qtbot.mouseClick(w.recovery_page.fresh_button, LEFT)  # nothing of the old file
    driver.until(lambda: w.ready and w.tasks.pending == 0, 40)
    driver.until(lambda: w.composer.text().startswith("queued one"), 20)
    assert w.composer.text() == ("queued one\n\nqueued two, about the picture\n"
                                 "[it had photo.png attached]\n\nqueued three")
    assert not (home / FILE_NAME).exists() and not (home / TYPED).exists()


def test_the_queued_message_leaving_when_the_damage_is_met_comes_back_first(
        driver: Any, home: Path, tmp_path: Path) -> None:
    w, sid = _queue_behind_a_reply(driver, QUEUED, prompt="tell me a story", words=60)
    driver.qtbot.keyClick(w.composer, Qt.Key.Key_Escape)  # Esc in the empty box: paused
    driver.until(lambda: not w.composer_bar.busy and w.tasks.pending == 0, 30)
    time.sleep(0.02)
    os.truncate(w.store.path, 0)
    driver.fake.script("never sent")
    driver.qtbot.keyClick(w.composer, Qt.Key.Key_Return)  # Enter in the empty box: sent on
    driver.until(lambda: w.recovery_page is not None and w.recovery_page.isVisible(), 60)
    assert "The 3 messages you queued" in w.recovery_page.message.text()

    driver.qtbot.mouseClick(w.recovery_page.salvage_button, LEFT)
    new = successor_of(driver, w)
    _comes_back_once(driver, new, sid, BOX)  # the one leaving first, none twice
    assert [t.text() for t in driver.run(new.store.history(sid)) if t.role == "user"] == [
        "tell me a story"]


def test_a_queued_message_being_edited_comes_back_once_as_edited(
        driver: Any, home: Path, tmp_path: Path) -> None:
    w, sid = _queue_behind_a_reply(driver, QUEUED)
    driver.qtbot.keyClick(w.composer, Qt.Key.Key_Up)  # the last one, edited in the box
    driver.until(lambda: w.composer.text() == QUEUED[2])
    driver.qtbot.keyClicks(w.composer, ", edited")
    time.sleep(0.02)
    os.truncate(w.store.path, 0)
    driver.until(lambda: w.recovery_page is not None and w.recovery_page.isVisible(), 60)

    driver.qtbot.mouseClick(w.recovery_page.salvage_button, LEFT)
    new = successor_of(driver, w)
    _comes_back_once(driver, new, sid, "queued three, edited\n\nqueued one\n\n"
                     "queued two, about the picture")


def test_the_message_that_met_the_damage_comes_back_before_the_queued_ones(
        driver: Any, home: Path) -> None:
    w, sid = _queue_behind_a_reply(driver, QUEUED[:2])
    time.sleep(0.02)
    os.truncate(w.store.path, 0)
    driver.send("typed as it broke", w)
    driver.until(lambda: w.recovery_page is not None and w.recovery_page.isVisible(), 60)
    said = w.recovery_page.message.text()
    assert said.endswith(f"(kept meanwhile in {home / TYPED}). The 2 messages you queued "
                         "behind the reply come back after it, not sent, in order.")

    driver.qtbot.mouseClick(w.recovery_page.salvage_button, LEFT)
    new = successor_of(driver, w)
    _comes_back_once(driver, new, sid, "typed as it broke\n\n" + "\n\n".join(QUEUED[:2]))


def test_queued_messages_whose_kept_text_was_deleted_stay_queued(
        driver: Any, home: Path, tmp_path: Path) -> None:
    w, sid = _queue_three_then_empty_the_file(driver, tmp_path)
    driver.close(w)  # quit at the page, then the kept text is deleted by hand
    (home / TYPED).unlink()

    w = start_window(driver, home)
    driver.until(lambda: w.recovery_page is not None and w.recovery_page.isVisible(), 40)
    driver.qtbot.mouseClick(w.recovery_page.salvage_button, LEFT)
    driver.until(lambda: w.ready and w.tasks.pending == 0 and w.chat is not None
                 and w.chat.session_id == sid and queued(w, sid) == list(QUEUED), 40)
    assert w.composer.text() == ""  # not in the box: still queued, with the picture
    assert [[f.name for f in m.files] for m in driver.run(w.store.queued_messages(sid))] == [
        [], ["photo.png"], []]
    assert not (home / FILE_NAME).exists()


def test_a_draft_saved_in_its_chat_comes_back_once(driver: Any, home: Path) -> None:
    """Trial 17b: a message typed and not sent when the damage was met came back twice
    after Salvage — once from the kept text, once as the chat's saved draft."""
    w = driver.configured()
    driver.send("saved before the backup", wait=True)
    assert driver.run(w.backups.backup_now(), timeout=20) is not None
    w, sid = _queue_behind_a_reply(driver, QUEUED[:1], w)
    w.composer.setFocus()
    driver.qtbot.keyClicks(w.composer, "typed, not sent")
    driver.until(lambda: driver.run(w.store.get_state(draft_key(sid))) == "typed, not sent")
    time.sleep(0.02)
    os.truncate(w.store.path, 0)
    driver.until(lambda: w.recovery_page is not None and w.recovery_page.isVisible(), 60)
    driver.qtbot.mouseClick(w.recovery_page.salvage_button, LEFT)
    new = successor_of(driver, w)
    driver.until(lambda: new.chat.session_id == sid and "typed, not sent" in new.composer.text(),
                 20)
    driver.settle(new)
    assert new.composer.text().count("typed, not sent") == 1, new.composer.text()
    assert QUEUED[0] in new.composer.text()


@pytest.mark.parametrize("how", ["typed", "sent"])
def test_a_draft_changed_since_it_was_saved_comes_back_once_after_restore(
        driver: Any, home: Path, how: str) -> None:
    """Trial 20: after Restore the box held the kept text and the chat's older saved draft
    run together; the draft comes back once, as it was typed."""
    w = driver.configured()
    driver.send("saved before the backup", wait=True)
    sid = str(w.chat.session_id)
    w.composer.setFocus()
    driver.qtbot.keyClicks(w.composer, "an older draft")
    driver.until(lambda: driver.run(w.store.get_state(draft_key(sid))) == "an older draft")
    assert driver.run(w.backups.backup_now(), timeout=20) is not None
    w.composer.set_text("")
    driver.qtbot.keyClicks(w.composer, "the draft as typed")
    driver.until(lambda: driver.run(w.store.get_state(draft_key(sid))) == "the draft as typed")
    time.sleep(0.02)
    os.truncate(w.store.path, 0)  # another program empties it
    if how == "sent":
        driver.send(" and more", w)  # the send meets the damage: the box, kept
    else:  # the draft's next save meets it
        driver.qtbot.keyClicks(w.composer, " and more")
    driver.until(lambda: w.recovery_page is not None and w.recovery_page.isVisible(), 60)

    driver.qtbot.mouseClick(w.recovery_page.restore_buttons[0], LEFT)
    new = successor_of(driver, w)
    driver.until(lambda: new.chat.session_id == sid and new.composer.text(), 20)
    driver.settle(new)
    assert new.composer.text() == "the draft as typed and more"  # before: "…\n\nthe draft as typed"
    assert not (home / TYPED).exists() and not (home / FILE_NAME).exists()

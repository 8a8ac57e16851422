"""A message with files attached, sent while a reply streams, is queued with its files.

Driven like a person against the fake provider server: files dropped on the message
box, Enter while the reply streams, Up to edit the queued message (its files come
back to the tray), Alt+Q then Delete to take it back, a restart in between.
"""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt

from parley.gui.chat.queue_view import RESTORED
from tests.gui.helpers import png, ready
from tests.gui.queue_helpers import attach, queued, stream_slowly, user_texts

pytestmark = pytest.mark.timeout(120)


def b64(path: Path) -> str:
    return base64.b64encode(path.read_bytes()).decode("ascii")


def sent_images(driver: Any) -> list[list[str]]:
    """The base64 images of the last user message of each chat request, in order."""
    out = []
    for request in driver.fake.model_requests:
        content = [m for m in request.body["messages"] if m["role"] == "user"][-1]["content"]
        if isinstance(content, list):
            out.append([p["source"]["data"] for p in content if p.get("type") == "image"])
    return out


def test_a_message_with_an_image_queued_during_a_reply_is_sent_after_it(
        driver: Any, tmp_path: Path) -> None:
    w = driver.configured()
    sid = stream_slowly(driver, w, "first question")
    image = png(tmp_path / "photo.png", (60, 40))
    attach(driver, w, [image])
    driver.send("what is in this picture?", w)  # Enter while the reply streams: queued
    driver.until(lambda: queued(w, sid) == ["what is in this picture?"])
    view = w.chat.runs.queue.view
    assert view.texts() == ["1.  [photo.png]  what is in this picture?"]
    assert w.composer.text() == "" and w.composer_bar.tray.count() == 0
    (saved,) = driver.run(w.chat.store.queued_messages(sid))
    assert [f.name for f in saved.files] == ["photo.png"]  # saved with the message

    driver.until(lambda: user_texts(driver, w, sid)[-1:] == ["what is in this picture?"]
                 and not w.composer_bar.busy and w.tasks.pending == 0, timeout=40)
    turns = driver.run(w.chat.store.history(sid))
    assert [b.type for b in turns[2].blocks] == ["image", "text"]
    assert [b64(image)] in sent_images(driver)  # the image reached the provider
    assert driver.run(w.chat.store.queued_sessions()) == {}
    assert driver.run(w.store.attachment_usage())[0] == 1  # kept once, by the turn


def test_a_restart_keeps_the_queued_files_and_sends_them(driver: Any, tmp_path: Path) -> None:
    w = driver.configured()
    sid = stream_slowly(driver, w, "before closing")
    first, second = png(tmp_path / "one.png", (30, 20)), png(tmp_path / "two.png", (20, 30),
                                                             "#336699")
    attach(driver, w, [first, second])
    driver.send("two pictures", w)
    driver.until(lambda: queued(w, sid) == ["two pictures"])
    driver.close(w)  # quit while the reply streams: the queue is kept, with its files

    w = driver.open()
    driver.until(lambda: w.chat.session_id == sid and queued(w, sid) == ["two pictures"],
                 timeout=20)
    view = w.chat.runs.queue.view
    assert view.heading.text() == RESTORED and view.texts() == ["1.  [2 files]  two pictures"]
    driver.qtbot.mouseClick(view.send_button, Qt.MouseButton.LeftButton)  # "send them now?"
    driver.until(lambda: user_texts(driver, w, sid)[-1:] == ["two pictures"], timeout=30)
    driver.settle(w)
    turns = driver.run(w.chat.store.history(sid))
    assert [b.type for b in turns[-2].blocks] == ["image", "image", "text"]
    assert [b64(first), b64(second)] in sent_images(driver)  # both reached the provider


def test_up_brings_the_files_back_to_the_tray_and_delete_drops_them(
        driver: Any, tmp_path: Path) -> None:
    w = driver.configured()
    sid = stream_slowly(driver, w, "a question")
    pending = png(tmp_path / "next.png", (16, 16), "#112233")
    attach(driver, w, [png(tmp_path / "a.png"), png(tmp_path / "b.png", (30, 30), "#445566")])
    driver.send("two files", w)
    driver.until(lambda: queued(w, sid) == ["two files"])
    attach(driver, w, [pending])  # attached for the next message, while the queue waits
    w.composer.setFocus()
    driver.qtbot.keyClick(w.composer, Qt.Key.Key_Escape)  # paused: nothing leaves meanwhile

    driver.qtbot.keyClick(w.composer, Qt.Key.Key_Up)  # edit it: its files are in the tray
    driver.until(lambda: [p.name for p in ready(w)] == ["a.png", "b.png"])
    assert w.composer.text() == "two files"
    tray = w.composer_bar.tray
    tray.remove_requested.emit(ready(w)[1].key)  # its × : b.png goes
    driver.qtbot.keyClicks(w.composer, ", one now")
    driver.qtbot.keyClick(w.composer, Qt.Key.Key_Return)
    driver.until(lambda: w.tasks.pending <= 1)  # the run still streams
    (message,) = driver.run(w.chat.store.queued_messages(sid))
    assert (message.text, [f.name for f in message.files]) == ("two files, one now", ["a.png"])
    assert [p.name for p in ready(w)] == ["next.png"]  # the pending file is back
    assert w.chat.runs.queue.view.texts() == ["1.  [a.png]  two files, one now"]

    # Alt+Q, Delete: taken back; its file's bytes go (no turn uses them).
    driver.qtbot.keyClick(w.composer, Qt.Key.Key_Q, Qt.KeyboardModifier.AltModifier)
    driver.qtbot.keyClick(w.chat.runs.queue.view.lines, Qt.Key.Key_Delete)
    driver.until(lambda: w.tasks.pending <= 1 and not driver.run(
        w.chat.store.queued_messages(sid)))
    assert driver.run(w.store.attachment_usage())[0] == 0
    w.composer.setFocus()
    driver.qtbot.keyClick(w.composer, Qt.Key.Key_Escape)  # stop the reply
    driver.settle(w)

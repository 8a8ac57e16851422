"""SIGKILL Parley while a reply streams with two messages queued: neither is lost, nor
the image pasted into the second.

A real window in a process of its own (``tests/e2e/queue_worker.py``) types a message,
then two more while the reply streams (queued, saved when queued), and is killed with
SIGKILL — no shutdown, no atexit. The file opened fresh holds both, in order; the next
window shows them paused with its question, and sends them, in order, only when asked.
Killed instead once sessions.db, emptied meanwhile, brought the recovery page: after the
next start's Salvage both are in the message box, the image in the tray, queued no more.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt

from parley.core.store import Store
from parley.gui.chat.queue_view import RESTORED
from tests.e2e.queue_worker import QUEUED
from tests.gui.damage import start_window

ROOT = Path(__file__).resolve().parents[2]
pytestmark = [pytest.mark.timeout(180),
              pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs SIGKILL")]


def test_a_sigkill_with_two_queued_messages_loses_neither(driver: Any, home: Path) -> None:
    driver.fake.script("slow " * 4000, token_delay_ms=20, chunk_size=2)  # ~40 s: killed first
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", PARLEY_KEYRING="file")
    worker = subprocess.Popen(
        [sys.executable, "-m", "tests.e2e.queue_worker", str(home),
         driver.fake.anthropic_base_url],
        cwd=ROOT, env=env, text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        assert worker.stdout is not None
        line = worker.stdout.readline()  # "queued <sid>" once both are saved
        assert line.startswith("queued "), worker.stderr.read() if worker.stderr else line
        sid = line.split()[1]
    finally:
        worker.send_signal(signal.SIGKILL)
        worker.wait(timeout=30)
    assert worker.returncode == -signal.SIGKILL

    with Store.open(home / "sessions.db") as db:  # as the next start reads it
        assert [m.text for m in db.queued_messages(sid)] == list(QUEUED)
        assert [[f.name for f in m.files] for m in db.queued_messages(sid)] == [
            [], ["Pasted image.png"]]
        turns = db.history(sid)
        assert [t.text() for t in turns if t.role == "user"] == ["Tell me a very long story"]

    w = driver.open(env={"ANTHROPIC_API_KEY": "sk-ant-test",
                         "ANTHROPIC_BASE_URL": driver.fake.anthropic_base_url})
    driver.until(lambda: w.chat.session_id == sid
                 and [m.text for m in w.chat.runs.queue.messages(sid)] == list(QUEUED),
                 timeout=20)
    view = w.chat.runs.queue.view
    assert view.heading.text() == RESTORED  # asked, not sent by itself
    driver.fake.script("The end.")
    driver.qtbot.mouseClick(view.send_button, Qt.MouseButton.LeftButton)
    driver.until(lambda: [t.text() for t in driver.run(w.chat.store.history(sid))
                          if t.role == "user"] == ["Tell me a very long story", *QUEUED],
                 timeout=30)
    driver.settle(w)
    assert driver.run(w.chat.store.queued_sessions()) == {}
    turns = driver.run(w.chat.store.history(sid))
    assert [b.type for b in turns[-2].blocks] == ["image", "text"]  # sent with its image


def test_a_sigkill_at_the_recovery_page_loses_no_queued_message(driver: Any, home: Path) -> None:
    """sessions.db emptied while the reply streams with two messages queued, the window
    killed once its recovery page shows: the next start's page, Salvage, and both are
    in the message box (the pasted image in the tray), not queued a second time."""
    driver.fake.script("slow " * 4000, token_delay_ms=20, chunk_size=2)
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", PARLEY_KEYRING="file")
    worker = subprocess.Popen(
        [sys.executable, "-m", "tests.e2e.queue_worker", str(home),
         driver.fake.anthropic_base_url, "damage"],
        cwd=ROOT, env=env, text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        assert worker.stdout is not None
        line = worker.stdout.readline()  # "page <sid>" once the recovery page shows
        assert line.startswith("page "), worker.stderr.read() if worker.stderr else line
        sid = line.split()[1]
    finally:
        worker.send_signal(signal.SIGKILL)
        worker.wait(timeout=30)
    assert worker.returncode == -signal.SIGKILL

    w = start_window(driver, home)
    driver.until(lambda: w.recovery_page is not None and w.recovery_page.isVisible(), 40)
    driver.qtbot.mouseClick(w.recovery_page.salvage_button, Qt.MouseButton.LeftButton)
    driver.until(lambda: w.ready and w.tasks.pending == 0 and w.chat is not None
                 and w.chat.session_id == sid and bool(w.composer.text()), 40)
    driver.settle(w)
    assert w.composer.text() == "\n\n".join(QUEUED)
    assert [p.name for p in w.chat.attachments.pending()] == ["Pasted image.png"]
    assert driver.run(w.store.queued_sessions()) == {}
    assert w.chat.runs.queue.messages(sid) == []

"""Helpers of the window tests of queued messages (gui/chat/queue.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.gui.helpers import drop, ready

#: A reply of 250 chunks of 2 characters, 20 ms apart: about 5 s of streaming.
SLOW = "slow " * 100


def user_texts(driver: Any, w: Any, sid: str) -> list[str]:
    """The texts of chat ``sid``'s saved user turns, in order."""
    turns = driver.run(w.chat.store.history(sid))
    return [t.text() for t in turns if t.role == "user"]


def queued(w: Any, sid: str) -> list[str]:
    """The texts of chat ``sid``'s queued messages as the window knows them."""
    return [m.text for m in w.chat.runs.queue.messages(sid)]


def stream_slowly(driver: Any, w: Any, text: str) -> str:
    """Send ``text`` with a slow reply scripted; return the chat once its reply streams."""
    driver.fake.script(SLOW, token_delay_ms=20, chunk_size=2)
    driver.send(text, w)
    driver.until(lambda: w.composer_bar.busy and bool(w.chat.partial), timeout=15)
    sid = w.chat.session_id
    assert sid is not None
    return str(sid)


def attach(driver: Any, w: Any, paths: list[Path]) -> None:
    """Drop ``paths`` on the message box and wait until the tray has read them."""
    assert drop(w.composer, paths)
    driver.until(lambda: len(ready(w)) == len(paths)
                 and len(w.chat.attachments.pending()) == len(paths))

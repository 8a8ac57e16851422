"""A Parley window in a process of its own that queues two messages while a reply streams.

Run by ``tests/e2e/test_queue_kill.py``: ``python -m tests.e2e.queue_worker HOME BASE_URL``.
It opens the window on HOME with the fake provider's Anthropic API at BASE_URL, types a
message and Enter, and while the (slow) reply streams types two more, each with Enter,
as a person does; the second with an image pasted (Ctrl+V) into the box first. Once
both are queued (saved), it prints ``queued`` and keeps streaming until it is killed.
With a third argument ``damage`` it then empties sessions.db (as ``truncate -s 0``), waits
for the recovery page and prints ``page`` instead.
"""

from __future__ import annotations

import asyncio
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("QT_API", "pyside6")

from PySide6.QtCore import Qt  # noqa: E402
from PySide6.QtGui import QImage  # noqa: E402
from PySide6.QtTest import QTest  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

QUEUED = ("queued before the kill, one", "queued before the kill, two")


async def until(predicate, timeout: float) -> None:  # type: ignore[no-untyped-def]
    end = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > end:
            raise TimeoutError("the window did not get there in time")
        await asyncio.sleep(0.05)


async def drive(home: Path, base_url: str, damage: bool = False) -> None:
    from parley.gui.main_window import MainWindow

    w = MainWindow(home=home, env={"ANTHROPIC_API_KEY": "sk-ant-test",
                                   "ANTHROPIC_BASE_URL": base_url})
    w.show()
    w.startup.start_after_first_paint()
    await until(lambda: w.ready and w.tasks.pending == 0 and w.chat is not None, 60)

    def say(text: str) -> None:
        w.composer.setFocus()
        QTest.keyClicks(w.composer, text)
        QTest.keyClick(w.composer, Qt.Key.Key_Return)

    say("Tell me a very long story")
    await until(lambda: w.composer_bar.busy and bool(w.chat.partial), 60)
    say(QUEUED[0])
    image = QImage(32, 24, QImage.Format.Format_RGB32)
    image.fill(Qt.GlobalColor.darkCyan)
    QApplication.clipboard().setImage(image)
    w.composer.setFocus()
    QTest.keyClick(w.composer, Qt.Key.Key_V, Qt.KeyboardModifier.ControlModifier)
    pending = w.chat.attachments.pending
    await until(lambda: len(pending()) == 1 and pending()[0].ready, 30)
    say(QUEUED[1])  # with the pasted image
    sid = w.chat.session_id
    await until(lambda: len(w.chat.runs.queue.messages(sid)) == 2, 30)
    if damage:  # another program empties the file: Parley finds it at its next save
        os.truncate(home / "sessions.db", 0)
        await until(lambda: w.recovery_page is not None and w.recovery_page.isVisible(), 60)
        print("page", sid, flush=True)
    else:
        print("queued", sid, flush=True)
    while True:  # the reply goes on streaming until the SIGKILL
        await asyncio.sleep(1)


def main() -> None:
    import qasync

    app = QApplication(sys.argv[:1])
    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)
    with loop:
        loop.run_until_complete(drive(Path(sys.argv[1]), sys.argv[2],
                                      sys.argv[3:] == ["damage"]))


if __name__ == "__main__":
    main()

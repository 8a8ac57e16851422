"""Make the README's screenshot of messages queued while a reply streams, from the real window.

Usage::

    QT_QPA_PLATFORM=offscreen .venv/bin/python -m tests.gui.screenshot_queue \
        [--out resources/screenshots] [--scheme light]

A child process starts the fake provider server, opens the real window on a fresh
Parley home (offscreen: no X server needed), sends a message whose reply streams
slowly, types three more messages with Enter while it streams (as a person does:
key events; the second with two files attached, as a drop on the box attaches them),
and grabs the window (``QWidget.grab``): the reply coming, the queue
under it. File: ``<out>/queue-<scheme>.png``.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SIZE = (1180, 720)
ASKED = "Plan three days in Lisbon for someone who likes food and old streets."
REPLY = ("**Day 1 — Alfama and the castle.** Start early at the Miradouro de Santa Luzia, "
         "then walk up to the Castelo de Sao Jorge before the crowds. Lunch on grilled "
         "sardines in a tasca on Rua de Sao Pedro; in the evening, fado in a small house "
         "rather than a show.\n\n**Day 2 — Baixa, Chiado and the river.** Coffee and a "
         "pastel de nata at the Manteigaria, the Time Out Market for lunch, then the tram 28 "
         "back up the hill. ") * 3
QUEUED = ("Which of these needs a booking ahead?",
          "And a rainy-day plan for day 2, please",
          "Keep the whole thing under 400 euros for two")


def _map_png() -> bytes:
    """A small picture to attach (PNG bytes)."""
    import io

    from PIL import Image

    out = io.BytesIO()
    Image.new("RGB", (320, 200), "#2f6f9f").save(out, "PNG")
    return out.getvalue()


def run_child(scheme: str, out: Path) -> int:
    import qasync
    from PySide6.QtCore import Qt
    from PySide6.QtTest import QTest
    from PySide6.QtWidgets import QApplication

    from parley.gui.look import appearance
    from parley.gui.main_window import MainWindow
    from tests.fakes.server import FakeProviderServer

    server = FakeProviderServer().start()
    app = QApplication([sys.argv[0]])
    app.setQuitOnLastWindowClosed(False)
    app.setStyle("Fusion")
    appearance.pick_font(app)
    appearance.apply(app)
    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)

    async def scenes() -> None:
        with tempfile.TemporaryDirectory() as tmp:
            home = Path(tmp) / "home"
            os.environ["PARLEY_HOME"] = str(home)  # the key file follows PARLEY_HOME
            w = MainWindow(home=home, env={})
            w.setGeometry(0, 0, *SIZE)
            w.show()
            await w.startup.start()
            await w.hub.add_provider("anthropic", base_url=server.anthropic_base_url,
                                     api_key="sk-ant-screenshot",
                                     default_model="claude-sonnet-4-5")
            assert w.chat is not None
            await w.chat.load_sidebar()
            await w.chat.enter()
            server.script(REPLY, token_delay_ms=60, chunk_size=6)

            def say(text: str) -> None:
                w.composer.setFocus()
                QTest.keyClicks(w.composer, text)
                QTest.keyClick(w.composer, Qt.Key.Key_Return)

            say(ASKED)
            while not (w.composer_bar.busy and w.chat.partial):
                await asyncio.sleep(0.05)
            await asyncio.sleep(2.5)  # a few lines of the reply
            for n, text in enumerate(QUEUED):
                if n == 1:  # with two files, as dropped on the box
                    files = w.chat.attachments
                    files.add_bytes(_map_png(), "metro-map.png")
                    files.add_bytes(b"Museums open 10:00-18:00, closed Mondays.\n",
                                    "opening-hours.txt")
                    while not (len(files.pending()) == 2
                               and all(p.ready for p in files.pending())):
                        await asyncio.sleep(0.05)
                say(text)
            sid = w.chat.session_id
            while len(w.chat.runs.queue.messages(sid or "")) < len(QUEUED):
                await asyncio.sleep(0.05)
            w.composer.setFocus()
            await asyncio.sleep(1.0)
            w.grab().save(str(out / f"queue-{scheme}.png"))
            await w.shutdown()
            w.close()

    try:
        with loop:
            loop.run_until_complete(scenes())
    finally:
        server.stop()
    return 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", type=Path, default=ROOT / "resources" / "screenshots")
    p.add_argument("--scheme", choices=("light", "dark"), default="light")
    p.add_argument("--child", choices=("light", "dark"), help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.child:
        return run_child(args.child, args.out)
    args.out.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", PARLEY_THEME=args.scheme,
               PARLEY_KEYRING="file", QT_SCALE_FACTOR="1")
    env.pop("PARLEY_HOME", None)
    subprocess.run([sys.executable, "-m", "tests.gui.screenshot_queue", "--child", args.scheme,
                    "--out", str(args.out)], env=env, cwd=ROOT, check=True, timeout=120)
    print(args.out / f"queue-{args.scheme}.png")
    return 0


if __name__ == "__main__":
    sys.exit(main())

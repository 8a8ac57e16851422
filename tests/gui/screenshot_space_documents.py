"""Make the README's screenshots of space documents, from the real window.

Usage::

    QT_QPA_PLATFORM=offscreen .venv/bin/python -m tests.gui.screenshot_space_documents \
        [--out resources/screenshots]

For each colour scheme a child process starts the fake provider server, opens the real
window on a fresh Parley home (offscreen), gives a space "Research" two documents (a
three-page PDF made by ``tests.core.test_space_documents.make_pdf`` and a Markdown file),
opens the space's dialog on them (Ctrl+Shift+D's command) and grabs it
(``QWidget.grab``), then sends one message in a chat of the space and grabs the window,
whose header names the documents the chat was given. Files:
``<out>/space-documents-<scheme>.png`` and ``<out>/space-documents-chat-<scheme>.png``.
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
NOTES = ("# Style notes\n\nDates are written 1 March 2026. Figures under ten are spelled "
         "out. Every claim cites its source and page.\n") * 20
QUESTION = "How should I write the date of the launch in the report?"
ANSWER = ("Write it as **1 March 2026**: your style notes (style-notes.md) ask for the day, "
          "the month in words and the year, and the report's launch page (report.pdf, "
          "page 2) gives the date.")


async def _until(check: object, timeout: float = 20.0) -> None:
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while not check() and loop.time() < end:  # type: ignore[operator]
        await asyncio.sleep(0.05)


def run_child(scheme: str, out: Path) -> int:
    import qasync
    from PySide6.QtWidgets import QApplication

    from parley.gui.look import appearance
    from parley.gui.main_window import MainWindow
    from tests.core.images import make_pdf
    from tests.fakes.server import FakeProviderServer

    server = FakeProviderServer().start()
    server.script(ANSWER, token_delay_ms=4)
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
                                     default_model="claude-sonnet-4-6")
            store = w.store
            space = await store.create_space("Research", system_prompt="Be precise.")
            pdf = make_pdf(["Quarterly report: revenue grew 12%.",
                            "The launch is on 1 March 2026.", "Appendix: glossary."])
            await store.add_space_document(space.id, "report.pdf", pdf)
            await store.add_space_document(space.id, "style-notes.md", NOTES.encode())
            assert w.chat is not None
            await w.chat.load_sidebar()
            await w.chat.enter()
            w.chat.new_session(space.id)
            while w.tasks.pending:
                await asyncio.sleep(0.05)
            dlg = w.chat.organizer.edit_space(space.id, documents=True)
            assert dlg is not None and dlg.documents is not None
            panel = dlg.documents
            await _until(lambda: "sent with every message" in panel.status.text())
            await asyncio.sleep(0.5)
            dlg.grab().save(str(out / f"space-documents-{scheme}.png"))
            dlg.reject()
            w.composer.setFocus()
            w.composer.setPlainText(QUESTION)
            w.window_commands.send_from_composer()
            await _until(lambda: bool(w.chat.turns) and w.chat.turns[-1].text() == ANSWER
                         and not w.tasks.pending)
            w.chat.models.update_title()
            await _until(lambda: w.chat.models.heading.documents.isVisible())
            await asyncio.sleep(0.8)
            w.grab().save(str(out / f"space-documents-chat-{scheme}.png"))
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
    p.add_argument("--child", choices=("light", "dark"), help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.child:
        return run_child(args.child, args.out)
    args.out.mkdir(parents=True, exist_ok=True)
    for scheme in ("light", "dark"):
        env = dict(os.environ, QT_QPA_PLATFORM="offscreen", PARLEY_THEME=scheme,
                   PARLEY_KEYRING="file", QT_SCALE_FACTOR="1")
        env.pop("PARLEY_HOME", None)
        subprocess.run([sys.executable, "-m", "tests.gui.screenshot_space_documents",
                        "--child", scheme, "--out", str(args.out)], env=env, cwd=ROOT,
                       check=True, timeout=300)
    for path in sorted(args.out.glob("space-documents*.png")):
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Make the README's screenshots of "Ask several models", from the real window.

Usage::

    QT_QPA_PLATFORM=offscreen .venv/bin/python -m tests.gui.screenshot_several \
        [--out resources/screenshots]

For each colour scheme a child process starts the fake provider server, opens the real
window on a fresh Parley home (offscreen), asks three models one message at once
(``parley.gui.chat.several``) with an answer scripted per model, waits until the three
columns are done and grabs the side-by-side view (``QWidget.grab``), then the chat with
the answer shown and ‹ 1/3 › under it. Files: ``<out>/several-<scheme>.png`` and
``<out>/several-chat-<scheme>.png``.
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
QUESTION = "In two sentences: should a small team pick PostgreSQL or SQLite for a new app?"
ANSWERS = {
    "claude-sonnet-4-6": (
        "**SQLite** if the app runs on one machine and writes come from one process: "
        "nothing to run, one file to back up.\n\n**PostgreSQL** as soon as several "
        "servers write at once or you need roles, replication or `LISTEN/NOTIFY`."),
    "claude-opus-4-6": (
        "Start from where the data lives. A desktop or single-server app is well served "
        "by SQLite (WAL mode handles many readers and one writer); a web service with "
        "several app servers needs PostgreSQL, and moving later costs more than "
        "starting there."),
    "claude-haiku-4-5": (
        "PostgreSQL for a networked multi-user service, SQLite for an embedded or "
        "single-user one."),
}


def run_child(scheme: str, out: Path) -> int:
    import qasync
    from PySide6.QtWidgets import QApplication

    from parley.core.content import TextBlock
    from parley.gui.look import appearance
    from parley.gui.main_window import MainWindow
    from tests.fakes.server import FakeProviderServer

    server = FakeProviderServer().start()
    for model, text in ANSWERS.items():
        server.script(text, model=model, token_delay_ms=8)
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
            session = await w.store.create_session(title="Database for the new app",
                                                   model="anthropic:claude-sonnet-4-6")
            assert w.chat is not None
            await w.chat.load_sidebar()
            await w.chat.enter()
            w.chat.open_session(session.id)
            while len(w.model_picker.choices) < 3 or w.tasks.pending:
                await asyncio.sleep(0.05)
            models = [f"anthropic:{m}" for m in ANSWERS]
            several = w.chat.several
            await several.run(session.id, [TextBlock(QUESTION)], models)
            view = several.view
            assert view is not None
            view.resize(1100, 560)
            while w.tasks.pending:
                await asyncio.sleep(0.05)
            await asyncio.sleep(0.8)
            view.grab().save(str(out / f"several-{scheme}.png"))
            view.close()
            w.composer.setFocus()
            await asyncio.sleep(0.6)
            w.grab().save(str(out / f"several-chat-{scheme}.png"))
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
        subprocess.run([sys.executable, "-m", "tests.gui.screenshot_several", "--child",
                        scheme, "--out", str(args.out)], env=env, cwd=ROOT, check=True,
                       timeout=300)
    for path in sorted(args.out.glob("several*.png")):
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())

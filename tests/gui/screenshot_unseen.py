"""Make the README's screenshots of a compaction that failed, from the real window.

Usage::

    QT_QPA_PLATFORM=offscreen .venv/bin/python -m tests.gui.screenshot_unseen \
        [--out resources/screenshots]

For each colour scheme a child process starts the fake provider server, opens the
real window on a fresh Parley home (offscreen: no X server needed), fills a chat
whose oldest turns the model no longer sees (the record saved as a run saves it,
``parley.core.compaction.unseen``), presses Compact now while the fake server
answers without a summary, and grabs the window (``QWidget.grab``): the one-line
failure in the status bar and the note in the transcript. Then it opens the
failure's Details and grabs the dialog. Files: ``<out>/compaction-unseen-<scheme>.png``
and ``<out>/compaction-details-<scheme>.png``.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from tests.gui.transcript_reading import unseen_row

ROOT = Path(__file__).resolve().parents[2]
SIZE = (1180, 720)

#: A chat long enough that its oldest turns no longer fit (a kitchen renovation).
CHAT: list[tuple[str, str]] = [
    ("user", "We're renovating a 3 x 4 m kitchen. Where should the sink go?"),
    ("assistant", "Under the window on the 4 m wall: light for the work you do most, and "
                  "the plumbing usually runs there already."),
    ("user", "And the stove?"),
    ("assistant", "On the opposite wall, at least 1.2 m from the sink, so two people can "
                  "work without bumping into each other."),
    ("user", "Is a dishwasher next to the sink worth it?"),
    ("assistant", "Yes: on the side away from the corner, so its door does not block the "
                  "sink while it is open."),
    ("user", "What worktop holds up best?"),
    ("assistant", "Quartz: no sealing, hard to stain. Oiled oak looks warmer but needs "
                  "care every few months."),
    ("user", "How much space do I need between the island and the counter?"),
    ("assistant", "About 1.1 m; 1.2 m if two people cook at once."),
    ("user", "Which lights over the island?"),
    ("assistant", "Two or three pendants, 75-85 cm above the top, warm white (2700-3000 K)."),
]
FIRST_SEEN = 8  # the turns before it are the ones the model no longer sees
DETAIL = "Claude Haiku 4.5 did not answer with a summary"


def run_child(scheme: str, out: Path) -> int:
    import qasync
    from PySide6.QtWidgets import QApplication

    from parley.core.compaction.unseen import Unseen, save_unseen
    from parley.core.content import TextBlock, Turn, Usage
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

    async def settle(seconds: float = 0.5) -> None:
        await asyncio.sleep(seconds)

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
            session = await w.store.create_session(title="Kitchen renovation",
                                                   model="anthropic:claude-sonnet-4-5")
            turns = []
            t = 1_767_000_000_000
            for role, text in CHAT:
                t += 60_000
                usage = Usage(1200, 120) if role == "assistant" else None
                turn = Turn(role, [TextBlock(text)], created_at=t, usage=usage,
                            model="anthropic:claude-sonnet-4-5" if role == "assistant" else None)
                await w.store.append_turn(session.id, turn)
                turns.append(turn)
            await save_unseen(w.store, session.id, Unseen(
                session.id, turns[FIRST_SEEN].id, FIRST_SEEN, "summary-refused", DETAIL))
            assert w.chat is not None
            await w.chat.load_sidebar()
            await w.chat.enter()
            w.chat.open_session(session.id)
            while unseen_row(w.transcript) is None:
                await asyncio.sleep(0.05)
            # Compact now, answered without a summary however it is asked for.
            server.summary_answers = "chatty"
            w.window_commands.compact_now()
            bar = w.statusBar()
            while not bar.currentMessage() or w.tasks.pending:
                await asyncio.sleep(0.05)
            row = unseen_row(w.transcript)
            assert row is not None
            w.transcript.list_view.scroll_to_row(row - 2)
            w.composer.setFocus()
            await settle(1.0)
            w.grab().save(str(out / f"compaction-unseen-{scheme}.png"))
            dialog = bar.open_details()
            assert dialog is not None
            await settle(0.6)
            dialog.grab().save(str(out / f"compaction-details-{scheme}.png"))
            dialog.close()
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
        subprocess.run([sys.executable, "-m", "tests.gui.screenshot_unseen", "--child", scheme,
                        "--out", str(args.out)], env=env, cwd=ROOT, check=True, timeout=300)
    for path in sorted(args.out.glob("compaction-*.png")):
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())

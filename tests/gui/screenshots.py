"""Make the README screenshots from the real window under Xvfb, light and dark.

Usage::

    .venv/bin/python -m tests.gui.screenshots [--out resources/screenshots]

Needs ``Xvfb`` and ImageMagick's ``import`` (Debian: ``xvfb imagemagick``
plus Qt's xcb libraries). For each colour scheme a
child process starts the fake provider server, fills a Parley home with a few
chats, opens the real window on Xvfb's screen and captures it with
``import -window root``: the first-run set-up, a chat with markdown and code,
and a reply while it streams. Files: ``<out>/<scene>-<scheme>.png`` with scenes
``setup``, ``parley`` (the chat; the README shows it), ``streaming``,
``versions`` (a regenerated reply: ‹ 2/2 › under it), ``compaction`` (a
compacted chat's summary card) and ``greeting`` (a new chat).
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
SIZE = (1280, 800)
DISPLAY = ":97"

CHATS: list[tuple[str, str, list[tuple[str, str]]]] = [
    ("Work", "SQL window functions cheat sheet",
     [("user", "What's the difference between RANK and DENSE_RANK?"),
      ("assistant", "`RANK()` leaves gaps after ties (1, 1, 3); `DENSE_RANK()` does not "
                    "(1, 1, 2).")]),
    ("Work", "Draft: quarterly update email",
     [("user", "Help me tighten this paragraph."), ("assistant", "Here's a shorter version…")]),
    ("General", "Trip ideas for Lisbon in May",
     [("user", "Three days in Lisbon in May: what should I not miss?"),
      ("assistant", "**Day 1:** Alfama and the castle. **Day 2:** Belém. **Day 3:** Sintra.")]),
    ("General", "Explain Rust lifetimes simply",
     [("user", "Explain Rust lifetimes like I'm a Python developer."),
      ("assistant", "A lifetime is the compiler's proof that a reference never outlives "
                    "the value it points to.")]),
    ("General", "Reading a large CSV without running out of memory",
     [("user", "How do I read a 20 GB CSV file in Python without running out of memory?"),
      ("assistant", """\
Read it in **chunks** instead of all at once. With pandas, `read_csv` takes a
`chunksize` and returns an iterator of data frames:

```python
import pandas as pd

totals = {}
for chunk in pd.read_csv("sales.csv", chunksize=100_000):
    for region, amount in chunk.groupby("region")["amount"].sum().items():
        totals[region] = totals.get(region, 0) + amount
```

A few things that help further:

- Pass `usecols=[...]` so only the columns you need are parsed.
- Give `dtype=` explicitly: `category` for repeated strings saves a lot.
- For one-off queries, DuckDB can scan the file directly:
  `duckdb.sql("SELECT region, sum(amount) FROM 'sales.csv' GROUP BY 1")`.

Memory then stays around the size of one chunk, whatever the file size."""),
      ("user", "Nice. Would Polars be faster? Here is what chunked pandas does now.")]),
]


GARDEN: list[tuple[str, str]] = [
    ("user", "I have a 4 x 2 m raised bed in full sun. What should I plant this spring?"),
    ("assistant", "Tomatoes along the north edge, then peppers, lettuce and basil in front."),
    ("user", "How far apart should the tomatoes be?"),
    ("assistant", "About 60 cm: four plants fit along the 2 m side with room to prune."),
    ("user", "And when do I plant the lettuce?"),
    ("assistant", "As soon as the soil is workable: lettuce likes it cool. Sow every 3 weeks."),
    ("user", "Which basil grows best next to tomatoes?"),
    ("assistant", "Genovese basil: it likes the same sun and water as the tomatoes."),
    ("user", "What about watering in July?"),
    ("assistant", "Deeply, twice a week, in the morning; mulch keeps the soil from drying."),
]

VERSION_REPLY = """Often, yes — but measure first. Polars reads the CSV on every core and, with
`scan_csv(...).collect(streaming=True)`, never loads the whole file. Chunked
pandas is single-threaded, so on a laptop Polars is typically **3-10x** faster
for a group-by like yours."""


def chart_png() -> bytes:
    """A small bar chart (Pillow), attached to the last question of the CSV chat."""
    import io

    from PIL import Image, ImageDraw

    im = Image.new("RGB", (360, 200), "white")
    d = ImageDraw.Draw(im)
    d.text((12, 8), "Seconds per 20 GB run", fill="#333333")
    for i, (label, value, color) in enumerate(
            [("pandas", 410, "#c15f3c"), ("chunked", 260, "#d99a6c"), ("polars", 95, "#3c7fc1")]):
        x = 40 + i * 105
        d.rectangle((x, 180 - value * 140 // 410, x + 60, 180), fill=color)
        d.text((x + 4, 184), label, fill="#333333")
    buf = io.BytesIO()
    im.save(buf, "PNG")
    return buf.getvalue()

STREAMING_REPLY = """\
DuckDB is the quickest way to get an answer without writing a loop at all. It
reads the CSV in parallel, infers the column types from a sample and never
holds the whole file in memory:

```python
import duckdb

totals = duckdb.sql(
    "SELECT region, sum(amount) AS total FROM 'sales.csv' GROUP BY region ORDER BY total DESC"
).df()
```

For repeated queries, convert the file to **Parquet** once; every later query
then reads only the columns it needs, which is typically ten times faster.
"""

LAST_REPLY = """\
Usually, yes. Polars' **lazy** API streams the file and runs the query on all
cores, so it is often several times faster than chunked pandas:

```python
import polars as pl

totals = (
    pl.scan_csv("sales.csv")
    .group_by("region")
    .agg(pl.col("amount").sum())
    .collect(streaming=True)
)
```

It also infers compact types, so memory use stays low."""


def parent(out: Path) -> int:
    for tool in ("Xvfb", "import"):
        if shutil.which(tool) is None:
            print(f"{tool} is missing: apt-get install xvfb imagemagick", file=sys.stderr)
            return 1
    out.mkdir(parents=True, exist_ok=True)
    xvfb = subprocess.Popen(["Xvfb", DISPLAY, "-screen", "0", f"{SIZE[0]}x{SIZE[1]}x24",
                             "-nolisten", "tcp"], stderr=subprocess.DEVNULL)
    try:
        time.sleep(1.0)
        for scheme in ("light", "dark"):
            env = dict(os.environ, DISPLAY=DISPLAY, QT_QPA_PLATFORM="xcb", PARLEY_THEME=scheme,
                       PARLEY_KEYRING="file", QT_SCALE_FACTOR="1")
            env.pop("PARLEY_HOME", None)
            subprocess.run([sys.executable, "-m", "tests.gui.screenshots", "--child", scheme,
                            "--out", str(out)], env=env, cwd=ROOT, check=True, timeout=300)
    finally:
        xvfb.terminate()
        xvfb.wait()
    for path in sorted(out.glob("*.png")):
        print(path)
    return 0


def grab(out: Path, name: str, scheme: str) -> None:
    """Capture the X screen (the window fills it) as ``<out>/<name>-<scheme>.png``."""
    subprocess.run(["import", "-window", "root", str(out / f"{name}-{scheme}.png")],
                   check=True, env=os.environ)


async def settle(seconds: float = 0.6) -> None:
    """Let Qt paint and the X server catch up (the loop keeps processing events)."""
    await asyncio.sleep(seconds)


async def fill_store(store: object, fake_url: str) -> None:
    from parley.core.content import ImageBlock, TextBlock, Turn, Usage

    spaces = {s.name: s.id for s in await store.list_spaces()}  # type: ignore[attr-defined]
    if "Work" not in spaces:
        spaces["Work"] = (await store.create_space("Work")).id  # type: ignore[attr-defined]
    t = 1_767_000_000_000
    for space, title, turns in [("General", "Planning the spring garden", GARDEN), *CHATS]:
        session = await store.create_session(  # type: ignore[attr-defined]
            space_id=spaces[space], title=title, model="anthropic:claude-sonnet-4-5")
        for role, text in turns:
            t += 60_000
            usage = Usage(1200, 380, cache_read_tokens=9800) if role == "assistant" else None
            blocks: list[Any] = [TextBlock(text)]
            if text.endswith("what chunked pandas does now."):
                blocks.insert(0, ImageBlock("image/png", base64.b64encode(chart_png()).decode()))
            await store.append_turn(session.id, Turn(  # type: ignore[attr-defined]
                role, blocks, created_at=t, model="anthropic:claude-sonnet-4-5"
                if role == "assistant" else None, usage=usage))


def child(scheme: str, out: Path) -> int:
    import qasync
    from PySide6.QtWidgets import QApplication

    from parley.gui.look import appearance
    from parley.gui.main_window import MainWindow
    from tests.fakes.server import FakeProviderServer

    server = FakeProviderServer().start()
    app = QApplication([sys.argv[0]])
    app.setQuitOnLastWindowClosed(False)
    app.setStyle("Fusion")
    app.setWindowIcon(appearance.app_icon())
    appearance.pick_font(app)
    appearance.apply(app)
    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)

    def open_window(home: Path) -> MainWindow:
        os.environ["PARLEY_HOME"] = str(home)  # the key file follows PARLEY_HOME
        w = MainWindow(home=home, env={})
        w.setGeometry(0, 0, *SIZE)
        w.show()
        return w

    async def scenes() -> None:
        with tempfile.TemporaryDirectory() as tmp:
            # 1. First run: the set-up panel.
            first = open_window(Path(tmp) / "first")
            await first.start()
            panel = first.setup_panel
            assert panel is not None
            panel.key_edit.setText("sk-ant-fake.xxxxxxxxxxxxxxxxxxxxxxxx")
            panel.custom_url.setChecked(True)
            panel.url_edit.setText(server.anthropic_base_url)
            await panel.test_connection()
            panel.custom_url.setChecked(False)
            await settle()
            grab(out, "setup", scheme)
            await first.shutdown()
            first.close()

            print('scene', '2', flush=True)
            # 2. A chat with markdown and code, several chats in two spaces.
            home = Path(tmp) / "home"
            w = open_window(home)
            await w.startup.start()
            await w.hub.add_provider("anthropic", base_url=server.anthropic_base_url,
                                     api_key="sk-ant-screenshot", default_model="claude-sonnet-4-5")
            await fill_store(w.store, server.anthropic_base_url)
            assert w.chat is not None
            await w.chat.load_sidebar()
            await w.chat.enter()
            ids = w.sidebar.model.session_ids()
            w.chat.open_session(ids[0])
            await settle(1.0)
            server.script(LAST_REPLY, usage={"input_tokens": 1450, "output_tokens": 210,
                                             "cache_read_input_tokens": 11200})
            w.chat.retry()
            while w.composer_bar.busy or w.tasks.pending:
                await asyncio.sleep(0.05)
            await settle(1.0)
            grab(out, "parley", scheme)

            print('scene', 'versions', flush=True)
            # 2b. The same reply regenerated: the earlier answer is its sibling (‹ 2/2 ›).
            server.script(VERSION_REPLY, usage={"input_tokens": 1450, "output_tokens": 120})
            w.window_commands.regenerate_reply(w.chat.current_model())
            await settle(0.3)
            while w.composer_bar.busy or w.tasks.pending:
                await asyncio.sleep(0.05)
            await settle(1.0)
            grab(out, "versions", scheme)

            print('scene', '3', flush=True)
            # 3. A reply while it streams (Stop button, growing text).
            server.script(STREAMING_REPLY, token_delay_ms=30, chunk_size=5)
            w.composer.set_text("And with DuckDB?")
            w.window_commands.send_from_composer()
            await settle(2.5)
            grab(out, "streaming", scheme)
            w.window_commands.stop_run()
            await settle(0.5)

            print('scene', 'compaction', flush=True)
            # 4. A chat compacted: its older turns behind a summary card.
            garden = next(i for i in w.sidebar.model.session_ids()
                          if w.chat.sessions[i].title == "Planning the spring garden")
            w.chat.open_session(garden)
            await settle(1.0)
            w.window_commands.compact_now()
            await settle(0.3)
            while w.composer_bar.busy or w.tasks.pending:
                await asyncio.sleep(0.05)
            w.transcript.list_view.verticalScrollBar().setValue(0)
            await settle(1.0)
            grab(out, "compaction", scheme)

            print('scene', 'greeting', flush=True)
            # 5. A new chat: its greeting.
            w.toast.dismiss()
            w.window_commands.new_session()
            await settle(1.2)
            grab(out, "greeting", scheme)
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
        return child(args.child, args.out)
    return parent(args.out)


if __name__ == "__main__":
    sys.exit(main())

"""Opening the newest compaction card of a long chat, and switching versions (‹ ›) there.

A chat of ``--turns`` stored turns (:mod:`tests.benchmarks.gen_chat`: compacted every 200
turns, each re-compaction from the first turn, so the newest card stands for almost
all of them) gets another version of its last message (as an edit makes one), and is
opened in the real window (offscreen). Measured, on the GUI's clock:

* *open card*: from the click on the newest card's fold line until its turns are shown
  (the store's read done and the rows in the transcript);
* *switch*: ‹ then › on the last message, ``--switches`` times each way, from the
  call until the other version is shown; the first switch is reported apart, with the
  time the garbage collector ran meanwhile (``gc.callbacks``).

``--reveal`` then shows a search hit deep in the cards (turn 500: 497 cards down at
100,000 turns), as Enter on a search result does (``ChatController.open_at``), timed until
it is the focused row. ``--provider`` starts with the fake server's Anthropic API set up
from the environment (its SDK loads as the window starts). ``--no-card`` switches without
opening the card first; ``--click`` clicks the ‹ › under
the message (as a person does) instead of calling ``switch_branch``; ``--profile`` prints
what ran on the GUI thread during the first switch (``cProfile``).

Run (under the benchmark lock, on an idle machine)::

    flock /tmp/parley-bench.lock env -u PYTHONDONTWRITEBYTECODE \\
        QT_QPA_PLATFORM=offscreen .venv/bin/python -m tests.benchmarks.bench_cards --turns 100000
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import gc
import io
import os
import pstats
import sys
import time


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=100_000)
    parser.add_argument("--switches", type=int, default=3, help="‹ › pairs after the first")
    parser.add_argument("--no-card", action="store_true", help="do not open the card first")
    parser.add_argument("--provider", action="store_true",
                        help="start with a provider (the fake server's Anthropic API, from "
                        "the environment, as bench_startup does): its SDK loads meanwhile")
    parser.add_argument("--reveal", action="store_true",
                        help="then show a search hit deep in the nested cards (turn 500)")
    parser.add_argument("--click", action="store_true", help="click ‹ › under the message")
    parser.add_argument("--early", action="store_true",
                        help="the first switch as soon as the chat is shown (start-up's "
                        "background work may still run), not 0.3 s after")
    parser.add_argument("--profile", action="store_true",
                        help="print the GUI thread's profile of the first switch")
    args = parser.parse_args(argv)
    from tests.benchmarks.bench_window import new_home, open_window

    home = new_home()

    from parley.core.content import TextBlock, Turn
    from parley.core.paths import db_path
    from parley.core.store import Store
    from tests.benchmarks.gen_chat import write_long_chat

    t0 = time.perf_counter()
    sid = write_long_chat(db_path(home), args.turns)
    with Store.open(db_path(home)) as db:
        last = db.get_turns(sid, last=1, hydrate=False)[-1]
        db.branch_before(sid, last.id)
        db.append_turn(sid, Turn(last.role, [TextBlock("Another version.")]))
    print(f"wrote a chat of {args.turns:,} turns in {time.perf_counter() - t0:.1f} s")

    from PySide6.QtCore import Qt
    from PySide6.QtTest import QTest

    from parley.gui.transcript.specs import BRANCH_NEXT_HREF, BRANCH_PREV_HREF

    env: dict[str, str] = {}
    server = None
    if args.provider:
        from tests.fakes.server import FakeProviderServer

        server = FakeProviderServer().start()
        env = {"ANTHROPIC_API_KEY": "sk-ant-bench", "ANTHROPIC_BASE_URL": server.anthropic_base_url}
    loop, window = open_window(home, env)

    async def settle() -> None:
        while window.tasks.pending:
            await asyncio.sleep(0.001)

    async def scenario() -> None:
        await window.startup.start()
        chat = window.chat
        assert chat is not None
        t = time.perf_counter()
        await chat.opener.open(sid)
        await settle()
        print(f"opened the chat in {(time.perf_counter() - t) * 1000:.0f} ms")
        view = window.transcript
        if view.model.rows[0].kind != "card":  # scrolled up: the next older items
            await chat.paging.load_older()
            await settle()
        card = view.model.rows[0]
        assert card.kind == "card", "the newest card is not the first row"
        shown = len(view.model.rows)
        if not args.early:
            await asyncio.sleep(0.3)
        point = view.fold_point(card.key, "card")
        assert point is not None
        if not args.no_card:
            t = time.perf_counter()
            QTest.mouseClick(view.list_view.viewport(), Qt.MouseButton.LeftButton, pos=point)
            while len(view.model.rows) <= shown + 1 or window.tasks.pending:
                await asyncio.sleep(0.001)
            took = (time.perf_counter() - t) * 1000
            print(f"open card: {took:.0f} ms ({len(view.model.rows) - shown} rows shown under "
                  f"it, {len(chat.turns):,} turns held)")
        times, collected = [], []
        gc_ms = [0.0]
        gc_start = [0.0]

        def gc_timer(phase: str, _info: dict[str, int]) -> None:
            if phase == "start":
                gc_start[0] = time.perf_counter()
            else:
                gc_ms[0] += (time.perf_counter() - gc_start[0]) * 1000

        gc.callbacks.append(gc_timer)
        for i in range(1 + 2 * args.switches):
            step = -1 if i % 2 == 0 else 1
            points = chat.opener.branches.points
            edited = next(t for t in reversed(chat.turns)
                          if t.id in points and points[t.id].target(step) is not None)
            target = points[edited.id].target(step)
            assert target is not None
            href = BRANCH_PREV_HREF if step < 0 else BRANCH_NEXT_HREF
            arrow = view.anchor_point(edited.id, href) if args.click else None
            if not (args.early and i == 0):
                await asyncio.sleep(0.3)
            profile = cProfile.Profile() if args.profile and i == 0 else None
            gc_ms[0] = 0.0
            t = time.perf_counter()
            if profile is not None:
                profile.enable()
            if arrow is not None:
                QTest.mouseClick(view.list_view.viewport(), Qt.MouseButton.LeftButton, pos=arrow)
            else:
                assert chat.opener.switch_branch(edited.id, step)
            while target[0] not in chat.state.seqs or window.tasks.pending:
                await asyncio.sleep(0.001)
            times.append((time.perf_counter() - t) * 1000)
            collected.append(gc_ms[0])
            if profile is not None:
                profile.disable()
                out = io.StringIO()
                pstats.Stats(profile, stream=out).sort_stats("cumulative").print_stats(30)
                print(out.getvalue())
        gc.callbacks.remove(gc_timer)
        if args.reveal:
            hit = f"{500:032x}"  # tests.benchmarks.gen_chat's id of turn 500
            await asyncio.sleep(0.3)
            t = time.perf_counter()
            chat.open_at(sid, hit, "the")
            while view.focused_turn_id() != hit or window.tasks.pending:
                await asyncio.sleep(0.001)
            took = (time.perf_counter() - t) * 1000
            node = view.model.transcript.nodes[hit]
            print(f"reveal: {took:.0f} ms ({len(view.model.transcript.ancestors(node))} cards "
                  f"around it, {len(chat.turns):,} turns held, {len(view.model.rows):,} rows)")
        print(f"switch: first {times[0]:.0f} ms (gc {collected[0]:.0f} ms), then "
              + ", ".join(f"{x:.0f} (gc {g:.0f})" for x, g in zip(times[1:], collected[1:],
                                                                strict=True)) + " ms")
        await window.shutdown()

    try:
        with loop:
            loop.run_until_complete(scenario())
    finally:
        if server is not None:
            server.stop()
    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())} "
          f"({os.cpu_count()} cores)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

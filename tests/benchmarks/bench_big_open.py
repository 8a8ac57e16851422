"""Opening a chat of a few huge messages (budget: ≤ 250 ms to the first paint of its newest
turns, like a chat of small messages).

A chat of ``--turns`` messages of about ``--words`` words each (user messages as plain
paragraphs; replies as markdown with headings, lists and a code block every few
paragraphs, in several languages) is written into the window's sessions.db before start-up,
beside a chat of two short messages. The real window (offscreen) starts, then opens the big
chat (``window.chat.opener.open``) and paints its viewport at once (``repaint``): *first* is
that time in a fresh process (nothing rendered yet: markdown, highlighting, documents, the
fonts of code), *again* the same after the small chat was shown in between. Each line of
output is one ``--runs`` run, in a process of its own.

Run::

    QT_QPA_PLATFORM=offscreen .venv/bin/python -m tests.benchmarks.bench_big_open
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import os
import pstats
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path

BUDGET_MS = 250.0
_WORDS = ("the model reads every message before it answers and keeps the thread of the "
          "conversation while a person writes long questions about code data tests and "
          "plans for the next release of a program with many parts")
WORDS = _WORDS.split()
LANGUAGES = ("python", "javascript", "bash", "rust", "go", "sql", "json", "typescript")
CODE_LINE = {
    "python": "    total = sum(value * {n} for value in items if value > {n})",
    "javascript": "  const total = items.filter(v => v > {n}).reduce((a, b) => a + b, 0);",
    "bash": "for f in *.log; do grep -c 'error {n}' \"$f\"; done",
    "rust": "    let total: u64 = items.iter().filter(|v| **v > {n}).sum();",
    "go": "\ttotal += item.Value * {n} // accumulate",
    "sql": "SELECT id, count(*) FROM turns WHERE seq > {n} GROUP BY id;",
    "json": '  "key_{n}": [{n}, "value", true],',
    "typescript": "  const total: number = items.map((v) => v * {n}).length;",
}


def paragraph(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(words)).capitalize() + "."


def message(rng: random.Random, words: int, reply: bool, index: int) -> str:
    """About ``words`` words: plain paragraphs, or (``reply``) markdown with code."""
    parts: list[str] = []
    count = 0
    k = 0
    while count < words:
        if reply and k % 4 == 0:
            parts.append(f"## Part {k // 4 + 1}")
        if reply and k % 5 == 1:
            parts.append("\n".join(f"- {paragraph(rng, 8)}" for _ in range(4)))
            count += 32
        text = paragraph(rng, 60)
        parts.append(text)
        count += 60
        if reply and k % 3 == 2:
            language = LANGUAGES[(index + k) % len(LANGUAGES)]
            line = CODE_LINE[language]
            body = "\n".join(line.format(n=index * 100 + k * 10 + i) for i in range(20))
            parts.append(f"```{language}\n{body}\n```")
            count += 100
        k += 1
    return "\n\n".join(parts) + "\n"


def write_chats(db: Path, turns: int, words: int) -> tuple[str, str]:
    """The big chat and a small one; returns their ids (big, small)."""
    from parley.core.content import TextBlock, Turn
    from parley.core.store import Store

    rng = random.Random(1)
    with Store.open(db) as store:
        small = store.create_session(title="Small chat")
        store.append_turn(small.id, Turn("user", [TextBlock("Hello there.")]))
        store.append_turn(small.id, Turn("assistant", [TextBlock("Hello! How can I help?")],
                                         model="anthropic:claude-sonnet-4-6"))
        big = store.create_session(title="A chat of huge messages")
        for i in range(turns):
            reply = i % 2 == 1
            store.append_turn(big.id, Turn(
                "assistant" if reply else "user", [TextBlock(message(rng, words, reply, i))],
                model="anthropic:claude-sonnet-4-6" if reply else None))
        return big.id, small.id


def one_run(turns: int, words: int, cold: bool, profiled: bool = False
            ) -> tuple[float, float, float, int]:
    """Start a window, open the big chat twice; returns (first ms, again ms, load, chars)."""
    from tests.benchmarks.bench_window import new_home, open_window

    home = new_home()
    from parley.core.paths import db_path

    big, small = write_chats(db_path(home), turns, words)


    loop, window = open_window(home)

    stalls: list[float] = []

    async def open_chat(session_id: str, profile: cProfile.Profile | None = None) -> float:
        chat = window.chat
        assert chat is not None
        viewport = window.transcript.list_view.viewport()
        if profile is not None:
            profile.enable()
        t0 = time.perf_counter()
        await chat.opener.open(session_id)
        viewport.repaint()  # the first paint of its newest turns
        ms = (time.perf_counter() - t0) * 1000
        if profile is not None:
            profile.disable()
        # What follows the paint (rows around it laid out while idle): the longest stall.
        end = time.perf_counter() + 2.0
        while time.perf_counter() < end:
            t1 = time.perf_counter()
            await asyncio.sleep(0.005)
            stalls.append((time.perf_counter() - t1 - 0.005) * 1000)
        return ms

    async def scenario() -> tuple[float, float, int]:
        await window.startup.start()
        await asyncio.sleep(1.5)  # start-up's own work after the first paint
        if not cold:
            await open_chat(small)
        stalls.clear()
        profile = cProfile.Profile() if profiled else None
        first = await open_chat(big, profile)
        after = max(stalls)
        if profile is not None:
            stats = pstats.Stats(profile, stream=sys.stderr)
            stats.sort_stats("cumulative").print_stats(r"parley|/core/|/gui/", 30)
            stats.sort_stats("tottime").print_stats(20)
        chars = sum(len(t.text()) for t in window.chat.turns)
        await open_chat(small)
        again = await open_chat(big)
        print(f"STALL {after:.1f}")
        await window.shutdown()
        return first, again, chars

    with loop:
        first, again, chars = loop.run_until_complete(scenario())
    return first, again, os.getloadavg()[0], chars


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=8, help="messages in the big chat")
    parser.add_argument("--words", type=int, default=3000, help="words of each message")
    parser.add_argument("--runs", type=int, default=3, help="fresh processes")
    parser.add_argument("--cold", action="store_true",
                        help="the big chat is the first one opened (else a small chat is "
                        "shown first: what any chat's first paint needs is ready)")
    parser.add_argument("--profile", action="store_true",
                        help="one run in this process: print the first open's profile")
    parser.add_argument("--one", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.one or args.profile:
        first, again, load, chars = one_run(args.turns, args.words, args.cold, args.profile)
        print(f"RESULT {first:.1f} {again:.1f} {load:.2f} {chars}")
        return 0
    firsts: list[float] = []
    agains: list[float] = []
    for _ in range(args.runs):
        out = subprocess.run([sys.executable, "-m", "tests.benchmarks.bench_big_open", "--one",
                              "--turns", str(args.turns), "--words", str(args.words),
                              *(["--cold"] if args.cold else [])],
                             capture_output=True, text=True, check=True).stdout
        line = next(x for x in out.splitlines() if x.startswith("RESULT "))
        stall = next(x for x in out.splitlines() if x.startswith("STALL ")).split()[1]
        first, again, load, chars = line.split()[1:]
        firsts.append(float(first))
        agains.append(float(again))
        print(f"open {args.turns} messages ({int(chars):,} characters): first {float(first):6.0f}"
              f" ms, again {float(again):5.0f} ms; longest stall in the 2 s after the first open "
              f"{float(stall):4.0f} ms (load {load})")
    print(f"median: first {statistics.median(firsts):.0f} ms, again "
          f"{statistics.median(agains):.0f} ms; budget ≤ {BUDGET_MS:.0f} ms: "
          f"{'OK' if max(firsts) <= BUDGET_MS else 'OVER'}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""Event-loop lag while a reply streams at ~500 tokens/s (budget: p99 ≤ 16 ms), in a new
chat and in a long one.

The real window (offscreen) talks to the fake provider server over HTTP with
the real SDK; the reply is markdown with code blocks, streamed 4 characters
(about one token) per chunk. While it streams, a 5 ms asyncio ticker and a
5 ms QTimer record how late they fire: that lateness is the event-loop lag a
person feels as stutter while typing or scrolling. The ticker starts at the
key press, so what runs between Enter and the first token counts too.

Each line is one message typed into the composer and sent with Enter (a real
key press through ``QTest``): first into a new chat, then — with ``--turns N`` —
into a chat of ``N`` stored turns (:mod:`tests.benchmarks.gen_chat`: compacted every
200 turns, as a chat that long is; written into the window's sessions.db before
start-up) opened with ``window.chat.opener.open``, its system prompt frozen first as a chat in
use has it (its first request after its latest summary froze it: the message measured is
an ordinary one, as after a restart, not the first after a compaction). A short warm-up message goes
first (the SDK's import and connection are not what is measured). With ``--branches``,
Regenerate and Edit (Up, new text, Enter) of the long chat's last message are measured
the same way, then switching between the branches (‹ ›) until the other is shown. Reported: p99 and
the longest stall of both tickers, and *key → provider*: from the key press to the
request's arrival at the fake provider (its ``RecordedRequest.at``).

``--profile`` prints what ran on the GUI thread from the key press to the request's
arrival, in the long chat (``cProfile`` of the main thread); ``--profile-stream`` the same
from the new chat's request to the end of its reply. ``--sample`` samples the
GUI thread's stack every millisecond (:mod:`tests.benchmarks.stall_sampler`) and prints,
per line, where the streaming phase spent its time and what ran in its longest stalls.

Run::

    QT_QPA_PLATFORM=offscreen .venv/bin/python -m tests.benchmarks.bench_streaming
    QT_QPA_PLATFORM=offscreen .venv/bin/python -m tests.benchmarks.bench_streaming --turns 10000
    QT_QPA_PLATFORM=offscreen .venv/bin/python -m tests.benchmarks.bench_streaming --turns 100000
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import inspect
import io
import os
import pstats
import statistics
import sys
import time
from dataclasses import dataclass
from typing import Any

BUDGET_MS = 16.0
STALL_BUDGET_MS = 50.0
TICK_S = 0.005

PARAGRAPH = (
    "Streaming keeps the interface responsive: each delta is folded into the reply, "
    "and the transcript repaints **only the row that grew**, with `inline code`, "
    "[links](https://example.com) and lists:\n\n- first point\n- second point\n\n"
)
CODE = (
    "```python\ndef fib(n: int) -> int:\n    a, b = 0, 1\n    for _ in range(n):\n"
    "        a, b = b, a + b\n    return a\n```\n\n"
)


def reply_text(tokens: int) -> str:
    """Markdown of about ``tokens`` tokens (4 characters each)."""
    out = ""
    while len(out) < tokens * 4:
        out += PARAGRAPH + CODE
    return out[: tokens * 4]


def distinct_reply_text(chars: int) -> str:
    """Markdown of about ``chars`` characters whose paragraphs and code blocks are all
    different (``--reply-bytes``): as a real reply, nothing comes back from the caches of
    equal pieces."""
    out: list[str] = []
    size = i = 0
    while size < chars:
        part = (PARAGRAPH.replace("Streaming", f"Part {i}:", 1)
                + CODE.replace("fib", f"fib_{i}"))
        out.append(part)
        size += len(part)
        i += 1
    return "".join(out)[:chars]


def lines_text(chars: int) -> str:
    """About ``chars`` characters of lines with no blank line between them (``--lines``:
    a log or a pasted text echoed): one markdown paragraph."""
    out: list[str] = []
    size = i = 0
    while size < chars:
        line = f"Line {i} of a long log without blank lines, and some words on it.\n"
        out.append(line)
        size += len(line)
        i += 1
    return "".join(out)[:chars]


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


@dataclass
class Line:
    """One measured message."""

    label: str
    tokens: int
    duration_s: float
    key_to_request_ms: float
    async_lags: list[float]
    qt_lags: list[float]
    worst_at_ms: float  # when the longest asyncio stall began, after the key press

    def report(self) -> str:
        a, q = self.async_lags, self.qt_lags
        return (
            f"{self.label:>14}: key → provider {self.key_to_request_ms:6.0f} ms | asyncio "
            f"p50 {statistics.median(a):4.1f} p99 {percentile(a, 99):5.1f} max {max(a):6.1f} ms"
            f" (at {self.worst_at_ms:+.0f} ms) | Qt p99 {percentile(q, 99):5.1f} max "
            f"{max(q):6.1f} ms | "
            f"{self.tokens} tokens in {self.duration_s:.2f} s, {len(a)} samples"
        )

    def within_budget(self) -> bool:
        return (max(percentile(self.async_lags, 99), percentile(self.qt_lags, 99)) <= BUDGET_MS
                and max(self.async_lags) <= STALL_BUDGET_MS)


def print_profile(profile: cProfile.Profile) -> None:
    """The heaviest functions of a ``cProfile`` run (cumulative, then own time)."""
    out = io.StringIO()
    stats = pstats.Stats(profile, stream=out)
    stats.sort_stats("cumulative").print_stats(r"parley|/core/|/gui/", 40)
    stats.sort_stats("tottime").print_stats(25)
    print(out.getvalue())


def print_samples(label: str, sampler: Any, start: float, request_at: float,
                  stamps: list[float], lags: list[float]) -> None:
    """Where one line's time went on the GUI thread (``--sample``)."""
    print(f"--- {label}: key press → request ({(request_at - start) * 1000:.0f} ms)")
    print(sampler.top(start, request_at, 20))
    print(f"--- {label}: streaming (request → saved)")
    print(sampler.top(request_at, float("inf"), 40))
    for i in sorted(range(len(lags)), key=lags.__getitem__, reverse=True)[:4]:
        begin = stamps[i] + TICK_S
        print(f"--- {label}: stall of {lags[i]:.0f} ms at {(begin - start) * 1000:+.0f} ms")
        print(sampler.window(begin, begin + lags[i] / 1000 + 0.002))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=0,
                        help="also send into a chat of this many stored turns (0: new chat only)")
    parser.add_argument("--tokens", type=int, default=3000, help="tokens of each reply")
    parser.add_argument("--reply-bytes", type=int, default=0,
                        help="a reply of this many characters instead (e.g. 1000000: a "
                        "1 MB reply; streamed in chunks of --chunk characters)")
    parser.add_argument("--lines", action="store_true",
                        help="with --reply-bytes: lines with no blank line between them "
                        "(one paragraph), not paragraphs and code blocks")
    parser.add_argument("--chunk", type=int, default=0,
                        help="characters per streamed chunk (default 5; with --reply-bytes "
                        "one 15,000th of the reply, so it streams in about 30 s)")
    parser.add_argument("--branches", action="store_true",
                        help="then Regenerate and Edit the long chat's last message and "
                        "switch between the branches")
    parser.add_argument("--profile", action="store_true",
                        help="print the GUI thread's profile from the long chat's key press "
                        "to its request")
    parser.add_argument("--profile-stream", action="store_true",
                        help="print the GUI thread's profile while the new chat's reply "
                        "streams (cProfile, from its request to its end)")
    parser.add_argument("--sample", action="store_true",
                        help="sample the GUI thread's stack while each message streams; print "
                        "where the time went and what ran in the longest stalls")
    args = parser.parse_args(argv)
    from tests.benchmarks.bench_window import new_home, open_window

    home = new_home()

    from parley.core.paths import db_path
    from tests.benchmarks.gen_chat import MODEL_REF, write_long_chat

    long_chat = None
    if args.turns:
        t0 = time.perf_counter()
        long_chat = write_long_chat(db_path(home), args.turns)
        print(f"wrote a chat of {args.turns:,} turns in {time.perf_counter() - t0:.1f} s")

    from PySide6.QtCore import Qt, QTimer
    from PySide6.QtTest import QTest

    from tests.benchmarks.stall_sampler import StallSampler
    from tests.fakes.server import FakeProviderServer

    server = FakeProviderServer().start()
    loop, window = open_window(home)
    if args.reply_bytes:
        text = (lines_text if args.lines else distinct_reply_text)(args.reply_bytes)
    else:
        text = reply_text(args.tokens)
    chunk = args.chunk or (max(5, args.reply_bytes // 15_000) if args.reply_bytes else 5)

    def enter() -> None:
        QTest.keyClick(window.composer, Qt.Key.Key_Return)

    async def send(label: str, reply: str, profile: cProfile.Profile | None = None, *,
                   typed: str | None = None, press: Any = enter) -> Line:
        """Type ``typed`` (default: a question) and ``press`` (default: Enter); measure
        until ``reply`` has streamed in and been saved."""
        chat = window.chat
        assert chat is not None
        before = len(server.model_requests)
        server.script(reply, token_delay_ms=2.0, chunk_size=chunk)
        async_lags: list[float] = []
        qt_lags: list[float] = []
        last_qt = [time.perf_counter()]

        def qt_tick() -> None:
            now = time.perf_counter()
            qt_lags.append(max(0.0, now - last_qt[0] - TICK_S) * 1000)
            last_qt[0] = now

        timer = QTimer()
        timer.setInterval(int(TICK_S * 1000))
        timer.timeout.connect(qt_tick)
        if typed is None:
            typed = f"Write a long answer with code ({label})."
        window.composer.set_text(typed)
        window.composer.setFocus()
        await asyncio.sleep(0.2)
        last_qt[0] = time.perf_counter()
        timer.start()
        ticking = [True]

        async def ticker() -> None:
            while ticking[0]:
                t0 = time.perf_counter()
                await asyncio.sleep(TICK_S)
                async_lags.append(max(0.0, time.perf_counter() - t0 - TICK_S) * 1000)
                stamps.append(t0)

        stamps: list[float] = []
        tick_task = asyncio.ensure_future(ticker())
        await asyncio.sleep(TICK_S)
        if profile is not None:
            profile.enable()
        sampler = StallSampler() if args.sample else None
        if sampler is not None:
            sampler.start()
            store_calls.clear()
        key_at = time.monotonic()
        start = time.perf_counter()
        press()

        def streaming() -> bool:
            turns = chat.turns
            return (window.tasks.pending > 0 or not turns or turns[-1].role != "assistant"
                    or turns[-1].text() != reply)

        streamed = cProfile.Profile() if args.profile_stream and label == "new chat" else None
        while streaming():
            await asyncio.sleep(0.002)
            if profile is not None and len(server.model_requests) > before:
                profile.disable()  # what ran from the key press to the request
                profile = None
            if streamed is not None and len(server.model_requests) > before:
                streamed.enable()  # what ran from the request to the end
        if streamed is not None:
            streamed.disable()
            print_profile(streamed)
        if profile is not None:
            profile.disable()
        duration = time.perf_counter() - start
        ticking[0] = False
        await tick_task
        timer.stop()
        requests = server.model_requests[before:]
        assert requests, "no request reached the provider"
        worst = max(range(len(async_lags)), key=async_lags.__getitem__)
        if sampler is not None:
            sampler.stop()
            print_samples(label, sampler, start, start + (requests[0].at - key_at),
                          stamps, async_lags)
            print(f"--- {label}: store calls (worker thread), from the key press")
            for name, at, ms in store_calls[:40]:
                print(f"    {(at - start) * 1000:+7.0f} ms  {ms:7.1f} ms  {name}")
        return Line(label, len(reply) // 4, duration, (requests[0].at - key_at) * 1000,
                    async_lags, qt_lags, (stamps[worst] - start) * 1000)

    store_calls: list[tuple[str, float, float]] = []  # (method, perf_counter, ms)

    def time_store_calls() -> None:
        """``--sample``: note each Store method's time on the store's worker thread."""
        inner = window.store._store  # noqa: SLF001 (the Store the AsyncStore forwards to)

        def timed(name: str, fn: Any) -> Any:
            def call(*a: Any, **k: Any) -> Any:
                t0 = time.perf_counter()
                try:
                    return fn(*a, **k)
                finally:
                    store_calls.append((name, t0, (time.perf_counter() - t0) * 1000))
            return call

        for name in dir(inner):
            fn = getattr(inner, name, None)
            if not name.startswith("_") and callable(fn) and inspect.ismethod(fn):
                setattr(inner, name, timed(name, fn))

    async def freeze_prompt_as_used(session_id: str, like: str | None) -> None:
        """Give the long chat the frozen system prompt a chat in use has (its first request
        after its latest summary froze it, ``parley.core.tools.system_prompt``), with the
        tools flag the new chat's request was frozen with: the long chat's message is then
        an ordinary one, not the first after a compaction."""
        from parley.core.app_state import FROZEN_PROMPT

        assert like is not None and window.runner is not None
        tools = window.runner.tools
        record = await FROZEN_PROMPT.get(window.store, like)
        assert tools is not None and isinstance(record, dict), "the new chat froze no prompt"
        session = await window.store.get_session(session_id)
        turns = await window.store.context_turns(session_id)
        await tools.system_prompt(session, turns, tools_on=bool(record["fingerprint"]["tools"]),
                                  window=window.hub.model_info(MODEL_REF).context_window)

    async def scenario() -> list[Line]:
        await window.startup.start()
        if args.sample:
            time_store_calls()
        await window.hub.add_provider("anthropic", base_url=server.anthropic_base_url,
                                      api_key="sk-ant-bench", default_model="claude-sonnet-4-6")
        assert window.chat is not None
        await window.chat.enter()
        await send("warm-up", "Ready.")
        await window.chat.enter()  # a new chat again
        lines = [await send("new chat", text)]
        if long_chat is not None:
            await freeze_prompt_as_used(long_chat, window.chat.state.session_id)
            t0 = time.perf_counter()
            await window.chat.opener.open(long_chat)
            print(f"opened the chat of {args.turns:,} turns in "
                  f"{(time.perf_counter() - t0) * 1000:.0f} ms")
            profile = cProfile.Profile() if args.profile else None
            lines.append(await send(f"{args.turns:,} turns", text, profile))
            if profile is not None:
                print_profile(profile)
            chat = window.chat
            if not args.branches:
                await window.shutdown()
                return lines
            # Regenerate (the action's handler) and Edit (Up, a new text, Enter) of the
            # last message of the long chat: each makes a branch in the chat.
            lines.append(await send("regenerate", text, typed="",
                                    press=lambda: chat.regen.regenerate()))
            chat.editor.edit_last()
            lines.append(await send("edit", text, typed="Write it again, with code."))
            # Switching between those branches (‹ › under the edited message).
            for step in (-1, 1):
                points = chat.opener.branches.points
                edited = next(t for t in reversed(chat.turns)
                              if t.id in points and points[t.id].target(step) is not None)
                target = points[edited.id].target(step)
                assert target is not None
                t0 = time.perf_counter()
                assert chat.opener.switch_branch(edited.id, step), "no branch to switch to"
                while not chat.state.holds(target[0]) or window.tasks.pending:
                    await asyncio.sleep(0.002)
                print(f"switch branch ({step:+d}) in the chat of {args.turns:,} turns: "
                      f"{(time.perf_counter() - t0) * 1000:.0f} ms")
        await window.shutdown()
        return lines

    try:
        with loop:
            lines = loop.run_until_complete(scenario())
    finally:
        server.stop()
    print(f"load average: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} "
          f"{os.getloadavg()[2]:.2f} ({os.cpu_count()} cores)")
    for line in lines:
        print(line.report())
    ok = all(line.within_budget() for line in lines)
    print(f"budget p99 <= {BUDGET_MS:.0f} ms, longest stall <= {STALL_BUDGET_MS:.0f} ms: "
          f"{'OK' if ok else 'OVER'}")
    if len(lines) == 2:
        ratio = lines[1].key_to_request_ms / lines[0].key_to_request_ms
        print(f"key → provider, {args.turns:,} turns / new chat: {ratio:.2f}x (budget 2x)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))



"""Which of Parley's modules a sent message passes, from the Enter key to the reply on
screen (issue 33's budget: at most 20).

The real window (offscreen) talks to the fake provider server over HTTP with the real
SDK, as in :mod:`tests.benchmarks.bench_streaming`. Two warm-up messages go first (the
SDK's import and connection, the lazy imports of a first send, a new chat's row are not
the path); then a message is typed and Enter pressed (a real key press through
``QTest``) in that chat. From the press until the reply is shown in the transcript and
saved, a profile function (``sys.setprofile`` on the GUI thread, ``threading.setprofile``
on the threads Parley starts: the store's worker, the save queue's) watches every call.

**The path** is what the message passes through: the ``parley.*`` modules on the call
stack (an asyncio task's stack holds its whole chain of awaits) each time the message
or its reply crosses a boundary:

* ``spawn``: the key press hands the message to a background task (``TaskSet.spawn``);
* ``store``: the run loop calls the store (``AsyncStore``) on the GUI thread;
* ``sql``: the store's worker writes or reads the chat's turns (a ``sqlite3`` call under
  ``StoreTurns.append_turn`` / ``upsert_turn`` / ``finish_turn`` / ``context_turns``);
* ``provider``: Parley hands the request to the provider process (whose SDK sends it:
  ``parley.core.providers.process``), and takes each piece of the reply it sends back;
* ``shown``: the transcript is told of the message or the reply (``show_grown`` /
  ``show_changed`` / ``show_reset``), and paints it (a ``QPainter`` call under the
  transcript's code).

Printed: the path's modules in the order they were first on it ("to": before the request
reached the provider, "back": after), GUI or core, with the boundaries they were on and
their calls, then the counts; then, for reference, how many
other ``parley.*`` modules ran meanwhile (timers, the meter, the sidebar's repaint,
helpers called on the way: they run, but the message does not pass through them).

Run::

    QT_QPA_PLATFORM=offscreen .venv/bin/python -m tests.benchmarks.bench_send_path
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import threading
import time
from dataclasses import dataclass, field
from types import FrameType
from typing import Any

BUDGET = 20
#: The store's functions that write or read a chat's turns (``sql`` boundaries under them).
TURN_CALLS = frozenset({"append_turn", "upsert_turn", "finish_turn", "context_turns",
                        "context_turns_counted"})
#: The transcript's entry points for what the chat's state shows.
SHOWN_CALLS = frozenset({"show_grown", "show_changed", "show_reset"})
#: Where a request goes to the provider process and its reply comes back (a generator's
#: resumption is a "call" to the profiler too: each piece of the reply).
PROCESS = "parley.core.providers.process.client"
PROCESS_CALLS = frozenset({"_send", "stream"})
STORE = "parley.core.store.async_store"


@dataclass
class Seen:
    """One module: when it first ran or was first on the path, and how."""

    module: str
    order: int
    leg: str  # "to" the provider or "back" to the screen
    calls: int = 0
    boundaries: set[str] = field(default_factory=set)
    threads: set[str] = field(default_factory=set)


def _module(frame: FrameType) -> str:
    return str(frame.f_globals.get("__name__", ""))


class PathRecorder:
    """A profile function noting the ``parley.*`` modules that run, and those on the
    stack at each boundary the message crosses (see the module docstring)."""

    def __init__(self) -> None:
        self.on = False
        self.leg = "to"
        self.ran: dict[str, Seen] = {}
        self.path: dict[str, Seen] = {}
        #: The distinct stacks seen at the boundaries (--chains prints them).
        self.chains: dict[tuple[str, tuple[str, ...]], None] = {}
        self._lock = threading.Lock()

    def __call__(self, frame: FrameType, event: str, arg: Any) -> None:
        if not self.on:
            return
        if event == "call":
            module = _module(frame)
            if module.startswith("parley."):
                self._ran(module)
                if frame.f_code.co_name == "spawn" and module == "parley.core.tasks" \
                        and frame.f_locals.get("name") in ("send", "edit"):
                    self._boundary("spawn", frame.f_back)
                elif frame.f_code.co_name in SHOWN_CALLS and \
                        module.startswith("parley.gui.transcript"):
                    self._boundary("shown", frame)
                elif module == PROCESS and frame.f_code.co_name in PROCESS_CALLS:
                    self._boundary("provider", frame)
                elif module == STORE and frame.f_back is not None \
                        and _module(frame.f_back) != STORE \
                        and self._under(frame, "parley.core.chat.run"):
                    self._boundary("store", frame)
        elif event == "c_call" and _module(frame).startswith("parley."):
            owner = type(getattr(arg, "__self__", None)).__name__
            if owner == "QPainter" and self._under(frame, "parley.gui.transcript"):
                self._boundary("shown", frame)
            elif owner in ("Connection", "Cursor") and getattr(arg, "__name__", "") in (
                    "execute", "executemany") and self._under_turn_call(frame):
                self._boundary("sql", frame)

    @staticmethod
    def _under(frame: FrameType | None, module: str) -> bool:
        """True when a frame of ``module`` (or of a module under it) is on the stack."""
        while frame is not None:
            if _module(frame).startswith(module):
                return True
            frame = frame.f_back
        return False

    @staticmethod
    def _under_turn_call(frame: FrameType | None) -> bool:
        while frame is not None:
            if frame.f_code.co_name in TURN_CALLS and _module(frame).startswith("parley.core"):
                return True
            frame = frame.f_back
        return False

    def _ran(self, module: str) -> None:
        with self._lock:
            entry = self.ran.get(module)
            if entry is None:
                entry = self.ran[module] = Seen(module, len(self.ran), self.leg)
            entry.calls += 1
            entry.threads.add(threading.current_thread().name)

    def _boundary(self, kind: str, frame: FrameType | None) -> None:
        chain: list[str] = []
        while frame is not None:
            module = _module(frame)
            if module.startswith("parley.") and module not in chain:
                chain.append(module)
            frame = frame.f_back
        with self._lock:
            self.chains.setdefault((kind, tuple(reversed(chain))), None)
            for module in reversed(chain):  # outermost first
                entry = self.path.get(module)
                if entry is None:
                    entry = self.path[module] = Seen(module, len(self.path), self.leg)
                entry.boundaries.add(kind)

    def report(self) -> list[str]:
        """The path's modules in the order they were first on it, then the counts."""
        rows = sorted(self.path.values(), key=lambda s: s.order)
        out = []
        for i, s in enumerate(rows, 1):
            side = "gui " if s.module.startswith("parley.gui") else "core"
            ran = self.ran.get(s.module)
            calls = ran.calls if ran is not None else 0
            out.append(f"{i:3d}. [{s.leg:>4}] {side} {s.module:<44} "
                       f"{','.join(sorted(s.boundaries)):<20} {calls:6d} calls")
        gui = sum(1 for s in rows if s.module.startswith("parley.gui"))
        before = 0
        for s in rows:  # GUI modules before the first core one
            if not s.module.startswith("parley.gui"):
                break
            before += 1
        back = sum(1 for s in rows if s.leg == "back")
        out.append(f"path: GUI {gui} ({before} before the core), core {len(rows) - gui}; "
                   f"{len(rows) - back} on the way to the provider, {back} more on the way "
                   f"back; {len(rows)} in all (budget {BUDGET}: "
                   f"{'OK' if len(rows) <= BUDGET else 'OVER'})")
        others = sorted(set(self.ran) - set(self.path))
        out.append(f"also ran meanwhile, off the path: {len(others)} modules "
                   f"({len(self.ran)} parley modules ran in all)")
        out.append("  " + " ".join(m.removeprefix("parley.") for m in others))
        return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chains", action="store_true",
                        help="also print each distinct stack seen at a boundary")
    args = parser.parse_args(argv)
    from tests.benchmarks.bench_window import new_home, open_window

    home = new_home()

    from PySide6.QtCore import Qt
    from PySide6.QtTest import QTest

    from tests.fakes.server import FakeProviderServer

    recorder = PathRecorder()
    server = FakeProviderServer().start()
    threading.setprofile(recorder)  # threads started from here on: the store's worker…
    loop, window = open_window(home)  # after the profile function: Qt's threads carry it

    async def send(reply: str, *, record: bool) -> float:
        """Type a question, press Enter, wait until ``reply`` is shown and saved;
        returns the seconds it took."""
        chat = window.chat
        assert chat is not None
        before = len(server.model_requests)
        server.script(reply, token_delay_ms=1.0, chunk_size=8)
        window.composer.set_text("Which modules does this message pass?")
        window.composer.setFocus()
        await asyncio.sleep(0.3)  # the draft's timers and repaints settle first

        def shown() -> bool:
            turns = chat.turns
            last = window.transcript.last_turn()
            return (window.tasks.pending == 0 and bool(turns) and turns[-1].role == "assistant"
                    and turns[-1].text() == reply and last is not None
                    and last.text() == reply)

        start = time.perf_counter()
        if record:
            recorder.leg, recorder.on = "to", True
            sys.setprofile(recorder)
        QTest.keyClick(window.composer, Qt.Key.Key_Return)
        while not shown():
            await asyncio.sleep(0.002)
            if len(server.model_requests) > before:
                recorder.leg = "back"
        await asyncio.sleep(0.05)  # the last repaint of the reply
        sys.setprofile(None)
        recorder.on = False
        assert len(server.model_requests) > before, "no request reached the provider"
        return time.perf_counter() - start

    async def scenario() -> float:
        await window.startup.start()
        await window.hub.add_provider("anthropic", base_url=server.anthropic_base_url,
                                      api_key="sk-ant-bench", default_model="claude-sonnet-4-6")
        assert window.chat is not None
        await window.chat.enter()
        await send("Ready.", record=False)
        await window.chat.enter()  # a new chat again: its first message is measured
        await send("Ready.", record=False)
        seconds = await send("This reply is **short**, with `code`.", record=True)
        await window.shutdown()
        return seconds

    try:
        with loop:
            seconds = loop.run_until_complete(scenario())
    finally:
        threading.setprofile(None)  # type: ignore[arg-type]
        server.stop()
    print(f"Enter → reply on screen in {seconds * 1000:.0f} ms (with the profile function)")
    for line in recorder.report():
        print(line)
    if args.chains:
        for kind, chain in recorder.chains:
            print(f"{kind:>5}: " + " > ".join(m.removeprefix("parley.") for m in chain))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

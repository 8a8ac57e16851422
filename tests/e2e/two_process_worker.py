"""One of several processes sharing one sessions.db (for tests/core/test_two_processes.py).

    python -m tests.e2e.two_process_worker write --db PATH --shared SID --own SID --tag A
        [--count 300] [--journal-every 5]
    python -m tests.e2e.two_process_worker read --db PATH --shared SID

Both open the file with :class:`parley.core.store.Store` (the app's own settings:
WAL, busy timeout, ``BEGIN IMMEDIATE`` writes with retries), print ``ready``,
wait for a ``go`` line on stdin, then work as fast as they can:

- a writer appends ``count`` user turns to the shared session (text
  ``"<tag> <i> tok<tag><i>"``, a unique searchable word each), and every
  ``journal-every`` turns streams a reply into its own session the way the run
  loop does (three journal upserts of an aborted turn, then ``finish_turn``);
- a reader searches, lists sessions and reads the shared session's last turns
  until it reads ``stop`` (or end of file) on stdin.

At the end each prints one JSON line: the ids it wrote (in order), every error
(type and message; none is expected), the number of operations and the write
or read latencies (max and p99, ms).
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
import time
from pathlib import Path
from typing import Any

from parley.core.content import TextBlock, Turn, Usage
from parley.core.store import Store


def token(tag: str, i: int) -> str:
    """The unique searchable word of a writer's i-th turn."""
    return f"tok{tag.lower()}{i:04d}"


class Recorder:
    """Latencies and errors of the operations timed with :meth:`run`."""

    def __init__(self) -> None:
        self.ms: list[float] = []
        self.errors: list[str] = []

    def run(self, fn: Any, *args: Any, **kwargs: Any) -> Any:
        t0 = time.perf_counter()
        try:
            return fn(*args, **kwargs)
        except Exception as exc:  # every error is a finding: report it, keep going
            self.errors.append(f"{type(exc).__name__}: {exc}")
            return None
        finally:
            self.ms.append((time.perf_counter() - t0) * 1000)

    def summary(self) -> dict[str, Any]:
        ms = sorted(self.ms) or [0.0]
        return {
            "ops": len(self.ms),
            "errors": self.errors,
            "max_ms": round(ms[-1], 2),
            "p99_ms": round(ms[min(len(ms) - 1, int(len(ms) * 0.99))], 2),
            "over_1s": sum(1 for m in ms if m > 1000),
        }


def wait_for_go() -> None:
    print("ready", flush=True)
    line = sys.stdin.readline().strip()
    if line != "go":
        raise SystemExit(f"expected 'go', got {line!r}")


def write(args: argparse.Namespace) -> dict[str, Any]:
    rec = Recorder()
    shared: list[str] = []
    own: list[str] = []
    with Store.open(args.db) as store:
        wait_for_go()
        for i in range(args.count):
            turn = Turn("user", [TextBlock(f"{args.tag} {i} {token(args.tag, i)}")])
            if rec.run(store.append_turn, args.shared, turn) is not None:
                shared.append(turn.id)
            if args.journal_every and i % args.journal_every == 0:
                own.extend(stream_reply(store, rec, args.own, f"{args.tag} reply {i}"))
    return {"shared": shared, "own": own, **rec.summary()}


def stream_reply(store: Store, rec: Recorder, session_id: str, text: str) -> list[str]:
    """Journal a reply three times as it grows, then finish it (as parley.core.chat.run does)."""
    reply = Turn("assistant", [], aborted=True, model="fake:model")
    words = text.split()
    for n in range(1, 4):
        reply.blocks = [TextBlock(" ".join(words[: max(1, len(words) * n // 3)]))]
        rec.run(store.upsert_turn, session_id, reply)
    done = Turn("assistant", [TextBlock(text)], reply.id, reply.created_at, False, "fake:model",
                Usage(input_tokens=10, output_tokens=3))
    ok = rec.run(store.finish_turn, session_id, done, done.usage)
    return [reply.id] if ok is not None else []


def read(args: argparse.Namespace) -> dict[str, Any]:
    rec = Recorder()
    stop = threading.Event()
    hits = 0
    with Store.open(args.db) as store:
        wait_for_go()
        threading.Thread(target=lambda: (sys.stdin.readline(), stop.set()), daemon=True).start()
        n = 0
        while not stop.is_set():
            found = rec.run(store.search, "tok", limit=20)
            hits += len(found or [])
            rec.run(store.list_sessions)
            rec.run(store.get_turns, args.shared, last=20)
            rec.run(store.search, f"reply {n % 300}")
            n += 1
    return {"hits": hits, **rec.summary()}


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="python -m tests.e2e.two_process_worker")
    sub = p.add_subparsers(dest="command", required=True)
    w = sub.add_parser("write")
    w.add_argument("--db", required=True, type=Path)
    w.add_argument("--shared", required=True)
    w.add_argument("--own", required=True)
    w.add_argument("--tag", required=True)
    w.add_argument("--count", type=int, default=300)
    w.add_argument("--journal-every", type=int, default=5)
    r = sub.add_parser("read")
    r.add_argument("--db", required=True, type=Path)
    r.add_argument("--shared", required=True)
    args = p.parse_args(argv)
    result = write(args) if args.command == "write" else read(args)
    print(json.dumps(result), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))

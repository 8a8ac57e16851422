"""A process that runs Parley's real run loop against the fake provider, so a test can kill it.

It opens sessions.db with :class:`parley.core.store.AsyncStore`, builds a
:class:`parley.core.providers.hub.ProviderHub` whose built-in Anthropic and OpenAI
providers point at the fake provider (URL on argv, keys from a private
environment: nothing is written at start but the run marker of
:mod:`parley.core.recovery.previous_run`), and sends messages in a loop through
:class:`parley.core.chat.run.ChatRunner`: each streamed reply is journalled and saved as in
the app. It prints what it has committed, so the killing test knows which turns
must survive.

Two ways to start it::

    python -m tests.e2e.crash_worker run --db PATH --url URL [--kind anthropic|openai]
        [--session ID] [--messages N] [--seed S] [--journal-ms MS] [--actions send=3,resume=1]
    python -m tests.e2e.crash_worker serve [--warm-url URL]

``serve`` is a fork server: it imports everything once (the SDKs take seconds
to import on a busy 2-core machine), prints ``serving <pid>``, then for each
line read on stdin — the ``run`` arguments as a JSON list — forks one worker,
prints ``forked <pid>``, waits for it and prints ``exit <pid> <status>``
(``-9`` for SIGKILL). Each worker is a separate process: killing it is a real
process death (its SQLite locks and file descriptors go with it).

Lines a worker prints (each with one ``write``, so lines never interleave):

- ``ready <pid> <session_id>`` — store open, provider set up (its SDK client made in the
  worker's own provider process), about to send;
- ``saved <turn_id> <role> <sha256>`` — a user turn (``append_turn``) or a
  completed reply (``finish_turn``) was committed; sha256 of the stored blocks
  JSON (``parley.core.content.blocks_to_json_text``, UTF-8);
- ``journal <turn_id> <chars> <sha256> <t>`` — a journal write of the
  streaming reply (an aborted turn holding ``chars`` characters of text) was
  committed; ``t`` is ``time.monotonic()`` (CLOCK_MONOTONIC: one clock for
  every process on the machine);
- ``recv <turn_id> <chars> <t>`` — the run loop has received this much text;
- ``failed <ErrorClass> <message>`` — a run failed (``RunFailed``);
- ``not-compacted <reason>`` — a compaction found nothing to do;
- ``action <name>`` — the next step of the loop;
- ``done <pid>`` — every message was sent.

Extension point: :data:`ACTIONS` maps an action name to a coroutine run by the
loop; ``--actions`` gives their weights (``send=3,resume=1,compact=1``). The
``compact`` action runs a manual compaction (``ChatRunner.compactor``) and
prints the saved summary turn as ``saved``; its summary request streams from
the fake provider like a reply, so a kill can land in it or in its save.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import hashlib
import json
import os
import random
import sys
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from parley.core.chat.run import ChatRunner, ReplyUpdated, RunEvent, RunFailed, text_blocks
from parley.core.compaction.compact import CompactNoSummaryError
from parley.core.content import Turn, Usage, blocks_to_json_text
from parley.core.keys import FileBackend, KeyStore
from parley.core.providers.hub import ProviderHub
from parley.core.providers.process.client import close_shared
from parley.core.providers.retry import RetryPolicy
from parley.core.recovery import previous_run
from parley.core.store.async_store import AsyncStore

MODELS = {"anthropic": "anthropic:claude-sonnet-4-6", "openai": "openai:gpt-5"}
WORDS = ("alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india",
         "juliet", "kilo", "lima")


_quiet = False


def emit(*parts: object) -> None:
    """Print one line with a single write (atomic on a pipe below PIPE_BUF)."""
    if _quiet:
        return
    line = " ".join(str(p) for p in parts).replace("\n", " ")[:3000] + "\n"
    os.write(1, line.encode("utf-8"))


def blocks_sha(turn: Turn) -> str:
    """sha256 of the blocks JSON exactly as the store keeps it."""
    return hashlib.sha256(blocks_to_json_text(turn.blocks).encode("utf-8")).hexdigest()


class ProbedStore:
    """The real AsyncStore; says on stdout when each turn write has committed."""

    def __init__(self, inner: AsyncStore) -> None:
        self._inner = inner

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    async def append_turn(self, session_id: str, turn: Turn) -> Turn:
        out = await self._inner.append_turn(session_id, turn)
        emit("saved", turn.id, turn.role, blocks_sha(turn))
        return out

    async def upsert_turn(self, session_id: str, turn: Turn) -> Turn:
        out = await self._inner.upsert_turn(session_id, turn)
        emit("journal", turn.id, len(turn.text()), blocks_sha(turn), f"{time.monotonic():.6f}")
        return out

    async def finish_turn(self, session_id: str, turn: Turn, usage: Usage) -> Turn:
        out = await self._inner.finish_turn(session_id, turn, usage)
        emit("saved", turn.id, turn.role, blocks_sha(turn))
        return out


@dataclass
class Context:
    """What an action needs: the runner, the session, the model and a seeded rng."""

    store: AsyncStore
    runner: ChatRunner
    session_id: str
    model_ref: str
    rng: random.Random
    step: int = 0


def on_event(event: RunEvent) -> None:
    if isinstance(event, ReplyUpdated):
        emit("recv", event.turn.id, len(event.turn.text()), f"{time.monotonic():.6f}")
    elif isinstance(event, RunFailed):
        emit("failed", type(event.error).__name__, event.error.message)


async def send_message(ctx: Context) -> None:
    """Send a new user message (a few words, with a unique token) and stream the reply."""
    words = " ".join(ctx.rng.choice(WORDS) for _ in range(ctx.rng.randint(3, 12)))
    text = f"q{os.getpid()}x{ctx.step} {words}?"
    await ctx.runner.send(ctx.session_id, text_blocks(text), model_ref=ctx.model_ref,
                          on_event=on_event)


async def resume(ctx: Context) -> None:
    """Resume: send the history again (the aborted reply is left out by the wire rules)."""
    await ctx.runner.retry(ctx.session_id, model_ref=ctx.model_ref, on_event=on_event)


async def compact(ctx: Context) -> None:
    """Manual compaction keeping the last 2 turns; prints the saved summary turn (or
    ``not-compacted`` with the reason, a refused summary's included)."""
    try:
        result = await ctx.runner.compactor.compact(ctx.session_id, keep_turns=2,
                                                    model_ref=ctx.model_ref)
    except CompactNoSummaryError as exc:  # the replies it got were no summaries
        emit("not-compacted", exc.reason)
        return
    if result.compacted and result.summary_turn_id:
        summary = await ctx.store.get_turn(result.summary_turn_id)
        emit("saved", summary.id, summary.role, blocks_sha(summary))
    else:
        emit("not-compacted", result.reason)


#: Steps the loop can take, by name (see the module docstring's extension point).
ACTIONS: dict[str, Callable[[Context], Awaitable[None]]] = {
    "send": send_message,
    "resume": resume,
    "compact": compact,
}


def parse_args(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m tests.e2e.crash_worker")
    sub = p.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="run the loop in this process")
    run.add_argument("--db", required=True, type=Path)
    run.add_argument("--url", required=True, help="the fake provider, http://127.0.0.1:PORT")
    run.add_argument("--kind", choices=sorted(MODELS), default="anthropic")
    run.add_argument("--session", default=None, help="continue this session (default: new)")
    run.add_argument("--messages", type=int, default=5)
    run.add_argument("--seed", type=int, default=0)
    run.add_argument("--journal-ms", type=float, default=250.0)
    run.add_argument("--actions", default="send=3,resume=1")  # add compact=N to compact
    serve = sub.add_parser("serve", help="fork server: one worker per JSON argv line on stdin")
    serve.add_argument("--warm-url", default=None,
                       help="send one request of each kind to this fake provider before serving, "
                            "so the SDKs' first-use work is done once, not in every worker")
    return p.parse_args(argv)


def action_weights(spec: str) -> dict[str, int]:
    out = {}
    for item in spec.split(","):
        name, _, weight = item.partition("=")
        if name not in ACTIONS:
            raise SystemExit(f"unknown action {name!r}; known: {sorted(ACTIONS)}")
        out[name] = int(weight or 1)
    return out


def choose(ctx: Context, turns: list[Turn], weights: dict[str, int]) -> str:
    """Resume only makes sense after an aborted reply or an unanswered message."""
    last = turns[-1] if turns else None
    can_resume = last is not None and (last.aborted or last.role == "user")
    names = [n for n in weights if n != "resume" or can_resume]
    return ctx.rng.choices(names, [weights[n] for n in names])[0]


async def work(args: argparse.Namespace) -> None:
    """Open the store and the hub, then run ``args.messages`` actions."""
    url = args.url.rstrip("/")
    env = {
        "ANTHROPIC_API_KEY": "sk-crash-anthropic",
        "ANTHROPIC_BASE_URL": url,
        "OPENAI_API_KEY": "sk-crash-openai",
        "OPENAI_BASE_URL": url + "/v1",
    }
    store = await AsyncStore.open(args.db)
    await previous_run.mark_running(store)  # as the app does at start
    keys = KeyStore(backend=FileBackend(args.db.with_name("keys.json")), environ=env)
    hub = ProviderHub(store, keys=keys, retry=RetryPolicy(max_retries=0), environ=env)
    await hub.load()
    await hub.get(MODELS[args.kind].split(":", 1)[0]).connected()  # its SDK client made
    runner = ChatRunner(ProbedStore(store), hub, journal_interval_s=args.journal_ms / 1000,
                        emit_interval_s=0.0)
    sid = args.session or (await store.create_session(title="crash test")).id
    ctx = Context(store, runner, sid, MODELS[args.kind], random.Random(args.seed))
    weights = action_weights(args.actions)
    emit("ready", os.getpid(), sid)
    for step in range(args.messages):
        ctx.step = step
        name = choose(ctx, await store.get_turns(sid, last=1), weights)
        emit("action", name)
        await ACTIONS[name](ctx)
    emit("done", os.getpid())
    await hub.aclose()
    await store.close()


def run(argv: list[str]) -> int:
    args = parse_args(argv)
    if args.command == "serve":
        return serve(args.warm_url)
    asyncio.run(work(args))
    return 0


def warm_up(url: str) -> None:
    """Run one message of each kind on a throw-away file, printing nothing."""
    import tempfile

    global _quiet
    _quiet = True
    try:
        with tempfile.TemporaryDirectory() as tmp:
            for kind in MODELS:
                argv = ["run", "--db", f"{tmp}/warm.db", "--url", url, "--kind", kind,
                        "--messages", "1"]
                asyncio.run(work(parse_args(argv)))
    finally:
        _quiet = False


def serve(warm_url: str | None = None) -> int:
    """Fork one worker per stdin line (a JSON list of ``run`` arguments)."""
    import threading

    if warm_url:
        warm_up(warm_url)
        close_shared()  # each worker starts a provider process of its own
        for thread in threading.enumerate():  # pools shut down without waiting
            if thread is not threading.main_thread():
                thread.join(timeout=10)
    if threading.active_count() != 1:  # forking a process with threads is unsafe
        raise SystemExit("crash_worker serve: threads running before fork")
    gc.freeze()  # children's collections skip the imported heap (no copy-on-write storm)
    emit("serving", os.getpid())
    for line in sys.stdin:
        if not line.strip():
            continue
        argv = json.loads(line)
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:  # the worker
            code = 1
            try:
                code = run(argv)
            except BaseException as exc:  # report, then leave without running atexit hooks
                emit("crashed", type(exc).__name__, exc)
            finally:
                sys.stderr.flush()
                os._exit(code)
        emit("forked", pid)
        _, status = os.waitpid(pid, 0)
        emit("exit", pid, os.waitstatus_to_exitcode(status))
    return 0


if __name__ == "__main__":
    raise SystemExit(run(sys.argv[1:]))

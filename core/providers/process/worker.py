"""The provider process: the SDK clients, serving Parley over its stdin and stdout.

Run as ``python -m parley.core.providers.process.worker`` (the packaged app: its
executable with ``--provider-worker``) by :class:`parley.core.providers.process.client.
ProviderProcess`, which writes requests to its stdin and reads answers from its stdout
(frames and messages: :mod:`parley.core.providers.process.protocol`). It imports a
kind's SDK when a sender of that kind is first opened, or at once when started with
``--warm KIND`` (the app's early start: ``parley.core.providers.process.spawn``), runs
each request as a task of its own event loop, and exits when its
stdin closes (Parley ended), closing its clients first. Its warnings go to Parley's log
(``("log", 0, …)`` frames); nothing but frames goes to its stdout (a stray print goes
to stderr, which it shares with Parley).

Ending with Parley (:func:`end_with_parent`, its first act): a Parley that quits or is
killed closes the pipe, and the process exits (within :data:`EXIT_WAIT_S`) — but a
process that is stopped (SIGSTOP), or stuck holding the interpreter's lock, reads
nothing. On Linux it therefore asks the kernel to kill it (SIGKILL, which reaches a
stopped process too) when Parley ends, however it ends; started with ``--parent PID``
(Parley's pid: ``parley.core.providers.process.spawn.worker_command``) it also exits at
once when Parley ended before it asked. Elsewhere (macOS, Windows) only the closed pipe
ends it: a stopped or stuck process outlives a killed Parley there, until it runs again
(it then reads the closed pipe and exits) or is killed.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import gc
import importlib
import logging
import os
import signal
import sys
import threading
import traceback
from typing import Any

from parley.core.errors import ParleyError
from parley.core.providers.errors import ProviderProcessStopped
from parley.core.providers.process.protocol import (
    RemoteFailure,
    Sender,
    SenderSpec,
    encode,
    read_message,
    write_all,
)
from parley.core.providers.process.spawn import PARENT_SWITCH

log = logging.getLogger("parley.provider-process")

#: Seconds after Parley closed the pipe by which the process exits, its clients closed
#: or not (a request stuck in its event loop must not keep it alive).
EXIT_WAIT_S = 5.0

#: ``prctl``'s option that sets the signal a process gets when its parent ends
#: (``<linux/prctl.h>``).
PR_SET_PDEATHSIG = 1

#: The module of each kind's sender (it imports that kind's SDK).
SENDER_MODULES = {
    "anthropic": "parley.core.providers.anthropic_sender",
    "openai": "parley.core.providers.openai_sender",
    "openai_compatible": "parley.core.providers.openai_sender",
}


def _import_sender(kind: str) -> Any:
    """Import the sender module of ``kind`` (its SDK: seconds the first time) with the
    cyclic collector paused, then freeze what the import made (modules, classes and
    schemas live as long as the process; later collections skip them), and warm it.

    The pause takes a fifth off ``import anthropic`` (2.2-2.5 s against 2.5-2.9 s, four
    fresh interpreters each, an otherwise idle 2-core machine, issue 33)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        module = importlib.import_module(SENDER_MODULES[kind])
    finally:
        gc.freeze()
        if enabled:
            gc.enable()
    module.warm()
    return module


def make_sender(spec: SenderSpec) -> Sender:
    """Make the sender of ``spec`` (its module imported already)."""
    module = importlib.import_module(SENDER_MODULES[spec.kind])
    sender: Sender = module.make_sender(spec)
    return sender


class Worker:
    """Serves one Parley process (see the module docstring).

    Args:
        out_fd: where answers are written (the original stdout).
    """

    def __init__(self, out_fd: int) -> None:
        self._out = out_fd
        self._senders: dict[int, asyncio.Future[Sender]] = {}
        self._tasks: dict[int, asyncio.Task[None]] = {}
        self._writing = threading.Lock()  # log records come from any thread

    def _write(self, message: tuple[Any, ...]) -> None:
        try:
            frame = encode(message)
        except Exception:  # an unpicklable value: say so instead
            frame = encode(("error", message[1], RemoteFailure(traceback.format_exc())))
        with self._writing, contextlib.suppress(OSError):  # Parley gone: its end closed ours
            write_all(self._out, frame)

    def emit_log(self, record: logging.LogRecord) -> None:
        """Send a log record to Parley's log: ``("log", 0, (level, logger name, text))``."""
        self._write(("log", 0, (record.levelno, record.name, record.getMessage())))

    async def serve(self, in_fd: int) -> None:
        """Answer requests read from ``in_fd`` until it closes, then close every client."""
        loop = asyncio.get_running_loop()
        inbox: asyncio.Queue[tuple[Any, ...] | None] = asyncio.Queue()

        def read() -> None:
            while True:
                try:
                    message = read_message(in_fd)
                except Exception:
                    log.exception("an unreadable request")
                    message = None
                loop.call_soon_threadsafe(inbox.put_nowait, message)
                if message is None:  # Parley ended: exit even if this loop is stuck
                    stuck = threading.Timer(EXIT_WAIT_S, os._exit, (0,))
                    stuck.daemon = True  # a normal exit does not wait for it
                    stuck.start()
                    return

        threading.Thread(target=read, name="parley-requests", daemon=True).start()
        while (message := await inbox.get()) is not None:
            self._dispatch(message)
        for task in list(self._tasks.values()):
            task.cancel()
        await asyncio.gather(*self._tasks.values(), return_exceptions=True)
        for made in self._senders.values():
            if made.done() and not made.cancelled() and made.exception() is None:
                with contextlib.suppress(Exception):
                    await made.result().close()

    def _dispatch(self, message: tuple[Any, ...]) -> None:
        op, rid = message[0], message[1]
        if op == "ping":  # answered by this loop: it still runs
            self._write(("pong", 0, None))
            return
        if op == "cancel":
            task = self._tasks.get(rid)
            if task is not None:
                task.cancel()
            return
        if op == "open" and message[2] not in self._senders:  # before any later request
            self._senders[message[2]] = asyncio.get_running_loop().create_future()
        task = asyncio.create_task(self._run(op, rid, message[2:]))
        self._tasks[rid] = task
        task.add_done_callback(lambda _t: self._tasks.pop(rid, None))

    async def _sender(self, cid: int) -> Sender:
        """Sender ``cid``, once made (a request may come right after its ``open``).

        Raises:
            ProviderProcessStopped: no ``open`` came for it (this process started after
                it was opened in an earlier one).
            Exception: what making it raised.
        """
        made = self._senders.get(cid)
        if made is None:
            raise ProviderProcessStopped("the provider", "it had restarted")
        return await asyncio.shield(made)

    async def _open(self, cid: int, spec: SenderSpec) -> None:
        made = self._senders[cid]
        if made.done():
            return
        try:
            await asyncio.to_thread(importlib.import_module, SENDER_MODULES[spec.kind])
            made.set_result(make_sender(spec))
        except asyncio.CancelledError:
            made.cancel()
            raise
        except Exception as exc:
            made.set_exception(exc)
            made.exception()  # retrieved: the requests waiting for it raise it
            raise

    async def _run(self, op: str, rid: int, args: tuple[Any, ...]) -> None:
        try:
            result: Any = None
            if op == "open":
                await self._open(*args)
            elif op == "stream":
                cid, method, call_args = args
                events = getattr(await self._sender(cid), method)(*call_args)
                async with contextlib.aclosing(events):
                    async for event in events:
                        self._write(("event", rid, event))
            elif op == "call":
                cid, method, call_args = args
                sender = await self._sender(cid)
                if method != "ready":  # "ready": only made
                    result = await getattr(sender, method)(*call_args)
                if method == "close":
                    self._senders.pop(cid, None)
            else:
                raise RemoteFailure(f"unknown request {op!r}")
        except asyncio.CancelledError:
            return
        except ParleyError as exc:
            self._write(("error", rid, exc))
        except Exception:
            log.exception("request %s (%s) failed", rid, op)
            self._write(("error", rid, RemoteFailure(traceback.format_exc())))
        else:
            self._write(("done", rid, result))


def end_with_parent(parent: int | None) -> None:
    """End this process when Parley ends (see the module docstring).

    On Linux, ask the kernel for SIGKILL when the thread that started this process ends
    (``prctl(PR_SET_PDEATHSIG)``; Parley starts it from a thread that lasts as long as
    Parley: ``parley.core.providers.process.spawn.spawn``). Then, when ``parent`` (Parley's
    pid) is given and is no longer this process's parent, Parley ended before the
    request took effect: exit at once (status 0). A ``prctl`` that fails is ignored
    (the closed pipe still ends the process).

    Args:
        parent: Parley's pid, or None when not told.
    """
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if parent is not None and os.getppid() != parent:
        os._exit(0)


def _parent(args: list[str]) -> int | None:
    """The pid after :data:`~parley.core.providers.process.spawn.PARENT_SWITCH` in
    ``args`` (None when absent or not a number)."""
    for i, arg in enumerate(args[:-1]):
        if arg == PARENT_SWITCH and args[i + 1].isdigit():
            return int(args[i + 1])
    return None


def main(argv: list[str] | None = None) -> int:
    """Serve Parley on stdin/stdout until stdin closes; return the exit status (0).

    Args:
        argv: the arguments (default ``sys.argv[1:]``): ``--parent PID`` is Parley's
            pid (:func:`end_with_parent`); ``--warm KIND`` imports that kind's SDK at
            once, before a sender of it is opened.
    """
    args = sys.argv[1:] if argv is None else argv
    end_with_parent(_parent(args))  # first: Parley may already be gone
    in_fd, out_fd = os.dup(0), os.dup(1)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.dup2(2, 1)  # a stray print goes to the log, not into a frame
    for kind in (args[i + 1] for i, a in enumerate(args[:-1]) if a == "--warm"):
        if kind in SENDER_MODULES:
            threading.Thread(target=_import_sender, args=(kind,), name="parley-sdk-import",
                             daemon=True).start()
    worker = Worker(out_fd)
    logging.basicConfig(level=logging.WARNING, handlers=[_Forward(worker)])
    asyncio.run(worker.serve(in_fd))
    return 0


class _Forward(logging.Handler):
    """Hands the process's log records (warnings and worse) to Parley's log."""

    def __init__(self, worker: Worker) -> None:
        super().__init__()
        self.worker = worker

    def emit(self, record: logging.LogRecord) -> None:
        with contextlib.suppress(Exception):
            self.worker.emit_log(record)


if __name__ == "__main__":
    sys.exit(main())

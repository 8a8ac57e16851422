"""Parley's side of the provider process: starting it, requests to it, its answers.

One :class:`ProviderProcess` per Parley process (:func:`shared_process`): the app starts
it first thing (:mod:`parley.core.providers.process.spawn`, before Qt is imported) so
that the SDKs are imported on another core while the window paints; a test run or a
command-line mode starts it at its first provider. A thread reads its answers and hands each to the
event loop that asked (``call_soon_threadsafe``), so any loop (qasync's, a test's) can
use it. A request cancelled here (a stopped reply, a called-off title) is cancelled
there, which closes its HTTP request. When the process ends, the requests in flight
fail with :class:`parley.core.providers.errors.ProviderProcessStopped` (retryable) and a
new one is started at once (importing the SDKs used so far), or by the next request.
It ends when Parley closes its pipe (Parley's exit, even a killed one), and on Linux with
Parley however it ends, stopped or not (``parley.core.providers.process.worker``). A
watchdog thread asks the process every few seconds whether it still answers (``ping``,
answered by its event loop; each request is followed by one too); a request waiting on a
process that answered nothing for :data:`SILENT_AFTER_S` is told so
(:mod:`parley.core.providers.process.silence`: the window says it waits for the
connection process), and told again when it answers; one silent for :data:`HUNG_AFTER_S`
is killed, which fails its requests as above and starts another — while idle too, so a
hang is mended before the next message.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import itertools
import logging
import os
import subprocess
import threading
import time
from collections.abc import AsyncGenerator
from dataclasses import dataclass
from typing import Any

from parley.core.providers.base import Event, ModelInfo
from parley.core.providers.errors import ProviderProcessStopped, StreamInterrupted
from parley.core.providers.process.protocol import (
    ListedModel,
    SenderSpec,
    encode,
    read_message,
    write_all,
)
from parley.core.providers.process.silence import Silence
from parley.core.providers.process.spawn import spawn, take_early, worker_command

log = logging.getLogger(__name__)

#: A process that ended on its own after running this long (s) is started again at once.
RESTART_AFTER_S = 10.0

#: A process that answers nothing for this long (s) is taken for hung (stopped,
#: deadlocked): it is killed, the requests waiting fail (retryable), another starts.
HUNG_AFTER_S = 15.0

#: A request waiting on a process that has answered nothing (no event, no pong) for this
#: long (s) is told so (:mod:`parley.core.providers.process.silence`).
SILENT_AFTER_S = 3.0

#: How long (s) closing a client waits for the process to say it closed its connections.
CLOSE_WAIT_S = 2.0

#: A process that has not answered a ping for this long (s) is taken, at quit, for one
#: that will not answer: closing a client gives up on it, and it is killed at once
#: instead of being waited for (a healthy one answers a ping within milliseconds).
PONG_WAIT_S = 0.5

#: Why a reply broke off when the provider process ended in its middle.
PROCESS_STOPPED = "Parley's connection process stopped unexpectedly"

#: Why, when it was ended because it stopped answering (:data:`HUNG_AFTER_S`).
PROCESS_HUNG = "Parley's connection process stopped answering and was restarted"


@dataclass
class _Reply:
    """Where the answers to one request go."""

    loop: asyncio.AbstractEventLoop
    queue: asyncio.Queue[tuple[Any, ...]]
    provider: str


class ProviderProcess:
    """The provider process, started on first use (see the module docstring).

    Args:
        command: what to run (default: :func:`parley.core.providers.process.spawn.
            worker_command`, or the process :func:`~parley.core.providers.process.spawn.
            start_early` started).
        hung_after_s: silent this long (seconds): killed as hung (default
            :data:`HUNG_AFTER_S`, read when it is made: a test may set it smaller
            before the shared process is made).
    """

    def __init__(self, command: list[str] | None = None, *,
                 hung_after_s: float | None = None) -> None:
        self._command = command
        self._hung_after_s = HUNG_AFTER_S if hung_after_s is None else hung_after_s
        self._lock = threading.Lock()  # the state below; never held while writing
        self._writing = threading.Lock()  # one frame at a time into the pipe
        self._heard = 0.0  # when the process last answered anything (monotonic s)
        #: whence the waiting requests count its silence: its last answer, or the request
        #: that found none waiting (it had nothing to say before)
        self._quiet_from = 0.0
        #: when it was sent the first ping it has not answered (None: it answered since)
        self._asked: float | None = None
        self._silent = False  # the waiting requests were told it does not answer
        self._why_ended = ""  # said when the watchdog killed it
        self._proc: subprocess.Popen[bytes] | None = None
        self._generation = 0
        self._replies: dict[int, _Reply] = {}
        self._ids = itertools.count(1)
        self._kinds: set[str] = set()  # the SDKs asked for: a new process imports them at once
        self._started = 0.0

    @property
    def generation(self) -> int:
        """How many times the process was started (a sender opened in an earlier one is
        opened again)."""
        return self._generation

    def start(self) -> int:
        """Start the process unless it runs; return its :attr:`generation`.

        Raises:
            OSError: it could not be started.
        """
        with self._lock:
            return self._start_locked()

    def _start_locked(self) -> int:
        if self._proc is not None and self._proc.poll() is None:
            return self._generation
        early = take_early() if self._command is None else None
        warm = [arg for kind in sorted(self._kinds) for arg in ("--warm", kind)]
        proc = early or spawn([*(self._command or worker_command()), *warm])
        self._proc = proc
        self._started = self._heard = self._quiet_from = time.monotonic()
        self._asked, self._silent = None, False
        self._why_ended = ""
        self._generation += 1
        threading.Thread(target=self._read, args=(proc, self._generation),
                         name="parley-provider-process", daemon=True).start()
        threading.Thread(target=self._watch, args=(proc,),
                         name="parley-provider-watchdog", daemon=True).start()
        return self._generation

    def _watch(self, proc: subprocess.Popen[bytes]) -> None:
        """Kill ``proc`` once it has been silent for ``hung_after_s``, asking it every
        quarter of that, and tell the requests waiting when it has not answered for
        :data:`SILENT_AFTER_S` (runs in its own thread while it runs).

        While a request waits, a process that said nothing for a tick is asked at once
        (a provider thinking keeps it answering those), so a process that stops in the
        middle of a reply is told after :data:`SILENT_AFTER_S` from its last answer, as
        one that stops before any is from the request (not from the next ping of the
        quarter of ``hung_after_s``)."""
        tick = min(self._hung_after_s, SILENT_AFTER_S) / 4
        pinged = time.monotonic()
        while True:
            time.sleep(tick)
            now = time.monotonic()
            with self._lock:
                if self._proc is not proc:
                    return
                silent = now - self._heard
                hung = silent >= self._hung_after_s
                if hung:
                    self._why_ended = f"it stopped answering for {silent:.0f} s"
                tell = (not hung and not self._silent and self._asked is not None
                        and now - self._quiet_from >= SILENT_AFTER_S)
                if tell:
                    self._silent = True
                waiting = list(self._replies.items()) if tell else []
                ask = bool(self._replies) and self._asked is None and silent >= tick
            if hung:
                log.warning("the provider process did not answer for %.0f s: ended", silent)
                with contextlib.suppress(OSError):
                    proc.kill()  # its reader then fails the requests and starts another
                return
            for rid, reply in waiting:
                _deliver(reply, ("silent", rid, True))
            if ask or now - pinged >= self._hung_after_s / 4:
                pinged = now
                self._ping()

    def _read(self, proc: subprocess.Popen[bytes], generation: int) -> None:
        """The answers of one process, until it ends (runs in its own thread)."""
        assert proc.stdout is not None
        fd = proc.stdout.fileno()
        while True:
            try:
                message = read_message(fd)
            except Exception:  # a broken frame: the process is of no use any more
                log.exception("the provider process sent an unreadable answer")
                message = None
            if message is None:
                break
            self._answered()
            if message[0] == "pong":
                continue
            if message[0] == "log":
                level, name, text = message[2]
                logging.getLogger(name).log(level, "provider process: %s", text)
                continue
            with self._lock:
                reply = self._replies.get(message[1])
            if reply is not None:
                _deliver(reply, message)
        with contextlib.suppress(Exception):
            proc.wait(timeout=5)
        with self._lock:
            closed = self._proc is not proc  # closed by close(), or replaced
        log.log(logging.DEBUG if closed else logging.WARNING,
                "the provider process ended (exit status %s)", proc.returncode)
        self._fail_all(generation, self._why_ended, hung=bool(self._why_ended))
        self._restart(proc)

    def _answered(self) -> None:
        """The process said something: it runs (the requests told it did not are told it
        does)."""
        with self._lock:
            self._heard = self._quiet_from = time.monotonic()
            self._asked = None
            was_silent, self._silent = self._silent, False
            waiting = list(self._replies.items()) if was_silent else []
        for rid, reply in waiting:
            _deliver(reply, ("silent", rid, False))

    def _restart(self, ended: subprocess.Popen[bytes]) -> None:
        """Start a new process at once (its SDKs imported before the next request) when
        ``ended`` ended on its own after running a while (not closed; not one that dies
        as it starts: the next request then tries again, and says why)."""
        with self._lock:
            if self._proc is not ended or time.monotonic() - self._started < RESTART_AFTER_S:
                return
            with contextlib.suppress(OSError):
                self._start_locked()

    def remember_kind(self, kind: str) -> None:
        """Note that a sender of ``kind`` is used (a restarted process imports its SDK at
        once)."""
        self._kinds.add(kind)

    def _fail_all(self, generation: int, detail: str, *, hung: bool) -> None:
        with self._lock:
            if generation != self._generation:
                return
            replies, self._replies = self._replies, {}
        for rid, reply in replies.items():
            _deliver(reply, ("error", rid,
                             ProviderProcessStopped(reply.provider, detail, hung=hung)))

    def _send(self, message: tuple[Any, ...], provider: str) -> None:
        frame = encode(message)
        with self._lock:
            proc = self._proc
        if proc is None or proc.stdin is None:
            raise ProviderProcessStopped(provider, "it was not started")
        try:
            with self._writing:  # a hung process blocks this until the watchdog kills it
                write_all(proc.stdin.fileno(), frame)
        except (OSError, ValueError) as exc:  # ValueError: its pipe closed meanwhile
            raise ProviderProcessStopped(provider, str(exc)) from None

    def post(self, message: tuple[Any, ...], provider: str) -> None:
        """Send ``message`` and wait for no answer.

        Raises:
            ProviderProcessStopped: the process is not running.
        """
        self._send(message, provider)

    def _ping(self) -> None:
        """Ask the process whether it runs (``ping``); its silence counts from the first
        ping it has not answered (nothing else sent is answered at once)."""
        with self._lock:
            if self._asked is None:
                self._asked = time.monotonic()
        with contextlib.suppress(ProviderProcessStopped):
            self._send(("ping", 0), "")

    def _ask(self, message: tuple[Any, ...], provider: str) -> None:
        """Send a request, then a ping: a request waits on the process's silence, not on
        the provider's (a provider thinking for a minute keeps the process answering)."""
        self._send(message, provider)
        self._ping()

    def _begin(self, provider: str) -> tuple[int, asyncio.Queue[tuple[Any, ...]]]:
        rid = next(self._ids)
        queue: asyncio.Queue[tuple[Any, ...]] = asyncio.Queue()
        with self._lock:
            if not self._replies:  # the process had nothing to say until now
                self._quiet_from = time.monotonic()
            self._replies[rid] = _Reply(asyncio.get_running_loop(), queue, provider)
            if self._silent:  # asked of a process that does not answer already
                queue.put_nowait(("silent", rid, True))
        return rid, queue

    @staticmethod
    async def _answer(queue: asyncio.Queue[tuple[Any, ...]],
                      silence: Silence) -> tuple[Any, ...]:
        """The next answer in ``queue``, telling ``silence`` of the process's silences
        meanwhile."""
        while True:
            message = await queue.get()
            if message[0] != "silent":
                return message
            silence.tell(message[2])

    def _end(self, rid: int, answered: bool) -> None:
        with self._lock:
            self._replies.pop(rid, None)
            alive = self._proc is not None and self._proc.poll() is None
        if not answered and alive:
            with contextlib.suppress(ProviderProcessStopped):
                self._send(("cancel", rid), "")

    async def request(self, op: str, *args: Any, provider: str) -> Any:
        """Send ``(op, rid, *args)`` and return its result.

        Raises:
            ParleyError: what the process raised (a ProviderError), or
                ProviderProcessStopped when it ended first.
        """
        silence = Silence()  # where it was asked (the silence listener there)
        rid, queue = self._begin(provider)
        answered = False
        try:
            self._ask((op, rid, *args), provider)
            kind, _, value = await self._answer(queue, silence)
            answered = True
            if kind == "error":
                raise value
            return value
        finally:
            silence.tell(False)
            self._end(rid, answered)

    async def stream(self, *args: Any, provider: str) -> AsyncGenerator[Any, None]:
        """Send ``("stream", rid, *args)`` and yield the values it streams.

        Raises:
            ParleyError: as :meth:`request`.
        """
        silence = Silence()  # where it was asked (the silence listener there)
        rid, queue = self._begin(provider)
        answered = arrived = False
        try:
            self._ask(("stream", rid, *args), provider)
            while True:
                kind, _, value = await self._answer(queue, silence)
                if kind == "event":
                    arrived = True
                    yield value
                    continue
                answered = True
                if kind == "error":
                    if arrived and isinstance(value, ProviderProcessStopped):
                        why = PROCESS_HUNG if value.hung else PROCESS_STOPPED
                        raise StreamInterrupted(provider, why, cause="process") from None
                    raise value
                return
        finally:
            silence.tell(False)
            self._end(rid, answered)

    def answering(self, within_s: float = PONG_WAIT_S) -> bool:
        """False when the process has left a ping unanswered for ``within_s`` seconds
        (stopped, or stuck holding its interpreter's lock); True otherwise, also while
        nothing was asked of it since its last answer."""
        with self._lock:
            return self._asked is None or time.monotonic() - self._asked < within_s

    def _answers(self, within_s: float) -> bool:
        """Ask the process whether it runs and wait up to ``within_s`` seconds for any
        answer (at once False when a ping was unanswered that long already)."""
        if not self.answering(within_s):
            return False
        asked = time.monotonic()
        self._ping()
        while time.monotonic() - asked < within_s:
            with self._lock:
                if self._heard >= asked or self._proc is None or self._proc.poll() is not None:
                    return True
            time.sleep(0.01)
        return False

    def close(self, timeout_s: float = 2.0) -> None:
        """End the process: close its pipe (it then closes its clients and exits), kill
        it after ``timeout_s`` seconds — at once when it does not answer a ping within
        :data:`PONG_WAIT_S` (stopped or hung: it would only be waited for)."""
        with self._lock:
            running = self._proc is not None and self._proc.poll() is None
        answering = not running or self._answers(PONG_WAIT_S)
        with self._lock:
            proc, self._proc = self._proc, None
        if proc is None:
            return
        if not answering:
            log.info("the provider process does not answer: killed at quit")
            with contextlib.suppress(OSError):
                proc.kill()
        with contextlib.suppress(OSError):
            if proc.stdin is not None:
                proc.stdin.close()
        try:
            proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            proc.kill()


def _deliver(reply: _Reply, message: tuple[Any, ...]) -> None:
    with contextlib.suppress(RuntimeError):  # its loop is closed: nobody waits any more
        reply.loop.call_soon_threadsafe(reply.queue.put_nowait, message)


class RemoteSender:
    """One provider's SDK client, in the provider process (the adapters' sender).

    Args:
        spec: how to make the client there.
        process: the provider process.
    """

    _ids = itertools.count(1)

    def __init__(self, spec: SenderSpec, process: ProviderProcess) -> None:
        self.spec = spec
        self.process = process
        self.cid = next(self._ids)
        self._opened = 0  # the process generation it was opened in

    def send_open(self) -> None:
        """Have the process make the client (once per process start), without waiting:
        a request sent after it waits there until it is made (its SDK imported), so a
        request can be on its way while the SDK is still being imported.

        Raises:
            ProviderProcessStopped: the process could not be started or ended.
        """
        try:
            generation = self.process.start()
        except OSError as exc:
            raise ProviderProcessStopped(self.spec.name, str(exc)) from None
        if self._opened != generation:
            self.process.remember_kind(self.spec.kind)
            # rid 0: nobody waits for its answer (a request after it meets its failure)
            self.process.post(("open", 0, self.cid, self.spec), self.spec.name)
            self._opened = generation

    async def open(self) -> None:
        """Make the client in the process and wait until it is made.

        Raises:
            ProviderProcessStopped: the process could not be started or ended.
            ParleyError: what making it raised.
        """
        self.send_open()
        await self.process.request("call", self.cid, "ready", (), provider=self.spec.name)

    async def _call(self, method: str, *args: Any) -> Any:
        self.send_open()
        return await self.process.request("call", self.cid, method, args,
                                          provider=self.spec.name)

    async def attempt(
        self, params: dict[str, Any], info: ModelInfo
    ) -> AsyncGenerator[Event, None]:
        """One try at a streamed reply (see ``Sender.attempt``)."""
        self.send_open()
        events = self.process.stream(self.cid, "attempt", (params, info),
                                     provider=self.spec.name)
        async with contextlib.aclosing(events):
            async for event in events:
                yield event

    async def count(self, params: dict[str, Any]) -> int:
        """The input tokens of a request by the provider's count."""
        result: int = await self._call("count", params)
        return result

    async def models(self) -> list[ListedModel]:
        """The models the provider lists."""
        result: list[ListedModel] = await self._call("models")
        return result

    async def server_json(self, method: str, path: str, body: Any = None) -> Any:
        """A server's own JSON endpoint (None when it fails or is not JSON)."""
        return await self._call("server_json", method, path, body)

    async def close(self) -> None:
        """Close the client's HTTP connections (nothing to do when it was never made).

        Waits up to :data:`CLOSE_WAIT_S` for the process to say so, but not for a process
        that leaves a ping unanswered for :data:`PONG_WAIT_S` (stopped or hung: it is
        killed at exit, :meth:`ProviderProcess.close`)."""
        if self._opened and self._opened == self.process.generation:
            self._opened = 0
            if not self.process.answering():
                return  # a hung process must not hold up Parley's quit
            closing = asyncio.ensure_future(self.process.request(
                "call", self.cid, "close", (), provider=self.spec.name))
            loop = asyncio.get_running_loop()
            deadline = loop.time() + CLOSE_WAIT_S
            try:
                while not closing.done() and loop.time() < deadline \
                        and self.process.answering():
                    await asyncio.wait([closing], timeout=0.05)
            finally:
                if not closing.done():
                    closing.cancel()  # its request is called off there too
                    await asyncio.wait([closing])
            if not closing.cancelled():
                with contextlib.suppress(ProviderProcessStopped):
                    closing.result()


_shared: ProviderProcess | None = None
_shared_lock = threading.Lock()


def close_shared() -> None:
    """End the shared provider process and forget it (the next request starts another):
    for a process about to ``fork``, whose children must each start their own."""
    global _shared
    with _shared_lock:
        process, _shared = _shared, None
    if process is not None:
        process.close()


def _forget_in_child() -> None:
    """In a forked child: the parent's provider process is the parent's (its pipes too)."""
    global _shared
    _shared = None


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_in_child)


def shared_process() -> ProviderProcess:
    """The provider process of this Parley process (made, not yet started, on first use;
    ended at exit)."""
    global _shared
    with _shared_lock:
        if _shared is None:
            _shared = ProviderProcess()
            atexit.register(_shared.close)
        return _shared

"""Whether the PostgreSQL server answers: a call stuck on the store's worker is told at once.

The store's calls run one after the other on one worker thread
(``parley.core.store.async_store``). When the server stops answering without closing
the connection (a network partition, a frozen server), the call in progress waits
until the TCP keepalives give up (``parley.core.store.postgres.options``: about 25 s)
or for ever behind a proxy that holds the connection, and every later call would
queue behind it. :class:`AnswerWatch` notices a call that has run on the worker for
longer than :data:`SLOW_S` and then:

* tells its listeners (``answering`` False: the window says "The database is not
  answering — Parley keeps trying");
* refuses the calls queued behind it and those made meanwhile with
  :class:`~parley.core.store.errors.ServerNotAnswering` (a passing failure: a reply is
  kept in memory and written later, a message stays in the box, search says why),
  so stopping a reply, a new chat and search do not wait for the server;
* tells its listeners ``answering`` True the moment that call ends (the server
  answered, or the keepalives gave up and the next call connects again).

A call already running cannot be stopped: it ends when the server answers, and its
caller gets its result then. Long calls on purpose (a copy of every chat, an import)
are not watched. Only a store on a server is watched; a sessions.db file waits for
another program's lock as ``parley.core.store.sqlite`` says.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any, TypeVar

from parley.core.store.errors import ServerNotAnswering

T = TypeVar("T")
log = logging.getLogger(__name__)

#: Seconds a call may run on the worker before the server counts as not answering
#: (a save takes milliseconds, a search well under a second on a working server).
SLOW_S = 3.0

Listener = Callable[[bool], None]


class AnswerWatch:
    """Watches the calls of one store's worker (module docstring).

    Args:
        where: the server, as messages name it (``user@host:port/database``).
        loop: the event loop the store is driven from (listeners are called there).
        slow_s: seconds after which a running call means "not answering".

    Attributes:
        answering: False from :data:`SLOW_S` into a stuck call until it ends.
    """

    def __init__(self, where: str, loop: asyncio.AbstractEventLoop,
                 slow_s: float = SLOW_S) -> None:
        self.where, self.loop, self.slow_s = where, loop, slow_s
        self.answering = True
        self._listeners: list[Listener] = []
        self._running: object | None = None  # the token of the call on the worker
        self._since = 0.0
        self._check: asyncio.TimerHandle | None = None
        self._queued: set[Future[Any]] = set()  # watched calls not finished
        self._refused: set[Future[Any]] = set()  # those refused while not answering
        self._lock = threading.Lock()

    def listen(self, listener: Listener) -> Callable[[], None]:
        """Call ``listener(answering)`` on each change, on the loop; returns an unsubscribe."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener) if listener in self._listeners else None

    def refuse_now(self) -> None:
        """Raise :class:`ServerNotAnswering` while the server is not answering."""
        if not self.answering:
            raise self.error()

    def error(self) -> ServerNotAnswering:
        """The error a refused call raises."""
        return ServerNotAnswering(self.where, max(self.slow_s, time.monotonic() - self._since))

    def watched(self, fn: Callable[[], T]) -> Callable[[], T]:
        """``fn`` (to run on the worker) reporting its start and end to this watch."""
        token = object()

        @functools.wraps(fn)
        def run() -> T:
            self._tell_loop(self._started, token)
            try:
                return fn()
            finally:
                self._tell_loop(self._ended, token)

        return run

    def queued(self, future: Future[Any]) -> None:
        """A watched call was submitted (refused with the others if the server stops
        answering before it starts)."""
        with self._lock:
            self._queued.add(future)
        future.add_done_callback(self._forget)

    def was_refused(self, future: Future[Any]) -> bool:
        """True (once) when ``future`` was cancelled by this watch, not by its caller."""
        with self._lock:
            if future in self._refused:
                self._refused.discard(future)
                return True
            return False

    def _forget(self, future: Future[Any]) -> None:
        with self._lock:
            self._queued.discard(future)

    def _tell_loop(self, step: Callable[[object], None], token: object) -> None:
        if not self.loop.is_closed():
            self.loop.call_soon_threadsafe(step, token)

    # -- on the loop --------------------------------------------------------------
    def _started(self, token: object) -> None:
        self._running, self._since = token, time.monotonic()
        if self._check is not None:
            self._check.cancel()
        self._check = self.loop.call_later(self.slow_s, self._stuck, token)

    def _stuck(self, token: object) -> None:
        self._check = None
        if self._running is not token or not self.answering:
            return
        self.answering = False
        log.warning("the PostgreSQL server of %s has not answered for %.0f s", self.where,
                    self.slow_s)
        with self._lock:
            waiting = [f for f in self._queued if not f.running() and not f.done()]
        for future in waiting:  # not started: refused now rather than queued behind it
            with self._lock:
                self._refused.add(future)
            if not future.cancel():
                with self._lock:
                    self._refused.discard(future)
        self._tell(False)

    def _ended(self, token: object) -> None:
        if self._running is not token:
            return
        self._running = None
        if self._check is not None:
            self._check.cancel()
            self._check = None
        if not self.answering:
            self.answering = True
            log.warning("the PostgreSQL server of %s answers again after %.1f s", self.where,
                        time.monotonic() - self._since)
            self._tell(True)

    def _tell(self, answering: bool) -> None:
        for listener in list(self._listeners):
            try:
                listener(answering)
            except Exception:  # noqa: BLE001 - one listener's bug does not stop the others
                log.exception("answer listener failed")

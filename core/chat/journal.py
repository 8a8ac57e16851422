"""Journalling of a streaming reply (used by ``parley.core.chat.run``).

While a reply streams, it is written to sessions.db as an assistant turn
marked ``aborted`` at most every ``interval_s`` seconds — and at the latest
``interval_s`` after new content arrived, even when the stream then pauses —
so a process death loses at most that much. The completed reply replaces it
(``Store.finish_turn``), clearing the mark.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from parley.core.chat.reply import ReplyBuilder
from parley.core.log_repeats import RepeatLimiter

if TYPE_CHECKING:
    from parley.core.store.async_store import AsyncStore

log = logging.getLogger(__name__)
#: A failing journal write is logged once per interval, not every 250 ms of an outage.
_failures = RepeatLimiter(log)

#: Seconds the end of a stream waits for a journal write still in flight.
WAIT_S = 1.0


class Journal:
    """Writes a streaming reply as an aborted turn at most every ``interval_s``, and at
    latest ``interval_s`` after new content arrived, even if the stream then pauses."""

    def __init__(
        self, store: AsyncStore, session_id: str, builder: ReplyBuilder, interval_s: float,
        clock: Callable[[], float],
    ) -> None:
        self.store, self.session_id, self.builder = store, session_id, builder
        self.interval_s, self.clock = interval_s, clock
        self.last = clock()
        self.write: asyncio.Future[Any] | None = None
        self.timer: asyncio.TimerHandle | None = None

    def changed(self) -> None:
        """New content arrived: write now if the interval has passed, else schedule it."""
        if self.timer is not None:
            return
        wait = max(0.0, self.interval_s - (self.clock() - self.last))
        if wait == 0.0:
            self._write()
        else:
            self.timer = asyncio.get_running_loop().call_later(wait, self._write)

    def _write(self) -> None:
        self.timer = None
        if self.write is not None and not self.write.done():  # one write at a time
            self.timer = asyncio.get_running_loop().call_later(self.interval_s, self._write)
            return
        self.last = self.clock()
        self.write = asyncio.ensure_future(
            # Marked cut off: if it is still so when read, Parley ended mid-reply.
            self.store.upsert_turn(self.session_id,
                                   replace(self.builder.turn(aborted=True), cut_off=True))
        )
        self.write.add_done_callback(self._done)

    @staticmethod
    def _done(write: asyncio.Future[Any]) -> None:
        # A failed journal write (disk full...) does not stop the stream: the next one,
        # finish_turn or _keep_partial writes the same turn again and reports a
        # lasting failure. Retrieve it here so it is logged once, not as an orphan.
        if not write.cancelled() and write.exception() is not None:
            _failures.warning("journal write failed: %s", write.exception())

    def stop(self) -> None:
        """No more scheduled writes (the write in flight, if any, goes on)."""
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None

    async def wait(self, timeout_s: float | None = WAIT_S) -> None:
        """Wait for the write in flight (a failure was logged by :meth:`_done`), at most
        ``timeout_s`` seconds (None: until it ends). A write still waiting (on another
        program's lock) goes on: the store runs its calls one after the other
        (``parley.core.store.async_store``), so the complete reply saved next is
        written after it and replaces it."""
        if self.write is not None:
            await asyncio.wait([self.write], timeout=timeout_s)

"""Replies whose save failed for a reason that passes, kept in memory and written again.

A reply is shown as saved only once it is in sessions.db. When its save fails
because the disk is full, another program
holds the file's write lock past the busy timeout, the disk reported an error,
or the file turned read-only, the complete reply is not lost and no
truncated prefix stands in for it: :class:`SaveQueue` keeps the whole turn in
memory ("not saved yet") and writes it again in the background, in order,
until the store accepts it (the journal's aborted prefix of the same turn id
is then replaced by the complete reply).

While anything is kept, :class:`parley.core.chat.run.ChatRunner` refuses new messages,
retries and regenerations with :class:`SavesPending`, so nothing later is
saved before an earlier reply. Listeners hear of each change
(:class:`SaveNews`); a window shows one status for all of them.

A write that has not answered within :data:`FIRST_WAIT_S` (another program holds
the write lock and SQLite waits out its busy timeout, several times over, before it
fails: ``parley.core.store.sqlite.engine.write``) is not waited for either: the
turn is kept at once (the error :class:`StillWaiting`, so the window says "not
saved yet" seconds after the reply ends, not after the lock waits), and the
write goes on in the background; if it succeeds the turn is "saved", if it fails
the attempts go on as for any passing failure. Only one write of kept turns runs
at a time, so each is written once.

Errors other than those (a deleted or replaced file, a damaged file) are
retried too, at the longest delay: the turn stays in memory and can be
written into a rescue copy on quitting (:meth:`SaveQueue.write_into`).
A kept turn whose chat was deleted meanwhile is dropped.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from parley.core.content import Turn, Usage
from parley.core.errors import ParleyError
from parley.core.store.errors import (
    DatabaseBusy,
    DatabaseReadOnly,
    DiskError,
    DiskFull,
    ServerDiskFull,
    ServerNotAnswering,
    ServerReadOnly,
    ServerUnreachable,
    SessionNotFound,
    StoreError,
)

if TYPE_CHECKING:
    from parley.core.store.async_store import AsyncStore

log = logging.getLogger(__name__)

#: Failures that pass on their own or by the person's hand (free space, close the
#: other program): the turn is kept and written again.
PASSING = (DiskFull, DatabaseBusy, DiskError, DatabaseReadOnly, ServerUnreachable,
           ServerDiskFull, ServerReadOnly)
#: Seconds between attempts: the first retries come soon, then every 5 s.
RETRY_DELAYS_S = (0.5, 1.0, 2.0, 5.0)
#: Seconds a reply's first save is waited for before the turn is kept as "not saved
#: yet" (the write goes on meanwhile). A write waiting on another program's lock
#: takes up to ``WRITE_ATTEMPTS`` busy timeouts (15 s) before it fails.
FIRST_WAIT_S = 2.0


class StillWaiting(ParleyError):
    """A save has not answered for a while: the store waits (a lock, a slow server)."""

    def __init__(self, seconds: float) -> None:
        super().__init__(
            f"The database has not taken the reply for {seconds:.0f} s: another program may "
            "hold sessions.db locked, or the server is not answering. Parley keeps the reply "
            "and keeps trying; nothing already saved was lost."
        )
        self.seconds = seconds


class SavesPending(ParleyError):
    """A new message (or a retry) was refused: an earlier reply is not saved yet."""

    def __init__(self, count: int, error: ParleyError | None) -> None:
        what = "reply is" if count == 1 else f"{count} replies are"
        why = f" ({reason(error)})" if error is not None else ""
        super().__init__(
            f"Your last {what} not saved yet{why}. Parley keeps trying and sends nothing new "
            "until it is saved, so the chat stays in order. Your message stays in the box."
        )
        self.count = count


def reason(error: BaseException | None) -> str:
    """Why saving fails, in a few words ("the disk is full")."""
    if isinstance(error, DiskFull):
        return "the disk is full"
    if isinstance(error, DatabaseBusy):
        return "another program holds sessions.db locked"
    if isinstance(error, DiskError):
        return "the disk reported an error"
    if isinstance(error, DatabaseReadOnly):
        return "sessions.db is read-only"
    if isinstance(error, ServerNotAnswering):
        return "the database is not answering"
    if isinstance(error, ServerUnreachable):
        return "the PostgreSQL server cannot be reached"
    if isinstance(error, ServerDiskFull):
        return "the disk of the PostgreSQL server is full"
    if isinstance(error, ServerReadOnly):
        return "the PostgreSQL database allows only reading"
    if isinstance(error, StillWaiting):
        return "the database does not answer yet (another program may hold it locked)"
    if isinstance(error, ParleyError):
        return error.message.split(". ")[0].rstrip(".")
    return "the file could not be written"


@dataclass(frozen=True, slots=True)
class Unsaved:
    """A turn kept in memory until it is written.

    Attributes:
        session_id: its session.
        turn: the complete turn (an assistant reply; ``aborted`` only for a
            reply that really was cut off: Stop, a failed stream).
        usage: added to the session's counters when written (``Store.finish_turn``);
            None writes the turn alone (``Store.upsert_turn``).
        since: when its first save failed (``time.monotonic()`` seconds).
    """

    session_id: str
    turn: Turn
    usage: Usage | None
    since: float


@dataclass(frozen=True, slots=True)
class SaveNews:
    """A change of the queue: ``kept`` (a save failed, the turn is kept), ``saved``
    (a kept turn is now in sessions.db), ``dropped`` (its chat was deleted),
    ``failing`` (another attempt failed; ``error`` is the latest)."""

    kind: Literal["kept", "saved", "dropped", "failing"]
    session_id: str
    turn: Turn | None
    error: ParleyError | None


Listener = Callable[[SaveNews], None]


class SaveQueue:
    """Writes turns, keeping those a passing failure refused and writing them again.

    Args:
        store: an ``AsyncStore``.
        delays_s: seconds between background attempts (the last one repeats).
    """

    def __init__(self, store: AsyncStore, *, delays_s: tuple[float, ...] = RETRY_DELAYS_S) -> None:
        self.store = store
        self.delays_s = delays_s
        self._items: dict[str, Unsaved] = {}  # turn id -> kept turn, oldest first
        self._task: asyncio.Task[None] | None = None
        self._listeners: list[Listener] = []
        self._lock = asyncio.Lock()
        #: the latest failure while anything is kept (None when all is saved)
        self.error: ParleyError | None = None
        answers = getattr(store, "answers", None)  # a server: written the moment it answers
        if answers is not None:  # (parley.core.store.answering)
            answers.listen(lambda answering: self._kick() if answering else None)

    # -- what is kept -------------------------------------------------------
    def listen(self, listener: Listener) -> Callable[[], None]:
        """Call ``listener`` on every change; returns a function that stops it."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener) if listener in self._listeners else None

    def pending(self, session_id: str | None = None) -> list[Unsaved]:
        """Kept turns (of one session, or all), oldest first."""
        return [u for u in self._items.values()
                if session_id is None or u.session_id == session_id]

    def holds(self, turn_id: str) -> bool:
        """True while the turn with this id is kept, not saved yet."""
        return turn_id in self._items

    def check(self) -> None:
        """Raise :class:`SavesPending` while anything is kept."""
        if self._items:
            raise SavesPending(len(self._items), self.error)

    # -- writing --------------------------------------------------------------
    async def save(self, session_id: str, turn: Turn, usage: Usage | None = None, *,
                   wait_s: float | None = FIRST_WAIT_S) -> bool:
        """Write a turn now; keep it for later when a passing failure refuses it.

        Args:
            session_id: its session.
            turn: the turn (written with ``upsert_turn``: a journalled prefix
                of the same id is replaced).
            usage: with ``finish_turn``: added to the session's counters in
                the same transaction.
            wait_s: seconds to wait for the write (None: until it ends). A write
                still waiting then (a lock, a server not answering) goes on in the
                background and the turn is kept meanwhile (:class:`StillWaiting`).

        Returns:
            True when it is in sessions.db; False when it is kept (listeners
            were told ``kept``; the background attempts have started).

        Raises:
            StoreError: a failure that is not passing and not about the file
                (``SessionNotFound``, ``TurnInOtherSession``), met within ``wait_s``:
                nothing kept.
        """
        item = Unsaved(session_id, turn, usage, time.monotonic())
        if self._items:  # written in order: behind what is kept already
            self._keep(item, self.error)
            return False
        first = asyncio.ensure_future(self._first_write(item))
        done, _ = await asyncio.wait([first], timeout=wait_s)
        if first in done:
            return first.result()
        log.warning("reply %s not saved yet: the store has not answered for %.1f s",
                    turn.id, wait_s or 0.0)
        first.add_done_callback(_retrieve)
        self._keep(item, StillWaiting(wait_s or 0.0), retry=False)
        return False

    async def _first_write(self, item: Unsaved) -> bool:
        """Write ``item`` (under the queue's lock); True when written. A passing failure
        keeps it; when :meth:`save` stopped waiting and kept it already, a success is
        told as ``saved`` and a failure starts the background attempts."""
        try:
            async with self._lock:
                await self._write(item.session_id, item.turn, item.usage)
                if self._items.pop(item.turn.id, None) is not None:  # kept while it waited
                    log.info("reply %s saved after %.1f s", item.turn.id,
                             time.monotonic() - item.since)
                    if not self._items:
                        self.error = None
                    self._tell(SaveNews("saved", item.session_id, item.turn, None))
        except StoreError as exc:
            if not _keepable(exc):
                if self._items.pop(item.turn.id, None) is not None:
                    log.error("kept reply %s dropped: %s", item.turn.id, exc.message)
                    self._tell(SaveNews("dropped", item.session_id, item.turn, exc))
                raise
            log.warning("reply %s not saved yet: %s", item.turn.id, exc.message)
            self._keep(item, exc)
            return False
        return True

    async def flush(self) -> bool:
        """Try to write every kept turn now, oldest first; True when none is left.

        Stops at the first one still refused (its error is kept in :attr:`error`).
        """
        async with self._lock:
            while self._items:
                item = next(iter(self._items.values()))
                try:
                    await self._write(item.session_id, item.turn, item.usage)
                except SessionNotFound as exc:  # the chat was deleted meanwhile
                    self._items.pop(item.turn.id, None)
                    self._tell(SaveNews("dropped", item.session_id, item.turn, exc))
                    continue
                except StoreError as exc:
                    if not _keepable(exc):  # e.g. TurnInOtherSession: a bug, not the disk
                        log.error("kept reply %s dropped: %s", item.turn.id, exc.message)
                        self._items.pop(item.turn.id, None)
                        self._tell(SaveNews("dropped", item.session_id, item.turn, exc))
                        continue
                    self.error = exc
                    self._tell(SaveNews("failing", item.session_id, item.turn, exc))
                    return False
                self._items.pop(item.turn.id, None)
                log.info("reply %s saved after %.1f s", item.turn.id,
                         time.monotonic() - item.since)
                if not self._items:
                    self.error = None
                self._tell(SaveNews("saved", item.session_id, item.turn, None))
        return True

    async def write_into(self, copy: Path) -> int:
        """Write every kept turn into another sessions.db (a rescue copy of the store).

        Args:
            copy: a complete sessions.db (e.g. ``parley.gui.database.rescue.save_copy``'s).

        Returns:
            How many turns were written.

        Raises:
            StoreError: the copy could not be opened or written.
        """
        items = list(self._items.values())
        if items:
            await asyncio.to_thread(_write_turns, copy, items)
        return len(items)

    async def aclose(self) -> None:
        """Stop the background attempts (kept turns stay in :meth:`pending`)."""
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    # -- inside ------------------------------------------------------------------
    async def _write(self, session_id: str, turn: Turn, usage: Usage | None) -> None:
        write = (self.store.upsert_turn(session_id, turn) if usage is None
                 else self.store.finish_turn(session_id, turn, usage))
        await asyncio.shield(write)  # a Stop or a quit does not leave it half-done

    def _keep(self, item: Unsaved, error: ParleyError | None, *, retry: bool = True) -> None:
        old = self._items.get(item.turn.id)
        if old is not None:  # the same turn again (a newer version): keep its first failure
            item = Unsaved(item.session_id, item.turn, item.usage or old.usage, old.since)
        self._items[item.turn.id] = item  # a turn kept already keeps its place in the order
        if error is not None:
            self.error = error
        self._tell(SaveNews("kept", item.session_id, item.turn, self.error))
        if retry and (self._task is None or self._task.done()):
            self._task = asyncio.ensure_future(self._retry())

    def _kick(self) -> None:
        """Try the kept turns now (the server answers again), not at the next attempt."""
        if self._items:
            asyncio.ensure_future(self._flush_logged())

    async def _flush_logged(self) -> None:
        try:
            await self.flush()
        except Exception:  # noqa: BLE001 - a bug: logged, the background attempts go on
            log.exception("saving kept replies")

    async def _retry(self) -> None:
        attempt = 0
        while self._items:
            await asyncio.sleep(self.delays_s[min(attempt, len(self.delays_s) - 1)])
            attempt += 1
            try:
                if await self.flush():
                    return
            except Exception:  # noqa: BLE001 - a bug: logged, attempts go on
                log.exception("saving kept replies")

    def _tell(self, news: SaveNews) -> None:
        for listener in list(self._listeners):
            try:
                listener(news)
            except Exception:  # noqa: BLE001 - one listener's bug does not stop the others
                log.exception("save listener failed")


def _retrieve(task: asyncio.Future[bool]) -> None:
    """A first write no one awaits any more: its outcome was told to the listeners; a bug
    is logged here, not as an orphan."""
    if not task.cancelled() and task.exception() is not None:
        exc = task.exception()
        if not isinstance(exc, StoreError):
            log.error("saving a reply failed", exc_info=exc)


def _keepable(exc: StoreError) -> bool:
    """A failure after which the turn is kept: passing ones, and those about the file
    itself (deleted, replaced, damaged: it goes into the rescue copy)."""
    if isinstance(exc, PASSING):
        return True
    from parley.core.store.errors import (
        DamagedWhileOpen,
        DatabaseCorrupt,
        DatabaseMissing,
        DatabaseReplaced,
    )

    return isinstance(exc, DatabaseMissing | DatabaseReplaced | DatabaseCorrupt |
                      DamagedWhileOpen)


def _write_turns(path: Path, items: list[Unsaved]) -> None:
    """Write kept turns into the sessions.db at ``path`` (a copy), in order."""
    from parley.core.store.store import Store  # SQLAlchemy: not imported at start-up

    with Store.open(path) as store:
        for item in items:
            if item.usage is None:
                store.upsert_turn(item.session_id, item.turn)
            else:
                store.finish_turn(item.session_id, item.turn, item.usage)

"""The store's API, awaitable: every call runs on one dedicated worker thread.

The GUI thread never touches SQLite. :class:`AsyncStore` owns a
``ThreadPoolExecutor(max_workers=1)``; the SQLite connection is created on
that thread (in :meth:`AsyncStore.open`) and every call runs there, one after
the other, in the order awaited — so the Store stays thread-confined. After
writes, once Parley has been idle for :data:`MAINTENANCE_DELAY_S`, it runs
:meth:`Store.maintain` there too (search-index merging, WAL checkpoint). Each
method has the signature, result and errors of the :class:`Store` method of
the same name (see there); errors are raised from the ``await``. On a PostgreSQL
server, a call that waits for an answer longer than a few seconds is told to the window
and the calls behind it are refused rather than queued (:attr:`AsyncStore.answers`,
``parley.core.store.answering``); calls long on purpose (copies, imports) are declared
``long`` and not watched.

Most methods only forward: they are declared as ``append_turn = writes(Store.append_turn)``
(:func:`reads`, :func:`writes`). The descriptor keeps the Store method's parameters for
mypy (``ParamSpec``): ``await astore.append_turn(session_id, turn)`` is checked against
:meth:`Store.append_turn` and returns its :class:`Turn`. At run time it calls the open
backend's method of that name (:class:`PgStore` overrides some) on the worker thread.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import logging
import time
import types
from collections.abc import Callable, Coroutine, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Concatenate, Generic, ParamSpec, TypeVar, overload

from parley.core.content import Turn
from parley.core.store.answering import SLOW_S, AnswerWatch
from parley.core.store.attachments import AttachmentInfo, missing_data
from parley.core.store.backends import open_store
from parley.core.store.errors import OpenedReadOnly, StoreClosed, StoreError
from parley.core.store.postgres.changes import Change
from parley.core.store.postgres.store import PgStore
from parley.core.store.sqlite.engine import DEFAULT_BUSY_TIMEOUT_MS
from parley.core.store.store import Store
from parley.core.store.upgrade.migrations import Progress

P = ParamSpec("P")
T = TypeVar("T")
log = logging.getLogger(__name__)

#: Seconds after a whole-file check found sessions.db sound before the next one
#: (:meth:`AsyncStore.check_whole`): once a day.
WHOLE_CHECK_EVERY_S = 24 * 3600

#: Idle time after the last write before the store's upkeep runs (seconds).
MAINTENANCE_DELAY_S = 2.0
#: Pause between upkeep steps while merging work remains (seconds).
MAINTENANCE_STEP_S = 0.25


class _Forward(Generic[P, T]):
    """A method of :class:`AsyncStore` that awaits the :class:`Store` method it was made from.

    Typed from that method: read from an ``AsyncStore`` it is ``Callable[P, Coroutine[..., T]]``
    where the Store method is ``Callable[Concatenate[Store, P], T]``. Read from the class it is
    a plain ``async def`` function with the Store method's name and signature
    (``inspect.signature``) and a docstring pointing at it, as a hand-written method would be.
    """

    def __init__(self, method: Callable[Concatenate[Store, P], T], *, write: bool,
                 counted: bool, long: bool = False) -> None:
        name = method.__name__

        async def forwarder(astore: AsyncStore, /, *args: P.args, **kwargs: P.kwargs) -> T:
            # By name: the open backend's own method (PgStore overrides e.g. backup_to).
            fn: Callable[P, T] = getattr(astore._store, name)
            if write:
                return await astore._write(counted, fn, *args, long=long, **kwargs)
            return await astore._call(fn, *args, long=long, **kwargs)

        forwarder.__name__ = name
        forwarder.__qualname__ = f"AsyncStore.{name}"
        forwarder.__doc__ = f"Awaitable :meth:`Store.{name}`."
        forwarder.__signature__ = inspect.signature(method)  # type: ignore[attr-defined]
        self._name = name
        self._function = forwarder

    def __set_name__(self, owner: type, name: str) -> None:
        if name != self._name:  # e.g. ``get_turns = reads(Store.get_turn)``
            raise TypeError(f"{owner.__name__}.{name} forwards Store.{self._name}")

    @overload
    def __get__(
        self, obj: None, owner: type | None = None
    ) -> Callable[Concatenate[AsyncStore, P], Coroutine[Any, Any, T]]: ...

    @overload
    def __get__(
        self, obj: AsyncStore, owner: type | None = None
    ) -> Callable[P, Coroutine[Any, Any, T]]: ...

    def __get__(self, obj: AsyncStore | None, owner: type | None = None) -> Callable[..., Any]:
        if obj is None:
            return self._function
        return types.MethodType(self._function, obj)


def reads(method: Callable[Concatenate[Store, P], T], *, long: bool = False) -> _Forward[P, T]:
    """An awaitable twin of a Store method that only reads (runs on the store's worker).

    ``long``: it may run for long on purpose (not taken for a server not answering:
    ``parley.core.store.answering``)."""
    return _Forward(method, write=False, counted=False, long=long)


def writes(method: Callable[Concatenate[Store, P], T], *, counted: bool = True,
           long: bool = False) -> _Forward[P, T]:
    """An awaitable twin of a Store method that writes.

    Args:
        method: the :class:`Store` method.
        counted: the write is a change of chats, spaces or settings (``AsyncStore.changes``,
            which the automatic backups follow); False for app state (window geometry…).
        long: as for :func:`reads`.

    Every write (re)starts the idle timer of the store's upkeep.
    """
    return _Forward(method, write=True, counted=counted, long=long)


class AsyncStore:
    """An open :class:`Store` driven from asyncio (qasync's loop included)."""

    def __init__(
        self,
        store: Store,
        executor: ThreadPoolExecutor,
        maintenance_delay_s: float = MAINTENANCE_DELAY_S,
        answer_s: float = SLOW_S,
    ) -> None:
        """Use :meth:`open`."""
        self._store = store
        self._executor = executor
        #: On a server: whether it answers (``parley.core.store.answering``); None for a file.
        self.answers: AnswerWatch | None = None
        if isinstance(store, PgStore):
            self.answers = AnswerWatch(store.where, asyncio.get_running_loop(), answer_s)
        self._maintenance_delay_s = maintenance_delay_s
        self._maintenance: asyncio.TimerHandle | None = None
        self._closed = False
        self._feeds: list[Any] = []  # change feeds (watch_changes), closed with the store
        #: Called once, on the event loop, when the file is first found damaged
        #: (parley.core.store.sqlite.damage: writes have stopped); the window tells the person.
        self.on_damaged: Callable[[], None] | None = None
        self._damage_told = False
        self._check: Any = None  # the whole-file check under way (check_whole)
        #: Writes of chats, spaces and settings so far (app state such as the window's
        #: geometry is not counted): the automatic backups make one only after a change.
        self.changes = 0

    @classmethod
    async def open(
        cls,
        path: Path | str,
        progress: Progress | None = None,
        *,
        busy_timeout_ms: int = DEFAULT_BUSY_TIMEOUT_MS,
        maintenance_delay_s: float = MAINTENANCE_DELAY_S,
        answer_s: float = SLOW_S,
        watch_closed: bool = True,
        read_only_ok: bool = False,
    ) -> AsyncStore:
        """Open the store on a new worker thread (see :meth:`Store.open` for errors).

        Args:
            path: sessions.db, or a ``postgresql://`` URL (``parley.core.store.backends``).
            progress: ``progress(done, total)`` during a v3 upgrade; called on
                the event loop's thread, not the worker.
            busy_timeout_ms: how long to wait for another process's lock (ms).
            maintenance_delay_s: idle time after the last write before
                :meth:`Store.maintain` runs on the worker (seconds).
            answer_s: on a server, seconds a call may run before the server counts as
                not answering (:attr:`answers`).
            watch_closed: the app's own file: checked at open if changed while closed
                (the check used up), its state recorded at close; False for a one-off
                command (``parley --migrate-only``) that leaves the check to the window.
            read_only_ok: a file that cannot be written is opened to read
                (:attr:`read_only`), not refused (``Store.open``).
        """
        loop = asyncio.get_running_loop()
        executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="parley-store")
        report: Progress | None = None
        if progress is not None:
            user_progress = progress

            def report(done: int, total: int) -> None:
                loop.call_soon_threadsafe(user_progress, done, total)

        opener = functools.partial(
            open_store, path, progress=report, busy_timeout_ms=busy_timeout_ms,
            watch_closed=watch_closed, read_only_ok=read_only_ok,
        )
        try:
            store = await loop.run_in_executor(executor, opener)
        except BaseException:
            executor.shutdown(wait=False)
            raise
        return cls(store, executor, maintenance_delay_s, answer_s)

    @property
    def damaged(self) -> bool:
        """True once the file was found damaged while open: every write is refused
        (``parley.core.store.sqlite.damage``; never for a PostgreSQL database)."""
        return bool(self._store.damaged)

    @property
    def sync(self) -> Store:
        """The underlying Store (for tests; never call it from the GUI thread)."""
        return self._store

    @property
    def path(self) -> Path:
        return self._store.path

    async def copy_to(self, target: str | Path,
                      progress: Callable[[int, int], None] | None = None) -> Any:
        """Copy every chat of this store into ``target`` (an empty database URL, or a new
        sessions.db path): :func:`parley.core.store.transfer.copy_store`, verified.

        Runs on the store's worker (this store is only read); ``progress(done, total)``
        is called on the event loop, in order, each report once, the last one before this
        returns (a report still on its way then is given at once). Returns the ``CopyReport``.

        Raises:
            DestinationNotEmpty, CopyMismatch, StoreError: see ``copy_store``; the
                destination is then as it was.
        """
        from parley.core.store.transfer import copy_store

        loop = asyncio.get_running_loop()
        sent: list[tuple[int, int]] = []  # every report, in the worker's order
        given = 0  # how many of them progress has had

        def deliver(upto: int) -> None:
            nonlocal given
            if progress is not None and upto > given:  # not once a later count was given
                given = upto
                progress(*sent[upto - 1])

        def report(done: int, total: int) -> None:
            sent.append((done, total))
            loop.call_soon_threadsafe(deliver, len(sent))

        def run() -> Any:
            dest = open_store(target)
            try:
                return copy_store(self._store, dest, report)
            finally:
                dest.close()

        result = await self._call(run, long=True)
        deliver(len(sent))  # the last count, even when its call is still queued
        return result

    async def watch_changes(self, on_change: Callable[[Change], None]) -> Any:
        """Hear the changes other Parleys commit to the same PostgreSQL database.

        Args:
            on_change: called on the event loop with each
                :class:`parley.core.store.postgres.changes.Change` (a chat's turns or row, the
                spaces; ``"reconnected"`` after the server was away: read again).

        Returns:
            The feed (closed with the store, or by its ``close()``), or None for a
            sessions.db file, where no other process is heard.
        """
        if not isinstance(self._store, PgStore):
            return None
        loop = asyncio.get_running_loop()
        store = self._store

        def deliver(change: Change) -> None:
            if not loop.is_closed():
                loop.call_soon_threadsafe(on_change, change)

        feed = await asyncio.to_thread(store.change_feed, deliver)
        self._feeds.append(feed)
        return feed

    @property
    def read_only(self) -> Any:
        """Why the file was opened only to read (``DatabaseReadOnly``), else None."""
        return getattr(self._store, "read_only", None)

    def write_refused(self) -> OpenedReadOnly | None:
        """The error every write raises when the file was opened only to read (for an
        action to say so before it asks anything), else None."""
        refused = self.read_only
        if refused is None:
            return None
        return OpenedReadOnly(refused.path, refused.why, refused.fix)

    @property
    def on_server(self) -> bool:
        """True when the chats are in a PostgreSQL database (no file: no file backups)."""
        return isinstance(self._store, PgStore)

    @property
    def migration_report(self) -> Any:
        return self._store.migration_report

    async def close(self) -> None:
        """Close the file on the worker thread, then stop the thread (idempotent)."""
        if self._closed:
            return
        self._closed = True
        if self._check is not None:
            self._check.stop()
        if self._maintenance is not None:
            self._maintenance.cancel()
        for feed in self._feeds:
            await asyncio.to_thread(feed.close)
        await asyncio.get_running_loop().run_in_executor(self._executor, self._store.close)
        self._executor.shutdown(wait=True)

    @property
    def closed(self) -> bool:
        """True once :meth:`close` has begun; every later call raises StoreClosed."""
        return self._closed

    async def _call(self, fn: Callable[..., T], *args: Any, long: bool = False,
                    **kwargs: Any) -> T:
        """Run ``fn(*args, **kwargs)`` on the worker. On a server, a call that is not
        ``long`` is refused with ``ServerNotAnswering`` while the server does not answer,
        or when it stops answering before the call started (:attr:`answers`)."""
        if self._closed:
            raise StoreClosed()
        call = functools.partial(fn, *args, **kwargs)
        watch = None if long else self.answers
        try:
            if watch is None:
                return await asyncio.get_running_loop().run_in_executor(self._executor, call)
            watch.refuse_now()
            future = self._executor.submit(watch.watched(call))
            watch.queued(future)
            try:
                return await asyncio.wrap_future(future)
            except asyncio.CancelledError:
                if watch.was_refused(future):
                    raise watch.error() from None
                raise
        finally:
            if self._store.damaged and not self._damage_told:
                self._damage_told = True
                if self.on_damaged is not None:
                    self.on_damaged()

    async def _write(self, counted: bool, fn: Callable[..., T], *args: Any,
                     long: bool = False, **kwargs: Any) -> T:
        try:
            return await self._call(fn, *args, long=long, **kwargs)
        finally:
            if counted:
                self.changes += 1
            self._schedule_maintenance(self._maintenance_delay_s)

    def _schedule_maintenance(self, delay_s: float) -> None:
        """(Re)start the idle timer: upkeep runs once no write came for ``delay_s``."""
        if self._closed:
            return
        if self._maintenance is not None:
            self._maintenance.cancel()
        loop = asyncio.get_running_loop()
        self._maintenance = loop.call_later(delay_s, self._start_maintenance, loop)

    def _start_maintenance(self, loop: asyncio.AbstractEventLoop) -> None:
        self._maintenance = None
        if self._closed:
            return
        future = loop.run_in_executor(self._executor, self._maintain)
        future.add_done_callback(self._maintenance_done)

    def _maintain(self) -> bool:
        try:
            return self._store.maintain()
        except StoreError as exc:  # busy, disk full…: the next write retries
            log.warning("store upkeep skipped: %s", exc)
        except Exception:  # a bug: keep the app running, report it
            log.exception("store upkeep failed")
        return False

    def _maintenance_done(self, future: asyncio.Future[bool]) -> None:
        more = not future.cancelled() and future.exception() is None and future.result()
        if more and self._maintenance is None:  # and no newer write rescheduled it
            self._schedule_maintenance(MAINTENANCE_STEP_S)

    async def report_damage(self, why: str = "") -> None:
        """Awaitable :meth:`Store.report_damage` (at once: it sets a flag and leaves a marker,
        safe beside a call running on the worker)."""
        self._store.report_damage(why)

    async def check_whole(self, *, every_s: float = WHOLE_CHECK_EVERY_S) -> bool | None:
        """Check the whole file once it is open (``damage.WholeCheck``: ``PRAGMA
        quick_check`` on a thread and a read-only connection of its own, so the store's
        calls go on meanwhile; :meth:`close` stops it), unless Parley closed it cleanly
        last, it is unchanged since (``Store.closed_cleanly``), and it was found sound
        less than ``every_s`` seconds ago (app state ``WHOLE_CHECK``): the check reads
        every page, seconds of disk on a large file (19 s for 1.6 GB from a cold cache).
        After a crash or on a first open it always runs.

        Returns:
            True when the file is sound; False when it is damaged — writes stop as when a
            read meets the damage, and :attr:`on_damaged` is called (once); None when
            stopped, checked recently, or for a PostgreSQL store (nothing to check).
        """
        if isinstance(self._store, PgStore) or self._closed:
            return None
        from parley.core.app_state import WHOLE_CHECK
        from parley.core.store.sqlite.damage import WholeCheck
        from parley.core.store.sqlite.kept import FOUND_BY_CHECK

        try:
            last = await WHOLE_CHECK.get(self)
        except StoreError:  # unreadable: the check says what it can
            last = None
        now_ms = int(time.time() * 1000)
        sound_at = last.get("sound_at") if isinstance(last, dict) else None
        if self._store.closed_cleanly and isinstance(sound_at, int) \
                and 0 <= now_ms - sound_at < every_s * 1000:
            return None

        check = self._check = WholeCheck(self._store.path)  # close() stops it, even if
        began = time.monotonic()
        sound = await asyncio.to_thread(check.run)  # this task is cancelled meanwhile
        log.info("whole-file check of %s: %s in %.2f s", self._store.path,
                 {True: "sound", False: "damaged", None: "stopped"}[sound],
                 time.monotonic() - began)
        if sound is True and not self._closed and self.write_refused() is None:
            try:
                await WHOLE_CHECK.set(self, {"sound_at": now_ms})
            except StoreError as exc:  # checked again at the next start, that is all
                log.info("the whole-file check was not recorded: %s", exc)
        if sound is not False or self._closed:
            return sound
        self._store.report_damage(FOUND_BY_CHECK)
        if not self._damage_told:
            self._damage_told = True
            if self.on_damaged is not None:
                self.on_damaged()
        return False

    async def hydrate(self, turns: Sequence[Turn]) -> list[Turn]:
        """Awaitable :meth:`Store.hydrate` (no thread hop when no turn references a file)."""
        if not missing_data(turns):
            return list(turns)
        return await self._call(self._store.hydrate, list(turns))

    async def attachment_infos(self, sha256s: Iterable[str]) -> dict[str, AttachmentInfo]:
        """Awaitable :meth:`Store.attachment_infos` (``sha256s`` read here, not on the worker)."""
        return await self._call(self._store.attachment_infos, list(sha256s))

    # -- The Store's methods, forwarded (see _Forward: checked by mypy like the originals) --------

    backup_to = reads(Store.backup_to)
    maintain = reads(Store.maintain)  # normally scheduled by itself after writes

    default_space = reads(Store.default_space)
    get_space = reads(Store.get_space)
    list_spaces = reads(Store.list_spaces)
    create_space = writes(Store.create_space)
    rename_space = writes(Store.rename_space)
    update_space = writes(Store.update_space)
    reorder_spaces = writes(Store.reorder_spaces)
    delete_space = writes(Store.delete_space)
    space_documents = reads(Store.space_documents)
    add_space_document = writes(Store.add_space_document)
    replace_space_document = writes(Store.replace_space_document)
    remove_space_document = writes(Store.remove_space_document)
    space_document_pages = reads(Store.space_document_pages)
    search_space_documents = reads(Store.search_space_documents)
    keep_space_images = writes(Store.keep_space_images)
    kept_space_images = reads(Store.kept_space_images)

    get_session = reads(Store.get_session)
    list_sessions = reads(Store.list_sessions)
    first_pages = reads(Store.first_pages)
    session_position = reads(Store.session_position)
    create_session = writes(Store.create_session)
    rename_session = writes(Store.rename_session)
    set_auto_title = writes(Store.set_auto_title)
    move_session = writes(Store.move_session)
    pin_session = writes(Store.pin_session)
    archive_session = writes(Store.archive_session)
    delete_session = writes(Store.delete_session)
    set_session_model = writes(Store.set_session_model)
    set_session_system_prompt = writes(Store.set_session_system_prompt)
    set_end_reason = writes(Store.set_end_reason)
    add_usage = writes(Store.add_usage)

    list_forks = reads(Store.list_forks)
    fork = writes(Store.fork)
    # ``progress`` and ``cancelled`` are called on the store's thread.
    import_chats = writes(Store.import_chats, long=True)
    merge_from = writes(Store.merge_from, long=True)

    get_turn = reads(Store.get_turn)
    get_turns = reads(Store.get_turns)
    count_turns = reads(Store.count_turns)
    context_turns = reads(Store.context_turns)
    context_turns_counted = reads(Store.context_turns_counted)
    messages_between = reads(Store.messages_between)
    history = reads(Store.history)
    append_turn = writes(Store.append_turn)
    upsert_turn = writes(Store.upsert_turn)
    finish_turn = writes(Store.finish_turn)
    delete_turns = writes(Store.delete_turns)
    delete_turns_after = writes(Store.delete_turns_after)
    branch_before = writes(Store.branch_before)
    edit_turn = writes(Store.edit_turn)
    show_branch = writes(Store.show_branch)
    add_answers = writes(Store.add_answers)
    branches = reads(Store.branches)
    get_tree = reads(Store.get_tree)

    attachment_data = reads(Store.attachment_data)
    attachment_usage = reads(Store.attachment_usage)

    list_compactions = reads(Store.list_compactions)
    record_compaction = writes(Store.record_compaction)
    transcript_window = reads(Store.transcript_window)
    compacted_turns = reads(Store.compacted_turns)
    card_page = reads(Store.card_page)

    search = reads(Store.search)

    queue_message = writes(Store.queue_message)
    queued_messages = reads(Store.queued_messages)
    queued_sessions = reads(Store.queued_sessions)
    queued_file = reads(Store.queued_file)
    edit_queued = writes(Store.edit_queued)
    take_queued = writes(Store.take_queued)

    get_setting = reads(Store.get_setting)
    all_settings = reads(Store.all_settings)
    set_setting = writes(Store.set_setting)
    get_state = reads(Store.get_state)
    # Window geometry and the like: not a change of chats or settings (see ``changes``).
    set_state = writes(Store.set_state, counted=False)

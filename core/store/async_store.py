"""The store's API, awaitable: every call runs on one dedicated worker thread.

The GUI thread never touches SQLite. :class:`AsyncStore` owns a
``ThreadPoolExecutor(max_workers=1)``; the SQLite connection is created on
that thread (in :meth:`AsyncStore.open`) and every call runs there, one after
the other, in the order awaited — so the Store stays thread-confined. After
writes, once Parley has been idle for :data:`MAINTENANCE_DELAY_S`, it runs
:meth:`Store.maintain` there too (search-index merging, WAL checkpoint). Each
method has the signature, result and errors of the :class:`Store` method of
the same name (see there); errors are raised from the ``await``.
"""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import Callable, Collection, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, ParamSpec, TypeVar

from parley.core.content import Turn, Usage
from parley.core.store import outline
from parley.core.store.attachments import AttachmentInfo, missing_data
from parley.core.store.backends import open_store
from parley.core.store.errors import StoreClosed, StoreError
from parley.core.store.imports import NewChat, Written
from parley.core.store.models import (
    UNCHANGED,
    Compaction,
    SearchHit,
    Session,
    Space,
    TitleSource,
    Unchanged,
)
from parley.core.store.postgres.changes import Change
from parley.core.store.postgres.store import PgStore
from parley.core.store.sqlite.engine import DEFAULT_BUSY_TIMEOUT_MS
from parley.core.store.store import Store
from parley.core.store.upgrade.migrations import Progress
from parley.core.versions import Versions

P = ParamSpec("P")
log = logging.getLogger(__name__)

#: Idle time after the last write before the store's upkeep runs (seconds).
MAINTENANCE_DELAY_S = 2.0
#: Pause between upkeep steps while merging work remains (seconds).
MAINTENANCE_STEP_S = 0.25
T = TypeVar("T")


class AsyncStore:
    """An open :class:`Store` driven from asyncio (qasync's loop included)."""

    def __init__(
        self,
        store: Store,
        executor: ThreadPoolExecutor,
        maintenance_delay_s: float = MAINTENANCE_DELAY_S,
    ) -> None:
        """Use :meth:`open`."""
        self._store = store
        self._executor = executor
        self._maintenance_delay_s = maintenance_delay_s
        self._maintenance: asyncio.TimerHandle | None = None
        self._closed = False
        self._feeds: list[Any] = []  # change feeds (watch_changes), closed with the store
        #: Called once, on the event loop, when the file is first found damaged
        #: (parley.core.store.sqlite.damage: writes have stopped); the window tells the person.
        self.on_damaged: Callable[[], None] | None = None
        self._damage_told = False
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
    ) -> AsyncStore:
        """Open the store on a new worker thread (see :meth:`Store.open` for errors).

        Args:
            path: sessions.db, or a ``postgresql://`` URL (``parley.core.store.backends``).
            progress: ``progress(done, total)`` during a v3 upgrade; called on
                the event loop's thread, not the worker.
            busy_timeout_ms: how long to wait for another process's lock (ms).
            maintenance_delay_s: idle time after the last write before
                :meth:`Store.maintain` runs on the worker (seconds).
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
            watch_closed=True,  # the app's own file: checked at open if changed while closed
        )
        try:
            store = await loop.run_in_executor(executor, opener)
        except BaseException:
            executor.shutdown(wait=False)
            raise
        return cls(store, executor, maintenance_delay_s)

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
        is called on the event loop. Returns the ``CopyReport``.

        Raises:
            DestinationNotEmpty, CopyMismatch, StoreError: see ``copy_store``; the
                destination is then as it was.
        """
        from parley.core.store.transfer import copy_store

        loop = asyncio.get_running_loop()

        def report(done: int, total: int) -> None:
            if progress is not None:
                loop.call_soon_threadsafe(progress, done, total)

        def run() -> Any:
            dest = open_store(target)
            try:
                return copy_store(self._store, dest, report)
            finally:
                dest.close()

        return await self._call(run)

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

    async def _call(self, fn: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
        if self._closed:
            raise StoreClosed()
        loop = asyncio.get_running_loop()
        try:
            return await loop.run_in_executor(
                self._executor, functools.partial(fn, *args, **kwargs)
            )
        finally:
            if self._store.damaged and not self._damage_told:
                self._damage_told = True
                if self.on_damaged is not None:
                    self.on_damaged()

    async def _write(self, fn: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
        try:
            return await self._call(fn, *args, **kwargs)
        finally:
            if fn != self._store.set_state:
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

    async def backup_to(self, dest: Path | str) -> Path:
        """Awaitable :meth:`Store.backup_to`."""
        return await self._call(self._store.backup_to, dest)

    async def report_damage(self) -> None:
        """Awaitable :meth:`Store.report_damage` (at once: it sets a flag and leaves a marker,
        safe beside a call running on the worker)."""
        self._store.report_damage()

    async def maintain(self, budget_ms: float = 20.0) -> bool:
        """Awaitable :meth:`Store.maintain` (normally scheduled by itself after writes)."""
        return await self._call(self._store.maintain, budget_ms)

    async def default_space(self) -> Space:
        """Awaitable :meth:`Store.default_space`."""
        return await self._call(self._store.default_space)

    async def get_space(self, space_id: str) -> Space:
        """Awaitable :meth:`Store.get_space`."""
        return await self._call(self._store.get_space, space_id)

    async def create_space(
        self, name: str, *, system_prompt: str | None = None, default_model: str | None = None
    ) -> Space:
        """Awaitable :meth:`Store.create_space`."""
        return await self._write(
            self._store.create_space, name, system_prompt=system_prompt, default_model=default_model
        )

    async def rename_space(self, space_id: str, name: str) -> Space:
        """Awaitable :meth:`Store.rename_space`."""
        return await self._write(self._store.rename_space, space_id, name)

    async def update_space(
        self,
        space_id: str,
        *,
        system_prompt: str | None | Unchanged = UNCHANGED,
        default_model: str | None | Unchanged = UNCHANGED,
    ) -> Space:
        """Awaitable :meth:`Store.update_space`."""
        return await self._write(
            self._store.update_space,
            space_id,
            system_prompt=system_prompt,
            default_model=default_model,
        )

    async def list_spaces(self) -> list[Space]:
        """Awaitable :meth:`Store.list_spaces`."""
        return await self._call(self._store.list_spaces)

    async def reorder_spaces(self, ids: list[str]) -> list[Space]:
        """Awaitable :meth:`Store.reorder_spaces`."""
        return await self._write(self._store.reorder_spaces, ids)

    async def delete_space(self, space_id: str, *, delete_sessions: bool = False) -> None:
        """Awaitable :meth:`Store.delete_space`."""
        return await self._write(
            self._store.delete_space, space_id, delete_sessions=delete_sessions
        )

    async def create_session(
        self,
        *,
        space_id: str | None = None,
        title: str | None = None,
        model: str | None = None,
        system_prompt: str | None = None,
    ) -> Session:
        """Awaitable :meth:`Store.create_session`."""
        return await self._write(
            self._store.create_session,
            space_id=space_id,
            title=title,
            model=model,
            system_prompt=system_prompt,
        )

    async def get_session(self, session_id: str) -> Session:
        """Awaitable :meth:`Store.get_session`."""
        return await self._call(self._store.get_session, session_id)

    async def list_sessions(
        self,
        *,
        space_id: str | None = None,
        include_archived: bool = False,
        limit: int = 200,
        offset: int = 0,
        pinned_first: bool = True,
        include_versions: bool = False,
    ) -> list[Session]:
        """Awaitable :meth:`Store.list_sessions`."""
        return await self._call(
            self._store.list_sessions,
            space_id=space_id,
            include_archived=include_archived,
            limit=limit,
            offset=offset,
            pinned_first=pinned_first,
            include_versions=include_versions,
        )

    async def rename_session(
        self, session_id: str, title: str | None, *, source: TitleSource = "user"
    ) -> Session:
        """Awaitable :meth:`Store.rename_session`."""
        return await self._write(self._store.rename_session, session_id, title, source=source)

    async def set_auto_title(self, session_id: str, title: str) -> bool:
        """Awaitable :meth:`Store.set_auto_title`."""
        return await self._write(self._store.set_auto_title, session_id, title)

    async def move_session(self, session_id: str, space_id: str) -> Session:
        """Awaitable :meth:`Store.move_session`."""
        return await self._write(self._store.move_session, session_id, space_id)

    async def pin_session(self, session_id: str, pinned: bool) -> Session:
        """Awaitable :meth:`Store.pin_session`."""
        return await self._write(self._store.pin_session, session_id, pinned)

    async def archive_session(self, session_id: str, archived: bool) -> Session:
        """Awaitable :meth:`Store.archive_session`."""
        return await self._write(self._store.archive_session, session_id, archived)

    async def delete_session(self, session_id: str) -> None:
        """Awaitable :meth:`Store.delete_session`."""
        return await self._write(self._store.delete_session, session_id)

    async def set_session_model(self, session_id: str, model: str | None) -> Session:
        """Awaitable :meth:`Store.set_session_model`."""
        return await self._write(self._store.set_session_model, session_id, model)

    async def set_session_system_prompt(
        self, session_id: str, system_prompt: str | None
    ) -> Session:
        """Awaitable :meth:`Store.set_session_system_prompt`."""
        return await self._write(self._store.set_session_system_prompt, session_id, system_prompt)

    async def set_end_reason(self, session_id: str, reason: str | None) -> Session:
        """Awaitable :meth:`Store.set_end_reason`."""
        return await self._write(self._store.set_end_reason, session_id, reason)

    async def add_usage(self, session_id: str, usage: Usage) -> Session:
        """Awaitable :meth:`Store.add_usage`."""
        return await self._write(self._store.add_usage, session_id, usage)

    async def list_forks(self, session_id: str) -> list[Session]:
        """Awaitable :meth:`Store.list_forks`."""
        return await self._call(self._store.list_forks, session_id)

    async def fork(
        self, session_id: str, at_turn_id: str, *, title: str | None = None, kind: str = "fork"
    ) -> Session:
        """Awaitable :meth:`Store.fork`."""
        return await self._write(self._store.fork, session_id, at_turn_id, title=title,
                                 kind=kind)

    async def versions(self, session_id: str) -> Versions:
        """Awaitable :meth:`Store.versions`."""
        return await self._call(self._store.versions, session_id)

    async def show_version(self, session_id: str) -> None:
        """Awaitable :meth:`Store.show_version`."""
        await self._write(self._store.show_version, session_id)

    async def version_to_open(self, chat_id: str) -> str:
        """Awaitable :meth:`Store.version_to_open`."""
        return await self._call(self._store.version_to_open, chat_id)

    async def locate_message(self, session_id: str, turn_id: str) -> tuple[str, str]:
        """Awaitable :meth:`Store.locate_message`."""
        return await self._call(self._store.locate_message, session_id, turn_id)

    async def import_chats(
        self,
        chats: Sequence[NewChat],
        *,
        space_id: str | None = None,
        progress: Callable[[int, int], None] | None = None,
        cancelled: Callable[[], bool] | None = None,
    ) -> Written:
        """Awaitable :meth:`Store.import_chats` (``progress`` and ``cancelled`` run on the
        store's thread)."""
        return await self._write(self._store.import_chats, chats, space_id=space_id,
                                 progress=progress, cancelled=cancelled)

    async def append_turn(self, session_id: str, turn: Turn) -> Turn:
        """Awaitable :meth:`Store.append_turn`."""
        return await self._write(self._store.append_turn, session_id, turn)

    async def upsert_turn(self, session_id: str, turn: Turn) -> Turn:
        """Awaitable :meth:`Store.upsert_turn`."""
        return await self._write(self._store.upsert_turn, session_id, turn)

    async def finish_turn(self, session_id: str, turn: Turn, usage: Usage) -> Turn:
        """Awaitable :meth:`Store.finish_turn`."""
        return await self._write(self._store.finish_turn, session_id, turn, usage)

    async def get_turn(self, turn_id: str, *, hydrate: bool = True) -> Turn:
        """Awaitable :meth:`Store.get_turn`."""
        return await self._call(self._store.get_turn, turn_id, hydrate=hydrate)

    async def get_turns(
        self, session_id: str, *, last: int | None = None, hydrate: bool = True
    ) -> list[Turn]:
        """Awaitable :meth:`Store.get_turns`."""
        return await self._call(self._store.get_turns, session_id, last=last, hydrate=hydrate)

    async def count_turns(self, session_id: str) -> int:
        """Awaitable :meth:`Store.count_turns`."""
        return await self._call(self._store.count_turns, session_id)

    async def history(self, session_id: str, *, hydrate: bool = True) -> list[Turn]:
        """Awaitable :meth:`Store.history`."""
        return await self._call(self._store.history, session_id, hydrate=hydrate)

    async def delete_turns(self, session_id: str, turn_ids: Sequence[str]) -> int:
        """Awaitable :meth:`Store.delete_turns`."""
        return await self._write(self._store.delete_turns, session_id, turn_ids)

    async def delete_turns_after(self, session_id: str, turn_id: str) -> int:
        """Awaitable :meth:`Store.delete_turns_after`."""
        return await self._write(self._store.delete_turns_after, session_id, turn_id)

    async def set_aside_reply(
        self, session_id: str, prompt_turn_id: str, *, title: str | None = None,
        reply_turn_ids: Sequence[str] | None = None,
    ) -> Session:
        """Awaitable :meth:`Store.set_aside_reply`."""
        return await self._write(
            self._store.set_aside_reply, session_id, prompt_turn_id, title=title,
            reply_turn_ids=reply_turn_ids,
        )

    async def hydrate(self, turns: Sequence[Turn]) -> list[Turn]:
        """Awaitable :meth:`Store.hydrate` (no thread hop when no turn references a file)."""
        if not missing_data(turns):
            return list(turns)
        return await self._call(self._store.hydrate, list(turns))

    async def attachment_data(self, sha256: str) -> bytes:
        """Awaitable :meth:`Store.attachment_data`."""
        return await self._call(self._store.attachment_data, sha256)

    async def attachment_infos(self, sha256s: Iterable[str]) -> dict[str, AttachmentInfo]:
        """Awaitable :meth:`Store.attachment_infos`."""
        return await self._call(self._store.attachment_infos, list(sha256s))

    async def attachment_usage(self) -> tuple[int, int]:
        """Awaitable :meth:`Store.attachment_usage`."""
        return await self._call(self._store.attachment_usage)

    async def record_compaction(
        self,
        session_id: str,
        summary_turn: Turn,
        *,
        first_turn_id: str,
        last_turn_id: str,
        replaced_count: int,
        dropped_count: int = 0,
        model: str | None = None,
        usage: Usage | None = None,
        reason: str = "manual",
        tokens_before: int | None = None,
        tokens_after: int | None = None,
        count_usage: bool = False,
    ) -> Compaction:
        """Awaitable :meth:`Store.record_compaction`."""
        return await self._write(
            self._store.record_compaction,
            session_id,
            summary_turn,
            first_turn_id=first_turn_id,
            last_turn_id=last_turn_id,
            replaced_count=replaced_count,
            dropped_count=dropped_count,
            model=model,
            usage=usage,
            reason=reason,
            tokens_before=tokens_before,
            tokens_after=tokens_after,
            count_usage=count_usage,
        )

    async def list_compactions(self, session_id: str) -> list[Compaction]:
        """Awaitable :meth:`Store.list_compactions`."""
        return await self._call(self._store.list_compactions, session_id)

    async def transcript_window(
        self,
        session_id: str,
        *,
        last: int | None = None,
        before: int | None = None,
        reveal: str | None = None,
        hydrate: bool = True,
    ) -> outline.Window:
        """Awaitable :meth:`Store.transcript_window`."""
        return await self._call(self._store.transcript_window, session_id, last=last,
                                before=before, reveal=reveal, hydrate=hydrate)

    async def compacted_turns(
        self, session_id: str, summary_turn_id: str, *, hydrate: bool = True
    ) -> outline.Window:
        """Awaitable :meth:`Store.compacted_turns`."""
        return await self._call(self._store.compacted_turns, session_id, summary_turn_id,
                                hydrate=hydrate)

    async def search(
        self,
        query: str,
        *,
        session_id: str | None = None,
        space_id: str | None = None,
        limit: int = 50,
        exclude_session_ids: Collection[str] = (),
    ) -> list[SearchHit]:
        """Awaitable :meth:`Store.search`."""
        return await self._call(
            self._store.search,
            query,
            session_id=session_id,
            space_id=space_id,
            limit=limit,
            exclude_session_ids=exclude_session_ids,
        )

    async def get_setting(self, key: str, default: Any = None) -> Any:
        """Awaitable :meth:`Store.get_setting`."""
        return await self._call(self._store.get_setting, key, default)

    async def set_setting(self, key: str, value: Any) -> None:
        """Awaitable :meth:`Store.set_setting`."""
        return await self._write(self._store.set_setting, key, value)

    async def all_settings(self) -> dict[str, Any]:
        """Awaitable :meth:`Store.all_settings`."""
        return await self._call(self._store.all_settings)

    async def get_state(self, key: str, default: Any = None) -> Any:
        """Awaitable :meth:`Store.get_state`."""
        return await self._call(self._store.get_state, key, default)

    async def set_state(self, key: str, value: Any) -> None:
        """Awaitable :meth:`Store.set_state`."""
        return await self._write(self._store.set_state, key, value)

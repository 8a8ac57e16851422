"""The :class:`Workspace` class (see ``parley.core.workspace`` for its stages)."""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from parley.core.tasks import TaskSet
from parley.core.workspace.parts import (
    NotOpen,
    Options,
    Stage,
    close_step,
    import_providers,
    import_store,
    stop_runs,
)

if TYPE_CHECKING:
    import asyncio
    from types import TracebackType

    from parley.core.chat.run import ChatRunner
    from parley.core.compaction.cache_timer import CacheTimer
    from parley.core.keys import KeyStore
    from parley.core.mcp import Approver, McpTools
    from parley.core.providers.hub import ProviderHub
    from parley.core.providers.retry import RetryPolicy
    from parley.core.recovery.backup_schedule import BackupScheduler
    from parley.core.recovery.previous_run import CompactionMarks, PreviousRun
    from parley.core.store.async_store import AsyncStore
    from parley.core.store.errors import BackupError
    from parley.core.store.upgrade.migrations import Progress

log = logging.getLogger(__name__)


class Workspace:
    """The store, providers, runner, tools, MCP, backups and timers of one Parley.

    Args:
        home: the data folder (None: ``PARLEY_HOME`` or the platform default); created
            when first needed (:attr:`folder`), never by making the workspace.
        target: the store to open, a sessions.db path or a ``postgresql://`` URL; None:
            :meth:`target` finds it as the window does.
        database: the PostgreSQL address given on the command line (``--database``);
            it wins over ``PARLEY_DATABASE_URL`` (ignored with ``target``).
        environ: the environment read for ``PARLEY_DATABASE_URL`` and the providers'
            ``*_API_KEY`` / ``*_BASE_URL`` (default: ``os.environ``).
        keys: where API keys are kept (default: the keyring or file ``KeyStore``).
        retry: the providers' retry policy (default: the hub's).
        options: which parts to open (:class:`Options`).
        approver: asks the person before an MCP tool runs (None: every call that is
            not always allowed is denied).
        on_damaged: called on the event loop, once, when the store or a backup finds
            sessions.db damaged (writes have stopped).
        on_backup_error: called with an automatic backup that failed (no space…).
        on_timer_error: called with an error of a compaction the cache timer started
            (default: logged).
        tasks: where the workspace starts its background work (the SDKs' imports): the
            owner's ``TaskSet`` (the window's, so its errors are shown and its
            ``pending`` counts them); default: one of its own.

    Attributes:
        stage: how far it is open (:class:`Stage`).
        mcp: the MCP tools (None before :meth:`open_providers`, or when left out).
        cache_timer: the cache idle-timer (None likewise).
        backups: the automatic backups (None likewise, and on PostgreSQL).
        previous_run: what :meth:`note_run` found of the last run, if it did not exit cleanly.
        compaction_marks: the compactions under way, recorded for the next start (once
            :meth:`note_run` was called and the runner is made).
        tasks: where its background work runs (``tasks`` given, or its own); what it
            started there is cancelled at close, nothing else.
    """

    def __init__(
        self,
        home: Path | None = None,
        *,
        target: Path | str | None = None,
        database: str | None = None,
        environ: Mapping[str, str] | None = None,
        keys: KeyStore | None = None,
        retry: RetryPolicy | None = None,
        options: Options | None = None,
        approver: Approver | None = None,
        on_damaged: Callable[[], None] | None = None,
        on_backup_error: Callable[[BackupError], None] | None = None,
        on_timer_error: Callable[[BaseException], None] | None = None,
        tasks: TaskSet | None = None,
    ) -> None:
        import os

        self.home = home
        self.environ: dict[str, str] = dict(os.environ if environ is None else environ)
        self.options = options or Options()
        self.approver = approver
        self.on_damaged = on_damaged
        self.on_backup_error = on_backup_error
        self.on_timer_error = on_timer_error
        self.stage = Stage.NEW
        self.mcp: McpTools | None = None
        self.cache_timer: CacheTimer | None = None
        self.backups: BackupScheduler | None = None
        self.compaction_marks: CompactionMarks | None = None
        self.previous_run: PreviousRun | None = None
        self.tasks = tasks or TaskSet()
        self._started: list[asyncio.Task[None]] = []  # its own, in self.tasks
        self._target = target
        self._database = database
        self._folder: Path | None = None
        self._in_data_folder = False  # the target is the data folder's sessions.db
        self._keys = keys
        self._retry = retry
        self._store: AsyncStore | None = None
        self._hub: ProviderHub | None = None
        self._runner: ChatRunner | None = None
        self._run_noted = False
        self._lock: asyncio.Lock | None = None

    # -- where ---------------------------------------------------------------------------

    @property
    def folder(self) -> Path:
        """The data folder, created when missing (``parley.core.paths.data_dir``).

        Raises:
            DataDirError: it cannot be created, or is a file.
        """
        if self._folder is None:
            from parley.core.paths import data_dir

            self._folder = data_dir(self.home)
        return self._folder

    def target(self) -> Path | str:
        """Where the store is: the ``target`` given, else the database chosen with
        ``--database`` / ``PARLEY_DATABASE_URL`` / Settings → Storage, else the data
        folder's sessions.db. Finding it creates nothing (the file and its folder may
        not exist yet: :meth:`open_store` makes them).

        Raises:
            InvalidDatabaseUrl: the address chosen is not a complete PostgreSQL one.
        """
        if self._target is None:
            from parley.core.paths import DB_NAME, find_data_dir
            from parley.core.store.backends import DATABASE_URL_ENV, database_url

            where = self._folder or find_data_dir(self.home)
            url = database_url(self._database or self.environ.get(DATABASE_URL_ENV), where)
            self._target = url or where / DB_NAME
            self._in_data_folder = url is None
        return self._target

    def database_url(self) -> str | None:
        """The PostgreSQL address the store is in, or None for a sessions.db file
        (errors: as :meth:`target`)."""
        from parley.core.store.backends import is_database_url

        target = self.target()
        return str(target) if is_database_url(target) else None

    # -- the parts -----------------------------------------------------------------------

    @property
    def store(self) -> AsyncStore:
        """The open store. Raises :class:`NotOpen` before :meth:`open_store` or after close."""
        if self._store is None or self.stage is Stage.CLOSED:
            raise NotOpen("the store is not open")
        return self._store

    @property
    def hub(self) -> ProviderHub:
        """The provider hub. Raises :class:`NotOpen` before :meth:`open_providers`."""
        if self._hub is None or self.stage is not Stage.READY:
            raise NotOpen("the providers are not open")
        return self._hub

    @property
    def runner(self) -> ChatRunner:
        """The chat runner. Raises :class:`NotOpen` before :meth:`open_providers`."""
        if self._runner is None or self.stage is not Stage.READY:
            raise NotOpen("the runner is not open")
        return self._runner

    # -- opening -------------------------------------------------------------------------

    def _guard(self) -> asyncio.Lock:
        import asyncio

        if self._lock is None:
            self._lock = asyncio.Lock()
        return self._lock

    async def open_store(self, progress: Progress | None = None, *,
                         watch_closed: bool = True, read_only_ok: bool = False) -> AsyncStore:
        """Open the store (stage ``NEW`` → ``STORE``); an older file is upgraded first.

        Args:
            progress: ``progress(done, total)`` on the event loop while an older
                sessions.db is upgraded (a backup of it is made first).
            watch_closed: this is Parley's own file: whether it was changed while
                closed is checked (and the check used up), and its state recorded at
                close (``parley.core.store.lifecycle``). False for a one-off command
                that must leave that check to the window.
            read_only_ok: a sessions.db that cannot be written is opened to read
                (``AsyncStore.read_only`` says why; every write raises ``OpenedReadOnly``)
                rather than refused: the window shows the chats.

        Returns:
            The open store (also :attr:`store`). Already open: that store.

        Raises:
            InvalidDatabaseUrl: as :meth:`target` (nothing opened).
            DataDirError: the data folder of a sessions.db cannot be made.
            StoreError: the store could not be opened (``DatabaseCorrupt``,
                ``NotAParleyFile``, ``NewerFormat``, ``DiskFull``…): nothing is open,
                the file is as it was; the stage stays ``NEW``.
            NotOpen: the workspace was closed.
        """
        import asyncio

        async with self._guard():
            self._check_not_closed()
            if self._store is not None:
                return self._store
            target = self.target()
            if self._in_data_folder:
                _ = self.folder  # made when missing, private (parley.core.paths.data_dir)
            await asyncio.to_thread(import_store)
            from parley.core.store.async_store import AsyncStore

            store = await AsyncStore.open(target, progress, watch_closed=watch_closed,
                                          read_only_ok=read_only_ok)
            store.on_damaged = self._damaged
            self._store = store
            self.stage = Stage.STORE
            return store

    async def note_run(self) -> PreviousRun | None:
        """Record that this Parley runs (``parley.core.recovery.previous_run``); :meth:`close`
        records its clean exit, and the chats a compaction works in are recorded
        meanwhile (``CompactionMarks``), so the next start can tell what this run left
        if it does not exit cleanly. For the window, not for one-off commands.

        Returns:
            The previous run when it did not exit cleanly (what it left cut off), else
            None; also kept as :attr:`previous_run`.

        Raises:
            StoreError: the store cannot be read or written.
            NotOpen: the store is not open.
        """
        from parley.core.recovery.previous_run import mark_running

        self.previous_run = await mark_running(self.store)
        self._run_noted = True
        self._mark_compactions()
        return self.previous_run

    def _mark_compactions(self) -> None:
        """Once the run is noted and the runner made: record compactions under way."""
        if self._run_noted and self._runner is not None and self.compaction_marks is None:
            from parley.core.recovery.previous_run import CompactionMarks

            self.compaction_marks = CompactionMarks(self.store, self._runner.events)

    async def open_providers(self) -> ChatRunner:
        """Open the rest (stage ``STORE`` → ``READY``): load the providers' settings and
        keys, then the tools and MCP (its servers start when a chat first needs them),
        the runner, the cache idle-timer and the automatic backups, as :class:`Options`
        says. The store must be open.

        Returns:
            The runner (also :attr:`runner`; the hub is :attr:`hub`). Already ready: it.

        Raises:
            NotOpen: the store is not open, or the workspace was closed.
            ParleyError: the hub's settings or keys could not be read (e.g. a store
                error): what was made here is closed again, the stage stays ``STORE``.
        """
        import asyncio

        async with self._guard():
            self._check_not_closed()
            if self._runner is not None:
                return self._runner
            store = self.store
            await asyncio.to_thread(import_providers)
            try:
                return await self._open_rest(store)
            except BaseException:
                await self._close_rest()
                raise

    async def _open_rest(self, store: AsyncStore) -> ChatRunner:
        from parley.core.chat.run import ChatRunner
        from parley.core.providers.hub import ProviderHub
        from parley.core.tools import ToolExecutor

        options = self.options
        self._hub = hub = ProviderHub(store, keys=self._keys, retry=self._retry,
                                      environ=self.environ)
        await hub.load()
        if options.prepare:
            self._started.append(self.tasks.spawn(
                hub.prepare_all(first=hub.default_model_ref()), name="providers"))
        tools = None
        if options.tools:
            tools = ToolExecutor(store, mcp=self._open_mcp(store, hub) if options.mcp else None)
        runner = ChatRunner(store, hub, tools=tools,
                            journal_interval_s=options.journal_interval_s,
                            emit_interval_s=options.emit_interval_s)
        self._runner = runner
        self._mark_compactions()
        if options.cache_timer:
            from parley.core.compaction.cache_timer import CacheTimer

            self.cache_timer = CacheTimer(runner, runner.compactor.compact,
                                          on_error=self.on_timer_error)
        if options.backups and not store.on_server:
            await self._start_backups(store)
        self.stage = Stage.READY
        return runner

    def _open_mcp(self, store: AsyncStore, hub: ProviderHub) -> McpTools:
        """The MCP servers of ``mcp.json`` in the data folder (read now, started when used)."""
        from parley.core.mcp import McpHost, McpTools
        from parley.core.mcp.config import config_path

        host = McpHost(config_path(self.folder), keys=hub.keys)
        host.load()
        self.mcp = McpTools(host, store, approver=self.approver)
        return self.mcp

    async def _start_backups(self, store: AsyncStore) -> None:
        from parley.core.recovery.backup_schedule import BackupScheduler
        from parley.core.settings import Settings

        self.backups = BackupScheduler(store, on_damaged=self._damaged,
                                       on_error=self.on_backup_error)
        await self.backups.start(Settings.of(store))

    def _damaged(self) -> None:
        if self.on_damaged is not None:
            self.on_damaged()

    def _check_not_closed(self) -> None:
        if self.stage is Stage.CLOSED:
            raise NotOpen("the workspace was closed")

    # -- closing -------------------------------------------------------------------------

    async def close(self, *, final_backup: bool = True) -> None:
        """Stop and close everything open, newest first (stage → ``CLOSED``).

        In order: the cache timer; the runs still going (what arrived is kept as an
        aborted reply; up to ``parts.RUNS_STOP_S`` to save it) and the retries of
        replies not saved yet; this run's clean exit recorded (:meth:`note_run`); the
        workspace's background work; the MCP servers' programs; the providers' HTTP
        clients; the store (the file released); then, with ``final_backup``, a last
        automatic backup if anything changed since the previous one.

        Safe from any stage, also after a failed open; waits for an open under way;
        a second call does nothing. A part that fails to close does not keep the
        others open: a ``ParleyError`` (a full disk…) is logged, and a bug is raised
        once everything else is closed.

        Args:
            final_backup: False when the file is damaged (recovery): no backup over the
                sound ones.
        """
        async with self._guard():
            if self.stage is Stage.CLOSED:
                return
            self.stage = Stage.CLOSED
            bugs: list[BaseException] = []
            await self._close_rest(bugs, final=True)
            store, self._store = self._store, None
            if store is not None:
                await close_step(bugs, "closing the store", store.close())
            backups, self.backups = self.backups, None
            if backups is not None:
                await close_step(bugs, "the backup at close", backups.close(final=final_backup))
            if bugs:
                raise bugs[0]

    async def _close_rest(self, bugs: list[BaseException] | None = None, *,
                          final: bool = False) -> None:
        """Close what :meth:`open_providers` opened (and the run's mark), keeping the store."""
        bugs = [] if bugs is None else bugs
        if self.cache_timer is not None:
            self.cache_timer.close()
            self.cache_timer = None
        runner, self._runner = self._runner, None
        if runner is not None and final:
            await close_step(bugs, "stopping the runs", stop_runs(runner))
        if self._run_noted and self._store is not None and final \
                and _writable(self._store):
            from parley.core.recovery.previous_run import mark_clean_exit

            self._run_noted = False
            await close_step(bugs, "recording the clean exit", mark_clean_exit(self._store))
        await _cancel(self._started)
        self._started = []
        mcp, self.mcp = self.mcp, None
        if mcp is not None:  # the servers' programs end with Parley
            await close_step(bugs, "stopping the MCP servers", mcp.host.close())
        hub, self._hub = self._hub, None
        if hub is not None:
            await close_step(bugs, "closing the providers", hub.aclose())
        if not final:  # a failed open_providers: backups started are stopped, no backup
            backups, self.backups = self.backups, None
            if backups is not None:
                await close_step(bugs, "stopping the backups", backups.close(final=False))
        self.compaction_marks = None

    async def __aenter__(self) -> Workspace:
        return self

    async def __aexit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                        tb: TracebackType | None) -> None:
        await self.close()


def _writable(store: AsyncStore) -> bool:
    """False when ``store`` was closed (a recovery closed it) or found damaged: the clean
    exit is not recorded in it (the write would only fail; the next start checks the
    damaged file anyway)."""
    return not store.closed and not store.damaged


async def _cancel(tasks: list[asyncio.Task[None]]) -> None:
    """Cancel ``tasks`` (the workspace's own background work) and wait until they end."""
    import asyncio

    pending = [t for t in tasks if not t.done()]
    for task in pending:
        task.cancel()
    if pending:
        await asyncio.wait(pending, timeout=2.0)

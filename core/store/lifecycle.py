"""The lifecycle half of the store: open, close, upkeep, and one transaction per call.

:class:`StoreBase` holds the connection; :class:`parley.core.store.store.Store` adds
the API. Every write first checks that the path still names the file that was
opened (:mod:`parley.core.store.sqlite.faults`): a deleted or replaced sessions.db is never
written to, and on close what it holds is saved beside it; and that no other
program wrote over it in place (:mod:`parley.core.store.sqlite.overwrite`).
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any, Self, TypeVar

from sqlalchemy.engine import Connection

from parley.core.store.errors import (
    ChatsFileEmptied,
    ChatsFileIsFolder,
    DamagedWhileOpen,
    DatabaseCorrupt,
    DatabaseMissing,
    DatabaseReadOnly,
    DatabaseReplaced,
    DatabaseReplacedInPlace,
    NotAParleyFile,
    OpenedReadOnly,
    StoreClosed,
    StoreError,
)
from parley.core.store.schema import dbapi_connection
from parley.core.store.sqlite import damage, faults, held, maintenance, overwrite
from parley.core.store.sqlite import kept as kept_files
from parley.core.store.sqlite.engine import DEFAULT_BUSY_TIMEOUT_MS, read, write
from parley.core.store.sqlite.opening import check_writable, open_connection
from parley.core.store.upgrade.migrations import Progress, not_chats

T = TypeVar("T")
log = logging.getLogger(__name__)


def _not_chats(path: Path) -> NotAParleyFile | None:
    """:func:`parley.core.store.upgrade.migrations.not_chats`, or None when ``path``
    cannot even be read (opening it says why)."""
    try:
        return not_chats(path)
    except OSError:
        return None


class StoreBase:
    """Opening, closing, upkeep and the transaction helpers of :class:`Store`."""

    #: Why the file was opened only to read (``open(read_only_ok=True)``), else None
    #: (always None for a PostgreSQL store, which does not run :meth:`__init__`).
    read_only: DatabaseReadOnly | None = None
    #: Opened after a clean close of Parley's, unchanged since (or checked whole then):
    #: ``parley.core.store.sqlite.overwrite.check_since_closed``. False after a crash, on
    #: a first open, or for a PostgreSQL store.
    closed_cleanly: bool = False

    def __init__(self, path: Path, con: Connection, migration_report: Any = None) -> None:
        """Use :meth:`open`; this wraps an already set-up connection."""
        self.path = path
        self.migration_report = migration_report
        self._con: Connection | None = con
        # Which file we opened: a write first checks the path still names it.
        self._identity = faults.FileIdentity.of(path)
        # The file's state after our own last write: written by another program in
        # between, it is checked whole before the next write (parley.core.store.sqlite.overwrite).
        self.watch = overwrite.Watch(path)
        self._version = self._data_version()  # others' commits are told by a change of it
        # The id in the file's header (parley.core.store.sqlite.overwrite.new_file_id).
        self._file_id = int(dbapi_connection(con).execute("PRAGMA application_id").fetchone()[0])
        # Set once a read or write meets a damaged page: writes stop
        # (parley.core.store.sqlite.damage).
        self.damaged = False
        # The folder the damaged file and its WAL were copied to (parley.core.store.sqlite.kept).
        self.kept: kept_files.Kept | None = None
        # Record the file's state at a clean close (``open(watch_closed=True)``).
        self.record_on_close = False
        self.read_only = None

    # --- lifecycle -------------------------------------------------------------

    @classmethod
    def open(
        cls,
        path: Path | str,
        *,
        progress: Progress | None = None,
        busy_timeout_ms: int = DEFAULT_BUSY_TIMEOUT_MS,
        watch_closed: bool = False,
        read_only_ok: bool = False,
    ) -> Self:
        """Open (or create) sessions.db, upgrading a v3 file first.

        Args:
            path: the file; created with its folders when missing.
            progress: called as ``progress(done, total)`` during a v3 upgrade.
            busy_timeout_ms: how long to wait for another process's lock (ms).
            watch_closed: this is Parley's own sessions.db (``AsyncStore`` sets it):
                a clean close records the file's state beside it, and the next
                such open checks the file whole when another program changed it
                in between (``parley.core.store.sqlite.overwrite``). Any open checks against a
                record that is there.
            read_only_ok: a current file that cannot be written (its permissions, its
                folder's, a disk mounted read-only) is opened only to read, instead of
                refused: :attr:`read_only` says why, and every write raises
                ``OpenedReadOnly`` before touching the file.

        Returns:
            An open Store. A v4 file is opened as is: nothing is written to it.
            ``migration_report`` holds the v3 upgrade's report, an older v4 file's
            ``UpToDateReport`` (the conversation tree added, its backup), or None.

        Raises:
            ChatsFileIsFolder: ``path`` is a folder (nothing in it is read).
            ChatsFileEmptied: it is empty though Parley last closed it with chats in it.
            OtherSQLiteFile: a sound SQLite file of another program (no Parley tables).
            NotSQLiteFile: it does not start as an SQLite file does (checked before
                anything else reads it, unless it was found damaged while open in an
                earlier run: then ``DatabaseCorrupt``).
            NotAParleyFile: SQLite without Parley's tables.
            NewerFormat: written by a newer Parley (``user_version`` > 4).
            DatabaseCorrupt: the file is damaged (it is left as it is); also when
                another program wrote it since Parley last closed it and it fails
                ``quick_check`` (``parley.core.store.sqlite.overwrite``).
            DatabaseReadOnly: the file or its folder cannot be written.
            UpgradeUnavailable: a v3 file and no upgrade in this build.
            CannotOpen: the folder cannot be created or the file opened.
        """
        path = Path(path).expanduser().absolute()
        held.hold(path)  # from here on, reading the file keeps SQLite's locks (held)
        try:
            not_chats = _not_chats(path)  # a folder, or not starting as SQLite does
            if isinstance(not_chats, ChatsFileIsFolder):
                raise not_chats  # nothing in it is read, nothing beside it is changed
            damage.check_marked(path)  # found damaged in an earlier run: check it whole
            if not_chats is None and overwrite.emptied_since_closed(path):
                not_chats = ChatsFileEmptied(path)  # not a new file: emptied while closed
            if not_chats is not None:  # not found damaged while open: not a chats file
                raise not_chats
            # written while closed? (the record is used up only where Parley will write)
            clean = overwrite.check_since_closed(path,
                                                 consume=watch_closed and _writable(path))
            con, report, refused = open_connection(path, progress, busy_timeout_ms,
                                                   read_only_ok)
            store = cls(path, con, report)
        except BaseException:
            held.let_go(path)
            raise
        store.closed_cleanly = clean
        if refused is not None:
            log.warning("%s Its chats are opened read-only.", refused.message)
        store.read_only = refused
        store.record_on_close = watch_closed and refused is None
        return store

    def close(self) -> None:
        """Close the file (idempotent). WAL content is checkpointed by SQLite.

        If the file was deleted or replaced while open, what it holds is first
        saved as ``<name>.rescued-<time>`` beside it and its WAL emptied into
        it, so nothing is lost and nothing is replayed into a file now at the
        path (see :mod:`parley.core.store.sqlite.faults`).
        """
        con, self._con = self._con, None
        if con is None:
            return
        try:
            moved = self._close(con)
            if self.record_on_close and not moved and not self.damaged:
                overwrite.record_closed(self.path)
        finally:
            held.let_go(self.path)  # its connections are closed: the kept descriptors go

    def _close(self, con: Connection) -> bool:
        """Close ``con`` and its engine (see :meth:`close`); True when the file had moved."""
        moved = False
        try:
            if self.kept is not None:  # found damaged on another thread: copy it now
                kept_files.copy_what_parley_reads(dbapi_connection(con), self.kept)
            moved = self._identity is not None and self._moved(self._identity)
            if moved:
                self._rescue(con)
        finally:
            engine = con.engine
            if self.damaged and not moved:  # leave the damaged file and its WAL as found
                with damage.no_checkpoint_on_close(self.path, wal_kept=self.kept is not None):
                    con.close()
            else:
                con.close()
            engine.dispose()
        return moved

    def _moved(self, identity: faults.FileIdentity) -> bool:
        try:
            faults.check_identity(self.path, identity)
        except (DatabaseMissing, DatabaseReplaced):
            return True
        return False

    def _rescue(self, con: Connection) -> None:
        raw = dbapi_connection(con)
        try:
            copy = faults.rescue_and_release(raw, self.path)
            log.warning("%s moved while open; its content was saved as %s", self.path, copy)
        except (OSError, sqlite3.Error):
            log.exception("could not save a copy of the moved %s", self.path)
            faults.release_moved_file(raw)  # never replay its WAL into the new file

    def backup_to(self, dest: Path | str) -> Path:
        """Copy the database as it is now (WAL included) to a new file ``dest``.

        Uses SQLite's online backup API; works even if the file was deleted
        while open. Never overwrites: raises FileExistsError if ``dest`` exists.

        Raises:
            StoreClosed: the store is closed.
            FileExistsError, OSError, sqlite3.Error: the copy could not be made
                (no partial file is left).
        """
        if self._con is None:
            raise StoreClosed()
        return faults.copy_open_database(dbapi_connection(self._con), Path(dest))

    def maintain(self, budget_ms: float = 20.0) -> bool:
        """Do idle-time upkeep: merge search-index segments, then checkpoint the WAL.

        Args:
            budget_ms: stop merging after about this long (one transaction).

        Returns:
            True if merging work remains (call again later).
        """
        if self.read_only is not None:
            return False  # nothing is written: no index merge, no checkpoint
        more = self._w(lambda c: maintenance.merge(c, budget_ms))
        if self._con is not None:
            maintenance.checkpoint(self._con)
            self.watch.settle()
            self._version = self._data_version()
        return more

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _w(self, fn: Callable[[Connection], T]) -> T:
        if self._con is None:
            raise StoreClosed()
        if self.damaged:
            raise DamagedWhileOpen(self.path, replaced=self.kept is not None
                                   and self.kept.replaced)
        if self.read_only is not None:
            raise OpenedReadOnly(self.path, self.read_only.why, self.read_only.fix)
        identity = self._identity

        def guarded(con: Connection) -> T:
            if identity is not None:  # inside the transaction: one stat, a few µs
                faults.check_identity(self.path, identity)
                # Written over by another program? (one more stat, one pragma)
                self.watch.check(others_committed=self._data_version() != self._version,
                                 file_id=self._file_id)
                if not self._file_id:  # a file of an older Parley: it gets its id now
                    self._file_id = overwrite.new_file_id()
                    con.exec_driver_sql(f"PRAGMA application_id = {self._file_id}")
            return fn(con)

        try:
            out = write(self._con, guarded, self.path)
        except DatabaseCorrupt as exc:  # rolled back: nothing of this write was kept
            raise self._found_damaged(exc, on_thread=True) from exc
        self.watch.settle()  # a commit may have checkpointed into the file
        self._version = self._data_version()
        return out

    def _data_version(self) -> int | None:
        """``PRAGMA data_version`` of the connection: it changes when another connection
        commits (SQLite's documentation of the pragma)."""
        if self._con is None:
            return None
        return int(dbapi_connection(self._con).execute("PRAGMA data_version").fetchone()[0])

    def _r(self, fn: Callable[[Connection], T]) -> T:
        if self._con is None:
            raise StoreClosed()
        try:
            return read(self._con, fn, self.path)
        except DatabaseCorrupt as exc:
            raise self._found_damaged(exc, on_thread=True) from exc

    def report_damage(self, why: str = "") -> None:
        """Another reader found the file damaged (an automatic backup's check, the check
        after opening): stop writing, and have the next start check it whole
        (``parley.core.store.sqlite.damage``).

        Safe to call from another thread: it sets a flag, copies the files aside
        (what the connection reads is copied at :meth:`close`, on its thread) and
        leaves a marker file.

        Args:
            why: what was found, in words (``parley.core.store.sqlite.kept``:
                ``FOUND_BY_CHECK``…; default ``UNREADABLE``).
        """
        self._found_damaged(DatabaseCorrupt(self.path, found_while_open=True, why=why))

    def _found_damaged(self, exc: DatabaseCorrupt, *, on_thread: bool = False) -> DatabaseCorrupt:
        """The first time: keep the files aside (before anything else), stop writing, leave
        the marker. Returns the error to raise, naming the folder of kept files.

        Args:
            exc: what was found.
            on_thread: called on the store's thread outside a transaction: what the
                connection reads is copied now too.
        """
        if self.damaged:
            return exc
        self.damaged = True
        replaced = isinstance(exc, DatabaseReplacedInPlace)
        why = exc.why or kept_files.UNREADABLE  # SQLite's own words go to the log
        log.error("%s is damaged; no more writes in this run: %s", self.path,
                  exc.__cause__ or why)
        try:
            self.kept = kept_files.keep(self.path, why, replaced=replaced)
        except OSError:
            log.exception("could not copy the damaged %s aside", self.path)
        if self.kept is not None and on_thread and self._con is not None:
            kept_files.copy_what_parley_reads(dbapi_connection(self._con), self.kept)
        damage.mark(self.path, str(exc.__cause__ or why), self.kept)
        folder = self.kept.folder if self.kept is not None else None
        if replaced:
            return DatabaseReplacedInPlace(self.path, kept=folder)
        return DatabaseCorrupt(self.path, found_while_open=True, kept=folder, why=why)


def _writable(path: Path) -> bool:
    """True when ``path`` and its folder may be written (``opening.check_writable``)."""
    try:
        check_writable(path)
    except StoreError:
        return False
    return True

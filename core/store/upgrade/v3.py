"""Upgrading a legacy v3 ``sessions.db`` to v4, in place, after a backup.

:func:`upgrade_file` does, in order (tests/core/test_v3_migrate.py checks each
rule, numbered there and below as "point N"):

1. Read the file's version without writing to it. A v4 file is left alone
   (not one byte changes); a file newer than v4 is refused (:class:`NewerFormat`).
2. Back it up with SQLite's backup API to ``<db>.parley-pre-v4.bak`` (or the
   next free numbered name: an existing backup is never overwritten), rows
   still in ``-wal`` included (:mod:`parley.core.store.upgrade.backup`). If the copy fails
   nothing else happens (:class:`MigrationBackupFailed`). The copy is flushed
   to disk on a thread while step 3 runs, and named before step 3 commits; if
   that fails, step 3 is rolled back and the same error is raised.
3. Run the steps of :mod:`parley.core.store.upgrade.steps` in one transaction, which
   holds the file's write lock from its first statement, and commit. A
   second thread indexes the turns meanwhile (:mod:`parley.core.store.upgrade.turns`).
   During it the file is switched from WAL to a rollback journal (new pages
   are then written once, not twice) and back to WAL after.

Interrupted at any point (crash, kill, power loss), the file opens as v3 —
SQLite rolls the unfinished transaction back, and the next start upgrades it
again — or as v4 once the commit is done, never a mix (point 7).

Rollback (point 10), for users — also returned by :func:`rollback_instructions`:
quit Parley and every program using the file; delete ``sessions.db-wal``,
``sessions.db-shm`` and ``sessions.db-journal`` if they exist; copy
``sessions.db.parley-pre-v4.bak`` over ``sessions.db``. An older Parley then
opens it as before. (The v3 pages the upgrade freed stay in the file as free
space that SQLite reuses; ``VACUUM`` returns it to the disk.)
"""

from __future__ import annotations

import contextlib
import sqlite3
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from filelock import FileLock, Timeout
from sqlalchemy import create_engine
from sqlalchemy.pool import NullPool

from parley.core.content import new_id
from parley.core.store import textindex
from parley.core.store.errors import (
    MigrationBackupFailed,
    MigrationFailed,
    NewerFormat,
    NotAParleyFile,
    StoreError,
    UpgradeInProgress,
    UpgradeUnavailable,
    translate,
)
from parley.core.store.schema import SCHEMA_VERSION, V4_TABLES
from parley.core.store.upgrade import steps as v3_steps
from parley.core.store.upgrade.backup import (
    CopiedBackup,
    copy_backup,
    readonly_uri,
)
from parley.core.store.upgrade.steps import AlreadyCurrent, Migration
from parley.core.store.upgrade.turns import SCRATCH, TurnPipeline, index_path_for

__all__ = [
    "MigrationReport",
    "rollback_instructions",
    "upgrade_file",
]

Progress = Callable[[int, int], None]
#: Page cache of the upgrade's connection (KiB; allocated only as used). Inserting 1M
#: turns measured 7.0 s of CPU with 128 MB, 5.3 s with 256 MB, 4.8 s with 512 MB (the
#: turns' unique indexes stay in memory instead of being spilled and read again); but
#: the commit writes what the cache holds: 1.3 s with 256 MB, 2.5-3.5 s with 512 MB.
CACHE_KIB = 256 * 1024
_PRAGMAS = (
    "busy_timeout = 5000",
    "foreign_keys = OFF",  # the steps keep v4's keys right; v3 rows are not checked
    f"cache_size = -{CACHE_KIB}",
    "temp_store = MEMORY",
    # Debian's SQLite zeroes every freed page: dropping the v3 tables would rewrite
    # the whole file once more. Their content is in the backup anyway.
    "secure_delete = OFF",
)


@dataclass(frozen=True, slots=True)
class MigrationReport:
    """What :func:`upgrade_file` did.

    Attributes:
        sessions: sessions migrated.
        turns: turns migrated (recovered ones included).
        recovered_turns: damaged turns kept verbatim as recovered text (point 5).
        spaces: spaces made from v3 space names (the default space not counted).
        backup_path: the backup taken, or None when the file was already v4.
        seconds: wall time of the whole upgrade, backup included.
    """

    sessions: int
    turns: int
    recovered_turns: int
    spaces: int
    backup_path: Path | None
    seconds: float


#: Held (``filelock``) from the backup to the commit, beside the file; removed after.
UPGRADE_LOCK_SUFFIX = ".parley-upgrade.lock"


def rollback_instructions(path: Path, backup: Path) -> str:
    """Return the steps that put the pre-upgrade file back (point 10), for people."""
    return (
        f"To go back to the file as it was before the upgrade: 1. quit Parley and every "
        f"other program using {path}; 2. delete {path}-wal, {path}-shm and "
        f"{path}-journal if they exist; "
        f"3. copy {backup} over {path}. An older Parley then opens it as before (this "
        "Parley would upgrade it again, keeping this backup)."
    )


def upgrade_file(path: Path, progress: Progress | None = None) -> MigrationReport:
    """Back up a v3 sessions.db and upgrade it to v4 in place.

    Args:
        path: the database file.
        progress: called as ``progress(done, total)`` with ``done`` of the
            file's ``total`` v3 turns migrated (converted, written and indexed):
            ``(0, total)`` during the backup, then at least every 0.2 s and
            after every batch of 5,000 turns; from the upgrade's thread.

    Returns:
        What was migrated. A file already at v4 is not touched (counts are 0,
        ``backup_path`` is None).

    Raises:
        NewerFormat: ``user_version`` above 4; the file was not touched (point 8).
        NotAParleyFile: neither a v3 nor a v4 Parley file; not touched.
        UpgradeUnavailable: a Parley file older than v3; not touched.
        MigrationBackupFailed: the backup could not be made; not touched (point 1).
        MigrationFailed: the upgrade stopped; the file is still v3 and the
            message names the backup.
        UpgradeInProgress: another process is upgrading the file; not touched.
    """
    started = time.monotonic()
    path = Path(path)
    version, tables, total = _probe(path)
    if version > SCHEMA_VERSION:
        raise NewerFormat(path, version, SCHEMA_VERSION)
    if version == SCHEMA_VERSION and tables >= V4_TABLES:
        return MigrationReport(0, 0, 0, 0, None, time.monotonic() - started)
    if version not in (0, 3) or not {"sessions", "turns", "app_state"} <= tables:
        if 0 < version < 3:
            raise UpgradeUnavailable(path, version)
        raise NotAParleyFile(path, "it has neither Parley's v3 nor its v4 tables")
    lock_path = Path(f"{path}{UPGRADE_LOCK_SUFFIX}")
    lock = FileLock(lock_path, timeout=0)
    try:
        lock.acquire()
    except Timeout:
        raise UpgradeInProgress(path) from None
    except OSError:  # a folder Parley cannot write to: the backup says so, in words
        return _upgrade_locked(path, progress, started)
    try:
        return _upgrade_locked(path, progress, started)
    finally:
        # Removed while still held: our upgrade is over, so one that starts now (on a new
        # lock file) finds the file upgraded or as it was. (Windows keeps it: harmless.)
        with contextlib.suppress(OSError):
            lock_path.unlink()
        lock.release()


def _upgrade_locked(path: Path, progress: Progress | None, started: float) -> MigrationReport:
    """:func:`upgrade_file` once no other process upgrades ``path`` (probed again: one that
    held the lock may have just finished)."""
    version, tables, total = _probe(path)
    if version == SCHEMA_VERSION and tables >= V4_TABLES:
        return MigrationReport(0, 0, 0, 0, None, time.monotonic() - started)
    report: Progress = progress or (lambda done, total: None)
    copied = copy_backup(path, tick=lambda: report(0, total))
    try:
        m = _migrate(path, total, report, copied)
    except MigrationBackupFailed:  # the copy did not reach the disk: rolled back
        raise
    except AlreadyCurrent:  # another Parley upgraded it meanwhile: nothing to do
        return MigrationReport(0, 0, 0, 0, copied.place(), time.monotonic() - started)
    except Exception as exc:
        raise MigrationFailed(path, copied.place(), _reason(exc, path)) from exc
    return MigrationReport(
        m.sessions, m.turns, m.recovered, m.spaces, copied.place(), time.monotonic() - started
    )


def _probe(path: Path) -> tuple[int, set[str], int]:
    """Return ``(user_version, table names, v3 turn count)`` without writing the file.

    A hot rollback journal (an upgrade killed mid-way) cannot be read read-only;
    then a read-write open rolls it back first, restoring the v3 file.
    """
    try:
        con = sqlite3.connect(readonly_uri(path), uri=True)
        try:
            return _read_probe(con)
        finally:
            con.close()
    except sqlite3.Error as exc:
        if getattr(exc, "sqlite_errorname", "") != "SQLITE_READONLY_ROLLBACK":
            raise _opening_error(exc, path) from exc
    try:
        con = sqlite3.connect(path)
        try:
            return _read_probe(con)
        finally:
            con.close()
    except sqlite3.Error as exc:
        raise _opening_error(exc, path) from exc


def _read_probe(con: sqlite3.Connection) -> tuple[int, set[str], int]:
    version = int(con.execute("PRAGMA user_version").fetchone()[0])
    tables = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    total = 0
    if "turns" in tables and version in (0, 3):
        total = int(con.execute("SELECT count(*) FROM turns").fetchone()[0])
    return version, tables, total


def _opening_error(exc: sqlite3.Error, path: Path) -> StoreError:
    err = translate(exc, path)
    if err is not None:
        return err
    return NotAParleyFile(path, f"SQLite cannot read it: {exc}")


def _migrate(path: Path, total: int, report: Progress, backup: CopiedBackup) -> Migration:
    engine = create_engine(
        "sqlite+pysqlite://",
        creator=lambda: sqlite3.connect(path, isolation_level=None, check_same_thread=False),
        poolclass=NullPool,
    )
    con = engine.connect()
    raw = con.connection.dbapi_connection
    assert isinstance(raw, sqlite3.Connection)
    try:
        for pragma in _PRAGMAS:
            raw.execute(f"PRAGMA {pragma}")
        was_wal = raw.execute("PRAGMA journal_mode").fetchone()[0].lower() == "wal"
        if was_wal:
            _set_journal_mode(raw, "DELETE")
        textindex.register_functions(raw)
        prefix = new_id()[:16]  # v4 turn ids: this + the v3 rowid in hex
        try:
            with TurnPipeline(index_path_for(path), prefix) as turns_in:
                m = Migration(con, raw, turns_in, report=report, total_rows=total)
                turns_in.attach(raw)
                _run_steps(raw, m, backup)
        finally:
            with contextlib.suppress(sqlite3.OperationalError):
                raw.execute(f"DETACH DATABASE {SCRATCH}")
            if was_wal:
                _set_journal_mode(raw, "WAL")
        return m
    finally:
        con.close()
        engine.dispose()


def _run_steps(raw: sqlite3.Connection, m: Migration, backup: CopiedBackup) -> None:
    """Run every step in one transaction and commit, or roll back and re-raise.

    The backup is placed (on disk, under its name) before the commit: a
    committed upgrade always has its backup (point 1).
    """
    # DEFERRED, so the attached scratch index stays writable by its thread; the first
    # step takes the main file's write lock at once.
    raw.execute("BEGIN DEFERRED")
    try:
        for s in v3_steps.STEPS:
            s.fn(m)
        backup.place()
        raw.execute("COMMIT")
    except BaseException:
        if raw.in_transaction:
            with contextlib.suppress(sqlite3.Error):  # else the next open rolls it back
                raw.execute("ROLLBACK")
        raise


def _set_journal_mode(raw: sqlite3.Connection, mode: str) -> None:
    # Another connection having the file open keeps its mode: the upgrade is only slower.
    with contextlib.suppress(sqlite3.OperationalError):
        raw.execute(f"PRAGMA journal_mode = {mode}")


def _reason(exc: BaseException, path: Path) -> str:
    if isinstance(exc, StoreError):
        return exc.message
    err = translate(exc, path)
    if err is not None:
        return err.message
    return f"{type(exc).__name__}: {exc}"

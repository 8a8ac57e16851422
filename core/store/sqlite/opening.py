"""Opening sessions.db: check, classify, upgrade or create, then connect.

Order matters for the "write nothing" promises: the file is classified
without writing (:func:`parley.core.store.upgrade.migrations.inspect_file`); a newer or
foreign file is refused before anything else; writability is checked before
any write; a v3 file is upgraded by ``parley.core.store.upgrade.v3`` (which backs it up
first); only then is a connection with Parley's settings opened. A v4 file
created by Parley is then opened without writing a byte (its mode aside: the
file and its ``-wal`` / ``-shm`` are made ``0600``, see ``parley.core.private``).
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import stat
import time
from pathlib import Path
from typing import Any, NoReturn

from sqlalchemy.engine import Connection, Engine

from parley.core import private
from parley.core.store import spaces
from parley.core.store.errors import (
    CannotOpen,
    DatabaseReadOnly,
    NewerFormat,
    NotAParleyFile,
    OtherSQLiteFile,
    translate,
)
from parley.core.store.schema import SCHEMA_VERSION, create_all, dbapi_connection
from parley.core.store.sqlite import held
from parley.core.store.sqlite.engine import make_engine, read, write
from parley.core.store.sqlite.overwrite import new_file_id
from parley.core.store.upgrade.migrations import (
    FileInfo,
    FileKind,
    Progress,
    UpToDateReport,
    inspect_file,
    migrate,
    upgrade_v3,
)


def check_writable(path: Path) -> None:
    """Raise unless Parley may write ``path`` and its folder (creating the folder).

    A file without any write permission bit counts as read-only even for root:
    the user marked it so.

    Raises:
        DatabaseReadOnly: the file or its folder is not writable (its ``why`` and
            ``fix`` name which, and what to do).
        CannotOpen: the folder cannot be created.
    """
    folder = path.parent
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise CannotOpen(path, exc.strerror or str(exc)) from exc
    if _read_only_disk(folder):
        raise DatabaseReadOnly(path, f"the disk holding {folder} is mounted read-only",
                               "mount it read-write (or copy the folder to a writable disk)")
    if path.exists():
        mode = stat.S_IMODE(path.stat().st_mode)
        if _immutable(path):
            raise DatabaseReadOnly(
                path, f"the file {path} is marked immutable (lsattr shows an “i”), so "
                "nobody may change it whatever its permissions",
                f"remove that mark (for example: sudo chattr -i '{path}')")
        if not os.access(path, os.W_OK) or not mode & 0o222:
            raise DatabaseReadOnly(
                path, f"the file {path} is read-only (its permissions are "
                f"{stat.filemode(path.stat().st_mode)[1:]})",
                f"make it writable (for example: chmod u+w '{path}')")
    if not os.access(folder, os.W_OK):
        raise DatabaseReadOnly(
            path, f"its folder {folder} is read-only (SQLite keeps a journal beside the "
            "file there)", f"make the folder writable (for example: chmod u+w '{folder}')")


#: ``FS_IOC_GETFLAGS`` (Linux, 64-bit) and its immutable flag (``chattr +i``).
_FS_IOC_GETFLAGS, _FS_IMMUTABLE_FL = 0x80086601, 0x10


def _immutable(path: Path) -> bool:
    """True when ``path`` carries Linux's immutable attribute (``chattr +i``): not even
    root may write it, whatever its mode says. False where that cannot be asked."""
    try:
        import array
        import fcntl

        kept_fd = held.descriptor_for(path)  # another Store here has it open: keep its locks
        fd = kept_fd if kept_fd is not None \
            else os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
        try:
            flags = array.array("l", [0])
            fcntl.ioctl(fd, _FS_IOC_GETFLAGS, flags, True)
            return bool(flags[0] & _FS_IMMUTABLE_FL)
        finally:
            if kept_fd is None:
                os.close(fd)
    except (OSError, ImportError, ValueError):
        return False


def _read_only_disk(folder: Path) -> bool:
    """True when ``folder`` is on a file system mounted read-only (where it can tell)."""
    try:
        return bool(os.statvfs(folder).f_flag & os.ST_RDONLY)
    except (OSError, AttributeError):  # no statvfs (Windows)
        return False


def open_read_only(path: Path, busy_timeout_ms: int) -> Connection:
    """A connection that only reads ``path`` (a current v4 file that cannot be written):
    ``mode=ro``, or ``immutable=1`` when there is no WAL content (nothing, not even the
    ``-shm``, is created beside it: the folder may be read-only too).

    Raises:
        CannotOpen, DatabaseCorrupt…: SQLite cannot read it (:func:`translate`).
    """
    from parley.core.store.upgrade.backup import readonly_uri

    engine = make_engine(path, busy_timeout_ms=busy_timeout_ms, uri=readonly_uri(path))
    con = engine.connect()
    try:
        dbapi_connection(con).execute("SELECT count(*) FROM sqlite_schema").fetchone()
    except BaseException as exc:
        _let_go(con, engine, path, exc)
    return con


def open_connection(
    path: Path, progress: Progress | None, busy_timeout_ms: int, read_only_ok: bool = False
) -> tuple[Connection, Any, DatabaseReadOnly | None]:
    """Make ``path`` a current v4 file and return ``(connection, report, read_only)``.

    The report is the v3 upgrade's ``MigrationReport``, an :class:`UpToDateReport`
    when an older v4 file was brought up to date (the conversation tree added …),
    or None when the file was current (or new). ``read_only`` is None, or, when
    ``read_only_ok`` and a current file cannot be written, why (the connection then
    only reads: :func:`open_read_only`).

    Raises: see :meth:`parley.core.store.store.Store.open`.
    """
    info = inspect_file(path)
    if info.kind is FileKind.NEWER:
        raise NewerFormat(path, info.user_version, SCHEMA_VERSION)
    if info.kind is FileKind.NOT_PARLEY:
        raise OtherSQLiteFile(path, info.why)
    try:
        check_writable(path)
    except DatabaseReadOnly as refused:
        if not read_only_ok or info.kind is not FileKind.CURRENT:
            raise  # nothing to read, or it must be upgraded first: said as it is
        return open_read_only(path, busy_timeout_ms), None, refused
    report = None
    if info.kind is FileKind.V3:
        report = upgrade_v3(path, progress)
        info = inspect_file(path)
        if info.kind is not FileKind.CURRENT:
            raise NotAParleyFile(path, "the v3 upgrade did not produce a v4 file")
    if info.kind is FileKind.NEW and not path.exists():
        with contextlib.suppress(OSError):  # SQLite says why if it cannot either
            private.create_private(path)  # 0600 before SQLite makes it (and its -wal) 0644
    private.secure_store_files(path)  # also the files of an older Parley
    private.secure_leftovers(path)  # copies kept aside, markers, the lock file
    engine = make_engine(path, busy_timeout_ms=busy_timeout_ms)
    con = engine.connect()
    try:
        report = _prepare(con, path, info) or report
    except BaseException as exc:
        _let_go(con, engine, path, exc)
    return con, report, None


def _let_go(con: Connection, engine: Engine, path: Path, exc: BaseException) -> NoReturn:
    """Close a connection that failed while being set up, and raise ``exc`` (an SQLite
    error as Parley's own: :func:`translate`)."""
    con.close()
    engine.dispose()
    err = translate(exc, path) if isinstance(exc, sqlite3.Error) else None
    if err is not None:
        raise err from exc
    raise exc


def _prepare(con: Connection, path: Path, info: FileInfo) -> UpToDateReport | None:
    """Set the file up for use; return what bringing an older v4 file up to date did."""
    raw = dbapi_connection(con)
    if info.kind is FileKind.NEW:
        raw.execute("PRAGMA journal_mode = WAL")
        raw.execute(f"PRAGMA application_id = {new_file_id()}")  # which file this is
        write(con, create_all, path)
        return None
    if raw.execute("PRAGMA journal_mode").fetchone()[0].lower() != "wal":
        raw.execute("PRAGMA journal_mode = WAL")  # a v4 file last written by another tool
    report = None
    if info.kind is FileKind.OLDER_V4:
        start = time.monotonic()
        done = write(con, lambda c: migrate(c, info.user_version), path)
        tree = done.tree
        report = UpToDateReport(
            done.names, tree.backup_path if tree else None, tree.folded if tree else 0,
            tree.chats if tree else 0, time.monotonic() - start)
    if not read(con, spaces.has_default, path):
        write(con, spaces.ensure_default, path)
    return report

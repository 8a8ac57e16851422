"""The backup taken before a v3 file is upgraded (point 1 of ``parley.core.store.upgrade.v3``).

The copy is made with SQLite's online backup API from a read-only connection,
so it holds what a reader sees — rows still in the ``-wal`` file included —
and the source file is never written (a read-only connection does not
checkpoint). It is written to ``<backup>.partial`` without a sync per step
and switched to ``journal_mode=DELETE`` (one self-contained file)
(:func:`copy_backup`). It is then flushed to disk once, on a thread of its own
while the upgrade goes on, and given its final name with a hard link, which
fails instead of replacing an existing file: an existing backup is never
overwritten (:meth:`CopiedBackup.place`). The upgrade places it before it
commits, so a committed upgrade always has its backup on disk; a ``.partial``
file is never used, so it needs no crash safety of its own. Flushing on a
thread takes the ~0.5 s a 1 GB file's flush waits for the disk off the
upgrade's path (the flush uses no CPU to speak of, the upgrade's threads do).

Naming: the first free name of ``<db>.parley-pre-v4.bak``,
``<db>.parley-pre-v4.1.bak``, ``<db>.parley-pre-v4.2.bak``, … An older backup
may hold different data (a user who rolled back and kept using an older
Parley), so a new copy is taken every time a v3 file is upgraded and the old
one is kept. Leftover ``.partial`` files of an interrupted copy are removed.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import sqlite3
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

from parley.core import private
from parley.core.store.errors import MigrationBackupFailed

BACKUP_SUFFIX = ".parley-pre-v4.bak"
PARTIAL_SUFFIX = ".partial"
PAGES_PER_STEP = 4096  # 16 MB at 4 KiB pages: progress is reported between steps
SPARE_BYTES = 16 * 1024 * 1024
SOURCE_MMAP_BYTES = 1 << 31  # read the source mapped, not copied page by page into a cache


def backup_names(path: Path, tag: str = "v4") -> Iterator[Path]:
    """Yield the candidate backup names of ``path`` in order (see module docstring).

    ``tag`` names what the backup comes before: ``v4`` (the v3 upgrade), ``tree``
    (the conversation tree added to a v4 file, ``parley.core.store.upgrade.tree``).
    """
    yield path.with_name(f"{path.name}.parley-pre-{tag}.bak")
    n = 1
    while True:
        yield path.with_name(f"{path.name}.parley-pre-{tag}.{n}.bak")
        n += 1


def _free_name(path: Path, tag: str) -> Path:
    return next(p for p in backup_names(path, tag) if not os.path.lexists(p))


def _source_size(path: Path) -> int:
    size = 0
    for suffix in ("", "-wal"):
        with contextlib.suppress(OSError):
            size += os.path.getsize(f"{path}{suffix}")
    return size


def _fsync(path: Path, directory: bool = False) -> None:
    flags = os.O_RDONLY | (getattr(os, "O_DIRECTORY", 0) if directory else 0)
    try:
        fd = os.open(path, flags)
    except OSError:
        if directory:  # not every OS lets a directory be opened (Windows)
            return
        raise
    try:
        os.fsync(fd)
    except OSError:
        if not directory:
            raise
    finally:
        os.close(fd)


def _place(partial: Path, path: Path, tag: str) -> Path:
    """Give ``partial`` the first free backup name without ever replacing a file."""
    for _ in range(1000):
        target = _free_name(path, tag)
        try:
            os.link(partial, target)
        except FileExistsError:
            continue  # taken meanwhile: try the next name
        except OSError:  # no hard links here (some network/FAT volumes)
            if os.path.lexists(target):
                continue
            os.rename(partial, target)
            return target
        os.unlink(partial)
        return target
    raise OSError("no free backup name")


def readonly_uri(path: Path) -> str:
    """An SQLite URI that reads ``path`` without writing anything, side files included.

    ``mode=ro`` reads the ``-wal`` content but creates an empty ``-wal`` (and
    ``-shm``) beside a WAL file that has none; when there is no ``-wal`` content
    and no rollback journal, ``immutable=1`` reads the same data without them.
    """
    wal, journal = Path(f"{path}-wal"), Path(f"{path}-journal")
    quiet = not (wal.exists() and wal.stat().st_size > 0) and not journal.exists()
    return path.resolve().as_uri() + ("?mode=ro&immutable=1" if quiet else "?mode=ro")


def _copy(source_uri: str, partial: Path, tick: Callable[[], None]) -> None:
    src = sqlite3.connect(source_uri, uri=True)
    try:
        src.execute(f"PRAGMA mmap_size = {SOURCE_MMAP_BYTES}")
        dst = sqlite3.connect(partial)
        try:
            dst.execute("PRAGMA synchronous = OFF")  # make_backup syncs the whole file once
            src.backup(dst, pages=PAGES_PER_STEP, progress=lambda *_: tick())
            dst.execute("PRAGMA journal_mode=DELETE")
        finally:
            dst.close()
            private.narrow(partial, private.FILE_MODE)  # chats: for their owner only
    finally:
        src.close()


class CopiedBackup:
    """A finished copy under its ``.partial`` name, being flushed to disk on a thread.

    :meth:`place` waits for the flush and gives the copy its backup name;
    until then it is not a backup (a kill leaves a ``.partial`` file that the
    next :func:`copy_backup` removes).
    """

    def __init__(self, path: Path, partial: Path, first: Path, tag: str = "v4") -> None:
        self._path, self._partial, self._first, self._tag = path, partial, first, tag
        self._error: BaseException | None = None
        self._placed: Path | None = None
        self._flush = threading.Thread(target=self._sync, name="v3-backup-sync", daemon=True)
        self._flush.start()

    def _sync(self) -> None:
        try:
            _fsync(self._partial)
        except BaseException as exc:  # raised by place(), on the caller's thread
            self._error = exc

    def place(self) -> Path:
        """Wait until the copy is on disk, then name it; return its path.

        Idempotent: a second call returns the same path.

        Raises:
            MigrationBackupFailed: the flush or the naming failed (the disk
                reported an error, the folder stopped being writable); the
                copy is deleted. Called before the upgrade commits, so the
                database is then still as it was.
        """
        if self._placed is not None:
            return self._placed
        self._flush.join()
        try:
            if self._error is not None:
                raise self._error
            target = _place(self._partial, self._path, self._tag)
            _fsync(target.parent, directory=True)
        except (OSError, sqlite3.Error) as exc:
            _discard(self._partial)
            raise MigrationBackupFailed(self._path, self._first, _reason(exc)) from exc
        self._placed = target
        return target


def copy_backup(path: Path, tick: Callable[[], None] = lambda: None, *, tag: str = "v4"
                ) -> CopiedBackup:
    """Copy a database (with its ``-wal`` content) beside it and start flushing the copy.

    Args:
        path: the database file; it is opened read-only and never written.
        tick: called between copy steps (every :data:`PAGES_PER_STEP` pages).
        tag: what the backup comes before, in its name (:func:`backup_names`).

    Returns:
        The copy, not yet a backup: :meth:`CopiedBackup.place` names it once
        it is on disk (see the module docstring for the name).

    Raises:
        MigrationBackupFailed: the disk is too full, the folder is not
            writable, or the copy failed for another reason; no partial copy
            is left behind and the database was not touched.
    """
    first = next(backup_names(path, tag))
    partial = first.with_name(first.name + PARTIAL_SUFFIX)
    try:
        if os.path.lexists(partial):
            os.unlink(partial)  # an interrupted earlier copy
        free = shutil.disk_usage(path.parent).free
        need = _source_size(path) + SPARE_BYTES
        if free < need:
            raise MigrationBackupFailed(
                path, first, f"the disk has {free // 2**20} MB free; the copy needs about "
                f"{need // 2**20} MB: the file's size and {SPARE_BYTES // 2**20} MB to spare"
            )
        _copy(readonly_uri(path), partial, tick)
    except MigrationBackupFailed:
        _discard(partial)
        raise
    except (OSError, sqlite3.Error) as exc:
        _discard(partial)
        raise MigrationBackupFailed(path, first, _reason(exc)) from exc
    return CopiedBackup(path, partial, first, tag)


def _discard(partial: Path) -> None:
    for suffix in ("", "-journal", "-wal", "-shm"):
        with contextlib.suppress(OSError):
            p = Path(f"{partial}{suffix}")
            if p.is_file():
                p.unlink()


def _reason(exc: BaseException) -> str:
    text = str(exc) or type(exc).__name__
    if isinstance(exc, sqlite3.Error):
        code = getattr(exc, "sqlite_errorname", "")
        if code.startswith("SQLITE_FULL"):
            return "the disk is full"
        return f"{text} [{code}]" if code else text
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror if not exc.filename else f"{exc.strerror}: {exc.filename}"
    return text

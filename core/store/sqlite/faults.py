"""sessions.db deleted, moved or replaced while Parley has it open.

SQLite works on the file it opened (a descriptor), not on its name. Measured
with SQLite 3.40 in WAL mode (tests/core/test_storage_faults.py):

* after ``sessions.db`` is deleted, every write still succeeds — into a file
  nobody can see any more, which disappears when Parley closes it;
* after it is replaced (a backup restored with ``mv``, a sync tool), writes
  still go to the old file; and on close SQLite leaves its ``-wal`` behind
  (it does not checkpoint a moved file), so the next program to open the new
  file replays the old file's pages into it: the restored file is damaged.

So the store must compare the file it opened with the one at the path before
it writes (:func:`check_identity`, one ``stat``: a few microseconds), refuse
with :class:`DatabaseMissing` / :class:`DatabaseReplaced`, and, before closing
a connection whose file moved, copy what it still reads to a new file and
empty its WAL into the old file (:func:`rescue_and_release`), so nothing is
lost and nothing is replayed into the new file.

The copy goes beside the old name (:func:`rescue_name`), in its folder made
again when the whole folder was deleted (``rm -rf`` of the data folder). A
copy already made of the same content (File ▸ Save a copy now…, or the
window's copy on closing) is not made twice: :func:`copy_open_database`
remembers each copy of a connection with the connection's change counters,
and :func:`rescue_and_release` reuses it while nothing changed since
(:func:`current_copy`). When no copy can be written the caller gets
:class:`RescueFailed` (typed, for the person) from :meth:`RescueFailed.of`.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from parley.core import private
from parley.core.store.errors import DatabaseMissing, DatabaseReplaced


@dataclass(frozen=True, slots=True)
class FileIdentity:
    """Which file a path named: ``(st_dev, st_ino)``, stable across writes and renames."""

    dev: int
    ino: int

    @classmethod
    def of(cls, path: Path) -> FileIdentity | None:
        """Return the identity of the file at ``path`` now, or None when there is none.

        None also when a folder on the way is now a file (``NotADirectoryError``):
        no file can be at ``path`` then.

        Raises:
            OSError: the path cannot be examined (other than "does not exist").
        """
        try:
            st = os.stat(path)
        except (FileNotFoundError, NotADirectoryError):
            return None
        return cls(st.st_dev, st.st_ino)


def check_identity(path: Path, expected: FileIdentity) -> None:
    """Raise unless ``path`` still names the file Parley opened.

    Args:
        path: sessions.db.
        expected: its identity when the store opened it (:meth:`FileIdentity.of`).

    Raises:
        DatabaseMissing: nothing is at ``path`` any more.
        DatabaseReplaced: another file is at ``path``.
    """
    try:
        now = FileIdentity.of(path)
    except OSError:  # e.g. the folder became unreadable: let SQLite report it
        return
    if now is None:
        raise DatabaseMissing(path)
    if now != expected:
        raise DatabaseReplaced(path)


def free_name(path: Path, tag: str) -> Path:
    """Return ``<name>.<tag>-<YYYYmmdd-HHMMSS>`` beside ``path`` (``-1``, ``-2``… if taken).

    A name counts as taken when the file or its ``-wal`` / ``-shm`` exists.
    """
    base = f"{path.name}.{tag}-{time.strftime('%Y%m%d-%H%M%S')}"
    for name in [base] + [f"{base}-{n}" for n in range(1, 1000)]:
        if not any(os.path.lexists(path.with_name(name + s)) for s in ("", "-wal", "-shm")):
            return path.with_name(name)
    raise FileExistsError(path.with_name(base))


def rescue_name(path: Path) -> Path:
    """Where the copy of a deleted or replaced ``path`` goes: ``<name>.rescued-<time>`` beside it.

    The folder is made again (with its parents, mode 0700) when it was deleted
    too, so the copy is where the message promised (:class:`DatabaseMissing`).

    Raises:
        OSError: the folder cannot be made (no permission, read-only disk…).
    """
    if not path.parent.is_dir():
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    return free_name(path, "rescued")


def place(src: Path, dst: Path) -> None:
    """Move ``src`` to ``dst``; raise FileExistsError rather than replace any file."""
    fd = os.open(dst, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)  # reserve the name
    os.close(fd)
    try:
        os.replace(src, dst)  # replaces only our own empty placeholder
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(dst)
        raise


def copy_open_database(con: sqlite3.Connection, dest: Path) -> Path:
    """Copy what ``con`` reads (its file and WAL) to a new single file ``dest``.

    Uses SQLite's online backup API, so it works when the file the
    connection opened was deleted. The copy is written to ``<dest>.partial``,
    switched to ``journal_mode=DELETE`` and then given its name, never over an
    existing file. The backup API copies pages without parsing them, so a damaged
    file is copied whole, damage included; when its list of tables is damaged
    SQLite cannot switch the copy's journal mode (that reads the list), and
    :func:`_no_wal_header` does it in the header instead.

    Raises:
        OSError, sqlite3.Error: the copy could not be written (the partial
            file is removed).
    """
    tmp = dest.with_name(dest.name + ".partial")
    try:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()
        target = sqlite3.connect(tmp)
        try:
            con.backup(target)
            try:
                target.execute("PRAGMA journal_mode = DELETE").fetchall()
                damaged = False
            except sqlite3.DatabaseError:  # "malformed": the pages copied are as read
                damaged = True
        finally:
            target.close()
        if damaged:
            _no_wal_header(tmp)
        private.narrow(tmp, private.FILE_MODE)  # a copy of the chats: for their owner only
        place(tmp, dest)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise
    _remember(con, dest)
    return dest


def _no_wal_header(path: Path) -> None:
    """Mark the closed SQLite file ``path`` as not in WAL mode, in its header: bytes 18
    and 19 (the file format's read and write versions) are 2 in WAL mode and 1 in the
    rollback-journal modes (https://www.sqlite.org/fileformat2.html#the_database_header).
    A copy so marked is read whole without a ``-wal`` beside it, as SQLite's own
    ``journal_mode=DELETE`` leaves it.

    Raises:
        OSError: the file could not be written.
    """
    with open(path, "r+b") as fh:
        fh.seek(18)
        if fh.read(2) == b"\x02\x02":
            fh.seek(18)
            fh.write(b"\x01\x01")


# --- copies made of a connection (so closing does not make the same copy twice) -----


@dataclass(frozen=True, slots=True)
class _Copy:
    con: sqlite3.Connection  # held, so its id() is not reused while the entry lives
    dest: Path
    mark: tuple[int, int]


_copies: dict[int, _Copy] = {}
_copies_lock = threading.Lock()
_MAX_COPIES = 8  # connections tracked (a moved one is dropped at close, others pushed out)


def _mark(con: sqlite3.Connection) -> tuple[int, int]:
    """Changes made through ``con`` and by others (``PRAGMA data_version``) so far."""
    (version,) = con.execute("PRAGMA data_version").fetchone()
    return con.total_changes, int(version)


def _remember(con: sqlite3.Connection, dest: Path) -> None:
    with _copies_lock:
        _copies.pop(id(con), None)
        _copies[id(con)] = _Copy(con, dest, _mark(con))
        while len(_copies) > _MAX_COPIES:
            del _copies[next(iter(_copies))]


def _forget(con: sqlite3.Connection) -> None:
    with _copies_lock:
        _copies.pop(id(con), None)


def current_copy(con: sqlite3.Connection) -> Path | None:
    """The last complete copy of ``con`` (:func:`copy_open_database`), if it is still current.

    Current: the copy still exists and nothing was written through ``con``
    (``total_changes``) or by another connection (``PRAGMA data_version``)
    since it was made. Call on the connection's thread.

    Returns:
        The copy's path, or None (no copy, it was deleted, or it is out of date).
    """
    with _copies_lock:
        entry = _copies.get(id(con))
    if entry is None or entry.con is not con or not entry.dest.exists():
        return None
    return entry.dest if _mark(con) == entry.mark else None


def rescue_and_release(con: sqlite3.Connection, path: Path) -> Path:
    """Before closing a connection whose file moved: save a copy, then release the WAL.

    Args:
        con: the connection (its file no longer at ``path``).
        path: sessions.db.

    Returns:
        The copy, ``<name>.rescued-<timestamp>`` beside ``path`` (its folder
        made again if it was deleted), or the copy already made of the same
        content (:func:`current_copy`: a copy chosen in the window), which is
        then not made twice.

    Raises:
        OSError, sqlite3.Error: the copy failed; the WAL was left as it was.
    """
    dest = current_copy(con) or copy_open_database(con, rescue_name(path))
    release_moved_file(con)
    return dest


def release_moved_file(con: sqlite3.Connection) -> None:
    """Before closing a connection whose file moved: empty its WAL into that file.

    ``PRAGMA wal_checkpoint(TRUNCATE)`` copies the WAL's pages into the file the
    connection opened (the old one) and truncates the ``-wal`` to 0 bytes, so
    the next opener of the path cannot replay them into another file. Copy
    what the old file holds first (:func:`rescue_and_release` does both): once
    closed, a deleted file is gone.
    """
    _forget(con)  # the connection closes next: its copies are no longer tracked
    con.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()

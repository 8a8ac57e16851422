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
a connection whose file moved, empty its WAL into the old file
(:func:`release_moved_file`) so nothing is replayed into the new one. What the
old file holds can still be read through the open connection and copied to a
new file (``core.recovery.rescue_copy``).
"""

from __future__ import annotations

import os
import sqlite3
from dataclasses import dataclass
from pathlib import Path

from core.store.errors import StoreError


@dataclass(frozen=True, slots=True)
class FileIdentity:
    """Which file a path named: ``(st_dev, st_ino)``, stable across writes and renames."""

    dev: int
    ino: int

    @classmethod
    def of(cls, path: Path) -> FileIdentity | None:
        """Return the identity of the file at ``path`` now, or None when there is none.

        Raises:
            OSError: the path cannot be examined (other than "does not exist").
        """
        try:
            st = os.stat(path)
        except FileNotFoundError:
            return None
        return cls(st.st_dev, st.st_ino)


class DatabaseMissing(StoreError):
    """The file Parley opened is no longer at its path (deleted, or moved away)."""

    def __init__(self, path: Path) -> None:
        super().__init__(
            f"{path} was deleted or moved while Parley was running. Parley stopped saving, so "
            "nothing is written to a file you can no longer see. Nothing already saved was "
            "lost: Parley can still read it and will save a copy beside the old name when it "
            "closes (or choose Save a copy now). To keep going, put the file back and try again."
        )
        self.path = path


class DatabaseReplaced(StoreError):
    """Another file now has the path of the file Parley opened."""

    def __init__(self, path: Path) -> None:
        super().__init__(
            f"{path} was replaced by another file while Parley was running (restored from a "
            "backup, or synced from another computer?). Parley stopped saving to it so the new "
            "file is not damaged. Nothing already saved was lost: Parley will save what it "
            "holds as a copy beside it when it closes (or choose Save a copy now). Restart "
            "Parley to use the new file."
        )
        self.path = path


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


def release_moved_file(con: sqlite3.Connection) -> None:
    """Before closing a connection whose file moved: empty its WAL into that file.

    ``PRAGMA wal_checkpoint(TRUNCATE)`` copies the WAL's pages into the file the
    connection opened (the old one) and truncates the ``-wal`` to 0 bytes, so
    the next opener of the path cannot replay them into another file. Copy
    what the old file holds first (``core.recovery.rescue_copy``): once closed,
    a deleted file is gone.
    """
    con.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()

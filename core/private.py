"""Private by default: Parley's files are readable by their owner only.

Chats are personal. The data folder is made ``0700`` and sessions.db, its
``-wal`` / ``-shm``, backups, rescued copies and exports ``0600`` — whatever
the umask says (files are created with the mode and then ``chmod``-ed, since
the umask only ever removes bits). Files made by an older Parley with looser
modes are narrowed when the store opens (:func:`secure_store_files`).

SQLite gives a ``-wal`` / ``-shm`` / ``-journal`` it creates the mode of its
database file, so a sessions.db that is ``0600`` before its first write keeps
its companions private too.

All of it is best effort on file systems without Unix modes (a FAT stick,
Windows): ``chmod`` there changes nothing and never fails the caller.
"""

from __future__ import annotations

import contextlib
import os
import stat
from pathlib import Path

#: Mode of Parley's files: read and write for their owner only.
FILE_MODE = 0o600
#: Mode of Parley's folders: open for their owner only.
DIR_MODE = 0o700
SIDECARS = ("-wal", "-shm", "-journal")


def narrow(path: Path, mode: int) -> None:
    """Give ``path`` exactly ``mode`` when it exists with another one (best effort).

    Symbolic links are left alone (their target may not be Parley's).
    """
    with contextlib.suppress(OSError):
        st = os.lstat(path)
        if stat.S_ISLNK(st.st_mode):
            return
        if stat.S_IMODE(st.st_mode) != mode:
            os.chmod(path, mode)


def private_dir(folder: Path) -> Path:
    """Create ``folder`` (with its parents) if missing and make it ``0700``.

    Raises:
        OSError: the folder cannot be created.
    """
    folder.mkdir(mode=DIR_MODE, parents=True, exist_ok=True)
    narrow(folder, DIR_MODE)
    return folder


def create_private(path: Path) -> None:
    """Create an empty ``path`` with mode ``0600`` (umask-independent).

    Raises:
        FileExistsError: ``path`` exists (it is never replaced).
        OSError: it cannot be created.
    """
    fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, FILE_MODE)
    try:
        if hasattr(os, "fchmod"):  # not on Windows
            with contextlib.suppress(OSError):
                os.fchmod(fd, FILE_MODE)
    finally:
        os.close(fd)


def secure_store_files(db: Path) -> None:
    """Make ``db`` and its ``-wal`` / ``-shm`` / ``-journal`` ``0600`` (those that exist)."""
    narrow(db, FILE_MODE)
    for suffix in SIDECARS:
        narrow(db.with_name(db.name + suffix), FILE_MODE)


def secure_leftovers(db: Path) -> None:
    """Make ``0600`` every file beside ``db`` whose name starts with its name — the
    damaged copies kept aside (``sessions.db.corrupt-*`` with their ``-wal`` / ``-shm``),
    the damage marker, rescued copies, the closed-state record, upgrade backups — and
    the lock file ``parley.lock`` (best effort; a listing of one folder, at start).
    """
    folder = db.parent
    with contextlib.suppress(OSError):
        for entry in os.scandir(folder):
            ours = entry.name.startswith(db.name) or entry.name == LOCK_NAME
            if ours and entry.is_file(follow_symlinks=False):
                narrow(Path(entry.path), FILE_MODE)


#: The one-Parley-per-folder lock file in the data folder (``parley.gui.startup.single_instance``).
LOCK_NAME = "parley.lock"


def write_private_text(path: Path, text: str) -> None:
    """Write ``text`` (UTF-8) to ``path``, created or truncated, with mode ``0600``.

    Used for exports: a chat written out stays as private as sessions.db.

    Raises:
        OSError: the file cannot be written.
    """
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, FILE_MODE)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        if hasattr(os, "fchmod"):  # an existing file keeps its mode through O_CREAT
            with contextlib.suppress(OSError):
                os.fchmod(fh.fileno(), FILE_MODE)
        fh.write(text)

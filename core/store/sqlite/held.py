"""Reading sessions.db and its ``-wal`` / ``-shm`` while this process's SQLite connections
have them open, without dropping SQLite's locks.

SQLite (on Linux and macOS) locks the database file and its ``-shm`` with POSIX
advisory locks (``fcntl``). Those belong to the process and the file, not to a
descriptor: closing *any* descriptor of the file releases every lock the process
holds on it, SQLite's included ("How To Corrupt An SQLite Database File", 2.2,
https://www.sqlite.org/howtocorrupt.html). SQLite itself never closes a descriptor of
a file it holds locks on; a plain ``open()`` … ``close()`` of the same file elsewhere in
the process does. Another process's last connection then believes it is alone when it
closes: it checkpoints the WAL and deletes the ``-wal`` and ``-shm`` this process still
writes to, and the turns saved after that are lost or written over other pages (a
``parley --import`` run beside an open window did exactly that).

So while a Store has the file open (:func:`hold` … :func:`let_go`), every read of the
file or its sidecars in this process goes through one descriptor per file (per inode),
opened on first use and closed only when the last Store on it has closed its
connections. A file no Store holds is read as usual, and so is the ``-wal``: SQLite
never locks it (its WAL locks are in the ``-shm``). Where ``os.pread`` does not exist
(Windows: its locks belong to handles, and closing another handle drops none) files
are read as usual too.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import threading
from dataclasses import dataclass, field
from pathlib import Path

#: The files SQLite keeps beside a database in WAL mode (``parley.core.private`` too).
SIDECARS = ("-wal", "-shm", "-journal")
_CHUNK = 1 << 20


@dataclass
class _Held:
    """One database file held open by ``count`` Stores, and the descriptors kept for it
    and its sidecars: ``{(st_dev, st_ino): fd}``, plus ``spare`` ones (a second
    descriptor of a file already kept, opened in a race with its replacement: closing
    it would drop the locks too)."""

    count: int = 0
    fds: dict[tuple[int, int], int] = field(default_factory=dict)
    spare: list[int] = field(default_factory=list)


_lock = threading.Lock()
_held: dict[str, _Held] = {}


def _key(path: Path | str) -> str:
    return os.path.abspath(os.fspath(path))


def hold(db: Path) -> None:
    """A Store is about to open ``db``: from now on its reads here keep their descriptors.

    Call before the Store's first connection; pair with :func:`let_go`.
    """
    with _lock:
        _held.setdefault(_key(db), _Held()).count += 1


def let_go(db: Path) -> None:
    """A Store on ``db`` has closed every connection: the last one closes the descriptors
    kept for the file and its sidecars. Does nothing for a file not held."""
    with _lock:
        entry = _held.get(_key(db))
        if entry is None:
            return
        entry.count -= 1
        if entry.count > 0:
            return
        del _held[_key(db)]
        for fd in [*entry.fds.values(), *entry.spare]:
            with contextlib.suppress(OSError):
                os.close(fd)


def holding(path: Path | str) -> bool:
    """True when ``path`` is a held database file or one of its sidecars."""
    with _lock:
        return _entry(_key(path)) is not None


def _entry(key: str) -> _Held | None:
    """The held database ``key`` is, or is a sidecar of (call with ``_lock`` held)."""
    if key in _held:
        return _held[key]
    for suffix in SIDECARS:
        if key.endswith(suffix) and key[: -len(suffix)] in _held:
            return _held[key[: -len(suffix)]]
    return None


def _descriptor(entry: _Held, path: str) -> int:
    """The kept descriptor of the file now at ``path`` (opened and kept on first use;
    call with ``_lock`` held).

    Raises:
        OSError: it cannot be opened (FileNotFoundError when it is not there).
    """
    st = os.stat(path)
    inode = (st.st_dev, st.st_ino)
    fd = entry.fds.get(inode)
    if fd is None:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
        opened = os.fstat(fd)
        inode = (opened.st_dev, opened.st_ino)  # the file opened, if it was just replaced
        if inode in entry.fds:
            entry.spare.append(fd)
            return entry.fds[inode]
        entry.fds[inode] = fd
    return fd


def read(path: Path | str, size: int, offset: int = 0) -> bytes:
    """Up to ``size`` bytes of the file at ``path`` from byte ``offset`` (fewer at its end).

    Raises:
        OSError: it cannot be read (FileNotFoundError when it is not there).
    """
    key = _key(path)
    if hasattr(os, "pread"):
        with _lock:
            entry = _entry(key)
            if entry is not None:
                return os.pread(_descriptor(entry, key), size, offset)
    with open(key, "rb") as fh:
        fh.seek(offset)
        return fh.read(size)


def copy(src: Path | str, dst: Path | str) -> None:
    """Copy the file at ``src`` to a new file ``dst`` (written, not renamed over).

    Raises:
        OSError: ``src`` cannot be read or ``dst`` written.
    """
    if not (hasattr(os, "pread") and holding(src)):
        shutil.copyfile(src, dst)
        return
    with open(dst, "wb") as out:
        offset = 0
        while chunk := read(src, _CHUNK, offset):
            out.write(chunk)
            offset += len(chunk)


def descriptor_for(path: Path | str) -> int | None:
    """The kept descriptor of ``path`` when it is held (for an ``ioctl``); None otherwise.

    Raises:
        OSError: it is held but cannot be opened.
    """
    key = _key(path)
    with _lock:
        entry = _entry(key)
        return None if entry is None else _descriptor(entry, key)

"""Unfinished backup copies (``sessions-<stamp>.db.partial``): held while written, removed after.

A backup is first written as ``….db.partial`` in the backups folder
(``parley.core.store.sqlite.backups.make_backup``) and given its name once checked.
A backup killed mid-copy (the process killed, the machine off) leaves that file —
as large as sessions.db — and perhaps its rollback journal (``….db.partial-journal``).

While a copy is written, its writer holds an exclusive ``flock`` on it (:func:`held`);
the kernel drops that lock when the writer's process ends, however it ends. So a
``.partial`` that can be locked is left over, and :func:`remove_leftovers` deletes it
(at start, and after each backup's rotation) — one still being written, by this
process or another Parley, is left alone. ``flock`` locks are apart from the POSIX
locks SQLite takes on the same file (Linux ``flock(2)``; BSD and macOS alike).
Where ``fcntl`` is missing (Windows) a leftover is one untouched for an hour.

Only Parley's own names are touched (:data:`NAME`): nothing else in the folder.
"""

from __future__ import annotations

import contextlib
import os
import re
import stat
import time
from collections.abc import Iterator
from pathlib import Path

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

#: The names a backup's unfinished copy and its journal get (``backups._free_name``).
NAME = re.compile(r"^sessions-\d{8}-\d{6}(?:-\d+)?\.db\.partial(?:-journal)?$")
#: Without ``flock``: a copy untouched this long (seconds) is not being written.
STALE_S = 3600.0


@contextlib.contextmanager
def held(partial: Path) -> Iterator[None]:
    """Hold an exclusive ``flock`` on ``partial`` (an existing file) while the block runs.

    Close the SQLite connection on it before the block ends: closing this
    descriptor would otherwise drop that connection's POSIX locks on the file.
    """
    fd = None
    if fcntl is not None:
        with contextlib.suppress(OSError):  # no lock (an odd file system): the copy goes on
            fd = os.open(partial, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    try:
        yield
    finally:
        if fd is not None:
            os.close(fd)


def remove_leftovers(folder: Path, *, now: float | None = None) -> list[Path]:
    """Delete the unfinished backup copies in ``folder`` that no one is writing.

    Args:
        folder: the backups folder.
        now: the clock (``time.time()`` seconds), for the no-``flock`` rule only.

    Returns:
        The files deleted (a ``.partial`` and its ``-journal``); [] when the
        folder is missing or holds none. Errors are skipped (a file is tried
        again next time).
    """
    gone: list[Path] = []
    try:
        names = sorted(e.name for e in os.scandir(folder) if NAME.match(e.name))
    except OSError:
        return gone
    for name in names:
        if name.endswith("-journal") and name.removesuffix("-journal") in names:
            continue  # removed with its copy, or kept with it
        path = folder / name
        if _left_over(path, now):
            for p in (path, Path(f"{path}-journal")):
                with contextlib.suppress(FileNotFoundError):
                    if stat.S_ISREG(p.lstat().st_mode):
                        p.unlink()
                        gone.append(p)
    return gone


def _left_over(path: Path, now: float | None) -> bool:
    """True when ``path`` (a regular file, not a link) is not being written."""
    try:
        st = path.lstat()
    except OSError:
        return False
    if not stat.S_ISREG(st.st_mode):
        return False
    copy = Path(str(path).removesuffix("-journal"))
    if copy != path and not os.path.lexists(copy):
        return True  # a journal whose copy is gone: nothing writes through it
    if fcntl is None:  # pragma: no cover - Windows
        return (now or time.time()) - st.st_mtime > STALE_S
    try:
        fd = os.open(copy, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return False  # held: a backup is writing it now
    finally:
        os.close(fd)  # (the lock, if taken, goes with it)
    return True

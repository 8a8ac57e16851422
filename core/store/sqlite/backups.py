"""Automatic backups of sessions.db: made, checked, listed and rotated.

Where: ``backups/`` in the data folder (beside sessions.db), folder ``0700``,
files ``0600``, named ``sessions-<YYYYmmdd-HHMMSS>.db`` (local time).

How (:func:`make_backup`): SQLite's online backup API, from a connection of
its own (read-only, so it never writes or checkpoints sessions.db), copying
:data:`PAGES_PER_STEP` pages per step and pausing between steps. That
connection first opens a read transaction, so the whole copy is one
consistent snapshot: in WAL mode a reader never blocks Parley's writes, and
with the snapshot held a write made meanwhile does not restart the copy
(which a chunked backup otherwise does after every outside write). The copy
is written as ``….partial``, switched to ``journal_mode=DELETE`` (a single,
self-contained file), checked with ``PRAGMA quick_check`` and only then given
its name — a damaged copy is never kept, and never pushes a sound backup out
of the rotation. Its turn and chat counts are read from the same snapshot.

Rotation (:func:`rotate`): after each backup, keep

* the :data:`KEEP_RECENT` newest backups, whatever their age;
* the newest backup of each of the last :data:`KEEP_DAYS` days (today included);
* the newest backup of each of the last :data:`KEEP_WEEKS` weeks (ISO weeks,
  this one included);

and delete the rest. So at most 3 + 7 + 4 = 14 files, usually fewer (the
recent ones are also today's); count on each being about sessions.db's size.
A backup is skipped (:class:`NotEnoughSpace`) when the disk would be left with
less than the file's size free.

The pre-upgrade copies beside sessions.db (``sessions.db.parley-pre-v4.bak``)
are listed too (:func:`list_backups`) but never rotated away.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from urllib.parse import quote

from parley.core import private
from parley.core.store.errors import (
    SQLITE_CORRUPT,
    SQLITE_NOTADB,
    BackupError,
    CannotBackUp,
    NotEnoughSpace,
    SourceDamaged,
    primary_code,
)
from parley.core.store.sqlite import header, partials

FOLDER_NAME = "backups"
#: Pages copied per backup step (4 MiB with 4 KiB pages); the GIL is released during a step.
PAGES_PER_STEP = 1024
#: Pause between steps (seconds): leaves the disk to Parley's own reads and writes.
STEP_PAUSE_S = 0.002
KEEP_RECENT = 3
KEEP_DAYS = 7
KEEP_WEEKS = 4
_NAME = re.compile(r"^sessions-(\d{8}-\d{6})(?:-(\d+))?\.db$")
_STAMP = "%Y%m%d-%H%M%S"


@dataclass(frozen=True, slots=True)
class Backup:
    """One backup file.

    Attributes:
        path: the file.
        made_at: when it was made (local time; from its name, else its mtime).
        size: bytes.
        automatic: in ``backups/`` (rotated); False for a pre-upgrade ``.bak``.
        turns, chats: what it holds, or None when it cannot be read (damaged, or
            not a Parley file); see :func:`describe`.
    """

    path: Path
    made_at: datetime
    size: int
    automatic: bool
    turns: int | None = None
    chats: int | None = None


def folder_of(db: Path) -> Path:
    """The backups folder of ``db``: ``backups/`` beside it."""
    return db.parent / FOLDER_NAME


def _readonly(path: Path) -> sqlite3.Connection:
    return sqlite3.connect(f"file:{quote(str(path.resolve()))}?mode=ro", uri=True,
                           check_same_thread=False)


def _free_name(folder: Path, when: datetime) -> Path:
    base = f"sessions-{when.strftime(_STAMP)}"
    for name in [base] + [f"{base}-{n}" for n in range(1, 1000)]:
        path = folder / f"{name}.db"
        if not os.path.lexists(path) and not os.path.lexists(f"{path}.partial"):
            return path
    raise FileExistsError(folder / f"{base}.db")


def _counts(con: sqlite3.Connection) -> tuple[int, int]:
    turns = con.execute("SELECT count(*) FROM turns").fetchone()[0]
    chats = con.execute("SELECT count(*) FROM sessions").fetchone()[0]
    return int(turns), int(chats)


def make_backup(
    db: Path,
    folder: Path | None = None,
    *,
    pages_per_step: int = PAGES_PER_STEP,
    pause_s: float = STEP_PAUSE_S,
    now: datetime | None = None,
) -> Backup:
    """Copy ``db`` (with what its WAL holds) to a new backup file, checked; see the module doc.

    Runs in the calling thread (seconds for a 1 GB file): call it from a worker.

    Args:
        db: sessions.db (open in Parley or not; never written).
        folder: where to put it (default :func:`folder_of`; made ``0700`` if missing).
        pages_per_step: pages per backup step.
        pause_s: pause between steps (seconds).
        now: the time in the name (default now).

    Returns:
        The new backup (with its turn and chat counts).

    Raises:
        NotEnoughSpace: the disk would be left with less than the file's size.
        SourceDamaged: the copy fails ``quick_check`` (sessions.db is damaged).
        CannotBackUp: the folder or file cannot be written, sessions.db cannot be read.
    """
    db = Path(db)
    folder = folder_of(db) if folder is None else Path(folder)
    try:
        private.private_dir(folder)
        needed = sum(os.path.getsize(p) for p in (db, Path(f"{db}-wal")) if p.exists())
        free = shutil.disk_usage(folder).free
        if free - needed < needed:
            raise NotEnoughSpace(folder, 2 * needed, free)
        dest = _free_name(folder, now or datetime.now())
        partial = Path(f"{dest}.partial")
        private.create_private(partial)
    except OSError as exc:
        raise CannotBackUp(folder, exc.strerror or str(exc)) from exc
    try:
        with partials.held(partial):  # a leftover to no one while this runs (partials)
            turns, chats = _copy(db, partial, pages_per_step, pause_s)
            os.replace(partial, dest)  # the name was free a moment ago; the .partial is ours
    except BaseException:
        with contextlib.suppress(OSError):
            partial.unlink()
        raise
    st = dest.stat()
    return Backup(dest, _made_at(dest, st.st_mtime), st.st_size, True, turns, chats)


def _copy(db: Path, partial: Path, pages: int, pause_s: float) -> tuple[int, int]:
    """Copy one snapshot of ``db`` into ``partial``; check it; return its (turns, chats)."""
    if header.problem(db) is not None:  # emptied or cut short: no connection may open it
        raise SourceDamaged(db)  # (one that opens a 0-byte file deletes its -wal)
    try:
        src = _readonly(db)
    except sqlite3.Error as exc:
        raise _unreadable(db, partial, f"sessions.db cannot be read: {exc}", exc) from exc
    try:
        try:
            src.execute("BEGIN")
            src.execute("SELECT count(*) FROM sqlite_schema").fetchone()  # the snapshot
            dst = sqlite3.connect(partial)
        except sqlite3.Error as exc:
            raise _unreadable(db, partial, str(exc), exc) from exc
        try:
            try:
                src.backup(dst, pages=pages, sleep=pause_s)
                dst.execute("PRAGMA journal_mode = DELETE").fetchall()
            except sqlite3.Error as exc:
                raise _unreadable(db, partial, str(exc), exc) from exc
            try:
                ok = dst.execute("PRAGMA quick_check").fetchone()[0] == "ok"
                counts = _counts(dst) if ok else (0, 0)
            except sqlite3.DatabaseError:
                ok = False
            if not ok:
                raise SourceDamaged(db)
            return counts
        finally:
            dst.close()
    finally:
        src.close()


def _unreadable(db: Path, partial: Path, why: str, exc: sqlite3.Error) -> BackupError:
    """The error for a copy SQLite refused: :class:`SourceDamaged` when it says the file is
    damaged or not a database (``SQLITE_CORRUPT`` / ``SQLITE_NOTADB``: the words must not say
    the chats are safe in it), else :class:`CannotBackUp`."""
    if primary_code(exc) in (SQLITE_CORRUPT, SQLITE_NOTADB):
        return SourceDamaged(db)
    return CannotBackUp(partial.parent, why)


def _made_at(path: Path, mtime: float) -> datetime:
    m = _NAME.match(path.name)
    if m:
        with contextlib.suppress(ValueError):
            return datetime.strptime(m.group(1), _STAMP)
    return datetime.fromtimestamp(mtime)


def automatic_backups(folder: Path) -> list[Backup]:
    """The finished backups in ``folder``, newest first (no counts; nothing opened)."""
    found: list[Backup] = []
    with contextlib.suppress(OSError):
        for entry in os.scandir(folder):
            if _NAME.match(entry.name) and entry.is_file(follow_symlinks=False):
                st = entry.stat()
                path = Path(entry.path)
                found.append(Backup(path, _made_at(path, st.st_mtime), st.st_size, True))
    return sorted(found, key=lambda b: (b.made_at, _nth(b.path)), reverse=True)


def _nth(path: Path) -> int:
    """0 for ``sessions-<time>.db``, n for ``sessions-<time>-<n>.db`` (same second, later)."""
    m = _NAME.match(path.name)
    return int(m.group(2)) if m and m.group(2) else 0


def upgrade_backups(db: Path) -> list[Backup]:
    """The copies taken before a format upgrade (``<name>…bak`` beside ``db``), newest first."""
    found: list[Backup] = []
    with contextlib.suppress(OSError):
        for entry in os.scandir(db.parent):
            if entry.name.startswith(db.name) and entry.name.endswith(".bak") \
                    and entry.is_file():
                st = entry.stat()
                found.append(Backup(Path(entry.path), datetime.fromtimestamp(st.st_mtime),
                                    st.st_size, False))
    return sorted(found, key=lambda b: b.made_at, reverse=True)


def describe(backup: Backup) -> Backup:
    """``backup`` with its turn and chat counts read from the file (read-only).

    The counts stay None when the file cannot be read as a Parley file.
    """
    try:
        con = _readonly(backup.path)
    except sqlite3.Error:
        return backup
    try:
        turns, chats = _counts(con)
    except sqlite3.Error:
        return backup
    finally:
        con.close()
    return Backup(backup.path, backup.made_at, backup.size, backup.automatic, turns, chats)


def list_backups(db: Path, *, counts: bool = True) -> list[Backup]:
    """Every backup of ``db``, newest first: the automatic ones, then the pre-upgrade copies.

    Args:
        db: sessions.db.
        counts: read each file's turn and chat counts (opens each read-only; some
            ms each, more for a cold 1 GB file): do it off the GUI thread.
    """
    found = automatic_backups(folder_of(db)) + upgrade_backups(db)
    return [describe(b) for b in found] if counts else found


def last_backup(db: Path) -> Backup | None:
    """The newest automatic backup of ``db``, or None (nothing is opened)."""
    found = automatic_backups(folder_of(db))
    return found[0] if found else None


def to_keep(made: Sequence[datetime], now: datetime, *, recent: int = KEEP_RECENT,
            days: int = KEEP_DAYS, weeks: int = KEEP_WEEKS) -> set[int]:
    """Which backups the rotation keeps (see the module doc).

    Args:
        made: when each backup was made (any order).
        now: the current time.

    Returns:
        The indexes in ``made`` to keep; the others are to be deleted.
    """
    order = sorted(range(len(made)), key=lambda i: made[i], reverse=True)
    keep = set(order[:recent])
    first_day = (now - timedelta(days=days - 1)).date()
    this_week = now.date() - timedelta(days=now.weekday())
    first_week = this_week - timedelta(weeks=weeks - 1)
    days_seen: set[object] = set()
    weeks_seen: set[object] = set()
    for i in order:
        day = made[i].date()
        if first_day <= day <= now.date() and day not in days_seen:
            days_seen.add(day)
            keep.add(i)
        week = day - timedelta(days=day.weekday())
        if first_week <= week <= this_week and week not in weeks_seen:
            weeks_seen.add(week)
            keep.add(i)
    return keep


def rotate(folder: Path, now: datetime | None = None) -> list[Path]:
    """Delete the automatic backups in ``folder`` that the rotation does not keep.

    Also removes ``….partial`` files left by a backup that was interrupted
    (``parley.core.store.sqlite.partials.remove_leftovers``).

    Returns:
        The files deleted.
    """
    now = now or datetime.now()
    found = automatic_backups(folder)
    keep = to_keep([b.made_at for b in found], now)
    gone: list[Path] = []
    for i, b in enumerate(found):
        if i not in keep:
            with contextlib.suppress(OSError):
                b.path.unlink()
                gone.append(b.path)
    partials.remove_leftovers(folder, now=now.timestamp())
    return gone


def secure(folder: Path) -> None:
    """Make ``folder`` ``0700`` and its backups ``0600`` (those made by hand too)."""
    if not folder.is_dir():
        return
    private.narrow(folder, private.DIR_MODE)
    for b in automatic_backups(folder):
        private.narrow(b.path, private.FILE_MODE)


def age_text(made_at: datetime, now: datetime | None = None, *, seconds: bool = False) -> str:
    """``made_at`` for people: "today 14:05", "yesterday 09:30", "3 Mar 2026 18:00"
    (``seconds``: "today 14:05:09", to tell apart backups made in the same minute)."""
    now = now or datetime.now()
    days = (now.date() - made_at.date()).days
    clock = f"{made_at:%H:%M:%S}" if seconds else f"{made_at:%H:%M}"
    if days == 0:
        return f"today {clock}"
    if days == 1:
        return f"yesterday {clock}"
    return f"{made_at.day} {made_at:%b %Y} {clock}"


__all__ = [
    "Backup",
    "BackupError",
    "CannotBackUp",
    "NotEnoughSpace",
    "SourceDamaged",
    "age_text",
    "automatic_backups",
    "describe",
    "folder_of",
    "last_backup",
    "list_backups",
    "make_backup",
    "rotate",
    "secure",
]

"""Noticing sessions.db written in place by another program while Parley has it open.

A program that writes over a few pages of the file (``dd conv=notrunc``, a
sync tool patching blocks, a disk tool) keeps its name and inode, so
``parley.core.store.sqlite.faults`` (which compares identities) does not see it, and SQLite
does not either: in WAL mode it keeps its page cache while no other SQLite
connection commits, and new pages go to the WAL. Saves then "succeed" on a
file that is damaged underneath, until a read meets a garbage page — or
until the next start cannot open it.

In WAL mode Parley's own connection writes the database file itself only
when it checkpoints; every commit goes to the ``-wal``. So the file's
``(size, mtime, ctime)`` changing between two of Parley's own operations
means someone else wrote it. :class:`Watch` keeps that state: one ``stat``
before each write (about 2 µs) compares it; when it changed, the whole file
is checked with ``PRAGMA quick_check`` from a fresh read-only connection
(which reads the file's pages, not Parley's cache) before the write goes on.
A damaged file fails the write with ``DatabaseCorrupt`` (nothing more is
saved, nothing is shown as saved); a sound one (another SQLite program that
checkpointed) is accepted as the new state. The check reads the whole file
(about 1-3 s per GB), but only after an outside write.

The same goes for a file written while Parley was closed: a clean close leaves
the file's state beside it (:func:`record_closed`, ``sessions.db.closed``); the
next open compares it and checks the whole file when it changed
(:func:`check_since_closed`), so a file damaged meanwhile is refused at once,
not once a read meets the damage.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
from dataclasses import dataclass
from pathlib import Path

from parley.core.store.errors import DatabaseCorrupt, DatabaseReplacedInPlace
from parley.core.store.sqlite import header, held, kept
from parley.core.store.sqlite.damage import passes_quick_check, quick_check_ok


@dataclass(frozen=True, slots=True)
class FileState:
    """What ``stat`` says of the file's content: ``(size, mtime_ns, ctime_ns)``."""

    size: int
    mtime_ns: int
    ctime_ns: int

    @classmethod
    def of(cls, path: Path) -> FileState | None:
        """The state of ``path`` now, or None when it cannot be examined."""
        try:
            st = os.stat(path)
        except OSError:
            return None
        return cls(st.st_size, st.st_mtime_ns, st.st_ctime_ns)


class Watch:
    """The state of sessions.db after Parley's last own operation on it.

    Args:
        path: sessions.db.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self.state = FileState.of(path)
        self.head = _head(path)
        self.page_size = _page_size(path)
        #: Whole-file checks run because the file changed under Parley (for tests).
        self.checks = 0

    def settle(self) -> None:
        """Record the state after an operation of Parley's own (a commit, a checkpoint).

        One ``stat``; the header is read again only when the file changed (Parley's
        commits go to the WAL: only a checkpoint writes the file).
        """
        now = FileState.of(self.path)
        if now != self.state:
            self.head = _head(self.path)
        self.state = now

    def check(self, others_committed: bool = False, file_id: int = 0) -> None:
        """Before a write: raise if the file was written by another program and is damaged.

        First its size and header (``parley.core.store.sqlite.header``: an emptied or
        shortened file passes ``quick_check``); then whether a changed header is one
        SQLite wrote: with no commit by another connection since, the only header
        a checkpoint can leave is one of the committed page 1s in the WAL (the newest,
        or an older one when a reader held the checkpoint back), while it holds frames
        (:func:`parley.core.store.sqlite.header.wal_page_ones`); then
        ``quick_check`` of the file with the WAL. When a check fails but the file read
        alone (its WAL ignored) is a whole, sound database, another database was
        written over it.

        Args:
            others_committed: another connection committed since Parley's last own
                operation (its ``PRAGMA data_version`` changed).
            file_id: the file's id as Parley's connection reads it (:func:`new_file_id`):
                a header with another non-zero one is another database.

        Raises:
            DatabaseReplacedInPlace: it changed since :meth:`settle` into another database.
            DatabaseCorrupt: it changed since :meth:`settle` and is damaged
                (``found_while_open``; ``why`` says what was found).
        """
        now = FileState.of(self.path)
        if now is None or now == self.state:
            return  # unchanged (or gone: parley.core.store.sqlite.faults reports that)
        self.checks += 1
        wrong = header.problem(self.path)
        head = _head(self.path)
        if wrong is None and self.page_size is not None \
                and _page_size(self.path) not in (None, self.page_size):
            wrong = "its page size changed"
        if wrong is None and header.file_id(head) not in (0, file_id):
            wrong = "its header is another database's"
        if wrong is None and head != self.head and not others_committed \
                and _not_from_wal(self.path, head):
            wrong = "its first page was written by another program"
        if wrong is None and passes_quick_check(self.path):
            self.state, self.head = now, head
            return
        if _sound_alone(self.path):
            raise DatabaseReplacedInPlace(self.path)
        raise DatabaseCorrupt(self.path, found_while_open=True,
                              why=wrong or kept.WRITTEN_OVER)


def new_file_id() -> int:
    """A random id for a sessions.db, kept in its header's "application ID" (``PRAGMA
    application_id``, bytes 68-71), which SQLite leaves to the application: a copy or
    backup keeps it; another database written over the file in place shows another
    one (:meth:`Watch.check`). Non-zero, positive 31 bits."""
    return secrets.randbelow(2**31 - 1) + 1


def _not_from_wal(path: Path, head: bytes | None) -> bool:
    """True when the WAL holds committed frames and ``head`` is none of its committed
    page 1s: no checkpoint wrote it. (A checkpoint held back by a reader's older snapshot
    leaves an older committed page 1, not the newest: another Parley reading while a
    third writes. A WAL that is gone or empty says nothing: another program's last
    connection checkpoints it whole and removes it when it closes.)"""
    committed, page_ones = header.wal_page_ones(path)
    return committed and head not in page_ones


def _head(path: Path) -> bytes | None:
    """The file's first 100 bytes (its SQLite header), or None when it cannot be read."""
    try:
        return held.read(path, header.HEADER_SIZE)  # never drops SQLite's locks (held)
    except OSError:
        return None


def _page_size(path: Path) -> int | None:
    head = _head(path)
    return header.page_size(head) if head and head.startswith(header.MAGIC) else None


def _sound_alone(path: Path) -> bool:
    """True when ``path`` read alone (``immutable=1``: no WAL, no locks) is a whole
    SQLite file that passes ``quick_check``."""
    if header.problem(path) is not None:
        return False
    return quick_check_ok(path.resolve().as_uri() + "?mode=ro&immutable=1")


# --- written while Parley was closed -------------------------------------------------

#: Beside sessions.db after a clean close: its (size, mtime, ctime) then, as JSON.
CLOSED_SUFFIX = ".closed"


def closed_record(db: Path) -> Path:
    """The record :func:`record_closed` leaves beside ``db``."""
    return db.with_name(db.name + CLOSED_SUFFIX)


def record_closed(db: Path) -> None:
    """After a clean close: remember the file's state (best effort, ``0600``)."""
    state = FileState.of(db)
    if state is None:
        return
    record = closed_record(db)
    with contextlib.suppress(OSError):
        record.unlink()
    with contextlib.suppress(OSError):
        fd = os.open(record, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump([state.size, state.mtime_ns, state.ctime_ns], fh)


def emptied_since_closed(db: Path) -> bool:
    """True when ``db`` is empty (0 bytes, no ``-wal`` with frames) though the record of
    Parley's last clean close (:func:`closed_record`) says it had content then: it was
    emptied while Parley was closed (not a new file, which has no such record). Nothing
    is written; the record stays.
    """
    try:
        size = json.loads(closed_record(db).read_text(encoding="utf-8"))[0]
        wal = Path(f"{db}-wal")
        return int(size) > 0 and db.stat().st_size == 0 \
            and not (wal.exists() and wal.stat().st_size > 0)
    except (OSError, ValueError, TypeError, IndexError, KeyError):
        return False


def check_since_closed(db: Path, *, consume: bool) -> bool:
    """At open: if another program wrote ``db`` since Parley last closed it, check it whole.

    With ``consume`` (the app's own store) the record of the last clean close is
    then removed, so a crash leaves none and a start after a crash does not pay
    for a check. The ctime is not compared: Parley's own ``chmod`` at start
    changes it.

    Returns:
        True when Parley closed it cleanly last and it is unchanged since (or changed
        and found sound now); False when there is no record of a clean close (a crash,
        a first open, a file from elsewhere).

    Raises:
        DatabaseCorrupt: it was changed while Parley was closed and fails ``quick_check``
            (the record is kept, so the next start checks again).
    """
    record = closed_record(db)
    try:
        size, mtime_ns, _ctime_ns = json.loads(record.read_text(encoding="utf-8"))
    except (OSError, ValueError, TypeError):
        return False
    now = FileState.of(db)
    if now is not None and (now.size, now.mtime_ns) != (size, mtime_ns) \
            and not passes_quick_check(db):
        raise DatabaseCorrupt(db)
    if consume:
        with contextlib.suppress(OSError):
            record.unlink()
    return now is not None

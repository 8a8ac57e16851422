"""A sessions.db found damaged while Parley runs: stop writing, check it fully at next start.

SQLite only notices a damaged page when it reads it, so a file with a few bad
pages opens fine and most of it keeps working — until a search or a long chat
reaches them (``SQLITE_CORRUPT``, :class:`parley.core.store.errors.DatabaseCorrupt`).
Writing on could make it worse (a write may rebalance a b-tree through the
damaged pages). So, the first time a read or a write meets the damage:

* the store refuses every later write with :class:`DamagedWhileOpen`
  (what was saved before stays as it is; the message says what to do);
* first of all, the file, its ``-wal`` / ``-shm`` and what the connection still
  reads are copied into a folder beside it (``parley.core.store.sqlite.kept``);
* a marker file ``<db>.damaged`` is left beside it (best effort), naming that folder;
* at the next start, :func:`check_marked` runs SQLite's ``PRAGMA quick_check``
  over the whole file when the marker is there: damaged → ``DatabaseCorrupt`` at
  open, so the window offers its recovery page (a backup, or a new file, the
  damaged one kept aside); sound → the marker goes and the file opens. A file
  that was replaced in place by another database is refused whatever the check
  says (:class:`DatabaseReplacedInPlace`): it is not the person's chats.

A full check before the chats show would read the whole file first (1.3 s warm,
19 s from a cold disk cache on a 1.6 GB file): the marker keeps that to the starts
that need it. Every other start checks the whole file once the chats show, in the
background, on a connection of its own (:class:`WholeCheck`): a file damaged while
Parley was closed (a disk error, a program writing into it) is then found at start,
not when a search first reads the damaged pages.
"""

from __future__ import annotations

import contextlib
import glob
import os
import sqlite3
import threading
from collections.abc import Iterator
from pathlib import Path

from parley.core import private
from parley.core.store.errors import DatabaseCorrupt, DatabaseReplacedInPlace
from parley.core.store.sqlite import header
from parley.core.store.sqlite import kept as kept_files

MARKER_SUFFIX = ".damaged"
_KEPT_LINE = "kept: "
_REPLACED_LINE = "replaced by another database"


def marker_path(db: Path) -> Path:
    """The marker left beside ``db`` when it was found damaged while open."""
    return db.with_name(db.name + MARKER_SUFFIX)


def mark(db: Path, why: str, kept: kept_files.Kept | None = None) -> None:
    """Leave the marker (best effort: the folder may be read-only too), naming the folder
    of kept files, if any (:func:`marked_kept` reads it back)."""
    lines = [why]
    if kept is not None:
        lines.append(_KEPT_LINE + kept.folder.name)
        if kept.replaced:
            lines.append(_REPLACED_LINE)
    with contextlib.suppress(OSError):
        private.write_private_text(marker_path(db), "\n".join(lines) + "\n")


def marked_kept(db: Path) -> kept_files.Kept | None:
    """The folder of files kept when ``db`` was found damaged, as its marker names it
    (None without a marker, or a marker naming none)."""
    try:
        lines = marker_path(db).read_text(encoding="utf-8").splitlines()
    except OSError:
        return None
    name = next((ln[len(_KEPT_LINE):] for ln in lines if ln.startswith(_KEPT_LINE)), None)
    if not name or "/" in name or name.startswith("."):
        return None
    return kept_files.load(db.with_name(name), db.name)


def check_marked(db: Path) -> None:
    """At open: if ``db`` was marked damaged, check the whole file with ``quick_check``.

    When the marker is there but ``db`` is not, the newest file kept aside by a
    recovery that was cut off is put back first (:func:`_put_back_kept_aside`).

    Raises:
        DatabaseReplacedInPlace: it had been replaced by another database.
        DatabaseCorrupt: the check fails (the file and the marker are left as they are).
    """
    marker = marker_path(db)
    if not marker.exists():
        return
    if not os.path.lexists(db) and not _put_back_kept_aside(db):
        return
    kept = marked_kept(db)
    if kept is not None and kept.replaced:
        raise DatabaseReplacedInPlace(db, kept=kept.folder)
    if not passes_quick_check(db):
        raise DatabaseCorrupt(db, found_while_open=True)
    with contextlib.suppress(OSError):
        marker.unlink()


def _put_back_kept_aside(db: Path) -> bool:
    """The marker is there but ``db`` is not: a recovery that kept the damaged file aside
    (``<name>.corrupt-<date>``) was cut off before its replacement was in place (an older
    Parley killed mid-salvage). Move the newest kept-aside file (and its -wal / -shm)
    back, so the recovery page is offered again rather than an empty new file.

    Returns:
        True when a file was put back at ``db``.
    """
    kept = [Path(p) for p in glob.glob(glob.escape(str(db)) + ".corrupt-*")
            if not p.endswith(("-wal", "-shm", "-journal"))]
    if not kept:
        return False
    newest = max(kept, key=lambda p: p.stat().st_mtime_ns)
    try:
        os.rename(newest, db)
    except OSError:
        return False
    for suffix in ("-wal", "-shm"):
        side = Path(f"{newest}{suffix}")
        if os.path.lexists(side) and not os.path.lexists(f"{db}{suffix}"):
            with contextlib.suppress(OSError):
                os.rename(side, f"{db}{suffix}")
    return True


def passes_quick_check(db: Path) -> bool:
    """True when ``db`` is an SQLite file that passes ``PRAGMA quick_check`` (every page
    and record, without index cross-checks) and is whole by its size and header
    (``parley.core.store.sqlite.header``: SQLite takes an emptied file for an empty
    database). Opened read-only; nothing is written."""
    from parley.core.store.upgrade.backup import readonly_uri

    # immutable when no -wal / -journal: no -shm is left beside a closed file
    return header.problem(db) is None and quick_check_ok(readonly_uri(db))


def quick_check_ok(uri: str) -> bool:
    """True when the SQLite file at ``uri`` (a ``file:`` URI opened read-only) opens and
    passes ``PRAGMA quick_check``; False for any SQLite error."""
    try:
        con = sqlite3.connect(uri, uri=True)
    except sqlite3.Error:
        return False
    try:
        row = con.execute("PRAGMA quick_check").fetchone()
        return bool(row) and row[0] == "ok"
    except sqlite3.Error:
        return False
    finally:
        con.close()


#: SQLite's result code when a statement was stopped by ``interrupt()``.
_SQLITE_INTERRUPT = 9


class WholeCheck:
    """``PRAGMA quick_check`` of a whole open sessions.db, off the store's thread.

    Run on a thread of its own (it reads every page: seconds on a large file) with a
    read-only connection of its own, which sees what Parley committed (the WAL) and
    never writes or checkpoints. SQLite leaves the GIL while it reads, so the GUI
    thread keeps running. :meth:`stop` (from any thread) ends it early.

    Args:
        db: sessions.db.
    """

    def __init__(self, db: Path) -> None:
        self.db = db
        self._lock = threading.Lock()
        self._con: sqlite3.Connection | None = None
        self._stopped = False

    def run(self) -> bool | None:
        """Check the file: True when sound, False when damaged, None when stopped (or the
        file could not be opened at all: the store's own reads say why)."""
        from parley.core.store.upgrade.backup import readonly_uri

        if header.problem(self.db) is not None:
            return False
        with self._lock:
            if self._stopped:
                return None
            try:
                self._con = sqlite3.connect(readonly_uri(self.db), uri=True,
                                            check_same_thread=False)
            except sqlite3.Error:
                return None
        try:
            row = self._con.execute("PRAGMA quick_check(1)").fetchone()
        except sqlite3.Error as exc:
            if self._stopped or (getattr(exc, "sqlite_errorcode", 0) or 0) & 0xFF \
                    == _SQLITE_INTERRUPT:
                return None
            return False  # SQLITE_CORRUPT, NOTADB, IOERR reading a page: damaged
        finally:
            with self._lock:
                con, self._con = self._con, None
            con.close()
        return bool(row) and row[0] == "ok"

    def stop(self) -> None:
        """End a check under way (it returns None); safe from any thread."""
        with self._lock:
            self._stopped = True
            if self._con is not None:
                self._con.interrupt()


@contextlib.contextmanager
def no_checkpoint_on_close(db: Path, *, wal_kept: bool) -> Iterator[None]:
    """Close a connection to a damaged ``db`` inside this, so SQLite does not write its WAL
    into the file.

    The last connection to close a WAL database checkpoints the WAL into the file
    and deletes it, once it gets an exclusive lock on the file (SQLite's
    ``sqlite3WalClose``). A read-only connection holding a read transaction keeps a
    shared lock until it closes, so the closing one skips both; and a read-only
    connection never checkpoints. So a file replaced by another database, or
    damaged, is left as it was found, the WAL beside it.

    An emptied (0-byte) file is left empty too: written into, it would become a
    file of zeros but for the pages in the WAL — or, when every page was still in
    the WAL, a whole older copy that passes the next start's check and opens as if
    nothing had happened. Any connection that opens a 0-byte file deletes its WAL
    (``pagerOpenWalIfPresent``), so the holder is taken there only when the WAL was
    copied aside first (``wal_kept``, :func:`parley.core.store.sqlite.kept.keep`);
    otherwise the checkpoint is let through, the only place left for those turns.

    Args:
        db: the damaged sessions.db.
        wal_kept: its files were copied aside (``parley.core.store.sqlite.kept``).
    """
    from parley.core.store.upgrade.backup import readonly_uri

    holder = None
    try:
        if wal_kept or os.path.getsize(db) > 0:
            holder = sqlite3.connect(readonly_uri(db), uri=True, isolation_level=None)
            with contextlib.suppress(sqlite3.Error):  # the lock is taken before the read fails
                holder.execute("BEGIN")  # held to the end: an empty file is not WAL
                holder.execute("SELECT count(*) FROM sqlite_schema").fetchall()
    except (OSError, sqlite3.Error):
        holder = None
    try:
        yield
    finally:
        if holder is not None:
            holder.close()

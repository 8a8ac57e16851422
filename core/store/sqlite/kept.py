"""What Parley keeps of a sessions.db found damaged while it runs, before anything else.

When a write or a read finds the file damaged (``parley.core.store.sqlite.damage``,
``parley.core.store.sqlite.overwrite``), the recent turns may exist nowhere else
than in the ``-wal`` (SQLite's write-ahead log: every commit since the last
checkpoint) and in the pages the open connection still holds in memory; closing
the connection checkpoints the WAL into the damaged file and deletes it. So the
first thing done (:func:`keep`) is to copy, into a new folder beside it,
``<name>.damaged-<YYYYmmdd-HHMMSS>/``:

* ``sessions.db``, ``sessions.db-wal``, ``sessions.db-shm``: the files as they
  are, byte for byte (copied, not moved: the open connection still uses them);
* ``read-by-parley.db`` (:func:`copy_what_parley_reads`): what the open
  connection reads — its cached pages, the WAL's committed frames, the file's
  other pages — written with SQLite's backup API (which copies pages, it does not
  parse rows), so every page Parley still held comes through even when the file
  under it was emptied or replaced;
* ``what-happened.txt``: why, whether the file was replaced by another database, which
  files were copied, and (once tried) whether ``read-by-parley.db`` could be made: it
  says only what was really copied.

Nothing in the folder is ever deleted by Parley. At the next start the recovery
(``parley.core.recovery.damaged_file``) reads rows from :func:`sources` — that copy,
then the kept file with its kept WAL replayed by SQLite itself (the file and its
``-wal`` copied side by side under matching names: opening it replays the
committed frames whose salts and checksums match, as SQLite's WAL format
documents, https://www.sqlite.org/fileformat2.html#the_write_ahead_log) —
merged with the newest backup. A file replaced by another database is never
replayed nor read as the person's chats.
"""

from __future__ import annotations

import contextlib
import json
import logging
import shutil
import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path

from parley.core import private
from parley.core.store.sqlite import held

log = logging.getLogger(__name__)

TAG = "damaged"
#: What is said when SQLite met a page it cannot read (no more precise words known).
UNREADABLE = "part of it can no longer be read"
#: The file changed under Parley (another program wrote it) and then failed its check.
WRITTEN_OVER = "another program wrote over part of it"
#: The whole-file check made after opening (``parley.core.store.sqlite.damage.WholeCheck``)
#: failed: the damage was there before this run wrote anything to the file's pages.
FOUND_BY_CHECK = "the check Parley makes of the whole file after opening it failed"
READ_BY_PARLEY = "read-by-parley.db"
WHAT = "what-happened.txt"
_INFO = "kept.json"
SIDECARS = ("-wal", "-shm")


@dataclass(frozen=True, slots=True)
class Kept:
    """A folder of kept files (:func:`keep`).

    Attributes:
        folder: ``<name>.damaged-<time>/`` beside sessions.db.
        db_name: the name of sessions.db (its kept copy's name in the folder).
        replaced: the file was replaced in place by another database.
        why: what was found ("it is empty: …", :data:`UNREADABLE`…).
    """

    folder: Path
    db_name: str
    replaced: bool
    why: str = ""

    @property
    def read_by_parley(self) -> Path:
        """The copy of what the open connection read (may be missing)."""
        return self.folder / READ_BY_PARLEY


def folder_name(db: Path) -> Path:
    """A new folder name beside ``db``: ``<name>.damaged-<YYYYmmdd-HHMMSS>`` (``-1``… if taken)."""
    base = f"{db.name}.{TAG}-{time.strftime('%Y%m%d-%H%M%S')}"
    for name in [base] + [f"{base}-{n}" for n in range(1, 1000)]:
        if not db.with_name(name).exists():
            return db.with_name(name)
    raise FileExistsError(db.with_name(base))


def keep(db: Path, why: str, *, replaced: bool = False) -> Kept:
    """Copy ``db`` and its ``-wal`` / ``-shm`` into a new folder beside it (see the module doc).

    Safe from any thread: it only reads the files. A ``-wal`` copied while a
    commit is being written keeps every commit before it (SQLite's checksums end
    the log at the torn frame).

    Args:
        db: sessions.db.
        why: what was found (written to ``what-happened.txt``).
        replaced: the file was replaced in place by another database.

    Returns:
        The folder.

    Raises:
        OSError: the folder or a copy could not be written (what was copied stays).
    """
    folder = folder_name(db)
    private.private_dir(folder)
    kept = Kept(folder, db.name, replaced, why)
    copied = []
    for suffix in ("", *SIDECARS):
        src = Path(f"{db}{suffix}")
        if src.exists():
            dst = folder / f"{db.name}{suffix}"
            held.copy(src, dst)  # never drops this process's SQLite locks (held)
            private.narrow(dst, private.FILE_MODE)
            copied.append(dst.name)
    what = (f"Parley found {db.name} damaged while it was running: {why}.\n"
            + (f"These are copies of {', '.join(copied)} as they were then"
               + (" (the file had been replaced by another database: it is not your chats)"
                  if replaced else "")
               + ".\nParley reads them again when you restore or salvage; it never deletes "
               "them.\n" if copied else f"There was no {db.name} to copy.\n"))
    private.write_private_text(folder / WHAT, what)
    private.write_private_text(folder / _INFO, json.dumps({"replaced": replaced, "why": why}))
    return kept


def copy_what_parley_reads(con: sqlite3.Connection, kept: Kept) -> Path | None:
    """Write what ``con`` reads to ``read-by-parley.db`` in ``kept`` (the online backup API).

    Call on the connection's thread, outside a transaction. Best effort: the pages are
    copied as read, damaged ones too; when the copy cannot be made nothing is left (the
    raw copies stay). ``what-happened.txt`` then says which it was (:func:`_tell`).

    Returns:
        The copy, or None when it could not be made (logged).
    """
    from parley.core.store.sqlite.faults import copy_open_database

    dest = kept.read_by_parley
    if dest.exists():
        return dest
    try:
        made = copy_open_database(con, dest)
    except (OSError, sqlite3.Error) as exc:
        log.exception("could not copy what Parley still reads of the damaged file")
        _tell(kept, f"Parley could not copy what it still read of {kept.db_name} "
                    f"({exc}): there is no {READ_BY_PARLEY}.")
        return None
    _tell(kept, f"{READ_BY_PARLEY} is what Parley could still read of {kept.db_name} then "
                "(the pages it held, and those of the file and its -wal, copied by SQLite "
                "as they were, damaged ones too).")
    return made


def _tell(kept: Kept, line: str) -> None:
    """Add ``line`` to the folder's ``what-happened.txt`` (a failure is logged)."""
    path = kept.folder / WHAT
    try:
        said = path.read_text(encoding="utf-8") if path.exists() else ""
        private.write_private_text(path, said + line + "\n")
    except OSError as exc:
        log.warning("could not write %s: %s", path, exc)


def load(folder: Path, db_name: str) -> Kept | None:
    """The :class:`Kept` of an existing folder, or None when it is not one."""
    if not folder.is_dir():
        return None
    info: dict[str, object] = {}
    with contextlib.suppress(OSError, ValueError, TypeError):
        read = json.loads((folder / _INFO).read_text(encoding="utf-8"))
        info = read if isinstance(read, dict) else {}
    return Kept(folder, db_name, bool(info.get("replaced")), str(info.get("why") or ""))


def replay_wal(kept: Kept, scratch: Path) -> Path | None:
    """The kept file with its kept WAL's committed frames applied, by SQLite, at ``scratch``.

    The kept ``sessions.db`` and ``sessions.db-wal`` are copied to ``scratch`` and
    ``<scratch>-wal`` and ``scratch`` is opened: SQLite rebuilds its index of the
    WAL from the frames whose salts and checksums hold and reads each page's last
    committed version from it; a full checkpoint then writes them into ``scratch``.
    Not for a file replaced by another database (its pages are not the person's).

    Returns:
        ``scratch`` (a single file, its WAL written into it), or None when there is
        no kept WAL, the file was replaced, or SQLite could not replay it.
    """
    db, wal = kept.folder / kept.db_name, kept.folder / f"{kept.db_name}-wal"
    if kept.replaced or not wal.exists() or wal.stat().st_size == 0:
        return None
    try:
        if db.exists():
            shutil.copyfile(db, scratch)
        else:
            private.create_private(scratch)
        shutil.copyfile(wal, f"{scratch}-wal")
        con = sqlite3.connect(scratch)
        try:
            con.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
            con.execute("PRAGMA journal_mode = DELETE").fetchall()
        finally:
            con.close()
    except (OSError, sqlite3.Error) as exc:
        log.warning("could not replay the kept WAL of %s: %s", kept.folder, exc)
        return scratch if scratch.exists() else None
    finally:
        for suffix in SIDECARS:
            with contextlib.suppress(OSError):
                Path(f"{scratch}{suffix}").unlink()
    return scratch


def sources(kept: Kept, work: Path) -> list[Path]:
    """The files to read the person's rows from, best first: what Parley read, then the kept
    file with its WAL replayed (:func:`replay_wal`, made in the folder ``work``)."""
    found = [kept.read_by_parley] if kept.read_by_parley.exists() else []
    replayed = replay_wal(kept, work / "replayed.db")
    if replayed is not None:
        found.append(replayed)
    return found

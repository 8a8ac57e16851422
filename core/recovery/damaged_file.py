"""A sessions.db that cannot be used: ways on that never destroy a byte.

When the file cannot be used (``DatabaseCorrupt``), the window offers three
ways on, all over a path and never destroying a byte:

* restore a backup: :func:`backups` / :func:`latest_backup`, then :func:`restore_backup`;
* salvage what it still holds, merged with the newest backup: :func:`salvage_into`;
* start a new file: :func:`start_fresh`.

All first move the damaged file (and its ``-wal`` / ``-shm``) aside as
``sessions.db.corrupt-<timestamp>`` (:func:`set_aside`), never over an
existing file.

When the file was found damaged while Parley ran, its marker names the folder
where the file, its WAL and what Parley still read were copied then
(``parley.core.store.sqlite.kept``): restoring a backup and salvaging both read
those first, so every turn saved before the damage comes back; a file replaced
by another database is then never read as the person's chats.

When the file was deleted or replaced under a running Parley
(``parley.core.store.sqlite.faults``), :func:`rescue_copy` writes what the open connection
still reads to a new file.
"""

from __future__ import annotations

import contextlib
import glob
import logging
import os
import sqlite3
import tempfile
import threading
from pathlib import Path
from urllib.parse import quote

from parley.core import private
from parley.core.store.errors import (
    BackupError,
    CannotOpen,
    DatabaseCorrupt,
    SalvageError,
    StoreClosed,
    StoreError,
)
from parley.core.store.schema import dbapi_connection
from parley.core.store.sqlite import kept as kept_files
from parley.core.store.sqlite.backups import automatic_backups, folder_of
from parley.core.store.sqlite.damage import marked_kept, marker_path, passes_quick_check
from parley.core.store.sqlite.faults import copy_open_database, free_name, place
from parley.core.store.sqlite.kept import Kept
from parley.core.store.sqlite.overwrite import closed_record
from parley.core.store.sqlite.salvage import SalvageReport, salvage
from parley.core.store.store import Store

log = logging.getLogger(__name__)
SIDECARS = ("-wal", "-shm")


def set_aside(path: Path, tag: str = "corrupt") -> Path | None:
    """Move ``path`` and its ``-wal`` / ``-shm`` to ``<name>.<tag>-<YYYYmmdd-HHMMSS>``.

    The sidecars keep their suffix (``….corrupt-…-wal``) so SQLite still pairs
    them with the moved file. No existing file is ever replaced: a taken name
    gets ``-1``, ``-2``, … appended. Close every connection to ``path`` first.

    Args:
        path: sessions.db.
        tag: the word in the new name.

    Returns:
        The new path of the main file, or None when ``path`` did not exist
        (its sidecars, if any, are still moved).

    Raises:
        CannotOpen: the folder cannot be written (the message says why).
    """
    path = Path(path)
    target = free_name(path, tag)
    moved = None
    with contextlib.suppress(OSError):  # it described the file being moved away
        closed_record(path).unlink()
    try:
        if os.path.lexists(path):
            place(path, target)
            moved = target
        for suffix in SIDECARS:
            side = Path(f"{path}{suffix}")
            if os.path.lexists(side):
                place(side, Path(f"{target}{suffix}"))
    except OSError as exc:
        raise CannotOpen(path, f"could not move it aside: {exc.strerror or exc}") from exc
    private.secure_store_files(target)  # what is kept aside stays as private
    return moved


def start_fresh(path: Path) -> Path | None:
    """Keep the damaged file aside and put a new, empty sessions.db in its place.

    The empty file is made beside it first and swapped in (:func:`_swap_in`),
    so there is never a moment without a sessions.db holding the chats' file.

    Args:
        path: the damaged sessions.db (no connection may be open on it).

    Returns:
        Where the damaged file now is (``sessions.db.corrupt-<timestamp>``),
        or None when there was no file.

    Raises:
        CannotOpen: the file could not be moved or the new one written
            (the damaged file is at ``path``).
    """
    path = Path(path)
    if not os.path.lexists(path):
        return set_aside(path, "corrupt")  # only stray sidecars: Store.open makes the file
    new = _building(path)
    try:
        Store.open(new).close()
    except StoreError:
        _remove_building(path)
        raise
    return _swap_in(path, new)


def _readonly_uri(path: Path) -> str:
    return f"file:{quote(str(path))}?mode=ro"


def is_usable(path: Path) -> bool:
    """True when ``path`` is an SQLite file that passes ``PRAGMA quick_check``.

    The file is opened read-only; nothing is written.
    """
    return passes_quick_check(path)


def backups(path: Path) -> list[Path]:
    """Return the backups of ``path`` that exist, newest (by modification time) first.

    A backup is an automatic one in ``backups/`` beside it
    (``parley.core.store.sqlite.backups``), or a file beside it named ``<name>…bak`` — the
    copies taken before a format upgrade (``sessions.db.parley-pre-v4.bak``,
    ``….1.bak``, …). Unfinished copies (``….partial``) are not backups.
    """
    path = Path(path)
    found = [Path(p) for p in glob.glob(glob.escape(str(path)) + "*.bak")]
    found += [b.path for b in automatic_backups(folder_of(path))]
    return sorted((p for p in found if p.is_file()), key=lambda p: p.stat().st_mtime_ns,
                  reverse=True)


def latest_backup(path: Path) -> Path | None:
    """Return the newest backup of ``path`` that SQLite can read, or None.

    Damaged backups (failing ``PRAGMA quick_check``) are skipped. Nothing is written.
    """
    return next((b for b in backups(path) if is_usable(b)), None)


def _copy_database(src: Path, dst: Path) -> None:
    """Copy an SQLite file with the backup API (a consistent copy, WAL included)."""
    source = sqlite3.connect(_readonly_uri(src), uri=True)
    try:
        copy_open_database(source, dst)
    finally:
        source.close()


def restore_backup(path: Path, backup: Path) -> Path | None:
    """Put a copy of ``backup`` at ``path``, keeping the damaged file aside
    (:func:`restore_reporting`, whose first value it returns)."""
    return restore_reporting(path, backup)[0]


def restore_reporting(path: Path, backup: Path) -> tuple[Path | None, bool]:
    """Put a copy of ``backup`` at ``path``, keeping the damaged file aside.

    When ``path`` was found damaged while open, the new file is the backup plus
    what was kept then (the rows read from the kept files win, the backup fills
    in the rest: :func:`_from_kept`), not the backup alone.

    The backup itself is left as it is (it is copied, not moved). A backup of
    the older v3 format is upgraded by ``Store.open`` as usual. The copy is
    made beside ``path`` first; the damaged file is kept aside only once the
    copy is complete (:func:`_swap_in`), so a kill midway leaves it in place.

    Args:
        path: the damaged sessions.db (no connection may be open on it).
        backup: a file from :func:`backups`, e.g. :func:`latest_backup`'s.

    Returns:
        Where the damaged file now is (None when there was none), and whether what was
        kept when it was found damaged was read into the new file (False: the backup
        alone; trial 20 said "with what was saved after it" when nothing could be read).

    Raises:
        DatabaseCorrupt: the backup is damaged too (nothing was changed).
        CannotOpen: a file could not be moved or written.
    """
    path, backup = Path(path), Path(backup)
    if not is_usable(backup):
        raise DatabaseCorrupt(backup)
    new = _building(path)
    kept = marked_kept(path)
    if kept is not None:  # found damaged while open: the backup plus what was kept then
        try:
            _from_kept(kept, None, new, backup, None)
        except SalvageError:
            log.warning("nothing could be read from %s; the backup alone is restored",
                        kept.folder)
        else:
            return _swap_in(path, new), True
    try:
        _copy_database(backup, new)
    except (OSError, sqlite3.Error) as exc:
        _remove_building(path)
        raise CannotOpen(path, f"could not copy the backup: {exc}") from exc
    return _swap_in(path, new), False


def _from_kept(kept: Kept, damaged: Path | None, new: Path, backup: Path | None,
               stop: threading.Event | None) -> SalvageReport:
    """Build ``new`` from the files kept when the file was found damaged while open
    (``parley.core.store.sqlite.kept``: what Parley read, the kept file with its WAL
    replayed), then ``damaged`` itself, then ``backup``, in that order of precedence.

    Raises:
        SalvageError: nothing could be read from any of them (``new`` is not left).
    """
    with tempfile.TemporaryDirectory(prefix=".parley-kept-", dir=new.parent) as work:
        private.narrow(Path(work), private.DIR_MODE)
        return salvage(damaged, new, backup, stop=stop, first=kept_files.sources(kept, Path(work)))


def salvage_into(path: Path, backup: Path | None,
                 stop: threading.Event | None = None) -> tuple[Path | None, SalvageReport]:
    """Build a new sessions.db from what the damaged one still holds, merged with
    ``backup`` (``parley.core.store.sqlite.salvage``), and keep the damaged file aside.

    The new file is built beside ``path`` (``<name>.recovering``) while the
    damaged file stays where it is; only once the new file is complete is the
    damaged one kept aside and the new one put at ``path`` (:func:`_swap_in`).
    A salvage cut off (stopped, failed, the process killed) leaves the damaged
    file at ``path``, so the next start offers the recovery page again.

    Args:
        path: the damaged sessions.db (no connection may be open on it).
        backup: the newest sound backup, or None.
        stop: set from another thread to stop (``SalvageCancelled``).

    Returns:
        ``(where the damaged file now is, what the new file holds)``.

    Raises:
        SalvageError: nothing could be read or written, or ``stop`` was set;
            the damaged file is at ``path``, as it was.
        CannotOpen: the damaged file could not be moved aside.
    """
    path = Path(path)
    if not os.path.lexists(path):
        raise SalvageError(f"There is no {path.name} to salvage.")
    new = _building(path)
    kept = marked_kept(path)
    try:
        if kept is None:
            report = salvage(path, new, backup, stop=stop)
        else:  # a file replaced by another database is not read as the person's chats
            report = _from_kept(kept, None if kept.replaced else path, new, backup, stop)
    except BaseException:
        _remove_building(path)
        raise
    return _swap_in(path, new), report


#: The suffix of a replacement being built beside sessions.db (removed if cut off).
BUILDING = ".recovering"


def _building(path: Path) -> Path:
    """Where a replacement for ``path`` is built; anything left there by a run cut off
    midway is removed first."""
    _remove_building(path)
    return path.with_name(path.name + BUILDING)


def _remove_building(path: Path) -> None:
    new = path.with_name(path.name + BUILDING)
    for suffix in ("", *SIDECARS, "-journal", ".partial", ".recovered.partial",
                   ".partial-journal", ".closed"):
        with contextlib.suppress(OSError):
            Path(f"{new}{suffix}").unlink()


def _swap_in(path: Path, new: Path) -> Path | None:
    """Keep the file at ``path`` aside (``<name>.corrupt-<date>``, with its -wal/-shm) and
    put the complete file ``new`` in its place.

    The damaged file is first given its second name as a hard link (where the
    file system has them), its sidecars moved beside it, and only then is
    ``new`` renamed over ``path`` (one atomic step): at no moment is there no
    file at ``path``. The damage marker goes once the new file is in place.

    Returns:
        Where the damaged file now is (None when there was none).

    Raises:
        CannotOpen: a file could not be moved (``new`` is removed; the damaged
            file is at ``path`` or, with its sidecars, at the returned name).
    """
    for suffix in SIDECARS:  # a closed SQLite file has none: never pair it with stale ones
        with contextlib.suppress(OSError):
            Path(f"{new}{suffix}").unlink()
    target = free_name(path, "corrupt")
    aside = None
    with contextlib.suppress(OSError):  # it described the file being replaced
        closed_record(path).unlink()
    try:
        if os.path.lexists(path):
            try:
                os.link(path, target)
            except OSError:  # no hard links here (FAT, some network shares): a move
                place(path, target)
            private.narrow(target, 0o600)
            aside = target
        for suffix in SIDECARS:
            side = Path(f"{path}{suffix}")
            if os.path.lexists(side):
                place(side, Path(f"{target}{suffix}"))
                private.narrow(Path(f"{target}{suffix}"), 0o600)
        os.replace(new, path)
    except OSError as exc:
        _remove_building(path)
        raise CannotOpen(path, f"could not put the new file in place: {exc.strerror or exc}") \
            from exc
    private.secure_store_files(path)
    _remove_building(path)  # the record a close left beside the built file
    with contextlib.suppress(OSError):
        marker_path(path).unlink()
    return aside


# --- a file deleted or replaced under Parley -------------------------------------


def rescue_copy(store: Store, dest: Path | None = None) -> Path:
    """Copy everything the open store reads to a new file, even if its file was deleted.

    Use it after ``DatabaseMissing`` / ``DatabaseReplaced``: the connection
    still reads the file Parley opened (through its descriptor), WAL included.
    Call it on the store's thread (a Store is thread-confined).

    Args:
        store: the open store.
        dest: the new file; default ``<name>.rescued-<timestamp>`` beside the
            store's path. Never replaced if it exists.

    Returns:
        The path of the copy: a complete sessions.db (``journal_mode=DELETE``)
        that ``Store.open`` can open.

    Raises:
        StoreClosed: the store was closed (a deleted file is gone by then).
        CannotOpen: the copy could not be written (folder gone, disk full…).
    """
    con = getattr(store, "_con", None)  # see report: Store.backup_to(dest) would own this
    if con is None:
        raise StoreClosed()
    dest = Path(dest) if dest is not None else free_name(store.path, "rescued")
    try:
        return copy_open_database(dbapi_connection(con), dest)
    except (OSError, sqlite3.Error) as exc:
        raise CannotOpen(dest, f"could not write the copy: {exc}") from exc


def back_up_recovered(path: Path) -> None:
    """Make an automatic backup of the file :func:`restore_backup` or :func:`salvage_into`
    just put at ``path``: what it brought back (the kept files' turns) is in no backup
    yet, the newest having been taken before the damage. Not rotated here: the next
    scheduled backup rotates (``parley.core.recovery.backup_schedule``). A failure (no
    space…) is logged; the recovery itself stands."""
    from parley.core.store.sqlite.backups import make_backup

    try:
        made = make_backup(path)
    except (BackupError, OSError) as exc:
        log.warning("no backup of the recovered %s: %s", path.name, exc)
        return
    log.info("backup %s made of the recovered file (%d turns)", made.path.name,
             made.turns or 0)


__all__ = [
    "back_up_recovered",
    "backups",
    "is_usable",
    "latest_backup",
    "rescue_copy",
    "restore_backup",
    "restore_reporting",
    "salvage_into",
    "set_aside",
    "start_fresh",
]

"""What Parley does after a crash or when sessions.db is damaged, deleted or replaced.

At start: a reply cut off by a process death is
already in the file as an assistant turn marked ``aborted`` (the run loop
journals it while it streams), so nothing has to be rebuilt. What is left is
to tell the person: :func:`mark_running` records that Parley runs and returns,
when the previous run did not end with :func:`mark_clean_exit`, the sessions
whose reply was interrupted (:func:`interrupted_replies`) so the window can
offer Continue.

When the file cannot be used (``DatabaseCorrupt``), the window offers three
ways on, all over a path and never destroying a byte:

* restore a backup: :func:`backups` / :func:`latest_backup`, then :func:`restore_backup`;
* salvage what it still holds, merged with the newest backup: :func:`salvage_into`;
* start a new file: :func:`start_fresh`.

All first move the damaged file (and its ``-wal`` / ``-shm``) aside as
``sessions.db.corrupt-<timestamp>`` (:func:`set_aside`), never over an
existing file.

When the file was deleted or replaced under a running Parley
(``parley.core.store.sqlite.faults``), :func:`rescue_copy` writes what the open connection
still reads to a new file.
"""

from __future__ import annotations

import asyncio
import contextlib
import glob
import logging
import os
import socket
import sqlite3
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal
from urllib.parse import quote

from parley.core import private
from parley.core.content import CompactSummaryBlock, Turn
from parley.core.recovery.restart_notice import restart_notice
from parley.core.store.async_store import AsyncStore
from parley.core.store.errors import (
    CannotOpen,
    DatabaseCorrupt,
    SalvageError,
    StoreClosed,
    StoreError,
)
from parley.core.store.schema import dbapi_connection
from parley.core.store.sqlite.backups import automatic_backups, folder_of
from parley.core.store.sqlite.damage import marker_path, passes_quick_check
from parley.core.store.sqlite.faults import copy_open_database, free_name, place
from parley.core.store.sqlite.overwrite import closed_record
from parley.core.store.sqlite.salvage import SalvageReport, salvage
from parley.core.store.store import Store

log = logging.getLogger(__name__)

#: app_state key of the run marker: ``{"pid": int, "started_at": epoch ms}``
#: (in a PostgreSQL database, one per machine: :func:`machine_key`).
RUN_MARKER = "recovery.run"
#: app_state key of the compactions at work: ``{session id: started_at epoch ms}``
#: (in a PostgreSQL database, one per machine: :func:`machine_key`).
COMPACTING = "recovery.compacting"
SIDECARS = ("-wal", "-shm")
PAGE = 200
#: Turns read from a session's end to find its last message (past compaction summaries).
_TAIL = 3


@dataclass(frozen=True, slots=True)
class InterruptedReply:
    """A session whose last request got no complete reply.

    Attributes:
        session_id: the session.
        title: its title (None when untitled).
        turn_id: the aborted reply (``kind == "partial"``) or the unanswered
            user turn (``kind == "unanswered"``).
        kind: ``partial`` — a reply was cut off; what arrived is kept as an
            aborted turn; ``unanswered`` — the user's message was saved but no
            reply text arrived.
        chars: characters of reply text kept (0 for ``unanswered``).
    """

    session_id: str
    title: str | None
    turn_id: str
    kind: Literal["partial", "unanswered"]
    chars: int


@dataclass(frozen=True, slots=True)
class PreviousRun:
    """A previous run of Parley that did not exit cleanly.

    Attributes:
        pid: its process id.
        started_at: when it started, epoch ms.
        interrupted: sessions it left without a complete reply, newest first.
        compacting: sessions a compaction was working in when it stopped
            (:class:`CompactionMarks`); nothing of those compactions was saved.
    """

    pid: int
    started_at: int
    interrupted: list[InterruptedReply]
    compacting: list[str] = field(default_factory=list)

    def notice(self) -> str | None:
        """What to tell the person (``parley.core.recovery.restart_notice``), None when nothing
        was left."""
        return restart_notice(self.interrupted, self.compacting)


def machine_name() -> str:
    """This computer's name (the host name), which tells machines sharing a database apart."""
    return socket.gethostname()


def machine_key(store: AsyncStore, key: str) -> str:
    """The app_state key of this machine's own :data:`RUN_MARKER` or :data:`COMPACTING`.

    A sessions.db file is used by one Parley at a time: ``key`` itself. A PostgreSQL
    database is shared by the Parleys of several machines (one per machine), each
    with its own run: ``key@<machine name>``. So a Parley starting while another
    machine's runs reports no previous run of that one, and a clean exit clears its
    own marker only.
    """
    return f"{key}@{machine_name()}" if store.on_server else key


async def interrupted_replies(
    store: AsyncStore, *, since_ms: int = 0, limit: int = 100
) -> list[InterruptedReply]:
    """Find sessions whose last message is a reply cut off or an unanswered message.

    Args:
        store: the open store.
        since_ms: only sessions with activity at or after this time (epoch ms);
            sessions are read newest first, so this bounds the work at start.
        limit: at most this many results.

    Returns:
        Newest activity first. A reply counts as cut off when it was kept as
        journalled while it streamed (``Turn.cut_off``): Parley ended before it
        finished. A reply the user stopped, or one that failed, was told when it
        happened and is no leftover of the run. A compaction's summary is no
        message (it is stored last, with role ``user``): the message before it is
        the session's last.

    Raises:
        StoreError: the file cannot be read.
    """
    found: list[InterruptedReply] = []
    offset = 0
    while len(found) < limit:
        page = await store.list_sessions(
            include_archived=True, pinned_first=False, limit=PAGE, offset=offset,
            include_versions=True,
        )
        for session in page:
            if session.updated_at < since_ms:
                return found
            last = await _last_message(store, session.id)
            item = _interrupted(session.id, session.title, last)
            if item is not None:
                found.append(item)
                if len(found) >= limit:
                    return found
        if len(page) < PAGE:
            return found
        offset += PAGE
    return found


def _is_summary(turn: Turn) -> bool:
    return any(isinstance(b, CompactSummaryBlock) for b in turn.blocks)


async def _last_message(store: AsyncStore, session_id: str) -> Turn | None:
    """The session's last stored turn that is no compaction summary (None: none)."""
    tail = await store.get_turns(session_id, last=_TAIL, hydrate=False)
    if len(tail) == _TAIL and all(_is_summary(t) for t in tail):  # summaries of summaries
        tail = await store.get_turns(session_id, hydrate=False)
    messages = [t for t in tail if not _is_summary(t)]
    return messages[-1] if messages else None


def _interrupted(session_id: str, title: str | None, last: Turn | None
                 ) -> InterruptedReply | None:
    if last is None:
        return None
    if last.role == "assistant" and last.aborted and last.cut_off:
        return InterruptedReply(session_id, title, last.id, "partial", len(last.text()))
    if last.role == "user":
        return InterruptedReply(session_id, title, last.id, "unanswered", 0)
    return None


async def mark_running(
    store: AsyncStore, *, pid: int | None = None, now_ms: int | None = None
) -> PreviousRun | None:
    """Call once at start: report an unclean previous run, then record this one.

    In a PostgreSQL database the run is this machine's (:func:`machine_key`): other
    machines' Parleys running meanwhile are no previous run.

    Args:
        store: the open store.
        pid: this process's id (default ``os.getpid()``).
        now_ms: this run's start, epoch ms (default now).

    Returns:
        The previous run when it did not call :func:`mark_clean_exit` (a
        crash, a kill, a power cut), with the replies it left interrupted;
        None after a clean exit or on a new file.

    Raises:
        StoreError: the file cannot be read or written (e.g. DiskFull).
    """
    run_key, compacting_key = machine_key(store, RUN_MARKER), machine_key(store, COMPACTING)
    previous = await store.get_state(run_key)
    compacting = await store.get_state(compacting_key)
    result = None
    if isinstance(previous, dict) and isinstance(previous.get("started_at"), int):
        started = int(previous["started_at"])
        interrupted = await interrupted_replies(store, since_ms=started)
        cut = sorted(compacting) if isinstance(compacting, dict) else []
        result = PreviousRun(int(previous.get("pid") or 0), started, interrupted, cut)
    if compacting is not None:
        await store.set_state(compacting_key, None)
    marker = {
        "pid": os.getpid() if pid is None else pid,
        "started_at": int(time.time() * 1000) if now_ms is None else now_ms,
    }
    await store.set_state(run_key, marker)
    return result


async def mark_clean_exit(store: AsyncStore) -> None:
    """Call at a normal exit (after the last run ended): the next start finds no marker."""
    await store.set_state(machine_key(store, RUN_MARKER), None)


class CompactionMarks:
    """Records which sessions a compaction works in (app_state :data:`COMPACTING`), so
    the next start can tell an interrupted compaction (:attr:`PreviousRun.compacting`).

    Listens to the ``compact:start`` / ``compact:end`` hooks; each change writes
    the whole set in the background (one small write per compaction start and end).

    Args:
        store: the open ``AsyncStore``.
        hooks: the run loop's hooks (``ChatRunner.hooks``).
    """

    def __init__(self, store: AsyncStore, hooks: Any) -> None:
        self.store = store
        self.active: dict[str, int] = {}
        self._writes: set[asyncio.Task[None]] = set()
        hooks.on("compact:start", self._started)
        hooks.on("compact:end", self._ended)

    def _started(self, payload: dict[str, Any]) -> None:
        self.active[str(payload["session_id"])] = int(time.time() * 1000)
        self._write()

    def _ended(self, payload: dict[str, Any]) -> None:
        if self.active.pop(str(payload["session_id"]), None) is not None:
            self._write()

    def _write(self) -> None:
        value = dict(self.active) or None
        task = asyncio.ensure_future(self._set(value))
        self._writes.add(task)
        task.add_done_callback(self._writes.discard)

    async def _set(self, value: dict[str, int] | None) -> None:
        try:
            await self.store.set_state(machine_key(self.store, COMPACTING), value)
        except StoreError as exc:  # only the restart notice's words depend on it
            log.info("compaction mark not written: %s", exc.message)

    async def wait(self) -> None:
        """Wait for the writes under way (tests, shutdown)."""
        if self._writes:
            await asyncio.wait(list(self._writes))


# --- damaged files --------------------------------------------------------------


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
    """Put a copy of ``backup`` at ``path``, keeping the damaged file aside.

    The backup itself is left as it is (it is copied, not moved). A backup of
    the older v3 format is upgraded by ``Store.open`` as usual. The copy is
    made beside ``path`` first; the damaged file is kept aside only once the
    copy is complete (:func:`_swap_in`), so a kill midway leaves it in place.

    Args:
        path: the damaged sessions.db (no connection may be open on it).
        backup: a file from :func:`backups`, e.g. :func:`latest_backup`'s.

    Returns:
        Where the damaged file now is (None when there was none).

    Raises:
        DatabaseCorrupt: the backup is damaged too (nothing was changed).
        CannotOpen: a file could not be moved or written.
    """
    path, backup = Path(path), Path(backup)
    if not is_usable(backup):
        raise DatabaseCorrupt(backup)
    new = _building(path)
    try:
        _copy_database(backup, new)
    except (OSError, sqlite3.Error) as exc:
        _remove_building(path)
        raise CannotOpen(path, f"could not copy the backup: {exc}") from exc
    return _swap_in(path, new)


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
    try:
        report = salvage(path, new, backup, stop=stop)
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


__all__ = [
    "COMPACTING",
    "RUN_MARKER",
    "CompactionMarks",
    "InterruptedReply",
    "PreviousRun",
    "backups",
    "interrupted_replies",
    "is_usable",
    "latest_backup",
    "mark_clean_exit",
    "mark_running",
    "rescue_copy",
    "restore_backup",
    "salvage_into",
    "set_aside",
    "start_fresh",
]

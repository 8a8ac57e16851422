"""Salvage a damaged sessions.db: what SQLite can still read, merged with the newest backup.

Reading what is left is SQLite's own job (:func:`recover_rows`): where the
``sqlite3`` command-line shell is installed and its ``.recover`` works, that
command walks every page it can still parse and writes the rows it finds as
SQL, which a second ``sqlite3`` loads into a scratch file. Otherwise
(no shell; or a shell built without ``sqlite_dbpage``, as Debian 12's is)
:func:`read_rows` asks SQLite for every row by rowid ranges, splitting a range
that meets a damaged page until only the rows on damaged pages are left.

:func:`salvage` then builds a new, clean v4 file (``Store.open``'s schema) from:

1. the rows salvaged from the damaged file (newest, so they win);
2. the rows of the newest backup that the salvage lost — matched by id:
   turns, sessions, spaces, compactions, settings, files. A backup turn is
   skipped when the salvaged chat already has another turn at its place
   (the chat was edited after the backup);
3. chats whose row was lost but whose turns were found come back as
   "Recovered chat"; a chat whose space was lost goes to the default space;
4. the conversation tree (``turn_links``, ``turn_path``: ``parley.core.store.schema``)
   comes along and is made whole again (:func:`_repair_tree`): a turn whose link
   row was lost, or whose parent was, gets the turn before it by ``seq`` in its
   chat as parent; a chat whose path shown was lost or broken shows the path to
   the deepest turn left of it (none left: to its newest turn), which is the chain
   of its turns by ``seq`` when the links were lost too. When no file read has the
   tree (a file of a Parley from before it), the result is converted as opening
   such a file converts it (``parley.core.store.upgrade.tree``: version sessions
   fold into their chats' trees); a backup from before the tree merged into a
   salvage that has it is converted first, in a private copy (else its version
   sessions would come back as chats).

The search index is rebuilt from the result. The damaged file is only read
(opened read-only); the caller keeps it aside (``parley.core.recovery.damaged_file``).
"""

from __future__ import annotations

import contextlib
import dataclasses
import shutil
import sqlite3
import subprocess
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import quote

from parley.core import private
from parley.core.store import schema, textindex
from parley.core.store.errors import SalvageCancelled, SalvageError

if TYPE_CHECKING:
    from sqlalchemy.engine import Connection

#: Tables copied, parents first; (table, its key columns for "the same row").
TABLES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("spaces", ("id",)),
    ("space_documents", ("id",)),
    ("space_document_pages", ("document_id", "page")),
    ("sessions", ("id",)),
    ("attachments", ("sha256",)),
    ("turns", ("id",)),
    ("turn_links", ("turn_id",)),
    ("turn_path", ("turn_id",)),
    ("compactions", ("id",)),
    ("queued_messages", ("id",)),
    ("queued_files", ("queued_id", "position")),
    ("settings", ("key",)),
    ("app_state", ("key",)),
)
#: Tables without row ids (read whole, else chat by chat, by :func:`read_rows`).
WITHOUT_ROWID = frozenset({"turn_path"})
RECOVERED_TITLE = "Recovered chat"
CLI = "sqlite3"


@dataclass(frozen=True, slots=True)
class SalvageReport:
    """What a salvage put in the new file.

    Attributes:
        turns: turns in the new file.
        chats: chats in the new file.
        salvaged_turns: of ``turns``, read from the damaged file (for a file from
            before the tree: before the copies in its version sessions were folded).
        from_backup: of ``turns``, filled in from the backup (likewise).
        backup: the backup merged in, or None.
        lost_turns: messages the damaged file held (its index of message ids still
            lists them) that are not in the new file, neither read nor filled in from
            the backup; None when that index could not be read either (not counted).
        lost_chats: likewise for chats (a chat whose row was lost but some of whose
            messages were read comes back as "Recovered chat": not counted).
    """

    turns: int
    chats: int
    salvaged_turns: int
    from_backup: int
    backup: Path | None
    lost_turns: int | None = None
    lost_chats: int | None = None


def cli() -> str | None:
    """The path of the ``sqlite3`` shell, or None when it is not installed."""
    return shutil.which(CLI)


def cli_recovers() -> bool:
    """True when the ``sqlite3`` shell is installed and its ``.recover`` works.

    ``.recover`` needs the ``sqlite_dbpage`` table, which some builds of SQLite
    leave out (Debian 12's 3.40.1 among them: its ``.recover`` only says "SQL
    logic error"); :func:`read_rows` is used then.
    """
    tool = cli()
    if tool is None:
        return False
    try:
        done = subprocess.run([tool, ":memory:", "SELECT count(*) FROM sqlite_dbpage"],
                              capture_output=True, timeout=30, check=False)
    except (OSError, subprocess.SubprocessError):
        return False
    return done.returncode == 0


def recover_rows(damaged: Path, scratch: Path, *, timeout_s: float = 3600,
                 stop: threading.Event | None = None) -> None:
    """Write every row SQLite can read from ``damaged`` into a new file ``scratch``.

    With the shell's ``.recover`` (:func:`cli_recovers`), which also finds rows
    on pages cut off from their table; otherwise with :func:`read_rows`.

    Args:
        damaged: the damaged file (opened read-only).
        scratch: the new file of salvaged rows (made ``0600``).
        timeout_s: at most this many seconds for the shell's ``.recover``.
        stop: set from another thread to stop (:class:`SalvageCancelled`).

    Raises:
        SalvageError: nothing could be read (its message says why).
        SalvageCancelled: ``stop`` was set.
    """
    if not cli_recovers():
        read_rows(damaged, scratch, stop=stop)
        return
    tool = cli()
    assert tool is not None
    private.create_private(scratch)
    reader = subprocess.Popen(
        [tool, "-readonly", str(damaged), ".recover"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
    assert reader.stdout is not None and reader.stderr is not None
    try:
        loaded = subprocess.run(
            [tool, str(scratch)], stdin=reader.stdout, capture_output=True, timeout=timeout_s,
            check=False)
    finally:
        reader.stdout.close()
        reader.wait(timeout=60)
    err = reader.stderr.read().decode(errors="replace")
    reader.stderr.close()
    if not _has_tables(scratch):  # .recover may end with an error yet have read much
        raise SalvageError(f"SQLite could not read anything back from {damaged.name} "
                           f"({err.strip() or loaded.stderr.decode(errors='replace').strip()}).")


#: Rows read per query by :func:`read_rows` (a range that meets damage is split).
WINDOW = 2048


def read_rows(damaged: Path, scratch: Path, stop: threading.Event | None = None) -> None:
    """Copy every row of Parley's tables that SQLite can still read into ``scratch``.

    SQLite reads its own b-trees; a query that meets a damaged page fails with
    ``SQLITE_CORRUPT``, so rows are read by rowid ranges of :data:`WINDOW`, and
    a range that fails is split in two until the rows it can read are read and
    those on damaged pages are left behind. It finds fewer rows than
    ``.recover`` when a table's inner pages are damaged (the rows below them
    cannot be reached through the table), as many when only leaf pages are.
    The search is bounded: an end of a table that cannot be read is bounded by
    the file's size (:func:`_bounds`), a table whose first page is damaged is
    skipped, and a table gives up its still-failing ranges after
    :data:`FAIL_BUDGET_S` seconds of failing queries.

    Args:
        damaged: the damaged file (opened read-only).
        scratch: the new file of salvaged rows.
        stop: set from another thread to stop (:class:`SalvageCancelled`).

    Raises:
        SalvageError: not even the list of tables can be read.
        SalvageCancelled: ``stop`` was set.
    """
    try:
        src = sqlite3.connect(f"file:{quote(str(damaged.resolve()))}?mode=ro", uri=True)
    except sqlite3.Error as exc:
        raise SalvageError(f"SQLite cannot open {damaged.name} at all ({exc}).") from exc
    private.create_private(scratch)
    dst = sqlite3.connect(scratch, isolation_level=None)
    try:
        read_any = False
        dst.execute("BEGIN")
        for table, _keys in TABLES:
            cols = _columns(src, "main", table)
            if not cols:
                continue
            read_any = True
            dst.execute(f"CREATE TABLE {table} ({', '.join(cols)})")
            if table in WITHOUT_ROWID:
                _read_by_chat(src, dst, table, cols)
            else:
                _read_table(src, dst, table, cols, stop)
        dst.execute("COMMIT")
        if not read_any:
            # The list (sqlite_schema) starts on page 1 but grows onto pages anywhere in
            # the file: "its first pages" was said of damage in the middle (trial 20).
            raise SalvageError(f"SQLite could not read anything of {damaged.name}: its "
                               "list of tables is damaged, so no table can be found in it.")
    finally:
        src.close()
        dst.close()


#: Seconds a table may spend on queries that meet damage before the ranges still
#: failing are given up (the rows read so far are kept).
FAIL_BUDGET_S = 20.0
#: Points probed when neither end of a table can be read: all failing means its
#: first (root) page is damaged and no row can be reached through it.
PROBES = 16
_FAILED = object()


def _scalar(src: sqlite3.Connection, sql: str) -> object:
    """The one value ``sql`` returns, or :data:`_FAILED` when it meets damage."""
    try:
        row = src.execute(sql).fetchone()
    except sqlite3.DatabaseError:
        return _FAILED
    return row[0] if row else None


def _bounds(src: sqlite3.Connection, table: str) -> tuple[int, int] | None:
    """The rowid range worth searching in ``table``: ``(lo, hi)``, or None when there is
    nothing to read (empty, or its root page damaged).

    When an end of the table cannot be read, that end is bounded by what the
    file can hold: no table has more rows than the file has pages times the
    rows a page can hold (a row takes at least 4 bytes), nor rowids above its
    ``sqlite_sequence`` entry when it has one.
    """
    lo, hi = _scalar(src, f"SELECT min(rowid) FROM {table}"), \
        _scalar(src, f"SELECT max(rowid) FROM {table}")
    if lo is not _FAILED and hi is not _FAILED:
        return None if lo is None or hi is None else (int(lo), int(hi))  # type: ignore[call-overload]
    pages = _scalar(src, "PRAGMA page_count")
    size = _scalar(src, "PRAGMA page_size")
    most = (int(pages) if isinstance(pages, int) else 1 << 20) \
        * ((int(size) if isinstance(size, int) else 4096) // 4)
    seq = _scalar(src, f"SELECT seq FROM sqlite_sequence WHERE name = '{table}'")
    if isinstance(seq, int):
        most = max(most, seq)
    both_failed = lo is _FAILED and hi is _FAILED
    if hi is _FAILED:
        start = lo if isinstance(lo, int) else 1
        hi = max(start, 0) + most
    if lo is _FAILED:
        lo = min(1, int(hi))  # type: ignore[call-overload]
    lo_i, hi_i = int(lo), int(hi)  # type: ignore[call-overload]
    if both_failed:
        step = max(1, (hi_i - lo_i) // PROBES)
        points = range(lo_i, hi_i + 1, step)
        if all(_scalar(src, f"SELECT rowid FROM {table} WHERE rowid = {p}") is _FAILED
               for p in points):
            return None  # every path from its root fails: the root page is damaged
    return lo_i, hi_i


def _read_table(src: sqlite3.Connection, dst: sqlite3.Connection, table: str,
                cols: list[str], stop: threading.Event | None = None) -> None:
    names = ", ".join(cols)
    insert = f"INSERT INTO {table} ({names}) VALUES ({', '.join('?' * len(cols))})"
    select = f"SELECT {names} FROM {table} WHERE rowid BETWEEN ? AND ?"
    bounds = _bounds(src, table)
    if bounds is None:
        return
    lo, hi = bounds
    todo = [(a, min(a + WINDOW - 1, hi)) for a in range(lo, hi + 1, WINDOW)] \
        if hi - lo < 2**32 else [(lo, hi)]
    todo.reverse()
    failing = 0.0  # seconds spent on queries that met damage
    while todo:
        if stop is not None and stop.is_set():
            raise SalvageCancelled()
        a, b = todo.pop()
        began = time.monotonic()
        try:
            rows = src.execute(select, (a, b)).fetchall()
        except sqlite3.DatabaseError:
            failing += time.monotonic() - began
            if a < b and failing < FAIL_BUDGET_S:
                mid = a + (b - a) // 2
                todo.extend([(mid + 1, b), (a, mid)])
            continue  # one row on a damaged page (or out of time for this table): lost
        dst.executemany(insert, rows)


def _read_by_chat(src: sqlite3.Connection, dst: sqlite3.Connection, table: str,
                  cols: list[str]) -> None:
    """A table keyed by ``(session_id, …)`` without row ids: whole, or, when that meets
    damage, chat by chat (the chats of the turns read already); a chat whose rows meet
    damage is left out (:func:`_repair_tree` makes its path again)."""
    names = ", ".join(cols)
    insert = f"INSERT INTO {table} ({names}) VALUES ({', '.join('?' * len(cols))})"
    try:
        dst.executemany(insert, src.execute(f"SELECT {names} FROM {table}").fetchall())
        return
    except sqlite3.DatabaseError:
        pass
    chats = [r[0] for r in dst.execute("SELECT DISTINCT session_id FROM turns")] \
        if _columns(dst, "main", "turns") else []
    for sid in chats:
        try:
            rows = src.execute(f"SELECT {names} FROM {table} WHERE session_id = ?",
                               (sid,)).fetchall()
        except sqlite3.DatabaseError:
            continue
        dst.executemany(insert, rows)


def _has_tables(path: Path) -> bool:
    with contextlib.suppress(sqlite3.Error):
        con = sqlite3.connect(path)
        try:
            return bool(con.execute("SELECT count(*) FROM sqlite_schema").fetchone()[0])
        finally:
            con.close()
    return False


def _columns(con: sqlite3.Connection, db: str, table: str) -> list[str]:
    try:
        return [r[1] for r in con.execute(f"PRAGMA {db}.table_info({table})")]
    except sqlite3.Error:
        return []


def _copy_rows(con: sqlite3.Connection, db: str, table: str, keys: tuple[str, ...]) -> None:
    """Insert the rows of ``db.table`` whose key is not in ``main.table`` yet."""
    wanted = _columns(con, "main", table)
    have = set(_columns(con, db, table))
    if not have or not set(keys) <= have:
        return
    # The row numbers of a later source or a backup may be taken by now: its rows get new ones.
    cols = [c for c in wanted if c in have and not (c == "n" and db != "rec0")]
    names = ", ".join(cols)
    match = " AND ".join(f"m.{k} = s.{k}" for k in keys)
    con.execute(
        f"INSERT OR IGNORE INTO main.{table} ({names}) "
        f"SELECT {', '.join('s.' + c for c in cols)} FROM {db}.{table} AS s "
        f"WHERE NOT EXISTS (SELECT 1 FROM main.{table} AS m WHERE {match})"
        + (" ORDER BY s.session_id, s.seq" if table == "turns" else ""))


def _fix_orphans(con: sqlite3.Connection) -> None:
    now = int(time.time() * 1000)
    con.execute(
        "INSERT INTO sessions (id, space_id, title, title_source, created_at, updated_at) "
        "SELECT t.session_id, ?, ?, 'user', min(t.created_at), max(t.created_at) FROM turns t "
        "WHERE t.session_id NOT IN (SELECT id FROM sessions) GROUP BY t.session_id",
        (schema.DEFAULT_SPACE_ID, RECOVERED_TITLE))
    con.execute("UPDATE sessions SET space_id = ? WHERE space_id NOT IN (SELECT id FROM spaces)",
                (schema.DEFAULT_SPACE_ID,))
    con.execute("DELETE FROM compactions WHERE session_id NOT IN (SELECT id FROM sessions)")
    con.execute("DELETE FROM queued_messages WHERE session_id NOT IN (SELECT id FROM sessions)")
    con.execute("DELETE FROM queued_files WHERE queued_id NOT IN (SELECT id FROM queued_messages) "
                "OR sha256 NOT IN (SELECT sha256 FROM attachments)")
    con.execute("UPDATE space_documents SET space_id = ? WHERE space_id NOT IN "
                "(SELECT id FROM spaces)", (schema.DEFAULT_SPACE_ID,))
    con.execute("DELETE FROM space_document_pages WHERE document_id NOT IN "
                "(SELECT id FROM space_documents)")
    con.execute("DELETE FROM turn_attachments WHERE sha256 NOT IN "
                "(SELECT sha256 FROM attachments)")
    con.execute("UPDATE sessions SET updated_at = ? WHERE updated_at IS NULL", (now,))


# The turn before a turn by seq in its chat (the parent a lost link row gets).
_BEFORE = ("(SELECT p.id FROM turns p WHERE p.session_id = c.session_id AND p.seq < c.seq "
           "ORDER BY p.seq DESC LIMIT 1)")
# Path rows of chats whose path is no chain from a first message: (session_id).
_BROKEN_PATHS = (
    "SELECT DISTINCT session_id FROM (SELECT p.session_id, l.parent_id, "
    "lag(p.turn_id) OVER (PARTITION BY p.session_id ORDER BY p.pos) AS before "
    "FROM turn_path p LEFT JOIN turn_links l ON l.turn_id = p.turn_id) "
    "WHERE parent_id IS NOT before "
    "UNION SELECT DISTINCT session_id FROM turns "
    "WHERE session_id NOT IN (SELECT session_id FROM turn_path)"
)


def _repair_tree(con: sqlite3.Connection) -> None:
    """Make every chat's tree whole (module docstring, point 4), in ``con``'s transaction:
    rows of lost turns go; every turn gets a link row whose parent is an earlier turn
    (by ``seq``) of its chat, so the tree has no cycle; a chat whose path is no chain
    from a first message gets one (:func:`_path_again`)."""
    con.execute("DELETE FROM turn_links WHERE turn_id NOT IN (SELECT id FROM turns)")
    con.execute("UPDATE turn_links SET session_id = (SELECT t.session_id FROM turns t "
                "WHERE t.id = turn_links.turn_id) WHERE session_id <> (SELECT t.session_id "
                "FROM turns t WHERE t.id = turn_links.turn_id)")
    con.execute("DELETE FROM turn_path WHERE NOT EXISTS (SELECT 1 FROM turns t WHERE "
                "t.id = turn_path.turn_id AND t.session_id = turn_path.session_id)")
    con.execute(
        f"UPDATE turn_links SET parent_id = (SELECT {_BEFORE} FROM turns c "
        "WHERE c.id = turn_links.turn_id) WHERE parent_id IS NOT NULL AND NOT EXISTS ("
        "SELECT 1 FROM turns p JOIN turns c ON c.id = turn_links.turn_id "
        "WHERE p.id = turn_links.parent_id AND p.session_id = c.session_id AND p.seq < c.seq)")
    con.execute(
        "INSERT INTO turn_links (turn_id, session_id, parent_id, shown_at) "
        f"SELECT c.id, c.session_id, {_BEFORE}, 0 FROM turns c "
        "WHERE NOT EXISTS (SELECT 1 FROM turn_links l WHERE l.turn_id = c.id)")
    for (sid,) in con.execute(_BROKEN_PATHS).fetchall():
        _path_again(con, sid)


def _path_again(con: sqlite3.Connection, session_id: str) -> None:
    """Give a chat the path from its first message to the deepest turn left of its path
    (none left: its newest turn), freshly stamped as a path shown is
    (``parley.core.store.tree``): its turns one stamp, its leaf that stamp + 1."""
    parents = dict(con.execute("SELECT turn_id, parent_id FROM turn_links "
                               "WHERE session_id = ?", (session_id,)).fetchall())
    row = con.execute("SELECT turn_id FROM turn_path WHERE session_id = ? ORDER BY pos DESC "
                      "LIMIT 1", (session_id,)).fetchone() \
        or con.execute("SELECT id FROM turns WHERE session_id = ? ORDER BY seq DESC LIMIT 1",
                       (session_id,)).fetchone()
    path: list[str] = []
    at: str | None = row[0] if row else None
    while at is not None:  # parents are earlier by seq (_repair_tree): this ends
        path.append(at)
        at = parents.get(at)
    path.reverse()
    con.execute("DELETE FROM turn_path WHERE session_id = ?", (session_id,))
    con.executemany("INSERT INTO turn_path (session_id, pos, turn_id) VALUES (?, ?, ?)",
                    [(session_id, pos, t) for pos, t in enumerate(path)])
    newest = con.execute("SELECT max(shown_at) FROM turn_links WHERE session_id = ?",
                         (session_id,)).fetchone()[0]
    stamp = max(int(time.time() * 1000), int(newest or 0) + 1)
    con.executemany("UPDATE turn_links SET shown_at = ? WHERE turn_id = ?",
                    [(stamp + (1 if i == len(path) - 1 else 0), t) for i, t in enumerate(path)])


def salvage(damaged: Path | None, dest: Path, backup: Path | None = None,
            stop: threading.Event | None = None, *, first: Sequence[Path] = ()) -> SalvageReport:
    """Build a new sessions.db at ``dest`` from what ``damaged`` still holds and ``backup``.

    Takes seconds (about a minute per GB: the search index is rebuilt). Run it
    off the GUI thread, with no connection open on ``damaged``.

    Args:
        damaged: the damaged file (read only), or None to read only ``first``.
        dest: the new file (must not exist; made ``0600``).
        backup: the newest sound backup to fill in what the salvage lost, or None.
        stop: set from another thread to stop reading (:class:`SalvageCancelled`).
        first: files read before ``damaged``, best first (what was kept when it
            was found damaged while open, ``parley.core.store.sqlite.kept``): a row
            found in an earlier one wins over the same row in a later one.

    Returns:
        What the new file holds.

    Raises:
        SalvageError: nothing could be read or the new file not written (``dest``
            is not left behind).
    """
    from parley.core.store.store import Store

    sources = [*first, *([damaged] if damaged is not None else [])]
    scratches = [dest.with_name(f"{dest.name}.recovered{n or ''}.partial")
                 for n in range(len(sources))]
    for scratch in scratches:
        with contextlib.suppress(FileNotFoundError):
            scratch.unlink()
    old_backup = dest.with_name(f"{dest.name}.backup.partial")
    try:
        read = _read_all(sources, scratches, stop)
        rows_backup = backup
        if backup is not None and not _has_tree(backup) and any(_has_tree(r) for r in read):
            rows_backup = _converted(backup, old_backup)
        Store.open(dest).close()  # an empty v4 file: schema, default space, WAL
        report, treed = _merge(dest, read, rows_backup)
        report = SalvageReport(report.turns, report.chats, report.salvaged_turns,
                               report.from_backup, backup)
        if not treed:  # its version chats are folded into others: their ids go, not lost
            report = _convert(dest, report)
        else:
            lost_turns, lost_chats = (lost(dest, sources, t) for t in ("turns", "sessions"))
            report = dataclasses.replace(report, lost_turns=lost_turns, lost_chats=lost_chats)
    except sqlite3.Error as exc:
        _remove(dest)
        raise SalvageError(f"Parley could not write the salvaged chats to {dest} ({exc}). "
                           "The damaged file is kept as it was.") from exc
    except BaseException:
        _remove(dest)
        raise
    finally:
        for scratch in scratches:
            _remove(scratch)
        for made in old_backup.parent.glob(f"{old_backup.name}*"):  # its own pre-tree copy
            _remove(made)
    private.secure_store_files(dest)
    return report


def lost(dest: Path, sources: Sequence[Path], table: str) -> int | None:
    """How many rows of ``table`` (``turns``, ``sessions``) the ``sources`` held that
    ``dest`` lacks, matched by ``id``.

    The ids are read from each source's own index on ``id`` (``UNIQUE``), which holds
    no message text: damage on the table's pages leaves it readable, so the rows lost
    with those pages are still counted. None when an index cannot be read (its pages
    damaged too): then nobody can count them. An emptied (0-byte) source holds no rows
    and is left out: what it held is counted from the copies kept of it
    (``parley.core.store.sqlite.kept``), which are among ``sources``.
    """
    con = sqlite3.connect(f"file:{quote(str(dest.resolve()))}?mode=ro", uri=True)
    try:
        con.execute("CREATE TEMP TABLE held (id TEXT PRIMARY KEY) WITHOUT ROWID")
        for n, source in enumerate(sources):
            if _emptied(source):
                continue
            name = f"src{n}"
            con.execute(f"ATTACH DATABASE '{_uri(source)}' AS {name}")
            index = _id_index(con, name, table)
            if index is None:
                return None
            con.execute(f"INSERT OR IGNORE INTO temp.held SELECT id FROM {name}.{table} "
                        f"INDEXED BY {index}")
        return int(con.execute(f"SELECT count(*) FROM temp.held WHERE id NOT IN "
                               f"(SELECT id FROM main.{table})").fetchone()[0])
    except sqlite3.DatabaseError:
        return None
    finally:
        con.close()


def _emptied(path: Path) -> bool:
    """True when ``path`` is a file of 0 bytes (another program cut it)."""
    try:
        return path.stat().st_size == 0
    except OSError:
        return False


def _id_index(con: sqlite3.Connection, db: str, table: str) -> str | None:
    """The name of ``db.table``'s unique index on ``id`` alone, or None."""
    for row in con.execute(f"PRAGMA {db}.index_list({table})").fetchall():
        name, unique = row[1], row[2]
        cols = [r[2] for r in con.execute(f"PRAGMA {db}.index_info('{name}')")]
        if unique and cols == ["id"]:
            return f'"{name}"'
    return None


def _has_tree(path: Path) -> bool:
    """True when the database at ``path`` (opened read-only) has ``turn_links``."""
    with contextlib.suppress(sqlite3.Error):
        con = sqlite3.connect(f"file:{quote(str(path.resolve()))}?mode=ro", uri=True)
        try:
            return bool(_columns(con, "main", "turn_links"))
        finally:
            con.close()
    return False


def _converted(backup: Path, copy: Path) -> Path:
    """A private copy of ``backup`` (only read) converted to the tree as opening it
    converts it (``Store.open``); returns ``copy``."""
    from parley.core.store.store import Store

    _remove(copy)
    private.create_private(copy)
    src = sqlite3.connect(f"file:{quote(str(backup.resolve()))}?mode=ro", uri=True)
    try:
        dst = sqlite3.connect(copy)
        try:
            src.backup(dst)
        finally:
            dst.close()
    finally:
        src.close()
    Store.open(copy).close()
    return copy


def _read_all(sources: list[Path], scratches: list[Path],
              stop: threading.Event | None) -> list[Path]:
    """Read the rows of each source into its scratch file; return those read, in order.

    Raises:
        SalvageError: no source could be read at all (the last one's reason).
    """
    read: list[Path] = []
    failed: SalvageError | None = None
    for source, scratch in zip(sources, scratches, strict=True):
        try:
            recover_rows(source, scratch, stop=stop)
        except SalvageCancelled:
            raise
        except SalvageError as exc:
            failed = exc
            _remove(scratch)
            continue
        read.append(scratch)
    if not read:
        raise failed or SalvageError("There was nothing to salvage.")
    return read


def _remove(path: Path) -> None:
    for suffix in ("", "-wal", "-shm", "-journal"):
        with contextlib.suppress(OSError):
            Path(f"{path}{suffix}").unlink()


def _convert(dest: Path, report: SalvageReport) -> SalvageReport:
    """Convert the salvaged rows of a file from before the tree (module docstring, point
    4) in one transaction of the new file; the report counts what is left after."""
    from parley.core.store.store import Store
    from parley.core.store.upgrade import tree

    def convert(con: Connection) -> None:
        # The new file's tree tables are empty; the conversion makes them itself.
        for table in ("turn_path", "turn_links"):
            con.exec_driver_sql(f"DROP TABLE {table}")
        tree.convert(con)

    with Store.open(dest) as store:
        store._w(convert)
        turns, chats = store._r(lambda c: (
            c.exec_driver_sql("SELECT count(*) FROM turns").scalar_one(),
            c.exec_driver_sql("SELECT count(*) FROM sessions").scalar_one()))
    return SalvageReport(int(turns), int(chats), report.salvaged_turns, report.from_backup,
                         report.backup)


def _merge(dest: Path, scratches: list[Path], backup: Path | None
           ) -> tuple[SalvageReport, bool]:
    """Merge the rows read and the backup's into ``dest``: (the report, whether any of
    them had the tree; if none had, its tables are left empty for :func:`_convert`)."""
    con = sqlite3.connect(f"file:{quote(str(dest.resolve()))}", uri=True, isolation_level=None)
    try:
        textindex.register_functions(con)
        con.execute("PRAGMA foreign_keys = OFF")
        recs = [f"rec{n}" for n in range(len(scratches))]
        for name, scratch in zip(recs, scratches, strict=True):
            con.execute(f"ATTACH DATABASE '{_uri(scratch)}' AS {name}")
        if backup is not None:
            con.execute(f"ATTACH DATABASE '{_uri(backup)}' AS bak")
        con.execute("BEGIN")
        schema.drop_search_triggers(con)
        if any(_columns(con, name, "spaces") for name in recs):  # salvaged default space wins
            con.execute("DELETE FROM main.spaces")
        for name in recs:
            for table, keys in TABLES:
                _copy_rows(con, name, table, keys)
        salvaged = con.execute("SELECT count(*) FROM turns").fetchone()[0]
        treed = any(_columns(con, name, "turn_links")
                    for name in [*recs, *(["bak"] if backup is not None else [])])
        if backup is not None:
            for table, keys in TABLES:
                _copy_rows(con, "bak", table, keys)
        total = con.execute("SELECT count(*) FROM turns").fetchone()[0]
        if not con.execute("SELECT 1 FROM spaces WHERE id = ?",
                           (schema.DEFAULT_SPACE_ID,)).fetchone():
            con.execute("INSERT INTO spaces (id, name, position, created_at) VALUES (?, ?, 0, ?)",
                        (schema.DEFAULT_SPACE_ID, schema.DEFAULT_SPACE_NAME,
                         int(time.time() * 1000)))
        _fix_orphans(con)
        if treed:
            _repair_tree(con)
        chats = con.execute("SELECT count(*) FROM sessions").fetchone()[0]
        con.execute("COMMIT")
        for name in recs:  # before the index: its trigger names are theirs too
            con.execute(f"DETACH DATABASE {name}")
        if backup is not None:
            con.execute("DETACH DATABASE bak")
        con.execute("BEGIN")
        schema.rebuild_search_index(con)
        con.execute("COMMIT")
        con.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
    finally:
        con.close()
    return SalvageReport(int(total), int(chats), int(salvaged), int(total - salvaged),
                         backup), treed


def _uri(path: Path) -> str:
    return f"file:{quote(str(path.resolve()))}?mode=ro".replace("'", "''")

"""Converting and indexing a v3 file's turns on two threads while the upgrade writes them.

Building the full-text index is the slowest part of an upgrade (FTS5 indexes
some 15–30 MB of text per second), so it runs beside the rest instead of after
it, on the machine's second core:

* the *converter* thread reads the v3 turns from the backup (a read-only,
  immutable copy of the same data, so it never contends for the database's
  locks), converts them (:func:`core.store.v3_convert.convert_turn`), prepares
  their search text (:func:`core.store.textindex.index_turn_text`, exactly
  what the v4 triggers index) and hands batches to the other two;
* the *indexer* thread feeds that text into an FTS5 table of the same
  definition (``core.store.schema.SEARCH_DDL``) in a scratch file beside the
  database; sqlite releases the GIL while it indexes;
* the upgrade's own thread inserts the converted turns (:meth:`TurnPipeline.batches`)
  and, at the end, copies the finished index's shadow tables into the
  database (:meth:`TurnPipeline.copy_index`) inside its transaction.

Turn numbers (``turns.n``, the index's rowid) are given by the converter in
v3 rowid order, so the index and the rows agree without a round trip. Turns of
sessions that no longer exist (v3 ran without foreign keys) are skipped. The
scratch file is deleted afterwards, and also at the start of the next upgrade
if a kill left it behind.
"""

from __future__ import annotations

import contextlib
import queue
import sqlite3
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from core.store import schema, textindex
from core.store.v3_convert import convert_turn

BATCH = 5_000  # turns per batch handed between threads
QUEUE_BATCHES = 8  # batches buffered per queue (bounds memory to a few dozen MB)
FTS_HASH_BYTES = 32 * 1024 * 1024  # FTS5 'hashsize' of the scratch index: fewer, bigger flushes
INDEX_SUFFIX = ".parley-v4-index.tmp"

TurnRow = tuple[int, str, str, Any, str, str, Any]  # n, id, session_id, seq, role, blocks, created
_DONE = object()


class _Stopped(Exception):
    """The upgrade's thread gave up; a worker thread ends quietly."""


def index_path_for(db: Path) -> Path:
    """Return the scratch index file used while upgrading ``db``."""
    return db.with_name(db.name + INDEX_SUFFIX)


class TurnPipeline:
    """The converter and indexer threads of one upgrade (see the module docstring).

    Use as a context manager: leaving it stops both threads and deletes the
    scratch index file, whatever happened.
    """

    def __init__(self, backup: Path, index_path: Path, id_prefix: str, batch: int | None = None):
        self.backup = backup
        self.index_path = index_path
        self.id_prefix = id_prefix
        self.batch = batch or BATCH
        self.indexed = 0  # turns indexed so far (read by the upgrade's thread)
        self._to_writer: queue.Queue[Any] = queue.Queue(QUEUE_BATCHES)
        self._to_index: queue.Queue[Any] = queue.Queue(QUEUE_BATCHES)
        self._stop = threading.Event()
        self._errors: list[BaseException] = []
        self._index_done = threading.Event()
        self._threads = [
            threading.Thread(target=self._guard, args=(self._convert,), name="v3-convert",
                             daemon=True),
            threading.Thread(target=self._guard, args=(self._index,), name="v3-index",
                             daemon=True),
        ]

    def __enter__(self) -> TurnPipeline:
        _remove(self.index_path)
        for t in self._threads:
            t.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        for q in (self._to_writer, self._to_index):  # unblock a producer waiting on a full queue
            with contextlib.suppress(queue.Empty):
                while True:
                    q.get_nowait()
        for t in self._threads:
            t.join()
        _remove(self.index_path)

    # --- the upgrade's thread ------------------------------------------------------

    def add_titles(self, rows: list[tuple[int, str]]) -> None:
        """Index session titles: ``(sessions.n, title)`` pairs (rowid ``-n``, like the triggers)."""
        title_text = textindex.index_title_text
        self._put(self._to_index, [(-n, title_text(title), "") for n, title in rows])
        self._put(self._to_index, _DONE)

    def batches(self, tick: Callable[[], None]) -> Iterator[tuple[list[TurnRow], int]]:
        """Yield ``(turn rows, recovered count)`` batches in order until all are converted.

        ``tick`` is called at least every 0.2 s while waiting (for progress reports).

        Raises:
            Exception: whatever stopped the converter thread.
        """
        while True:
            item = self._get(self._to_writer, tick)
            if item is _DONE:
                return
            yield item

    def wait_index(self, tick: Callable[[], None]) -> None:
        """Wait until every turn and title is indexed, calling ``tick`` every 0.2 s."""
        while not self._index_done.wait(0.2):
            self._raise_errors()
            tick()
        self._raise_errors()

    def copy_index(self, con: sqlite3.Connection) -> None:
        """Replace the index in ``con`` (empty, same definition) with the finished one.

        Copies the FTS5 shadow tables (``search_fts_data``, ``_idx``,
        ``_docsize``) row for row; ``search_fts_config`` stays the database's own.
        Runs in ``con``'s transaction, then deletes the scratch file.
        """
        src = sqlite3.connect(self.index_path.resolve().as_uri() + "?mode=ro", uri=True)
        try:
            tables = _shadow_tables(src)
            if tables != _shadow_tables(con):
                raise RuntimeError(f"search index tables differ: {tables} / {_shadow_tables(con)}")
            for table in tables:
                columns = [r[1] for r in src.execute(f'PRAGMA table_info("{table}")')]
                names = ", ".join(f'"{c}"' for c in columns)
                marks = ", ".join("?" for _ in columns)
                con.execute(f'DELETE FROM "{table}"')
                cur = src.execute(f'SELECT {names} FROM "{table}"')
                while rows := cur.fetchmany(2000):
                    con.executemany(f'INSERT INTO "{table}" ({names}) VALUES ({marks})', rows)
        finally:
            src.close()
        # Gone before the commit: a kill after it cannot leave the scratch file behind
        # (a kill before it leaves a v3 file, whose next upgrade removes it).
        _remove(self.index_path)

    # --- worker threads --------------------------------------------------------------

    def _guard(self, fn: Callable[[], None]) -> None:
        try:
            fn()
        except _Stopped:
            pass
        except BaseException as exc:  # reported to the upgrade's thread, which raises it
            self._errors.append(exc)
            self._stop.set()

    def _convert(self) -> None:
        con = sqlite3.connect(self.backup.resolve().as_uri() + "?mode=ro&immutable=1", uri=True)
        try:
            sessions = {r[0] for r in con.execute("SELECT id FROM sessions")}
            cur = con.execute("SELECT rowid, session_id, idx, role, content, created_at "
                              "FROM turns ORDER BY rowid")
            n = 0
            prefix = self.id_prefix
            index_text = textindex.index_turn_text
            while rows := cur.fetchmany(self.batch):
                out: list[TurnRow] = []
                texts: list[tuple[int, str, str]] = []
                recovered = 0
                for rowid, session_id, idx, role, content, created_at in rows:
                    if session_id not in sessions:
                        continue
                    role, blocks, damaged = convert_turn(role, content)
                    n += 1
                    out.append((n, f"{prefix}{rowid & 0xFFFF_FFFF_FFFF_FFFF:016x}", session_id,
                                idx, role, blocks, created_at))
                    texts.append((n, "", index_text(blocks)))
                    recovered += damaged
                self._put(self._to_writer, (out, recovered))
                self._put(self._to_index, texts)
        finally:
            con.close()
        self._put(self._to_writer, _DONE)
        self._put(self._to_index, _DONE)

    def _index(self) -> None:
        con = sqlite3.connect(self.index_path, isolation_level=None)
        try:
            for pragma in ("journal_mode = OFF", "synchronous = OFF", "cache_size = -65536"):
                con.execute(f"PRAGMA {pragma}")
            for ddl in schema.SEARCH_DDL:
                con.execute(ddl)
            con.execute("INSERT INTO search_fts (search_fts, rank) VALUES ('hashsize', ?)",
                        (FTS_HASH_BYTES,))
            con.execute("BEGIN")
            producers = 2  # the converter (turns) and the upgrade's thread (titles)
            while producers:
                item = self._get(self._to_index, lambda: None)
                if item is _DONE:
                    producers -= 1
                    continue
                con.executemany("INSERT INTO search_fts (rowid, title, body) VALUES (?, ?, ?)",
                                item)
                self.indexed += sum(1 for row in item if row[0] > 0)
            con.execute("COMMIT")
        finally:
            con.close()
        self._index_done.set()

    # --- queues ------------------------------------------------------------------------

    def _put(self, q: queue.Queue[Any], item: Any) -> None:
        while True:
            if self._stop.is_set():
                raise _Stopped()
            try:
                q.put(item, timeout=0.2)
                return
            except queue.Full:
                continue

    def _get(self, q: queue.Queue[Any], tick: Callable[[], None]) -> Any:
        while True:
            self._raise_errors()
            if self._stop.is_set():
                raise _Stopped()
            try:
                return q.get(timeout=0.2)
            except queue.Empty:
                tick()

    def _raise_errors(self) -> None:
        if self._errors:
            raise self._errors[0]


def _shadow_tables(con: sqlite3.Connection) -> list[str]:
    """The FTS5 shadow tables of ``search_fts`` that hold the index (not its config)."""
    rows = con.execute(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'search^_fts^_%' "
        "ESCAPE '^' AND name <> 'search_fts_config' ORDER BY name"
    )
    return [r[0] for r in rows]


def _remove(path: Path) -> None:
    for suffix in ("", "-journal", "-wal", "-shm"):
        with contextlib.suppress(FileNotFoundError):
            Path(f"{path}{suffix}").unlink()

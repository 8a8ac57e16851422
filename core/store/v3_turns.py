"""Converting and indexing a v3 file's turns on two threads while the upgrade writes them.

Building the full-text index is the slowest part of an upgrade (FTS5 indexes
some 15–30 MB of text per second here), so it runs beside the rest instead of
after it, on the machine's second core:

* the *converter* thread reads the v3 turns from the backup (a read-only,
  immutable copy of the same rows, so it never contends for the database's
  locks), converts them and prepares their search text
  (:func:`core.store.v3_convert.convert_turn_indexed` — exactly what the v4
  triggers index) and hands batches to the two others;
* the *indexer* thread feeds that text, then the session titles, into an FTS5
  table of the same definition (``core.store.schema.SEARCH_DDL``) in a scratch
  file beside the database; SQLite releases the GIL while it indexes. Each
  batch goes through a temporary table and one ``INSERT … SELECT`` using the
  schema's own row expressions (the ones its triggers use), with the SQL
  function ``parley_turn_text`` returning the text already prepared — not
  through the triggers themselves, row by row, which measured six times
  slower (FTS5 then writes many small segments);
* the upgrade's own thread inserts the converted turns (:meth:`TurnPipeline.batches`)
  and, at the end, copies the finished index's shadow tables into the
  database (:meth:`TurnPipeline.copy_index`) inside its transaction. It
  attaches the scratch file before its transaction begins (SQLite cannot
  attach inside one) and takes no lock on it until then.

Turn numbers (``turns.n``, the index's rowid) are given by the converter in
v3 rowid order, so the index and the rows agree without a round trip. Turns of
sessions that no longer exist (v3 ran without foreign keys) are skipped.
Progress counts v3 turn rows, skipped ones included. The scratch file is
deleted before the upgrade commits; one left by a kill is deleted by the next
upgrade (the file is then still v3).
"""

from __future__ import annotations

import contextlib
import json
import queue
import sqlite3
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from core.store import schema, textindex
from core.store.v3_convert import convert_turn_indexed

BATCH = 5_000  # v3 rows per batch handed between threads
QUEUE_BATCHES = 8  # batches buffered per queue (bounds memory to a few dozen MB)
FTS_HASH_BYTES = 32 * 1024 * 1024  # FTS5 'hashsize' of the scratch index: fewer, bigger flushes
INDEX_SUFFIX = ".parley-v4-index.tmp"
SCRATCH = "v3index"  # schema name of the attached scratch file

TurnRow = tuple[int, str, str, Any, str, str, Any]  # n, id, session_id, seq, role, blocks, created
_DONE = object()

# The rows the schema's triggers index for a turn and for a session title, as SQL over
# a row alias (core.store.schema; asked to become public under these names).
TURN_ROW_SQL: str = getattr(schema, "TURN_SEARCH_ROW", None) or schema._TURN_ROW
TITLE_ROW_SQL: str = getattr(schema, "TITLE_SEARCH_ROW", None) or schema._TITLE_ROW
# Rows come as one JSON array of [a, b, c] arrays per batch, named by ``columns``.
_INDEX = (
    "INSERT INTO search_fts (rowid, title, body, scope) SELECT {} FROM (SELECT "
    "value ->> 0 AS {c[0]}, value ->> 1 AS {c[1]}, value ->> 2 AS {c[2]} FROM json_each(?)) AS r"
)
#: Writes one batch of converted turns (see :meth:`TurnPipeline.batches`).
INSERT_TURNS_SQL = (
    "INSERT INTO turns (n, id, session_id, seq, role, blocks, created_at) SELECT "
    "value ->> 0, value ->> 1, value ->> 2, value ->> 3, value ->> 4, value ->> 5, value ->> 6 "
    "FROM json_each(?)"
)


class _Stopped(Exception):
    """The upgrade's thread gave up; a worker thread ends quietly."""


def index_path_for(db: Path) -> Path:
    """Return the scratch index file used while upgrading ``db``."""
    return db.with_name(db.name + INDEX_SUFFIX)


class TurnPipeline:
    """The converter and indexer threads of one upgrade (see the module docstring).

    Use as a context manager: leaving it stops both threads and deletes the
    scratch index file, whatever happened.

    Attributes:
        rows_indexed: v3 turn rows whose text is indexed (skipped ones included).
    """

    def __init__(self, backup: Path, index_path: Path, id_prefix: str, batch: int | None = None):
        self.backup = backup
        self.index_path = index_path
        self.id_prefix = id_prefix
        self.batch = batch or BATCH
        self.rows_indexed = 0
        self._to_writer: queue.Queue[Any] = queue.Queue(QUEUE_BATCHES)
        self._to_index: queue.Queue[Any] = queue.Queue(QUEUE_BATCHES)
        self._titles: list[tuple[int, str, str | None]] | None = None
        self._titles_set = threading.Event()
        self._ready = threading.Event()
        self._index_done = threading.Event()
        self._stop = threading.Event()
        self._errors: list[BaseException] = []
        self._threads = [
            threading.Thread(target=self._guard, args=(fn,), name=name, daemon=True)
            for name, fn in (("v3-convert", self._convert), ("v3-index", self._index))
        ]

    def __enter__(self) -> TurnPipeline:
        _remove(self.index_path)
        for t in self._threads:
            t.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        for t in self._threads:
            t.join()
        _remove(self.index_path)

    # --- the upgrade's thread ------------------------------------------------------

    def attach(self, con: sqlite3.Connection) -> None:
        """Attach the scratch index to ``con`` as :data:`SCRATCH` (before its transaction)."""
        while not self._ready.wait(0.1):
            self._raise_errors()
        con.execute(f"ATTACH DATABASE ? AS {SCRATCH}", (str(self.index_path),))

    def set_titles(self, rows: list[tuple[int, str, str | None]]) -> None:
        """Index session titles, given as ``(sessions.n, sessions.id, title)`` rows."""
        self._titles = rows
        self._titles_set.set()

    def batches(self, tick: Callable[[], None]) -> Iterator[tuple[str, int, int, int]]:
        """Yield ``(rows, turns, recovered, v3 rows read)`` in order until all are converted.

        ``rows`` is one JSON text holding the batch's turn rows, for
        :data:`INSERT_TURNS_SQL`; ``turns`` counts them, ``recovered`` counts the
        damaged ones kept verbatim, ``v3 rows read`` includes skipped rows.

        ``tick`` is called at least every 0.2 s while waiting (for progress reports).

        Raises:
            Exception: whatever stopped a worker thread.
        """
        while True:
            item = self._get(self._to_writer, tick)
            if item is _DONE:
                return
            yield item

    def copy_index(self, con: sqlite3.Connection, tick: Callable[[], None]) -> None:
        """Wait for the index, then make it the database's own (inside ``con``'s transaction).

        The FTS5 shadow tables holding the index (``search_fts_data``, ``_idx``,
        ``_docsize``) are replaced by the scratch file's; ``search_fts_config``
        stays the database's own. The scratch file is then deleted (where the
        OS allows deleting an open file; else on leaving the pipeline).
        """
        while not self._index_done.wait(0.2):
            self._raise_errors()
            tick()
        self._raise_errors()
        tables = _shadow_tables(con, "main")
        if tables != _shadow_tables(con, SCRATCH):
            raise RuntimeError(f"search index tables differ: {tables}")
        for table in tables:
            con.execute(f'DELETE FROM main."{table}"')
            con.execute(f'INSERT INTO main."{table}" SELECT * FROM {SCRATCH}."{table}"')
        with contextlib.suppress(OSError):
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
            # content as bytes: a damaged file may hold invalid UTF-8 (decoded with U+FFFD)
            cur = con.execute("SELECT rowid, session_id, idx, role, CAST(content AS BLOB), "
                              "created_at FROM turns ORDER BY rowid")
            n, prefix, convert = 0, self.id_prefix, convert_turn_indexed
            while rows := cur.fetchmany(self.batch):
                out: list[TurnRow] = []
                texts: list[tuple[int, str, str]] = []  # n, session_id, prepared search text
                recovered = 0
                for rowid, session_id, idx, role, content, created_at in rows:
                    if session_id not in sessions:
                        continue
                    role, blocks, damaged, text = convert(role, content)
                    n += 1
                    out.append((n, f"{prefix}{rowid & 0xFFFF_FFFF_FFFF_FFFF:016x}", session_id,
                                idx, role, blocks, created_at))
                    texts.append((n, session_id, text))
                    recovered += damaged
                # One JSON text per batch, unpacked by SQLite (json_each): the other threads
                # then need the GIL once per batch, not once per row, while this one holds
                # it nearly all the time.
                self._put(self._to_writer, (_batch_json(out), len(out), recovered, len(rows)))
                self._put(self._to_index, (_batch_json(texts), len(rows)))
        finally:
            con.close()
        self._put(self._to_writer, _DONE)
        self._put(self._to_index, _DONE)

    def _index(self) -> None:
        con = sqlite3.connect(self.index_path, isolation_level=None, check_same_thread=False)
        try:
            for pragma in ("journal_mode = OFF", "synchronous = OFF", "cache_size = -65536",
                           "busy_timeout = 5000", "temp_store = MEMORY"):
                con.execute(f"PRAGMA {pragma}")
            textindex.register_functions(con)
            # The converter already prepared each turn's text with the same function.
            con.create_function("parley_turn_text", 1, _prepared, deterministic=True)
            for ddl in schema.SEARCH_DDL:
                con.execute(ddl)
            con.execute("INSERT INTO search_fts (search_fts, rank) VALUES ('hashsize', ?)",
                        (FTS_HASH_BYTES,))
            self._ready.set()
            con.execute("BEGIN")
            index_turns = _INDEX.format(_turn_row_prepared().format("r"),
                                        c=("n", "session_id", "blocks"))
            while (item := self._get(self._to_index, lambda: None)) is not _DONE:
                texts_json, rows_read = item
                con.execute(index_turns, (texts_json,))
                self.rows_indexed += rows_read
            while not self._titles_set.wait(0.2):
                if self._stop.is_set():
                    raise _Stopped()
            con.execute(_INDEX.format(TITLE_ROW_SQL.format("r"), c=("n", "id", "title")),
                        (_batch_json(self._titles or []),))
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


def _shadow_tables(con: sqlite3.Connection, db: str) -> list[str]:
    """The FTS5 shadow tables of ``search_fts`` that hold the index (not its config)."""
    rows = con.execute(
        f"SELECT name FROM {db}.sqlite_master WHERE type = 'table' AND name LIKE "
        "'search^_fts^_%' ESCAPE '^' AND name <> 'search_fts_config' ORDER BY name"
    )
    return [r[0] for r in rows]


def _remove(path: Path) -> None:
    for suffix in ("", "-journal", "-wal", "-shm"):
        with contextlib.suppress(FileNotFoundError):
            Path(f"{path}{suffix}").unlink()


def _prepared(text: str | None) -> str | None:
    """``parley_turn_text`` in the scratch index: the text comes prepared by the converter."""
    return text


def _turn_row_prepared() -> str:
    """The schema's search row of a turn, with ``parley_turn_text`` made the identity in SQL.

    The text is already prepared (by the same function), and a Python call per row
    would need the GIL once per row. Falls back to the (identity) SQL function when
    the expression does not call it exactly once as expected.
    """
    call = "parley_turn_text("
    if TURN_ROW_SQL.count(call) == 1:
        return TURN_ROW_SQL.replace(call, "(")
    return TURN_ROW_SQL


def _batch_json(rows: list[Any]) -> str:
    return _dumps(rows)


_dumps = json.JSONEncoder(
    ensure_ascii=False, separators=(",", ":"),
    default=lambda o: o.decode("utf-8", "replace") if isinstance(o, bytes) else str(o),
).encode

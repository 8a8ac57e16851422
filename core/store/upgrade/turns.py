"""Converting a v3 file's turns, and indexing them on a second thread meanwhile.

Building the full-text index is the slowest part of an upgrade (FTS5 indexes
some 30–40 MB of text per second here), so it runs beside the rest instead of
after it, on the machine's second core. Measured on the 1 GB benchmark file
(1M turns, 630 MB of text), each thread needs about 20 s of CPU:

* the upgrade's own thread reads the v3 turns (``v3_turns``, in its own
  transaction), converts them and prepares their search text
  (:func:`parley.core.store.upgrade.convert.convert_turn_indexed_json` — exactly what the
  v4 triggers index), inserts the turns, and hands the text to the indexer
  (:meth:`TurnPipeline.turns`);
* the *indexer* thread feeds that text, then the session titles, into an FTS5
  table of the same definition (``parley.core.store.schema.SEARCH_DDL``) in a scratch
  file beside the database, through the schema's own row expressions (the ones
  its triggers use) with ``parley_turn_text`` made the identity: the text is
  already prepared. Not through the triggers themselves, row by row: that
  measured six times slower (FTS5 then writes many small segments);
* at the end the upgrade's thread copies the finished index's shadow tables
  into the database (:meth:`TurnPipeline.copy_index`) inside its transaction.
  It attaches the scratch file before its transaction begins (SQLite cannot
  attach inside one) and takes no lock on it until then.

The GIL: the upgrade's thread runs Python nearly all the time, so the indexer
gets each batch as one JSON text unpacked by SQLite (``json_each``) and needs
the GIL a few times per batch, not once per row — waiting for it once per row
made the indexer several times slower. The batch is a JSON object keyed by
``"<n> <session id>"`` whose values are the texts (see :data:`_INDEX_TURNS`);
most texts are cut out of the v3 JSON as they are, never decoded and encoded
again.

Turn numbers (``turns.n``, the index's rowid) follow v3 rowid order. Turns of
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
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from parley.core.store import schema, textindex
from parley.core.store.upgrade.convert import convert_turn_indexed_json

BATCH = 5_000  # v3 rows per batch
QUEUE_BATCHES = 8  # batches of text waiting for the indexer (bounds memory to ~30 MB)
FTS_HASH_BYTES = 32 * 1024 * 1024  # FTS5 'hashsize' of the scratch index: fewer, bigger flushes
INDEX_SUFFIX = ".parley-v4-index.tmp"
SCRATCH = "v3index"  # schema name of the attached scratch file
SCRATCH_MMAP_BYTES = 1 << 31  # read the finished index through a memory map (SQLite caps it)

_DONE = object()

# The rows the schema's triggers index for a turn and for a session title, as SQL over
# a row alias (parley.core.store.schema).
TURN_ROW_SQL: str = schema.TURN_SEARCH_ROW
TITLE_ROW_SQL: str = schema.TITLE_SEARCH_ROW
# Titles come as one JSON array of [a, b, c] arrays, named by ``c``.
_INDEX = (
    "INSERT INTO search_fts (rowid, title, body, scope) SELECT {} FROM (SELECT "
    "value ->> 0 AS {c[0]}, value ->> 1 AS {c[1]}, value ->> 2 AS {c[2]} FROM json_each(?)) AS r"
)
# Turns come as one JSON object per batch, {"<n> <session id>": "<search text>", …}: each
# text is then a member's value, read once, where an [n, id, text] array would be written
# out again by json_each and parsed again by ->> (measured: 2 s more per million turns).
_INDEX_TURNS = (
    "INSERT INTO search_fts (rowid, title, body, scope) SELECT {} FROM (SELECT "
    "CAST(substr(key, 1, instr(key, ' ') - 1) AS INTEGER) AS n, "
    "substr(key, instr(key, ' ') + 1) AS session_id, value AS blocks FROM json_each(?)) AS r"
)
# A turn's id is the upgrade's prefix and its v3 rowid as 16 hex digits (two's
# complement for a negative rowid), formatted by SQLite rather than per row in Python.
_INSERT_TURNS = (
    "INSERT INTO turns (n, id, session_id, seq, role, blocks, created_at) "
    "VALUES (?, ? || printf('%016x', ?), ?, ?, ?, ?, ?)"
)


class _Stopped(Exception):
    """The upgrade's thread gave up; the indexer ends quietly."""


def index_path_for(db: Path) -> Path:
    """Return the scratch index file used while upgrading ``db``."""
    return db.with_name(db.name + INDEX_SUFFIX)


class TurnPipeline:
    """The turn conversion of one upgrade and its indexer thread (see the module docstring).

    Use as a context manager: leaving it stops the indexer and deletes the
    scratch index file, whatever happened.

    Attributes:
        rows_indexed: v3 turn rows whose text is indexed (skipped ones included).
        waited: seconds the upgrade's thread ("write"; "write, for the last
            batches" once its own work is done) and the indexer ("index") spent
            waiting on each other — for benchmarks.
    """

    def __init__(self, index_path: Path, id_prefix: str, batch: int | None = None):
        self.index_path = index_path
        self.id_prefix = id_prefix
        self.batch = batch or BATCH
        self.rows_indexed = 0
        self.waited = {"write": 0.0, "index": 0.0}
        self._to_index: queue.Queue[Any] = queue.Queue(QUEUE_BATCHES)
        self._titles: list[tuple[int, str, str | None]] | None = None
        self._ready = threading.Event()
        self._index_done = threading.Event()
        self._stop = threading.Event()
        self._errors: list[BaseException] = []
        self._thread = threading.Thread(target=self._guard, name="v3-index", daemon=True)

    def __enter__(self) -> TurnPipeline:
        _remove(self.index_path)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        _remove(self.index_path)

    # --- the upgrade's thread ------------------------------------------------------

    def attach(self, con: sqlite3.Connection) -> None:
        """Attach the scratch index to ``con`` as :data:`SCRATCH` (before its transaction)."""
        while not self._ready.wait(0.1):
            self._raise_errors()
        con.execute(f"ATTACH DATABASE ? AS {SCRATCH}", (str(self.index_path),))

    def turns(
        self, con: sqlite3.Connection, v3_turns: str, v3_sessions: str
    ) -> Iterator[tuple[int, int, int]]:
        """Convert and insert every v3 turn, a batch at a time.

        Reads the v3 tables (renamed ``v3_turns``, ``v3_sessions``) through
        ``con`` and inserts the v4 rows into ``turns``, in ``con``'s
        transaction; their search text goes to the indexer.

        Yields:
            After each batch: ``(turns inserted, of them recovered, v3 rows read)``.

        Raises:
            Exception: whatever stopped the indexer.
        """
        sessions = {r[0] for r in con.execute(f"SELECT id FROM {v3_sessions}")}
        # content as bytes: a damaged file may hold invalid UTF-8 (decoded with U+FFFD)
        cur = con.execute(f"SELECT rowid, session_id, idx, role, CAST(content AS BLOB), "
                          f"created_at FROM {v3_turns} ORDER BY rowid")
        n, prefix, convert = 0, self.id_prefix, convert_turn_indexed_json
        sid_json: dict[Any, str] = {}  # session id -> it JSON-escaped, without quotes
        while rows := cur.fetchmany(self.batch):
            out: list[tuple[Any, ...]] = []
            texts: list[str] = []  # '"<n> <session id>":"<prepared search text>"', JSON
            recovered = 0
            for rowid, session_id, idx, role, content, created_at in rows:
                if session_id not in sessions:
                    continue
                role, blocks, damaged, text_json = convert(role, content)
                n += 1
                out.append((n, prefix, rowid, session_id, idx, role, blocks, created_at))
                sid = sid_json.get(session_id)
                if sid is None:
                    sid = sid_json[session_id] = _dumps(_text_or_bytes(session_id))[1:-1]
                texts.append(f'"{n} {sid}":{text_json}')
                recovered += damaged
            con.executemany(_INSERT_TURNS, out)
            self._put(("{" + ",".join(texts) + "}", len(rows)))
            yield len(out), recovered, len(rows)
        self._put(_DONE)

    def set_titles(self, rows: list[tuple[int, str, str | None]]) -> None:
        """Index session titles, given as ``(sessions.n, sessions.id, title)`` rows."""
        self._titles = rows

    def copy_index(self, con: sqlite3.Connection, tick: Callable[[], None]) -> None:
        """Wait for the index, then make it the database's own (inside ``con``'s transaction).

        The FTS5 shadow tables holding the index (``search_fts_data``, ``_idx``,
        ``_docsize``) are replaced by the scratch file's; ``search_fts_config``
        stays the database's own. The scratch file is then deleted (where the
        OS allows deleting an open file; else on leaving the pipeline).
        """
        started = time.monotonic()
        while not self._index_done.wait(0.2):
            self._raise_errors()
            tick()
        self.waited["write, for the last batches"] = time.monotonic() - started
        self._raise_errors()
        tables = _shadow_tables(con, "main")
        if tables != _shadow_tables(con, SCRATCH):
            raise RuntimeError(f"search index tables differ: {tables}")
        # Read the finished scratch file mapped, not copied page by page into the cache.
        con.execute(f"PRAGMA {SCRATCH}.mmap_size = {SCRATCH_MMAP_BYTES}")
        for table in tables:
            con.execute(f'DELETE FROM main."{table}"')
            con.execute(f'INSERT INTO main."{table}" SELECT * FROM {SCRATCH}."{table}"')
        with contextlib.suppress(OSError):
            _remove(self.index_path)

    def _put(self, item: Any) -> None:
        started = time.monotonic()
        while True:
            self._raise_errors()
            try:
                self._to_index.put(item, timeout=0.2)
                break
            except queue.Full:
                continue
        self.waited["write"] += time.monotonic() - started

    def _raise_errors(self) -> None:
        if self._errors:
            raise self._errors[0]

    # --- the indexer thread ------------------------------------------------------------

    def _guard(self) -> None:
        try:
            self._index()
        except _Stopped:
            pass
        except BaseException as exc:  # reported to the upgrade's thread, which raises it
            self._errors.append(exc)

    def _index(self) -> None:
        con = sqlite3.connect(self.index_path, isolation_level=None, check_same_thread=False)
        try:
            for pragma in ("journal_mode = OFF", "synchronous = OFF", "cache_size = -65536",
                           "busy_timeout = 5000"):
                con.execute(f"PRAGMA {pragma}")
            textindex.register_functions(con)
            # The text comes prepared by the same function (used only if the schema's row
            # expression cannot be made to skip it, see _turn_row_prepared).
            con.create_function("parley_turn_text", 1, _prepared, deterministic=True)
            for ddl in schema.SEARCH_DDL:
                con.execute(ddl)
            con.execute("INSERT INTO search_fts (search_fts, rank) VALUES ('hashsize', ?)",
                        (FTS_HASH_BYTES,))
            self._ready.set()
            con.execute("BEGIN")
            index_turns = _INDEX_TURNS.format(_turn_row_prepared().format("r"))
            while (item := self._get()) is not _DONE:
                texts_json, rows_read = item
                con.execute(index_turns, (texts_json,))
                self.rows_indexed += rows_read
            # Titles come before the turns end (the sessions step runs first).
            con.execute(_INDEX.format(TITLE_ROW_SQL.format("r"), c=("n", "id", "title")),
                        (_batch_json(self._titles or []),))
            con.execute("COMMIT")
        finally:
            con.close()
        self._index_done.set()

    def _get(self) -> Any:
        started = time.monotonic()
        while True:
            if self._stop.is_set():
                raise _Stopped()
            try:
                item = self._to_index.get(timeout=0.2)
                self.waited["index"] += time.monotonic() - started
                return item
            except queue.Empty:
                continue


def _turn_row_prepared() -> str:
    """The schema's search row of a turn with ``parley_turn_text`` made the identity in SQL.

    Falls back to the (identity) Python function when the expression does not
    call it exactly once — correct, only slower (one GIL round per row).
    """
    call = "parley_turn_text("
    if TURN_ROW_SQL.count(call) == 1:
        return TURN_ROW_SQL.replace(call, "(")
    return TURN_ROW_SQL


def _prepared(text: str | None) -> str | None:
    """``parley_turn_text`` in the scratch index: the text comes prepared."""
    return text


def _text_or_bytes(value: Any) -> str | bytes:
    return value if isinstance(value, str | bytes) else str(value)


def _batch_json(rows: list[Any]) -> str:
    return _dumps(rows)


_dumps = json.JSONEncoder(
    ensure_ascii=False, separators=(",", ":"),
    default=lambda o: o.decode("utf-8", "replace") if isinstance(o, bytes) else str(o),
).encode


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

"""The SQLAlchemy engine on sessions.db, its connection set-up, and transactions.

Every connection gets, on connect: ``foreign_keys=ON``, ``busy_timeout``
(default 5000 ms), ``synchronous=NORMAL`` (with WAL: a commit survives a crash
of Parley; a power loss may lose the last commits, never corrupt the file),
``wal_autocheckpoint`` (:data:`WAL_AUTOCHECKPOINT_PAGES`),
the SQL functions of the search index, and SQLAlchemy's recipe for real
transactions with the ``sqlite3`` driver (``isolation_level=None`` and our own
``BEGIN``). ``journal_mode=WAL`` is a setting stored in the file, so it is set
once by :class:`parley.core.store.store.Store` when it creates or opens a v4 file —
not on connect, where it would write to a legacy or foreign file before we
know what it is.

Transactions: :func:`write` runs a function in ``BEGIN IMMEDIATE`` (takes the
write lock up front, so two writers never dead-lock on a lock upgrade) and
retries it when the file stays locked; :func:`read` runs one in a deferred
transaction (one consistent snapshot). Both map SQLite errors a user can act on
to :mod:`parley.core.store.errors`.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from sqlalchemy import create_engine, event
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.exc import DBAPIError
from sqlalchemy.pool import NullPool

from parley.core.store import textindex
from parley.core.store.errors import DatabaseBusy, translate

T = TypeVar("T")

DEFAULT_BUSY_TIMEOUT_MS = 5000
WRITE_ATTEMPTS = 3
#: A commit that pushes the WAL past this many pages copies it into the
#: database (~20 ms per 1000 pages here). ``Store.maintain`` checkpoints in
#: idle time, so saves rarely pay it; this bounds the WAL (~40 MB) if it does not.
WAL_AUTOCHECKPOINT_PAGES = 10_000
_BEGIN_KEY = "parley_begin"


def make_engine(path: Path, *, busy_timeout_ms: int = DEFAULT_BUSY_TIMEOUT_MS,
                uri: str | None = None) -> Engine:
    """Return an engine on one SQLite file (no pool: one connection per ``connect()``).

    Args:
        path: the database file.
        busy_timeout_ms: how long a statement waits for another process's lock (ms).
        uri: open this ``file:`` URI of ``path`` instead (``mode=ro``: only reading).

    Returns:
        An engine whose connections are set up as the module docstring says.
        Connections may be used from a thread other than the creating one
        (``check_same_thread=False``) but never from two threads at once.
    """
    engine = create_engine(
        "sqlite+pysqlite://",
        poolclass=NullPool,
        creator=lambda: sqlite3.connect(uri, uri=True, check_same_thread=False),
    ) if uri is not None else create_engine(
        f"sqlite+pysqlite:///{path}",
        poolclass=NullPool,
        connect_args={"check_same_thread": False},
    )

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_con: Any, _record: Any) -> None:
        dbapi_con.isolation_level = None
        cur = dbapi_con.cursor()
        cur.execute("PRAGMA foreign_keys = ON")
        cur.execute(f"PRAGMA busy_timeout = {int(busy_timeout_ms)}")
        cur.execute("PRAGMA synchronous = NORMAL")
        cur.execute(f"PRAGMA wal_autocheckpoint = {WAL_AUTOCHECKPOINT_PAGES}")
        cur.close()
        textindex.register_functions(dbapi_con)

    @event.listens_for(engine, "begin")
    def _on_begin(con: Connection) -> None:
        con.exec_driver_sql("BEGIN " + con.info.get(_BEGIN_KEY, "DEFERRED"))

    return engine


def write(con: Connection, fn: Callable[[Connection], T], path: Path) -> T:
    """Run ``fn(con)`` in one write transaction (``BEGIN IMMEDIATE``) and commit.

    ``fn`` must do all its work through ``con`` and be safe to run again: when
    the file stays locked by another process past the busy timeout, the whole
    transaction is retried, up to :data:`WRITE_ATTEMPTS` times.

    Raises:
        DatabaseBusy: still locked after the last attempt.
        DiskFull, DatabaseReadOnly, DatabaseCorrupt, DiskError: see
            :func:`parley.core.store.errors.translate`; the transaction was rolled back.
        StoreError: whatever ``fn`` raised (rolled back: nothing was written).
    """
    for attempt in range(1, WRITE_ATTEMPTS + 1):
        try:
            con.info[_BEGIN_KEY] = "IMMEDIATE"
            try:
                with con.begin():
                    return fn(con)
            finally:
                con.info[_BEGIN_KEY] = "DEFERRED"
        except DBAPIError as exc:
            err = translate(exc, path)
            if isinstance(err, DatabaseBusy) and attempt < WRITE_ATTEMPTS:
                time.sleep(0.05 * attempt)
                continue
            if err is not None:
                raise err from exc
            raise
    raise AssertionError("unreachable")  # pragma: no cover


def read(con: Connection, fn: Callable[[Connection], T], path: Path) -> T:
    """Run ``fn(con)`` in one read transaction (one consistent snapshot).

    Raises:
        DatabaseCorrupt, DatabaseBusy, DiskError: see :func:`parley.core.store.errors.translate`.
        StoreError: whatever ``fn`` raised.
    """
    try:
        with con.begin():
            return fn(con)
    except DBAPIError as exc:
        err = translate(exc, path)
        if err is not None:
            raise err from exc
        raise

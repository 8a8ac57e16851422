"""Reading a whole table in batches, for copies and merges between stores.

Keyset pagination: each batch is the next ``size`` rows after the last key read, so a
batch costs the same at the start of a million-row table as at its end (``OFFSET``
would read every skipped row again). Used by ``parley.core.store.transfer`` (a copy of
every chat) and ``parley.core.store.merge`` (a merge by ids).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from sqlalchemy import select, tuple_
from sqlalchemy.engine import Connection

#: Rows per batch (turns, sessions); attached files go :data:`BATCH_FILES` at a time.
BATCH_ROWS = 500
BATCH_FILES = 20


def keyset_batches(con: Connection, cols: Sequence[Any], order: Sequence[Any], size: int,
                   *, key_columns: int = 1) -> Iterator[list[dict[str, Any]]]:
    """The rows of ``cols`` (one table's columns) as dicts keyed by column name, in
    ``order``, ``size`` at a time. ``order[:key_columns]`` must be unique together and
    increasing (the key the next batch starts after, compared as a row value, which
    SQLite and PostgreSQL both read through a matching index); it is read even when it
    is not in ``cols``."""
    keys = list(order[:key_columns])
    extra = [k for k in keys if not any(c is k for c in cols)]
    last: tuple[Any, ...] | None = None
    while True:
        q = select(*cols, *extra).order_by(*order).limit(size)
        if last is not None:
            q = q.where(keys[0] > last[0] if len(keys) == 1 else tuple_(*keys) > tuple_(*last))
        rows = con.execute(q).all()
        if not rows:
            return
        last = tuple(getattr(rows[-1], k.name) for k in keys)
        yield [{c.name: getattr(r, c.name) for c in cols} for r in rows]

"""Reading a whole table in batches, for copies and merges between stores.

Keyset pagination: each batch is the next ``size`` rows after the last key read, so a
batch costs the same at the start of a million-row table as at its end (``OFFSET``
would read every skipped row again). Used by ``parley.core.store.transfer`` (a copy of
every chat) and ``parley.core.store.merge`` (a merge by ids).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from sqlalchemy import select
from sqlalchemy.engine import Connection

#: Rows per batch (turns, sessions); attached files go :data:`BATCH_FILES` at a time.
BATCH_ROWS = 500
BATCH_FILES = 20


def keyset_batches(con: Connection, cols: Sequence[Any], order: Sequence[Any], size: int
                   ) -> Iterator[list[dict[str, Any]]]:
    """The rows of ``cols`` (one table's columns) as dicts keyed by column name, in
    ``order``, ``size`` at a time. ``order[0]`` must be unique and increasing (the key
    the next batch starts after); it is read even when it is not in ``cols``."""
    key = order[0]
    extra = [] if any(c is key for c in cols) else [key]
    last: Any = None
    while True:
        q = select(*cols, *extra).order_by(*order).limit(size)
        if last is not None:
            q = q.where(key > last)
        rows = con.execute(q).all()
        if not rows:
            return
        last = getattr(rows[-1], key.name)
        yield [{c.name: getattr(r, c.name) for c in cols} for r in rows]

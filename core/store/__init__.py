"""Parley's session store: sessions.db (SQLite, WAL) through SQLAlchemy Core.

Public entry points: :class:`Store` (synchronous, thread-confined),
:class:`AsyncStore` (the same API awaitable, on one worker thread), the records
of :mod:`parley.core.store.models` and the errors of :mod:`parley.core.store.errors`. The
schema and ``create_all`` live in :mod:`parley.core.store.schema`.
"""

from parley.core.store.async_store import AsyncStore
from parley.core.store.errors import StoreError
from parley.core.store.models import UNCHANGED, Compaction, SearchHit, Session, Space
from parley.core.store.store import Store

__all__ = [
    "UNCHANGED",
    "AsyncStore",
    "Compaction",
    "SearchHit",
    "Session",
    "Space",
    "Store",
    "StoreError",
]

"""Parley's session store: sessions.db (SQLite, WAL) through SQLAlchemy Core.

Public entry points: :class:`Store` (synchronous, thread-confined),
:class:`AsyncStore` (the same API awaitable, on one worker thread), the records
of :mod:`core.store.models` and the errors of :mod:`core.store.errors`. The
schema and ``create_all`` live in :mod:`core.store.schema`.
"""

from core.store.async_store import AsyncStore
from core.store.errors import StoreError
from core.store.models import UNCHANGED, Compaction, SearchHit, Session, Space
from core.store.store import Store

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

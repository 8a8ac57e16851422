"""Which store to open: a sessions.db file (SQLite, the default) or a PostgreSQL database.

A target that is a ``postgresql://`` URL (``--database``, ``PARLEY_DATABASE_URL``)
opens :class:`parley.core.store.pg_store.PgStore`; anything else is a file path and
opens :class:`parley.core.store.store.Store` exactly as before.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from parley.core.store.pg_store import PgStore, is_database_url
from parley.core.store.store import Store

#: Environment variable naming the database to use instead of sessions.db.
DATABASE_URL_ENV = "PARLEY_DATABASE_URL"


def database_url(cli_value: str | None = None) -> str | None:
    """The database URL chosen: ``--database`` first, then ``PARLEY_DATABASE_URL``; else None."""
    value = cli_value or os.environ.get(DATABASE_URL_ENV) or None
    return value.strip() if value else None


def open_store(target: Path | str, **kwargs: Any) -> Store:
    """Open the store at ``target``: a PostgreSQL URL, or a sessions.db path.

    Args:
        target: ``postgresql://…`` or a file path.
        kwargs: for a file, :meth:`parley.core.store.store.Store.open`'s keyword arguments
            (ignored for a database).

    Raises:
        StoreError: see :meth:`Store.open` and :meth:`PgStore.open_url`.
    """
    if is_database_url(target):
        return PgStore.open_url(str(target))
    return Store.open(target, **kwargs)

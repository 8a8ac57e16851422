"""The conversation tree as stored (``turn_links``, ``turn_path``), read behind the store's
back on either backend, for tests of what copies, merges and rescues carry."""

from __future__ import annotations

from typing import Any

from parley.core.store.store import Store
from tests.core.rawdb import raw_rows


def links(db: Store, session_id: str) -> list[tuple[Any, ...]]:
    """``(turn_id, parent_id, shown_at)`` of every turn of the session, by turn id."""
    return raw_rows(db, "SELECT turn_id, parent_id, shown_at FROM turn_links "
                        "WHERE session_id = ? ORDER BY turn_id", (session_id,))


def path(db: Store, session_id: str) -> list[str]:
    """The ids of the turns on the path the session shows, first message first."""
    return [r[0] for r in raw_rows(db, "SELECT turn_id FROM turn_path WHERE session_id = ? "
                                       "ORDER BY pos", (session_id,))]


def parents(db: Store, session_id: str) -> dict[str, str | None]:
    """Each turn's parent id (None: a first message)."""
    return {t: p for t, p, _ in links(db, session_id)}

"""The conversation tree as stored (``turn_links``, ``turn_path``), read behind the store's
back on either backend, and a chat with branches made through the store's API, for tests
of what copies, merges and rescues carry."""

from __future__ import annotations

from typing import Any

from parley.core.content import TextBlock, Turn
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


def say(db: Store, sid: str, role: str, text: str) -> Turn:
    return db.append_turn(sid, Turn(role, [TextBlock(text)]))  # type: ignore[arg-type]


def branched(db: Store) -> str:
    """A chat whose question was edited and whose answer was regenerated twice, showing
    the middle answer of the edited question."""
    sid = db.create_session(title="Bread").id
    q = say(db, sid, "user", "How long to proof?")
    say(db, sid, "assistant", "4 hours.")
    db.branch_before(sid, q.id)
    say(db, sid, "user", "How long to proof sourdough?")
    a1 = say(db, sid, "assistant", "6 hours.")
    db.branch_before(sid, a1.id)
    a2 = say(db, sid, "assistant", "Overnight in the fridge.")
    say(db, sid, "user", "Which fridge shelf?")
    db.branch_before(sid, a2.id)
    say(db, sid, "assistant", "Until it doubles.")
    db.show_branch(sid, a2.id)
    return sid

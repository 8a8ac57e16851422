"""Versions in sessions.db: which forks are versions, a chat's sessions, the one shown.

A fork made by editing a message or regenerating a reply is a *version* of
its chat, not a chat of its own: it is not listed (``sessions.list_page``
leaves it out while its parent is stored) and the chat shows it as ‹ n/m ›
on the message where it parts (``parley.core.versions``). A fork made on purpose
("Fork from here") is listed, nested under its chat.

The kind is kept in the session's ``meta`` (no column, so files stay v4 and
an older Parley reads them unchanged): ``{"fork_kind": "version"}`` or
``{"fork_kind": "fork"}``. Forks written before the kind existed have no key;
they are recognised by the titles Edit and Regenerate gave them — "<title>
(edited)", "Answer N (<model>, <time>) · <title>", "<title> (previous
answer)" — so files made by earlier builds show their edits and regenerations
as versions with no rewrite of the file. The rule in SQL, for both backends,
is :mod:`parley.core.store.version_kind`.

A chat's *root* is the first session up its parent links that is not a
version (or whose parent is gone). The version shown is remembered in the
root's ``meta`` (``shown_version``), so it survives a restart.
"""

from __future__ import annotations

import json
from typing import Any

from sqlalchemy import func, select, text
from sqlalchemy.engine import Connection

from parley.core.store import schema
from parley.core.store.dialect import dual_text
from parley.core.store.errors import SessionNotFound
from parley.core.store.postgres import sql as pg_sql
from parley.core.store.version_kind import is_version_sql
from parley.core.versions import Member, TurnKey, Versions, branch_points, copy_in, is_summary

KIND_KEY = "fork_kind"
VERSION = "version"
FORK = "fork"
SHOWN_KEY = "shown_version"
#: The root's ``meta`` key of the sessions shown, the latest first (at most RECENT_MAX).
RECENT_KEY = "recent_versions"
RECENT_MAX = 100

def fork_meta(parent_meta: dict[str, Any], kind: str, nest_under: str | None = None
              ) -> dict[str, Any]:
    """The ``meta`` of a new fork: the parent's keys, the fork's kind, and for a fork
    made on purpose from a version, the chat it is listed under (``nest_under``)."""
    meta = {k: v for k, v in parent_meta.items()
            if k not in (KIND_KEY, SHOWN_KEY, RECENT_KEY, "nest_under")}
    meta[KIND_KEY] = kind
    if nest_under is not None:
        meta["nest_under"] = nest_under
    return meta


_PARENT = dual_text(
    f"SELECT s.parent_session_id AS parent, {is_version_sql('s', 'sqlite')} AS version, "
    "EXISTS (SELECT 1 FROM sessions p WHERE p.id = s.parent_session_id) AS parent_stored "
    "FROM sessions s WHERE s.id = :sid",
    pg_sql.VERSION_PARENT,
)
_FAMILY = dual_text(
    "WITH RECURSIVE fam(id) AS (SELECT :root UNION "
    f"SELECT s.id FROM sessions s JOIN fam ON s.parent_session_id = fam.id "
    f"WHERE {is_version_sql('s', 'sqlite')} = 1) "
    "SELECT s.id, s.created_at, s.updated_at FROM sessions s JOIN fam ON fam.id = s.id",
    pg_sql.VERSION_FAMILY,
)
_TURNS = dual_text(
    "SELECT t.session_id, t.id, t.seq, t.role, t.created_at, t.blocks FROM turns t "
    "WHERE t.session_id IN (SELECT value FROM json_each(:ids)) AND t.seq >= :cut "
    "ORDER BY t.session_id, t.seq",
    pg_sql.VERSION_TURNS,
)
_META = text("SELECT meta FROM sessions WHERE id = :sid")
_SET_SHOWN = dual_text(
    "UPDATE sessions SET meta = json_set(CASE WHEN json_valid(meta) THEN meta ELSE '{}' END, "
    "'$.shown_version', :shown, '$.recent_versions', json(:recent)) WHERE id = :root",
    pg_sql.SET_SHOWN,
)


def _meta(raw: str | None) -> dict[str, Any]:
    try:
        value = json.loads(raw or "{}")
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def chat_root(con: Connection, session_id: str) -> str:
    """The chat a session belongs to: itself, or for a version the root up its parents.

    Raises SessionNotFound.
    """
    cur, seen = session_id, {session_id}
    while True:
        row = con.execute(_PARENT, {"sid": cur}).first()
        if row is None:
            raise SessionNotFound(cur)
        if not row.version or row.parent is None or not row.parent_stored or row.parent in seen:
            return cur
        seen.add(row.parent)
        cur = row.parent


def members(con: Connection, root: str, *, with_turns: bool = True,
            shared: bool = False) -> list[Member]:
    """Every session of the chat ``root`` (root first), with its turns (``with_turns``;
    only read when the chat has versions: a chat alone has nothing to compare).

    ``shared``: leave out the turns every member holds as copies of the same turns, those
    stored before the earliest turn a version was made at (:func:`_shared_until`), so
    the versions of a long chat are told apart by reading what follows (each member's
    ``turns`` then start there, at the same place in every member). Not for
    :func:`locate`, which looks for any message.
    """
    rows = list(con.execute(_FAMILY, {"root": root}))
    rows.sort(key=lambda r: (r.id != root, r.created_at))
    keys: dict[str, list[TurnKey]] = {r.id: [] for r in rows}
    if with_turns and len(rows) > 1:
        cut = _shared_until(con, list(keys)) if shared else 0
        for t in con.execute(_TURNS, {"ids": json.dumps(list(keys)), "cut": cut}):
            if not is_summary(t.blocks):  # no message (parley.core.versions)
                keys[t.session_id].append(TurnKey(t.id, t.role, t.created_at, t.blocks))
    return [Member(r.id, r.created_at, r.updated_at, tuple(keys[r.id])) for r in rows]


def _shared_until(con: Connection, ids: list[str]) -> int:
    """The ``seq`` below which the sessions ``ids`` (a chat and its versions) hold the
    same turns: the earliest turn a version was made at (a fork copies every turn up to
    it, ``parley.core.store.forks``; an edit of the first message replaces that one).
    0 when one is unknown or when the sessions do not hold as many turns before it
    (then every turn is compared)."""
    sessions_t = schema.sessions
    forked = [r.forked_from_turn_id for r in con.execute(
        select(sessions_t.c.forked_from_turn_id).where(sessions_t.c.id.in_(ids[1:])))]
    if not forked or any(f is None for f in forked):
        return 0
    seqs = [int(s) for s in con.execute(
        select(schema.turns.c.seq).where(schema.turns.c.id.in_(forked))).scalars()]
    if len(seqs) != len(set(forked)):
        return 0  # a turn made at was deleted since
    cut = min(seqs)
    turns_t = schema.turns
    counts = {str(r[0]): int(r[1]) for r in con.execute(
        select(turns_t.c.session_id, func.count()).where(turns_t.c.session_id.in_(ids))
        .where(turns_t.c.seq < cut).group_by(turns_t.c.session_id))}
    same = len(counts) == len(ids) and len(set(counts.values())) == 1
    return cut if cut > 0 and same else 0


def versions(con: Connection, session_id: str) -> Versions:
    """The versions of ``session_id``'s chat as seen from it. Raises SessionNotFound."""
    root = chat_root(con, session_id)
    family = members(con, root, shared=True)
    recent = _recent(con, root) if len(family) > 1 else []
    points = branch_points(session_id, family, recent)
    return Versions(root, session_id, tuple(m.session_id for m in family), points)


def _recent(con: Connection, root: str) -> list[str]:
    """The sessions of the chat ``root`` shown before, the latest first."""
    value = _meta(con.execute(_META, {"sid": root}).scalar()).get(RECENT_KEY)
    return [s for s in value if isinstance(s, str)] if isinstance(value, list) else []


def remember(con: Connection, session_id: str) -> None:
    """Record ``session_id`` as the version its chat shows, and first of those shown
    lately (each branch point then leads back to the version last chosen there); nothing
    for a chat without versions. Raises SessionNotFound."""
    root = chat_root(con, session_id)
    family = members(con, root, with_turns=False)
    if len(family) < 2:
        return
    recent = _recent(con, root)
    if shown_version(con, root, family) == session_id and recent[:1] == [session_id]:
        return
    ids = {m.session_id for m in family}
    recent = [session_id, *(s for s in recent if s != session_id and s in ids)][:RECENT_MAX]
    con.execute(_SET_SHOWN, {"shown": session_id, "root": root, "recent": json.dumps(recent)})


def shown_version(con: Connection, root: str, family: list[Member] | None = None) -> str:
    """The session to open for the chat ``root``: the version chosen last, else (a file
    from an earlier build) the session with the latest activity."""
    family = members(con, root, with_turns=False) if family is None else family
    if len(family) == 1:
        return family[0].session_id
    ids = {m.session_id for m in family}
    meta = _meta(con.execute(_META, {"sid": root}).scalar())
    chosen = meta.get(SHOWN_KEY)
    if isinstance(chosen, str) and chosen in ids:
        return chosen
    return max(family, key=lambda m: (m.updated_at, m.created_at)).session_id


def locate(con: Connection, session_id: str, turn_id: str) -> tuple[str, str]:
    """Where to show a message found by search: ``(session, turn)``.

    A message every version shares is shown in the version shown now (its copy);
    a message of one version only opens that version.
    """
    root = chat_root(con, session_id)
    family = members(con, root)
    if len(family) < 2:
        return session_id, turn_id
    shown = shown_version(con, root, family)
    by_id = {m.session_id: m for m in family}
    copy = copy_in(by_id[shown], by_id[session_id], turn_id)
    return (shown, copy) if copy is not None else (session_id, turn_id)


_TITLE = text("SELECT title FROM sessions WHERE id = :sid")


def chat_titles(con: Connection, session_ids: set[str]) -> dict[str, str | None]:
    """``{session id: its chat's title}`` for the versions among ``session_ids`` (a
    version's own title, "<title> (edited)" or "Answer 2 (…)", is never shown)."""
    out: dict[str, str | None] = {}
    for sid in session_ids:
        root = chat_root(con, sid)
        if root != sid:
            out[sid] = con.execute(_TITLE, {"sid": root}).scalar()
    return out

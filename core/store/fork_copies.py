"""One search hit per message: a message's copies in forks collapse into one hit.

A fork starts with copies of the path its parent showed
(:func:`parley.core.store.forks.fork`: new ids, same ``seq``, role, blocks and
``created_at``), so a word of an early message matches the original and every fork's
copy. (Edits and regenerations copy nothing: they are branches inside their session,
each message stored once.) :class:`Collapser` reads the ranked index rows of a search
(:mod:`parley.core.store.search`) and resolves each to a :class:`Pick`: outside a
one-session scope, copies become one hit in the chat where the message was
written (the oldest session holding it: a parent is always older than its
forks; if the original was deleted, the oldest surviving copy), counting how
many other chats hold it (``SearchHit.fork_copies``).

A copy is a turn of the same fork family (sessions linked by
``parent_session_id``; siblings of a deleted parent stay one family) with the
same ``seq``, role, ``created_at`` (ms) and stored blocks or searchable text (a
fork re-links the ids inside compaction summaries): identical text in
unrelated chats, and a fork's own later turns, are separate hits. The limit
counts collapsed hits; up to :data:`MAX_CANDIDATES` ranked rows are read to
fill it.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Iterable, Sequence
from typing import Any, NamedTuple, Protocol

from sqlalchemy import bindparam, text
from sqlalchemy.engine import Connection

from parley.core.store.dialect import dual_text
from parley.core.store.postgres import sql as pg_sql
from parley.core.store.schema import TITLE_ROWID_BASE

#: Ranked rows read at most to fill a search's limit with distinct messages when
#: many are copies (a message in 9 chats takes 9 rows). Rows are read as needed:
#: a search without copies reads ``limit`` rows.
MAX_CANDIDATES = 2000

_CANDIDATES = text(
    "SELECT t.n, t.id, t.session_id, t.seq, t.created_at, s.n AS sn, s.created_at AS screated, "
    "s.title, s.parent_session_id AS parent, "
    "EXISTS (SELECT 1 FROM sessions f WHERE f.parent_session_id = t.session_id) AS has_forks "
    "FROM turns t JOIN sessions s ON s.id = t.session_id WHERE t.n IN :ns"
).bindparams(bindparam("ns", expanding=True))
_TITLES = text(
    "SELECT s.n, s.id, s.title, s.updated_at FROM sessions s WHERE s.n IN :ns"
).bindparams(bindparam("ns", expanding=True))
# A session's ancestors (ids and parents), then every session under some roots.
_UP = dual_text(
    "WITH RECURSIVE up(id, parent) AS (SELECT id, parent_session_id FROM sessions "
    "WHERE id IN (SELECT value FROM json_each(:ids)) UNION "
    "SELECT s.id, s.parent_session_id FROM up JOIN sessions s ON s.id = up.parent) "
    "SELECT id, parent FROM up",
    pg_sql.COPIES_UP,
)
_DOWN = dual_text(
    "WITH RECURSIVE fam(root, id) AS (SELECT value, value FROM json_each(:roots) UNION "
    "SELECT fam.root, s.id FROM fam JOIN sessions s ON s.parent_session_id = fam.id) "
    "SELECT fam.root, s.id, s.n, s.created_at, s.space_id, s.title "
    "FROM fam JOIN sessions s ON s.id = fam.id",
    pg_sql.COPIES_DOWN,
)
# Copies of turns in given sessions: one index probe per (turn, session) pair.
# Blocks are compared as stored, else by searchable text (a fork re-links the ids
# inside compaction summaries).
_COPIES = dual_text(
    "SELECT c.n AS cand, t.n, t.id, t.session_id FROM json_each(:pairs) AS p "
    "CROSS JOIN turns AS c ON c.n = json_extract(p.value, '$[0]') "
    "CROSS JOIN turns AS t ON t.session_id = json_extract(p.value, '$[1]') AND t.seq = c.seq "
    "WHERE t.n <> c.n AND t.created_at = c.created_at AND t.role = c.role "
    "AND (t.blocks = c.blocks OR parley_turn_text(t.blocks) = parley_turn_text(c.blocks))",
    pg_sql.COPIES,
)


class Pick(NamedTuple):
    """What one shown hit stands for: the chat/turn to open and where its snippet comes from."""

    key: tuple[str, str]  # ('turn', representative turn id) | ('title', session id)
    source: int  # the index rowid whose text makes the snippet
    session_id: str
    turn_id: str | None
    title: str | None
    created_at: int
    copies: int = 0


class _Member(NamedTuple):
    """A session of a fork family, with what ordering and scope need."""

    id: str
    n: int
    created_at: int
    space_id: str
    title: str | None


class RankedRows(Protocol):
    """Ranked ``(r, rank)`` rows read in chunks: a query's result, or rows made as read."""

    def fetchmany(self, size: int) -> Sequence[Any]:
        """The next ``size`` rows at most (none: the end)."""
        ...

    def close(self) -> None:
        """Stop reading."""
        ...


class Collapser:
    """Resolves ranked index rows to :class:`Pick` records, one per message (module doc).

    Args:
        con: the store connection (``parley_turn_text`` registered).
        space_id: only copies in this space count (a space-scoped search), or None.
        collapse: False for a one-session search (nothing to collapse there).
        exclude: session ids whose hits and copies never count.
    """

    def __init__(
        self, con: Connection, space_id: str | None, collapse: bool, exclude: Collection[str]
    ) -> None:
        self.con, self.space_id, self.collapse = con, space_id, collapse
        self.exclude = frozenset(exclude)
        self.picks: dict[int, Pick | None] = {}  # rowid -> pick (None: left out)
        self.root_of: dict[str, str] = {}
        self.members: dict[str, list[_Member]] = {}

    def pick(self, ranked: RankedRows, limit: int) -> list[tuple[Any, Pick]]:
        """The first ``limit`` distinct messages/titles of ``ranked`` (best first), each
        with its ``(rowid, rank)`` row; reads ``ranked`` only as far as needed."""
        out: list[tuple[Any, Pick]] = []
        seen: set[tuple[str, str]] = set()
        step = limit
        while chunk := ranked.fetchmany(step):
            self._resolve([r.r for r in chunk if r.r not in self.picks])
            for row in chunk:
                p = self.picks.get(row.r)
                if p is None or p.key in seen:
                    continue
                seen.add(p.key)
                out.append((row, p))
                if len(out) >= limit:
                    return out
            # Read on: every copy of a message matches too, so a message takes about
            # 1 + fork_copies rows; a quarter more for good measure.
            rows_each = sum(1 + p.copies for _r, p in out) / max(1, len(out))
            step = max(16, int(1.25 * rows_each * (limit - len(out))))
        return out

    def _resolve(self, rowids: list[int]) -> None:
        turn_ns = [r for r in rowids if r < TITLE_ROWID_BASE]
        title_ns = [r - TITLE_ROWID_BASE for r in rowids if r >= TITLE_ROWID_BASE]
        if title_ns:
            for row in self.con.execute(_TITLES, {"ns": title_ns}):
                if row.id not in self.exclude:
                    r = TITLE_ROWID_BASE + row.n
                    self.picks[r] = Pick(
                        ("title", row.id), r, row.id, None, row.title, row.updated_at
                    )
        forked = []
        if turn_ns:
            for r in self.con.execute(_CANDIDATES, {"ns": turn_ns}):
                if r.session_id in self.exclude:
                    continue
                if self.collapse and (r.parent is not None or r.has_forks):
                    forked.append(r)
                else:
                    self.picks[r.n] = Pick(
                        ("turn", r.id), r.n, r.session_id, r.id, r.title, r.created_at
                    )
        if forked:
            self._resolve_copies(forked)
        for r in rowids:
            self.picks.setdefault(r, None)  # gone, or in a chat left out

    def _resolve_copies(self, rows: list[Any]) -> None:
        """Resolve turns of forked chats, looking up copies once per message.

        Turns of one family at the same position and time are almost surely copies
        of one message: the first ("lead") is looked up, and every copy found is
        resolved with it (later ranked rows included). One whose text differs is a
        lead of the next round.
        """
        self._families({r.session_id for r in rows})
        while rows:
            leads: dict[tuple[str, int, int], Any] = {}
            rest = []
            for r in rows:
                key = (self.root_of[r.session_id], r.seq, r.created_at)
                if key in leads:
                    rest.append(r)
                else:
                    leads[key] = r
            found = self._copies(list(leads.values()))
            for lead in leads.values():
                own = _Member(lead.session_id, lead.sn, lead.screated, "", lead.title)
                group = [(lead.n, lead.id, own), *found.get(lead.n, ())]
                # the copy in the oldest chat: where the message was written
                _n, best_id, best = min(group, key=lambda c: (c[2].created_at, c[2].n, c[0]))
                # other chats holding it
                chats = len({m.id for _n, _i, m in group} - {best.id})
                for n, _id, _m in group:
                    self.picks[n] = Pick(
                        ("turn", best_id), n, best.id, best_id, best.title, lead.created_at,
                        chats,
                    )
            rows = [r for r in rest if r.n not in self.picks]

    def _copies(self, rows: list[Any]) -> dict[int, list[tuple[int, str, _Member]]]:
        """For turns of forked chats: their copies in the rest of the family, in scope."""
        pairs: list[tuple[int, str]] = []
        for r in rows:
            pairs += [
                (r.n, m.id) for m in self._in_scope(self.root_of[r.session_id])
                if m.id != r.session_id
            ]
        out: dict[int, list[tuple[int, str, _Member]]] = {}
        if not pairs:
            return out
        by_id = {m.id: m for ms in self.members.values() for m in ms}
        for c in self.con.execute(_COPIES, {"pairs": json.dumps(pairs)}):
            out.setdefault(c.cand, []).append((c.n, c.id, by_id[c.session_id]))
        return out

    def _in_scope(self, root: str) -> Iterable[_Member]:
        return (
            m for m in self.members.get(root, ())
            if m.id not in self.exclude and (self.space_id is None or m.space_id == self.space_id)
        )

    def _families(self, session_ids: set[str]) -> None:
        """Fill ``root_of`` for these sessions and ``members`` for their families' roots."""
        todo = [s for s in session_ids if s not in self.root_of]
        if not todo:
            return
        up = self.con.execute(_UP, {"ids": json.dumps(todo)})
        parent_of: dict[str, str | None] = {r.id: r.parent for r in up}
        roots = {s: _family_root(s, parent_of) for s in todo}
        self.root_of.update(roots)
        new = sorted({r for r in roots.values() if r not in self.members})
        if new:
            for row in self.con.execute(_DOWN, {"roots": json.dumps(new)}):
                member = _Member(row.id, row.n, row.created_at, row.space_id, row.title)
                self.members.setdefault(row.root, []).append(member)


def _family_root(session_id: str, parent_of: dict[str, str | None]) -> str:
    """The id naming a session's fork family: its oldest ancestor still stored, or the
    id of that ancestor's deleted parent (so siblings whose parent is gone stay one family).
    """
    cur, seen = session_id, {session_id}
    while (parent := parent_of.get(cur)) is not None:
        if parent not in parent_of:
            return parent  # deleted: its id still names the family
        if parent in seen:  # a loop of links (never written by Parley): stop there
            return min(seen)
        seen.add(parent)
        cur = parent
    return cur

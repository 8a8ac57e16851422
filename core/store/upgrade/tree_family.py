"""Which sessions of a file written before the conversation tree are *versions*, and of which chat.

Before the tree (Parley up to commit e73c920), Edit and Regenerate made a whole
copy of the chat, a *version session*: a fork marked in its ``meta``
(``"fork_kind": "version"``; ``"fork"`` for a fork made on purpose). Forks
written before the kind existed have no key; they were recognised by the titles
Edit and Regenerate gave them: "<title> (edited)", "<title> (previous answer)",
"Answer <digit>…" (either letter case for the suffixes, as SQLite's LIKE took
them). This rule is the one of that commit's ``core/store/version_kind.py``,
kept here because only the conversion needs it now.

A chat's *root* is the first session up the parent links that is not a version,
or whose parent is not stored (a version whose chat was deleted by an older
build is a chat of its own). The version shown was remembered in the root's
``meta`` (``shown_version``; ``recent_versions``: those shown lately, the latest
first); without it, the member with the latest activity was shown.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import select
from sqlalchemy.engine import Connection

from parley.core.store.schema import sessions as S

KIND_KEY = "fork_kind"
SHOWN_KEY = "shown_version"
RECENT_KEY = "recent_versions"
#: ``meta`` keys that only meant something for version sessions.
VERSION_KEYS = (KIND_KEY, SHOWN_KEY, RECENT_KEY)
_SUFFIXES = (" (edited)", " (previous answer)")
_ANSWER = "Answer "


def parse_meta(raw: str | None) -> dict[str, Any]:
    """A session's ``meta`` as a dict (``{}`` when it is no JSON object)."""
    try:
        value = json.loads(raw or "{}")
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def is_version(title: str | None, meta: dict[str, Any], parent: str | None) -> bool:
    """The old rule: ``meta``'s kind decides, else a forked session's title."""
    kind = meta.get(KIND_KEY)
    if kind == "version":
        return True
    if kind == "fork" or parent is None:
        return False
    t = title or ""
    if any(t.lower().endswith(s) for s in _SUFFIXES):
        return True
    n = len(_ANSWER)
    return t.startswith(_ANSWER) and len(t) > n and t[n] in "0123456789"


@dataclass(slots=True)
class Member:
    """A session of a chat: the root or one of its versions."""

    id: str
    parent: str | None
    created_at: int
    updated_at: int
    meta: dict[str, Any]
    version: bool


@dataclass(slots=True)
class Family:
    """A chat with versions: its root, then every version, each after its parent."""

    root: Member
    versions: list[Member] = field(default_factory=list)

    @property
    def members(self) -> list[Member]:
        return [self.root, *self.versions]

    def shown(self) -> str:
        """The member the chat showed: ``shown_version`` when it is one of them, else
        the one with the latest activity."""
        ids = {m.id for m in self.members}
        chosen = self.root.meta.get(SHOWN_KEY)
        if isinstance(chosen, str) and chosen in ids:
            return chosen
        return max(self.members, key=lambda m: (m.updated_at, m.created_at)).id

    def preference(self) -> list[str]:
        """The members from the least to the most preferred: those never shown (by
        activity), then those shown lately (oldest first), then the one shown. A branch
        point leads to the most preferred member holding the branch (the old
        ``core/versions.py`` ``_best``)."""
        ids = {m.id for m in self.members}
        recent_raw = self.root.meta.get(RECENT_KEY)
        recent = [s for s in recent_raw if isinstance(s, str) and s in ids] \
            if isinstance(recent_raw, list) else []
        rank = {sid: n for n, sid in reversed(list(enumerate(recent)))}
        never = sorted((m for m in self.members if m.id not in rank),
                       key=lambda m: (m.updated_at, m.created_at, m.id))
        order = [m.id for m in never] + sorted(rank, key=lambda s: -rank[s])
        shown = self.shown()
        return [s for s in order if s != shown] + [shown]


def families(con: Connection) -> tuple[list[Family], list[Member]]:
    """The chats that have versions, each with its versions ordered parents first; and
    the versions whose parent is not stored (each a chat of its own now).

    Reads the sessions that have a parent (and the roots they lead to); a file
    without forks costs one indexed read.
    """
    forked = con.execute(
        select(S.c.id, S.c.parent_session_id, S.c.title, S.c.meta, S.c.created_at,
               S.c.updated_at).where(S.c.parent_session_id.is_not(None))
    ).all()
    versions: dict[str, Member] = {}
    for r in forked:
        meta = parse_meta(r.meta)
        if is_version(r.title, meta, r.parent_session_id):
            versions[r.id] = Member(r.id, r.parent_session_id, int(r.created_at),
                                    int(r.updated_at), meta, True)
    if not versions:
        return [], []
    parents = {v.parent for v in versions.values() if v.parent is not None}
    stored = {r.id: r for r in con.execute(
        select(S.c.id, S.c.meta, S.c.created_at, S.c.updated_at).where(
            S.c.id.in_(sorted(parents))))}
    orphans = [v for v in versions.values() if v.parent not in stored]
    return _group(versions, stored), orphans


def _group(versions: dict[str, Member], stored: dict[str, Any]) -> list[Family]:
    """Versions grouped under their root (the chain up through stored versions)."""
    by_root: dict[str, Family] = {}
    children: dict[str, list[Member]] = {}
    for v in versions.values():
        children.setdefault(v.parent or "", []).append(v)
    for v in sorted(versions.values(), key=lambda m: m.created_at):
        if v.parent not in stored:
            continue  # its chat is gone: it is a chat of its own (a root below)
        if v.parent in versions:
            continue  # folded with its parent's chat
        r = stored[v.parent]
        if v.parent not in by_root:
            by_root[v.parent] = Family(Member(r.id, None, int(r.created_at),
                                              int(r.updated_at), parse_meta(r.meta), False))
    for v in versions.values():  # a version of a deleted chat roots its own versions
        if v.parent not in stored and children.get(v.id):
            by_root[v.id] = Family(Member(v.id, None, v.created_at, v.updated_at, v.meta, True))
    for fam in by_root.values():
        fam.versions = list(_descend(fam.root.id, children))
    return [f for f in by_root.values() if f.versions]


def _descend(root: str, children: dict[str, list[Member]]) -> Iterable[Member]:
    """The versions below ``root``, breadth first (each after its parent), by age."""
    seen = {root}
    queue = [root]
    while queue:
        nxt: list[str] = []
        for sid in queue:
            for v in sorted(children.get(sid, []), key=lambda m: (m.created_at, m.id)):
                if v.id not in seen:
                    seen.add(v.id)
                    nxt.append(v.id)
                    yield v
        queue = nxt

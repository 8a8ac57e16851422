"""Fold a chat's version sessions into its tree (``parley.core.store.upgrade.tree``).

A version session (``parley.core.store.upgrade.tree_family``) starts with copies
of its parent's turns, as the fork of that time made them (commit e73c920's
``core/store/forks.py``): a new id, the same role, ``created_at`` and blocks,
except that the turn and compaction ids inside ``compact_summary`` blocks were
rewritten to the copies' (so summaries are compared without them). Folding
walks the version's turns from its first, following in the chat's tree the
child that is the same turn (the old ``core/versions.py`` rule: same role, time
and content); the first turn with no such child and every turn after it are the
version's own: they move into the chat's session (same ids, new ``seq``), the
first one linked below the last shared turn. The copies go with the version
session. The ids of the copies are remembered (``mapping``: copy -> original)
to re-point what named them: compaction rows and summary blocks that move, forks
made from the version, the version's leaf.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import bindparam, select, update
from sqlalchemy.engine import Connection

from parley.core.store.schema import compactions as C
from parley.core.store.schema import turn_links as L
from parley.core.store.schema import turn_path as P
from parley.core.store.schema import turns as T

_ID_KEYS = ("first_turn_id", "last_turn_id", "compaction_id")
#: Added to every ``seq`` of a chat before it is numbered again: above any real value,
#: so the two updates never meet a taken ``(session_id, seq)``.
_SHIFT = 1 << 40


def _summary_free(blocks: str) -> Any:
    """Blocks JSON with the ids of ``compact_summary`` blocks left out (a fork rewrote
    them to its copies', so a copy is known by the rest)."""
    data = json.loads(blocks)
    if isinstance(data, list):
        for b in data:
            if isinstance(b, dict) and b.get("type") == "compact_summary":
                for key in _ID_KEYS:
                    b.pop(key, None)
    return data


def same_blocks(a: str, b: str) -> bool:
    """Whether two stored blocks JSON texts are the same content (a copy's)."""
    if a == b:
        return True
    if '"compact_summary"' not in a or '"compact_summary"' not in b:
        return False
    try:
        return bool(_summary_free(a) == _summary_free(b))
    except ValueError:
        return False


def remap_blocks(blocks: str, mapping: dict[str, str]) -> str | None:
    """``blocks`` with the copies' ids in ``compact_summary`` blocks replaced by the
    originals' (``mapping``); None when nothing changes."""
    if '"compact_summary"' not in blocks:
        return None
    try:
        data = json.loads(blocks)
    except ValueError:
        return None
    changed = False
    for b in data if isinstance(data, list) else []:
        if isinstance(b, dict) and b.get("type") == "compact_summary":
            for key in _ID_KEYS:
                if b.get(key) in mapping:
                    b[key] = mapping[b[key]]
                    changed = True
    return json.dumps(data, ensure_ascii=False, separators=(",", ":")) if changed else None


@dataclass(slots=True)
class Node:
    id: str
    parent: str | None
    role: str
    created_at: int
    blocks: str
    seq: int


@dataclass(slots=True)
class ChatTree:
    """A chat session's turns in memory while its versions are folded into it."""

    session_id: str
    nodes: dict[str, Node] = field(default_factory=dict)
    children: dict[str | None, list[str]] = field(default_factory=dict)
    next_seq: int = 0
    moved: bool = False

    def add(self, node: Node) -> None:
        self.nodes[node.id] = node
        self.children.setdefault(node.parent, []).append(node.id)
        self.next_seq = max(self.next_seq, node.seq + 1)

    def match(self, parent: str | None, role: str, created_at: int, blocks: str) -> str | None:
        """The child of ``parent`` that is the same turn, or None."""
        for cid in self.children.get(parent, ()):
            n = self.nodes[cid]
            if n.role == role and n.created_at == created_at and same_blocks(n.blocks, blocks):
                return cid
        return None

    def ancestors(self, leaf: str) -> list[str]:
        """The path from a first message to ``leaf``, first message first."""
        out: list[str] = []
        cur: str | None = leaf
        while cur is not None and len(out) <= len(self.nodes):
            out.append(cur)
            cur = self.nodes[cur].parent
        return out[::-1]

    def preorder(self) -> list[str]:
        """Every turn, each after its parent, siblings by age (time, then ``seq``)."""
        out: list[str] = []
        stack = list(reversed(self._sorted(self.children.get(None, []))))
        while stack:
            nid = stack.pop()
            out.append(nid)
            stack.extend(reversed(self._sorted(self.children.get(nid, []))))
        return out

    def _sorted(self, ids: Iterable[str]) -> list[str]:
        return sorted(ids, key=lambda i: (self.nodes[i].created_at, self.nodes[i].seq))


def load(con: Connection, session_id: str) -> ChatTree:
    """The chat's turns with their links (as the fill made them: a chain by ``seq``)."""
    tree = ChatTree(session_id)
    rows = con.execute(
        select(T.c.id, T.c.seq, T.c.role, T.c.created_at, T.c.blocks, L.c.parent_id)
        .select_from(T.join(L, L.c.turn_id == T.c.id))
        .where(T.c.session_id == session_id).order_by(T.c.seq))
    for r in rows:
        tree.add(Node(r.id, r.parent_id, r.role, int(r.created_at), r.blocks, int(r.seq)))
    return tree


def fold(con: Connection, tree: ChatTree, version_id: str, mapping: dict[str, str]) -> str | None:
    """Fold the version session ``version_id`` into ``tree`` (its chat, where its
    parent is already folded). Adds its copies to ``mapping``; returns its leaf in
    the chat's tree (None for a version without turns)."""
    rows = con.execute(
        select(T.c.id, T.c.seq, T.c.role, T.c.created_at, T.c.blocks)
        .where(T.c.session_id == version_id).order_by(T.c.seq)).all()
    current: str | None = None
    i = 0
    for i, r in enumerate(rows):  # noqa: B007 - i is where the version's own turns start
        found = tree.match(current, r.role, int(r.created_at), r.blocks)
        if found is None:
            break
        mapping[r.id] = found
        current = found
    else:
        i = len(rows)
    own = rows[i:]
    if own:
        _move(con, tree, version_id, own, current, mapping)
    _compactions(con, tree.session_id, version_id, {r.id for r in own}, mapping)
    con.execute(P.delete().where(P.c.session_id == version_id))
    if own:
        return str(own[-1].id)
    return current


def _move(con: Connection, tree: ChatTree, version_id: str, own: Sequence[Any],
          parent: str | None, mapping: dict[str, str]) -> None:
    """Move the version's own turns into the chat: same ids, ``seq`` after the chat's."""
    base = tree.next_seq
    offset = base - int(own[0].seq)
    con.execute(update(T).where(T.c.session_id == version_id)
                .where(T.c.seq >= int(own[0].seq))
                .values(session_id=tree.session_id, seq=T.c.seq + offset))
    moved_ids = select(T.c.id).where(T.c.session_id == tree.session_id).where(T.c.seq >= base)
    con.execute(update(L).where(L.c.session_id == version_id)
                .where(L.c.turn_id.in_(moved_ids)).values(session_id=tree.session_id))
    con.execute(update(L).where(L.c.turn_id == own[0].id).values(parent_id=parent))
    prev = parent
    for r in own:
        blocks = remap_blocks(r.blocks, mapping)
        if blocks is not None:
            con.execute(update(T).where(T.c.id == r.id).values(blocks=blocks))
        tree.add(Node(r.id, prev, r.role, int(r.created_at), blocks or r.blocks,
                      int(r.seq) + offset))
        prev = r.id
    tree.moved = True


def _compactions(con: Connection, chat_id: str, version_id: str, own: set[str],
                 mapping: dict[str, str]) -> None:
    """A compaction whose summary moved moves with it (its range re-pointed to the
    originals); the others are copies of the chat's and go with the version."""
    for c in con.execute(select(C.c.id, C.c.summary_turn_id, C.c.first_turn_id,
                                C.c.last_turn_id).where(C.c.session_id == version_id)).all():
        if c.summary_turn_id in own:
            con.execute(update(C).where(C.c.id == c.id).values(
                session_id=chat_id,
                first_turn_id=mapping.get(c.first_turn_id, c.first_turn_id),
                last_turn_id=mapping.get(c.last_turn_id, c.last_turn_id)))


def _set_seqs(con: Connection, session_id: str, new: dict[str, int], old: dict[str, int]
              ) -> None:
    """Write the ``seq`` values of ``new`` that differ from ``old`` (both a permutation
    of the session's values): first above every real value, then down to theirs, so no
    update meets a ``(session_id, seq)`` still taken."""
    changed = [{"tid": t, "new_seq": n + _SHIFT} for t, n in new.items() if old.get(t) != n]
    if not changed:
        return
    con.execute(update(T).where(T.c.id == bindparam("tid")).values(seq=bindparam("new_seq")),
                changed)
    con.execute(update(T).where(T.c.session_id == session_id).where(T.c.seq >= _SHIFT)
                .values(seq=T.c.seq - _SHIFT))


def renumber(con: Connection, tree: ChatTree) -> None:
    """Give the chat's turns ``seq`` values in tree order (each after its parent,
    siblings by age), so the alternatives of a message are listed oldest first as
    the versions were. Writes only the turns whose place changes (usually the
    answers a regeneration set aside)."""
    order = tree.preorder()
    old = {t: n.seq for t, n in tree.nodes.items()}
    ranked = sorted(old.values())
    new = {t: ranked[i] for i, t in enumerate(order)}
    _set_seqs(con, tree.session_id, new, old)
    for tid, n in new.items():
        tree.nodes[tid].seq = n


def align_fork(con: Connection, tree: ChatTree, fork_id: str, at: str) -> None:
    """Give a fork of the renumbered chat ``tree`` the ``seq`` values of the chat's
    turns it holds copies of (the path up to ``at``, where it was made), its own
    turns after them: a fork's copies keep their original's ``seq``
    (``parley.core.store.fork_copies`` tells copies by it)."""
    line = tree.ancestors(at)
    rows = con.execute(select(T.c.id, T.c.seq, T.c.role, T.c.created_at, T.c.blocks)
                       .where(T.c.session_id == fork_id).order_by(T.c.seq)).all()
    seqs: list[int] = []
    for r, tid in zip(rows, line, strict=False):
        n = tree.nodes[tid]
        if (n.role, n.created_at) != (r.role, int(r.created_at)) or \
                not same_blocks(n.blocks, r.blocks):
            break
        seqs.append(n.seq)
    after = seqs[-1] + 1 if seqs else 0
    seqs += range(after, after + len(rows) - len(seqs))
    if any(seqs[i] <= seqs[i - 1] for i in range(1, len(seqs))):
        return  # copies out of order: left as they are (only search's copy count uses them)
    old = {r.id: int(r.seq) for r in rows}
    new = {r.id: n for r, n in zip(rows, seqs, strict=True)}
    _set_seqs(con, fork_id, new, old)


def show(con: Connection, tree: ChatTree, leaves: dict[str, str | None],
         preference: list[str], before: str | None) -> None:
    """Write the chat's path (to the leaf of the member it showed, the last of
    ``preference``; ``before``: the leaf of the path as filled, the chat's own line)
    and the stamps that make each branch point lead back to the member chosen there
    lately: each member's path below its first branch point, from the least to the
    most preferred member, gets a greater stamp, its leaf that stamp + 1
    (``parley.core.store.schema``'s ``turn_links.shown_at``; a line above needs none).
    Rewrites only the path rows below the part the two paths share."""
    stamps: dict[str, int] = {}
    stamp = 1
    for sid in preference:
        leaf = leaves.get(sid)
        if leaf is None:
            continue
        line = tree.ancestors(leaf)
        first = next((i for i, t in enumerate(line)
                      if len(tree.children.get(tree.nodes[t].parent, ())) > 1), len(line) - 1)
        for tid in line[first:]:
            stamps[tid] = stamp
        stamps[leaf] = stamp + 1
        stamp += 2
    if stamps:
        con.execute(update(L).where(L.c.turn_id == bindparam("tid"))
                    .values(shown_at=bindparam("stamp")),
                    [{"tid": t, "stamp": s} for t, s in stamps.items()])
    shown = leaves.get(preference[-1]) if preference else None
    path = tree.ancestors(shown) if shown is not None else []
    old = tree.ancestors(before) if before is not None else []
    keep = 0
    while keep < min(len(path), len(old)) and path[keep] == old[keep]:
        keep += 1
    if keep < len(old):
        con.execute(P.delete().where(P.c.session_id == tree.session_id)
                    .where(P.c.pos >= keep))
    if keep < len(path):
        con.execute(P.insert(), [{"session_id": tree.session_id, "pos": keep + n, "turn_id": t}
                                 for n, t in enumerate(path[keep:])])

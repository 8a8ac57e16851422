"""Versions of a point of a conversation: ‹ n/m › on a message, worked out from forks.

Editing a user message and regenerating a reply never destroy anything: each
makes a fork session (``parley.core.chat.edit``, ``parley.core.chat.regenerate``), marked as a
*version* of the chat (``parley.core.store.versions``). A *chat* is the session
listed in the sidebar (its *root*) with every version made from it or from its
versions; each of these *members* is a whole linear conversation, and they
share their beginnings (a fork starts with copies of its parent's turns).

This module is the pure part: given each member's turns as :class:`TurnKey`
rows, it says where the conversation shown parts from the others
(:func:`branch_points`) — a message with two or more versions — and which
member to show for each version. Copies are recognised as a fork makes them:
same role, same time (ms) and same content. A compaction's summary is no
message of the conversation and is left out (:func:`is_summary`): it is
stored after the turns its compaction kept, and the versions made before the
compaction have none, so with it the compacted session would part from them
at its first turn and the edits and regenerations made before would be lost
from view.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field


def is_summary(blocks_json: str) -> bool:
    """True when a stored turn's blocks (``turns.blocks``, JSON text) are a compaction
    summary (a ``compact_summary`` block), not a message.

    Args:
        blocks_json: ``turns.blocks`` as stored.
    """
    if '"compact_summary"' not in blocks_json:
        return False  # a message quoting the word holds it escaped: \\"compact_summary\\"
    try:
        data = json.loads(blocks_json)
    except ValueError:
        return False
    return isinstance(data, list) and any(
        isinstance(b, dict) and b.get("type") == "compact_summary" for b in data)


@dataclass(frozen=True, slots=True)
class TurnKey:
    """One stored turn, as far as telling copies apart needs.

    Attributes:
        turn_id: the turn's id in its session.
        role: ``user`` | ``assistant``.
        created_at: epoch ms (a fork's copy keeps it).
        digest: its blocks as stored (JSON text; a fork's copy keeps them).
    """

    turn_id: str
    role: str
    created_at: int
    digest: str

    @property
    def same(self) -> tuple[str, int, str]:
        """What a copy shares with its original."""
        return (self.role, self.created_at, self.digest)


@dataclass(frozen=True, slots=True)
class Member:
    """A session of a chat (its root or one of its versions).

    Attributes:
        session_id: the session.
        created_at: epoch ms of the session.
        updated_at: epoch ms of its last activity.
        turns: its stored messages in order (compaction summaries left out).
    """

    session_id: str
    created_at: int
    updated_at: int
    turns: tuple[TurnKey, ...] = field(default_factory=tuple)


@dataclass(frozen=True, slots=True)
class BranchPoint:
    """A message of the shown conversation that has other versions.

    Attributes:
        turn_id: the message (a turn of the shown session).
        index: which version is shown, 1-based.
        total: how many versions there are (2 or more).
        sessions: for each version, in order (oldest first), the session to show.
        turn_ids: for each version, its turn in that session.
    """

    turn_id: str
    index: int
    total: int
    sessions: tuple[str, ...]
    turn_ids: tuple[str, ...]

    def target(self, step: int) -> tuple[str, str] | None:
        """``(session id, turn id)`` of the version ``step`` away (-1: previous, +1: next),
        or None past the first or the last."""
        i = self.index - 1 + step
        if not 0 <= i < self.total:
            return None
        return self.sessions[i], self.turn_ids[i]


@dataclass(frozen=True, slots=True)
class Versions:
    """The versions of a chat as seen from one of its sessions.

    Attributes:
        chat_id: the chat's root session (the one the sidebar lists).
        session_id: the session shown.
        members: every session of the chat (root first).
        points: the shown session's messages that have versions, by turn id.
    """

    chat_id: str
    session_id: str
    members: tuple[str, ...]
    points: dict[str, BranchPoint] = field(default_factory=dict)


def _best(group: Sequence[Member], shown: str, rank: dict[str, int]) -> Member:
    """The member to show for a version: the one shown, else the one shown most recently
    (``rank``: session id -> 0 for the latest shown), else the latest active. So each
    branch point below keeps the version last chosen there."""
    for m in group:
        if m.session_id == shown:
            return m
    seen = [m for m in group if m.session_id in rank]
    if seen:
        return min(seen, key=lambda m: rank[m.session_id])
    return max(group, key=lambda m: (m.updated_at, m.created_at, m.session_id))


#: The "version" of a place where a session ends while others go on (a regeneration
#: whose new answer failed: the session ends with the prompt, the old answer is in a
#: version). It is the newest there: listed last.
_ENDED = ("", 1 << 62, "")


def branch_points(shown: str, members: Iterable[Member], recent: Sequence[str] = ()
                  ) -> dict[str, BranchPoint]:
    """Where the shown session parts from the chat's other sessions.

    Args:
        shown: the session shown (one of ``members``).
        members: every session of the chat with its turns.
        recent: sessions of the chat shown before, the latest first: each version
            leads to the session last shown among those holding it (the reply
            version chosen under an edit comes back with that edit), else to the
            latest active one.

    Returns:
        ``{turn id of the shown session: BranchPoint}`` for each of its turns
        that other sessions sharing everything before it replace by another
        turn. Versions are ordered by the time of their turn, then of their
        session (oldest first). A session that ends where others sharing all
        of it go on (a regeneration that failed) counts as the last version
        there: its point is on its last turn (unless that has one already),
        and the others' point leads back to it. Empty when ``shown`` is not
        among ``members``.
    """
    pool = list(members)
    me = next((m for m in pool if m.session_id == shown), None)
    if me is None or not me.turns:
        return {}
    points: dict[str, BranchPoint] = {}
    rank = {sid: n for n, sid in reversed(list(enumerate(recent)))}
    for i in range(len(me.turns) + 1):
        groups: dict[tuple[str, int, str], list[Member]] = {}
        for m in pool:
            if len(m.turns) > i:
                groups.setdefault(m.turns[i].same, []).append(m)
            elif len(m.turns) == i and i > 0:
                groups.setdefault(_ENDED, []).append(m)
        mine = me.turns[i].same if i < len(me.turns) else _ENDED
        if len(groups) > 1:
            order = sorted(groups, key=lambda k: (k[1], min(m.created_at for m in groups[k]),
                                                  k[2]))
            picks = [_best(groups[k], shown, rank) for k in order]
            at = me.turns[min(i, len(me.turns) - 1)].turn_id
            if at not in points:
                points[at] = BranchPoint(
                    at,
                    order.index(mine) + 1,
                    len(order),
                    tuple(p.session_id for p in picks),
                    tuple(p.turns[min(i, len(p.turns) - 1)].turn_id for p in picks),
                )
        if i == len(me.turns):
            break
        pool = groups[mine]
    return points


def copy_in(target: Member, source: Member, turn_id: str) -> str | None:
    """The id of ``target``'s copy of ``source``'s turn ``turn_id`` (None: it has none).

    A copy is at the same place, and everything before it is the same too: the
    shown version of a chat holds a message found by search when the message is
    in the part every version shares.
    """
    i = next((n for n, t in enumerate(source.turns) if t.turn_id == turn_id), None)
    if i is None or len(target.turns) <= i:
        return None
    same = all(a.same == b.same for a, b in zip(target.turns[: i + 1], source.turns[: i + 1],
                                                 strict=True))
    return target.turns[i].turn_id if same else None

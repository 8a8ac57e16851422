"""The branch points of a session's path (‹ n/m ›), read from its tree.

Each turn of the path whose parent has other children (for a first message: the
session has other first messages) is a point: the siblings oldest first, the one on
the path chosen. A leaf with children is a point of its own (its children, then
itself with ``exact``, listed last and chosen): when the leaf is also one of several
siblings, this point is the one kept (the answers below it are reachable only from
it; the siblings' choice shows again once the path goes below it).

Summary turns are transparent (``parley.core.store.summary_carry`` copies a summary
onto a branch made below it, so a regenerated answer's parent is that copy, not the
prompt): a summary turn is never a point, and the alternatives at a point are the
first turns that are not summaries below each child of the nearest ancestor that is
not one. A summary that ends the path (a regeneration whose new answer failed after
its summary was carried) stands for "the path that ends here", as the leaf does
above, its point drawn under that ancestor.

Cost: the session's forking parents (``turn_forks``, kept by triggers:
``parley.core.store.fork_index``; one row per fork, so nothing grows with the turns) and
its compactions' summary turn ids, then only the children of the turns that have
several and of the leaf, of the summaries among or below those, and the
parents of the summaries that fork (or end the path); no turn's blocks are read. A chat
compacted 500 times without a branch reads the children of one turn, not of 1,000.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from sqlalchemy import bindparam, text
from sqlalchemy.engine import Connection

from parley.core.branches import Branches, BranchPoint
from parley.core.store import fork_index, sessions, summary_carry, tree

_PARENTS = text(
    "SELECT parent_id FROM turn_links WHERE session_id = :sid AND turn_id IN :ids"
).bindparams(bindparam("ids", expanding=True))


class _Alt(NamedTuple):
    turn_id: str
    seq: int
    pos: int | None  # on the path: its position, else None
    exact: bool


def branches(con: Connection, session_id: str) -> Branches:
    """See :meth:`parley.core.store.store.Store.branches` (module doc)."""
    sessions.require(con, session_id)
    summaries = summary_carry.summary_ids(con, session_id)
    forking = fork_index.forking(con, session_id)
    last = tree.leaf(con, session_id)
    leaf_id = None if last is None else str(last.turn_id)
    places = _places(con, session_id, summaries, forking, leaf_id)
    kids = _children_through(con, session_id, summaries, places)

    def below(parent: str | None, seen: set[str]) -> list[_Alt]:
        out: list[_Alt] = []
        for k in kids.get(parent, []):
            tid = str(k.turn_id)
            if tid not in summaries:
                out.append(_Alt(tid, int(k.seq), k.pos, False))
            elif tid not in seen:  # a damaged file's cycle ends here
                seen.add(tid)
                out += below(tid, seen)
                if tid == leaf_id:
                    out.append(_Alt(tid, int(k.seq), k.pos, True))
        return out

    found: list[tuple[bool, int, str, BranchPoint]] = []
    for place in places:
        if place in summaries:
            continue  # transparent: its children count at the nearest other ancestor
        alts = below(place, set())
        if place is not None and place == leaf_id:
            assert last is not None
            alts.append(_Alt(place, 0, int(last.pos), True))
        alts.sort(key=lambda a: (a.exact, a.seq))
        chosen = next((i for i, a in enumerate(alts) if a.pos is not None), None)
        if len(alts) < 2 or chosen is None:
            continue  # one way on, or that place is not on the path
        pick = alts[chosen]
        drawn = place if pick.exact and pick.turn_id in summaries else pick.turn_id
        if drawn is None:
            continue
        found.append((pick.exact, int(pick.pos or 0), drawn,
                      BranchPoint(drawn, chosen + 1, len(alts), tuple(a.turn_id for a in alts),
                                  tuple(a.exact for a in alts))))
    # A point whose path ends at its place wins over the siblings' point drawn there;
    # the points in path order.
    kept = {f[2]: f for f in sorted(found, key=lambda f: f[0])}
    return Branches(session_id, {f[2]: f[3] for f in sorted(kept.values(), key=lambda f: f[1])})


def _places(con: Connection, session_id: str, summaries: set[str],
            forking: set[str | None], leaf_id: str | None) -> set[str | None]:
    """Where a point may be: the forking parents and the leaf that are not summaries, and
    the nearest ancestor that is not one of each forking summary and of a summary leaf
    (its children count there). A summary with one child that is not the leaf adds
    nothing, so a chat compacted many times costs only its forks (and their summary
    ancestors), not one lookup per summary."""
    seeds = {*forking, leaf_id} if leaf_id is not None else set(forking)
    places = {p for p in seeds if p not in summaries}
    climb = sorted(p for p in seeds if p is not None and p in summaries)
    seen = set(climb)
    while climb:  # up through summaries (a chain of them is short; a cycle ends: seen)
        up: list[str] = []
        for part in (climb[i:i + tree.CHUNK] for i in range(0, len(climb), tree.CHUNK)):
            for parent in con.execute(_PARENTS, {"sid": session_id, "ids": part}).scalars():
                if parent not in summaries:
                    places.add(parent)
                elif parent not in seen:
                    seen.add(parent)
                    up.append(parent)
        climb = up
    return places


def _children_through(con: Connection, session_id: str, summaries: set[str],
                      places: set[str | None]) -> dict[str | None, list[Any]]:
    """The children of ``places``, and of every summary among them or below them
    (transparent: its children are read too, down to turns that are not summaries)."""
    kids = tree.children(con, session_id, list(places))
    asked = set(places)
    more = {str(k.turn_id) for ks in kids.values() for k in ks} & summaries
    while more - asked:
        ask = sorted(more - asked)
        asked.update(ask)
        found = tree.children(con, session_id, ask)
        for parent, ks in found.items():
            kids.setdefault(parent, []).extend(ks)
        more = {str(k.turn_id) for ks in found.values() for k in ks} & summaries
    return kids

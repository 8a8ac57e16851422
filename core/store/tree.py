"""A session's conversation tree: the path shown, switching branches, branch points.

Functions take a Connection inside the caller's transaction. The tables are
:mod:`parley.core.store.schema`'s ``turn_links`` (each turn's parent and its stamp
``shown_at``) and ``turn_path`` (the path shown, by position ``pos``).

Choices (which branch a branch point leads to when the path is switched to it):
:func:`descend` from a turn takes, at each turn, the child with the greatest
``shown_at`` (ties: the greatest ``seq``, the newest), and stops at a turn whose
own ``shown_at`` is greater than all its children's (the path last ended there) or
that has no child. Whenever the path changes, every turn of the new part below the
branch point gets one fresh stamp and the new leaf that stamp + 1 (so a leaf with
children stops a later descent there); a fresh stamp is now (epoch ms), or more
than every stamp the change reads when the clock says less (:func:`fresh_stamp`).

Costs: reads and writes follow the rows of the path that change and the turns
looked at below or above a turn, never the whole history; the branch points
(``parley.core.store.branch_points``) read the session's ``turn_links`` index
grouped by parent, and only the children of turns that have several.
"""

from __future__ import annotations

import functools
from collections import defaultdict
from collections.abc import Iterable, Sequence
from typing import Any

from sqlalchemy import bindparam, select, text
from sqlalchemy.engine import Connection, Row
from sqlalchemy.sql import ColumnElement, Select, TextClause

from parley.core.content import now_ms
from parley.core.store import sessions
from parley.core.store.dialect import is_postgresql
from parley.core.store.errors import TurnNotInSession
from parley.core.store.postgres import sql as pg_sql
from parley.core.store.schema import turn_path as P
from parley.core.store.schema import turns as T

#: The path's rows joined to their turns: what readers of "the chat" select from.
PATH = P.join(T, T.c.id == P.c.turn_id)
#: Ids per statement for ``IN (...)`` lists (well under SQLite's variable limit).
CHUNK = 500
#: Bound of the recursive walks (a tree is never this deep; a damaged file with a cycle
#: in its links then ends instead of looping).
_DEPTH = 10_000_000


def path_select(session_id: str, *columns: Any, newest_first: bool = False) -> Select[Any]:
    """``SELECT columns`` over the session's path (``turn_path`` joined to ``turns``),
    root first (``newest_first``: leaf first). Add ``where``/``limit`` as needed."""
    order = P.c.pos.desc() if newest_first else P.c.pos
    return select(*columns).select_from(PATH).where(P.c.session_id == session_id).order_by(order)


def on_path(session_id: str) -> ColumnElement[bool]:
    """A condition on ``turns``: the turn is on the session's path (for ``select(...)
    .where(...)`` over ``turns`` alone)."""
    return T.c.id.in_(select(P.c.turn_id).where(P.c.session_id == session_id))


_LEAF = text(
    "SELECT p.turn_id, p.pos, l.shown_at FROM turn_path p "
    "LEFT JOIN turn_links l ON l.turn_id = p.turn_id "
    "WHERE p.session_id = :sid ORDER BY p.pos DESC LIMIT 1"
)
_POS = text("SELECT pos FROM turn_path WHERE turn_id = :tid AND session_id = :sid")


def leaf(con: Connection, session_id: str) -> Row[Any] | None:
    """The path's last turn: ``(turn_id, pos, shown_at)``, or None for an empty path."""
    return con.execute(_LEAF, {"sid": session_id}).first()


def pos_of(con: Connection, session_id: str, turn_id: str) -> int:
    """The turn's position on the session's path. Raises TurnNotInSession (also when the
    turn is stored in the session but on another branch)."""
    pos = con.execute(_POS, {"tid": turn_id, "sid": session_id}).scalar()
    if pos is None:
        raise TurnNotInSession(turn_id, session_id)
    return int(pos)


def fresh_stamp(*seen: int | None) -> int:
    """Now (epoch ms), or 1 more than the greatest of ``seen`` when that is not earlier."""
    known = [s for s in seen if s is not None]
    return max(now_ms(), max(known, default=0) + 1)


# From a turn up its parents to the first turn on the path (included; pos NULL above
# it), or to a first message: the turn first.
_UP = text(
    "WITH RECURSIVE up(turn_id, parent_id, pos, shown_at, depth) AS ("
    "SELECT l.turn_id, l.parent_id, (SELECT p.pos FROM turn_path p WHERE p.turn_id = l.turn_id),"
    " l.shown_at, 0 FROM turn_links l WHERE l.turn_id = :tid AND l.session_id = :sid "
    "UNION ALL "
    "SELECT l.turn_id, l.parent_id, (SELECT p.pos FROM turn_path p WHERE p.turn_id = l.turn_id),"
    " l.shown_at, up.depth + 1 FROM up JOIN turn_links l ON l.turn_id = up.parent_id "
    "WHERE up.pos IS NULL AND up.depth < :limit) "
    "SELECT turn_id, pos, shown_at FROM up ORDER BY depth"
)
# From a turn down the remembered choices (module doc): the turn first.
_DOWN = text(
    "WITH RECURSIVE down(turn_id, shown_at, depth) AS ("
    "SELECT turn_id, shown_at, 0 FROM turn_links WHERE turn_id = :tid AND session_id = :sid "
    "UNION ALL "
    "SELECT c.turn_id, c.shown_at, down.depth + 1 FROM down "
    "JOIN turn_links c ON c.turn_id = (SELECT k.turn_id FROM turn_links k "
    "JOIN turns t ON t.id = k.turn_id WHERE k.session_id = :sid AND k.parent_id = down.turn_id "
    "ORDER BY k.shown_at DESC, t.seq DESC LIMIT 1) "
    "WHERE c.shown_at >= down.shown_at AND down.depth < :limit) "
    "SELECT turn_id, shown_at FROM down ORDER BY depth"
)


def descend(con: Connection, session_id: str, turn_id: str) -> list[Row[Any]]:
    """``(turn_id, shown_at)`` from ``turn_id`` down the remembered choices to the leaf
    they lead to (module doc), ``turn_id`` first; [] when it is not a turn of the
    session. One recursive statement; cost: the turns walked and their siblings."""
    return list(con.execute(_DOWN, {"tid": turn_id, "sid": session_id, "limit": _DEPTH}))


_LOCK_SESSION = text(pg_sql.LOCK_SESSION)
_CUT = text("DELETE FROM turn_path WHERE session_id = :sid AND pos > :pos")
#: Path rows per INSERT statement (3 parameters each: under SQLite's old limit of 999).
PATH_ROWS = 300
_STAMP = text("UPDATE turn_links SET shown_at = :stamp WHERE turn_id IN :ids").bindparams(
    bindparam("ids", expanding=True))
_STAMP_ONE = text("UPDATE turn_links SET shown_at = :stamp WHERE turn_id = :tid")


def _chunks(ids: Sequence[str]) -> Iterable[list[str]]:
    for i in range(0, len(ids), CHUNK):
        yield list(ids[i:i + CHUNK])


def add_path(con: Connection, session_id: str, first_pos: int, turn_ids: Sequence[str]) -> None:
    """Put ``turn_ids`` on the session's path at positions ``first_pos``, ``first_pos + 1``
    … (those positions must be free), :data:`PATH_ROWS` rows a statement: the path's count
    (``parley.core.store.path_count``) is kept by a trigger, and on SQLite each statement
    that fires one pays for a statement journal (measured, 100,000 rows, foreign keys on:
    22 µs a row one row a statement, 7 µs without the trigger; 4.6 µs a row in statements
    of 300, 3.2 µs without)."""
    for i in range(0, len(turn_ids), PATH_ROWS):
        part = turn_ids[i:i + PATH_ROWS]
        params: dict[str, Any] = {"sid": session_id}
        for j, t in enumerate(part):
            params[f"p{j}"] = first_pos + i + j
            params[f"t{j}"] = t
        con.execute(_add_rows(len(part)), params)


@functools.cache
def _add_rows(n: int) -> TextClause:
    """``INSERT INTO turn_path`` of ``n`` rows (a text: SQLAlchemy compiles it once)."""
    values = ", ".join(f"(:sid, :p{j}, :t{j})" for j in range(n))
    return text(f"INSERT INTO turn_path (session_id, pos, turn_id) VALUES {values}")


def _set_path(con: Connection, session_id: str, after_pos: int, suffix: Sequence[str],
              stamp: int) -> None:
    """Replace the path below position ``after_pos`` (-1: all of it) by ``suffix`` and
    stamp it: ``stamp`` on each of its turns, ``stamp + 1`` on its leaf."""
    con.execute(_CUT, {"sid": session_id, "pos": after_pos})
    if not suffix:
        return
    add_path(con, session_id, after_pos + 1, suffix)
    for part in _chunks(suffix[:-1]):
        con.execute(_STAMP, {"stamp": stamp, "ids": part})
    con.execute(_STAMP_ONE, {"stamp": stamp + 1, "tid": suffix[-1]})


def lock(con: Connection, session_id: str) -> None:
    """On PostgreSQL, wait for another Parley changing this chat (as a save does:
    ``parley.core.store.turns``), so two changes of one path never interleave."""
    if is_postgresql(con):
        con.execute(_LOCK_SESSION, {"sid": session_id})


def branch_before(con: Connection, session_id: str, turn_id: str) -> None:
    """See :meth:`parley.core.store.store.Store.branch_before`.

    The turn before ``turn_id`` on the path becomes the leaf, stamped above every
    stamp cut away (so the path opened later ends there until a child is saved).
    """
    sessions.require(con, session_id)
    lock(con, session_id)
    pos = pos_of(con, session_id, turn_id)
    last = leaf(con, session_id)
    stamp = fresh_stamp(None if last is None else last.shown_at)
    con.execute(_CUT, {"sid": session_id, "pos": pos - 1})
    new_leaf = leaf(con, session_id)
    if new_leaf is not None:
        con.execute(_STAMP_ONE, {"stamp": stamp + 1, "tid": new_leaf.turn_id})


def show_branch(con: Connection, session_id: str, turn_id: str, exact: bool = False) -> str:
    """See :meth:`parley.core.store.store.Store.show_branch`. Returns the new leaf's id."""
    sessions.require(con, session_id)
    lock(con, session_id)
    chain = list(con.execute(_UP, {"tid": turn_id, "sid": session_id, "limit": _DEPTH}))
    if not chain:
        raise TurnNotInSession(turn_id, session_id)
    last = leaf(con, session_id)
    if chain[0].pos is not None and not exact:
        assert last is not None  # the turn is on the path
        return str(last.turn_id)
    top = chain[-1]
    shared = -1 if top.pos is None else int(top.pos)  # the common ancestor's position
    above = [r.turn_id for r in reversed(chain) if r.pos is None]
    below = [] if exact else descend(con, session_id, turn_id)[1:]
    suffix = [*above, *(r.turn_id for r in below)]
    seen = [r.shown_at for r in chain] + [r.shown_at for r in below]
    stamp = fresh_stamp(None if last is None else last.shown_at, *seen)
    if not suffix:  # ``exact`` on a turn of the path: it becomes the leaf
        con.execute(_CUT, {"sid": session_id, "pos": shared})
        con.execute(_STAMP_ONE, {"stamp": stamp + 1, "tid": turn_id})
        return turn_id
    _set_path(con, session_id, shared, suffix, stamp)
    return suffix[-1]


_CHILDREN_COLS = (
    "SELECT l.turn_id, l.parent_id, t.seq, "
    "(SELECT p.pos FROM turn_path p WHERE p.turn_id = l.turn_id) AS pos "
    "FROM turn_links l JOIN turns t ON t.id = l.turn_id WHERE l.session_id = :sid "
)
_CHILDREN_OF = text(_CHILDREN_COLS + "AND l.parent_id IN :ids").bindparams(
    bindparam("ids", expanding=True))
_FIRSTS = text(_CHILDREN_COLS + "AND l.parent_id IS NULL")


def children(con: Connection, session_id: str, parent_ids: Sequence[str | None]
             ) -> dict[str | None, list[Row[Any]]]:
    """``{parent: its children (turn_id, parent_id, seq, pos), oldest first}``; None
    stands for the first messages (``pos``: on the path, else None)."""
    rows: list[Row[Any]] = []
    if None in parent_ids:
        rows += con.execute(_FIRSTS, {"sid": session_id})
    named = [p for p in parent_ids if p is not None]
    for part in _chunks(named):
        rows += con.execute(_CHILDREN_OF, {"sid": session_id, "ids": part})
    out: dict[str | None, list[Row[Any]]] = defaultdict(list)
    for r in sorted(rows, key=lambda r: r.seq):
        out[r.parent_id].append(r)
    return out


# A set of turns of a session and every turn below them.
_SUBTREE = text(
    "WITH RECURSIVE sub(turn_id, depth) AS ("
    "SELECT id, 0 FROM turns WHERE session_id = :sid AND id IN :ids "
    "UNION SELECT l.turn_id, sub.depth + 1 FROM sub JOIN turn_links l "
    "ON l.parent_id = sub.turn_id AND l.session_id = :sid WHERE sub.depth < :limit) "
    "SELECT DISTINCT turn_id FROM sub"
).bindparams(bindparam("ids", expanding=True))
_DELETE = text("DELETE FROM turns WHERE id IN :ids").bindparams(
    bindparam("ids", expanding=True))
_AFTER = text("SELECT turn_id FROM turn_path WHERE session_id = :sid AND pos > :pos")


def subtrees(con: Connection, session_id: str, turn_ids: Sequence[str]) -> list[str]:
    """Ids of these turns of the session (others are left out) and of every turn below
    them (their branches). Cost: the turns found."""
    found: set[str] = set()
    for part in _chunks(list(dict.fromkeys(turn_ids))):
        found.update(con.execute(_SUBTREE, {"sid": session_id, "ids": part,
                                            "limit": _DEPTH}).scalars())
    return list(found)


def delete_subtrees(con: Connection, session_id: str, turn_ids: Sequence[str]) -> int:
    """Delete these turns of the session with every turn below them; return how many.

    Their path rows and links go with them (``ON DELETE CASCADE``): a deleted leaf
    makes its parent the leaf.
    """
    gone = subtrees(con, session_id, turn_ids)
    done = 0
    for part in _chunks(gone):
        done += int(con.execute(_DELETE, {"ids": part}).rowcount)
    return done


def path_after(con: Connection, session_id: str, turn_id: str) -> list[str]:
    """Ids of the path's turns after ``turn_id``. Raises TurnNotInSession (not on the path)."""
    pos = pos_of(con, session_id, turn_id)
    return [str(t) for t in con.execute(_AFTER, {"sid": session_id, "pos": pos}).scalars()]

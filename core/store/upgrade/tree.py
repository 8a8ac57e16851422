"""The conversation tree added to files and databases written before it (issue 32).

Parley up to commit e73c920 kept a chat as a line of turns (``turns.seq``) and
an edit or a regeneration as a *version session* (a copy of the chat,
``parley.core.store.upgrade.tree_family``). The tree keeps every turn's parent
(``turn_links``) and the path the chat shows (``turn_path``)
(``parley.core.store.schema``). :func:`convert` brings an older file or
database to that, inside the caller's transaction (so a process killed midway
leaves it as it was):

1. the two tables are created;
2. every turn is linked below the turn before it (by ``seq``) in its session and
   put on its session's path (``pos`` = its rank by ``seq``): two INSERT … SELECT
   with window functions, whatever the number of turns;
3. every chat that has versions gets them folded into its tree
   (``parley.core.store.upgrade.tree_fold``): the versions' own turns move into
   the chat's session, the chat shows the path of the version it showed, and
   each branch point leads back to the version chosen there lately;
4. forks made on purpose from a version are re-pointed to its chat (and to the
   chat's turn where they were made from a copy); app-state rows naming a version
   (the last chat open, drafts, ``unseen:<id>`` …) name its chat, unless the chat
   has its own (then the one of the version shown wins);
5. the version sessions are deleted (their copies with them).

SQLite files get it as an *addition* (``parley.core.store.upgrade.migrations``),
after a backup beside the file (``<db>.parley-pre-tree.bak``); PostgreSQL
databases when ``PgStore`` opens one without the tables. :func:`fill` alone
serves the v3 upgrade (``parley.core.store.upgrade.steps``), whose forks stay forks.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlalchemy import func, literal, select, update
from sqlalchemy.engine import Connection
from sqlalchemy.schema import CreateTable

from parley.core.store import fork_index, path_count
from parley.core.store.schema import TREE_OBJECTS
from parley.core.store.schema import sessions as S
from parley.core.store.schema import turn_links as L
from parley.core.store.schema import turn_path as P
from parley.core.store.schema import turns as T
from parley.core.store.upgrade import tree_fold
from parley.core.store.upgrade.backup import copy_backup
from parley.core.store.upgrade.tree_family import (
    KIND_KEY,
    RECENT_KEY,
    SHOWN_KEY,
    VERSION_KEYS,
    Family,
    Member,
    families,
)
from parley.core.store.upgrade.tree_state import repoint_state

log = logging.getLogger(__name__)

#: The backup taken before a file is converted: ``<db>.parley-pre-tree.bak`` (then .1, .2 …).
BACKUP_TAG = "tree"
_USAGE = ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens", "cost_usd")
_CHUNK = 500


@dataclass(frozen=True, slots=True)
class TreeConversion:
    """What :func:`add_to_file` did to a file.

    Attributes:
        backup_path: the copy taken first (``<db>.parley-pre-tree.bak`` …), or None
            (an in-memory database, or a file that had ``turn_links`` and only got
            the tree objects it lacked: nothing converted, no backup).
        folded: version sessions folded into their chats as branches (and deleted).
        chats: the chats they were folded into.
    """

    backup_path: Path | None
    folded: int
    chats: int


def create_tables(con: Connection) -> None:
    """Create ``turn_links`` and ``turn_path`` with their indexes (missing ones only)."""
    L.create(con, checkfirst=True)
    P.create(con, checkfirst=True)


def fill(con: Connection) -> None:
    """Link every turn below the previous one of its session (by ``seq``) and put every
    turn on its session's path (``pos`` = rank by ``seq``, from 0). Stamps are 0: a
    line has no choices to remember. Expects both tables empty.

    Rows go in in key order and the secondary indexes are built after them (dropped
    first when there): random inserts into the B-trees of a big file thrash the
    page cache (measured: 10 s instead of about 1 s for 200,000 turns in the v3
    upgrade's transaction).
    """
    indexes = [*L.indexes, *P.indexes]
    for index in indexes:
        index.drop(con, checkfirst=True)
    forks = fork_index.suspend(con)  # its triggers would scan turn_links without the index
    counts = path_count.suspend(con)  # one GROUP BY after, not a trigger per row
    by, order = T.c.session_id, T.c.seq
    line = select(
        T.c.id, T.c.session_id,
        func.lag(T.c.id).over(partition_by=by, order_by=order).label("parent"),
        (func.row_number().over(partition_by=by, order_by=order) - 1).label("pos"),
    ).subquery("line")
    con.execute(L.insert().from_select(
        ["turn_id", "session_id", "parent_id", "shown_at"],
        select(line.c.id, line.c.session_id, line.c.parent, literal(0)).order_by(line.c.id)))
    con.execute(P.insert().from_select(
        ["session_id", "pos", "turn_id"],
        select(line.c.session_id, line.c.pos, line.c.id)
        .order_by(line.c.session_id, line.c.pos)))
    for index in indexes:
        index.create(con)
    if forks:  # lines only: no fork to find
        fork_index.create(con, lines=True)
    if counts:
        path_count.create(con)


def convert(con: Connection) -> dict[str, str]:
    """Create and fill the tree tables, then fold every version session into its chat
    (module doc). Runs in the caller's transaction.

    Returns:
        The version sessions folded (deleted), each mapped to its chat's id
        (empty when the file had no versions).
    """
    for table in (L, P):  # their indexes come with the fill, built at once
        con.execute(CreateTable(table))
    fill(con)
    chats, orphans = families(con)
    _make_chats(con, orphans)
    mapping: dict[str, str] = {}  # a copy's id -> the original's
    owner: dict[str, str] = {}  # a version's id -> its chat's
    shown: set[str] = set()  # the versions their chats showed
    renumbered: list[tree_fold.ChatTree] = []
    for fam in chats:
        tree = _fold_family(con, fam, mapping)
        if tree.moved:
            renumbered.append(tree)
        owner.update({v.id: fam.root.id for v in fam.versions})
        shown.add(fam.shown())
    if not owner:
        return {}
    _repoint_forks(con, owner, mapping)
    for tree in renumbered:
        for fork in con.execute(select(S.c.id, S.c.forked_from_turn_id)
                                .where(S.c.parent_session_id == tree.session_id)).all():
            if fork.id not in owner and fork.forked_from_turn_id in tree.nodes:
                tree_fold.align_fork(con, tree, fork.id, fork.forked_from_turn_id)
    repoint_state(con, owner, shown)
    gone = sorted(owner)
    for i in range(0, len(gone), _CHUNK):
        con.execute(S.delete().where(S.c.id.in_(gone[i:i + _CHUNK])))
    log.info("conversation tree: %d version sessions folded into %d chats", len(gone),
             len(chats))
    return owner


def _make_chats(con: Connection, orphans: list[Member]) -> None:
    """Versions whose chat is gone become plain chats: no parent, no version keys."""
    for m in orphans:
        meta = {k: v for k, v in m.meta.items() if k not in VERSION_KEYS}
        con.execute(update(S).where(S.c.id == m.id).values(
            parent_session_id=None, forked_from_turn_id=None,
            meta=json.dumps(meta, ensure_ascii=False, separators=(",", ":"))))
        m.meta = meta


def _fold_family(con: Connection, fam: Family, mapping: dict[str, str]
                 ) -> tree_fold.ChatTree:
    tree = tree_fold.load(con, fam.root.id)
    leaves: dict[str, str | None] = {fam.root.id: _leaf(tree)}
    for v in fam.versions:
        leaves[v.id] = tree_fold.fold(con, tree, v.id, mapping)
    if tree.moved:
        tree_fold.renumber(con, tree)
    tree_fold.show(con, tree, leaves, fam.preference(), leaves[fam.root.id])
    _merge_session(con, fam)
    return tree


def _leaf(tree: tree_fold.ChatTree) -> str | None:
    """The last turn (by ``seq``) of a session still a line."""
    if not tree.nodes:
        return None
    return max(tree.nodes.values(), key=lambda n: n.seq).id


def _merge_session(con: Connection, fam: Family) -> None:
    """The chat's row: the latest activity of any member, every member's usage added,
    the model, system prompt and end of the version it showed (that is what the chat
    opened on), the versions' bookkeeping keys out of ``meta``."""
    ids = [v.id for v in fam.versions]
    sums = con.execute(select(*(func.coalesce(func.sum(S.c[c]), 0) for c in _USAGE),
                              func.max(S.c.updated_at)).where(S.c.id.in_(ids))).one()
    values: dict[str, Any] = {c: S.c[c] + sums[n] for n, c in enumerate(_USAGE)}
    values["updated_at"] = func.max(S.c.updated_at, sums[-1]) if _is_sqlite(con) \
        else func.greatest(S.c.updated_at, sums[-1])
    shown = fam.shown()
    if shown != fam.root.id:
        row = con.execute(select(S.c.model, S.c.system_prompt, S.c.end_reason)
                          .where(S.c.id == shown)).one()
        values.update(model=row.model, system_prompt=row.system_prompt,
                      end_reason=row.end_reason)
    meta = {k: v for k, v in fam.root.meta.items()
            if k not in (SHOWN_KEY, RECENT_KEY) and not (k == KIND_KEY and v == "version")}
    if meta != fam.root.meta:
        values["meta"] = json.dumps(meta, ensure_ascii=False, separators=(",", ":"))
    con.execute(update(S).where(S.c.id == fam.root.id).values(**values))


def _is_sqlite(con: Connection) -> bool:
    return con.dialect.name == "sqlite"


def _repoint_forks(con: Connection, owner: dict[str, str], mapping: dict[str, str]) -> None:
    """Forks made on purpose from a version: listed under the version's chat, made
    from the chat's turn where the version held a copy."""
    ids = sorted(owner)
    for i in range(0, len(ids), _CHUNK):
        rows = con.execute(select(S.c.id, S.c.parent_session_id, S.c.forked_from_turn_id)
                           .where(S.c.parent_session_id.in_(ids[i:i + _CHUNK]))
                           .where(S.c.id.not_in(ids))).all()
        for r in rows:
            at = r.forked_from_turn_id
            con.execute(update(S).where(S.c.id == r.id).values(
                parent_session_id=owner[r.parent_session_id],
                forked_from_turn_id=mapping.get(at, at) if at is not None else None))


def add_to_file(con: Connection) -> TreeConversion:
    """The SQLite addition: back the file up beside it, then :func:`convert`; the
    backup is on disk before the caller commits. A file that has ``turn_links`` but
    lacks some other object of the tree only gets what it lacks (no conversion).

    Returns:
        What was done: the backup's path and the versions folded (see
        :class:`TreeConversion`).

    Raises:
        MigrationBackupFailed: the backup could not be made (nothing was written).
    """
    names = {r[0] for r in con.exec_driver_sql("SELECT name FROM sqlite_master")}
    if "turn_links" in names:
        create_tables(con)
        return TreeConversion(None, 0, 0)
    path = _file_of(con)
    copy = copy_backup(path, tag=BACKUP_TAG) if path is not None else None
    owner = convert(con)
    backup = copy.place() if copy is not None else None
    return TreeConversion(backup, len(owner), len(set(owner.values())))


def _file_of(con: Connection) -> Path | None:
    """The main database file of an SQLite connection (None in memory)."""
    for row in con.exec_driver_sql("PRAGMA database_list"):
        if row[1] == "main":
            return Path(row[2]) if row[2] else None
    return None


__all__ = ["BACKUP_TAG", "TREE_OBJECTS", "TreeConversion", "add_to_file", "convert",
           "create_tables", "fill"]

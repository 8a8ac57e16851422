"""Forking a session: a new chat holding copies of the path it shows up to a turn.

The copies keep their turns' ``seq`` (it grows along any path, so it stays unique and
in order; search tells a fork's copies by it: :mod:`parley.core.store.fork_copies`),
are linked as a chain (``turn_links``, each copy's parent the copy before it) and are
the new session's whole path (``turn_path``, positions 0, 1, …):
:mod:`parley.core.store.tree`'s tables. The session's other branches are not copied.

A compacted chat shows its summary card where the replaced turns began, but stores the
summary turn after the turns the compaction kept word for word. A fork made at one of
those (or at any turn before the summary turn whose replaced turns all come before it)
also copies that summary as its last turn, with its ``compactions`` row
(:func:`parley.core.store.summary_carry.for_fork`), so the fork shows the card and its
next request is the parent's up to the fork point: the summary, then the turns after
its range. A fork at a turn the summary replaced copies the plain conversation. A fork
at the summary turn itself (Fork on its card) is a chat that starts from that summary:
the turns up to the end of its range (the card still opens to them) and the summary,
not the kept turns stored between them, which the chat shows after the card
(:func:`parley.core.store.summary_carry.at_summary`); its next request is the summary
and the new message.

Cost: the path's turns up to the fork point are copied (a fork of a long chat writes as
many rows as it copies), plus the session's compactions read, and one summary turn.
"""

from __future__ import annotations

import json
from typing import Any

from sqlalchemy import select
from sqlalchemy.engine import Connection

from parley.core.chat.title_text import FORK_MARK
from parley.core.content import new_id
from parley.core.store import sessions, summary_carry, tree
from parley.core.store.models import Session
from parley.core.store.schema import compactions as C
from parley.core.store.schema import sessions as S
from parley.core.store.schema import turn_links as L
from parley.core.store.schema import turn_path as P
from parley.core.store.schema import turns as T

_ID_KEYS = ("first_turn_id", "last_turn_id", "compaction_id")


def _remap_blocks(blocks_json: str, ids: dict[str, str]) -> str:
    """Rewrite the turn/compaction ids inside compact_summary blocks to the fork's ids."""
    if '"compact_summary"' not in blocks_json:
        return blocks_json
    data = json.loads(blocks_json)
    for block in data:
        if isinstance(block, dict) and block.get("type") == "compact_summary":
            for key in _ID_KEYS:
                if block.get(key) in ids:
                    block[key] = ids[block[key]]
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"))


def fork_title(con: Connection, parent_title: str | None) -> str:
    """A fork's automatic title: its parent's with one fork mark, "Trip (fork)", or
    "Trip (fork 2)", "(fork 3)"… when a chat has that title already (a fork of a fork,
    a second fork), never "Trip (fork) (fork)", which can't be told apart in a list."""
    base = FORK_MARK.sub("", parent_title or "") or "Untitled"
    taken = {r.title for r in con.execute(
        select(S.c.title).where(S.c.title.like(base.replace("%", "_") + " (fork%"))
    )}
    n, title = 1, f"{base} (fork)"
    while title in taken:
        n += 1
        title = f"{base} (fork {n})"
    return title


def fork(con: Connection, session_id: str, at_turn_id: str, title: str | None) -> Session:
    """See :meth:`parley.core.store.store.Store.fork`: the new session, nested under
    ``session_id`` (``parent_session_id``), in its space, with its model, system prompt
    and ``meta``. Raises SessionNotFound, TurnNotInSession (``at_turn_id`` is not on the
    path shown)."""
    parent = sessions.get(con, session_id)
    at_pos = tree.pos_of(con, session_id, at_turn_id)
    if title is None or not title.strip():
        title, source = fork_title(con, parent.title), "auto"
    else:
        source = "user"
    fork_id = sessions.insert(
        con,
        space_id=parent.space_id,
        title=title,
        title_source=source,  # type: ignore[arg-type]
        model=parent.model,
        system_prompt=parent.system_prompt,
        parent_session_id=parent.id,
        forked_from_turn_id=at_turn_id,
        meta=dict(parent.meta),
    )
    own = summary_carry.at_summary(con, session_id, at_turn_id)
    carried: str | None
    if own is not None:  # Fork on a summary card: up to its range's end, then the summary
        carried, copy_to = own
    else:
        carried, copy_to = summary_carry.for_fork(con, session_id, at_pos), at_pos
    cols = (T.c.id, T.c.seq, T.c.role, T.c.blocks, T.c.aborted, T.c.model, T.c.usage,
            T.c.created_at)
    rows = list(con.execute(tree.path_select(session_id, *cols).where(P.c.pos <= copy_to)))
    copied = (P.c.session_id == session_id) & (P.c.pos <= copy_to)
    if carried is not None:
        # The summary stored after the fork point: its seq is above every copied turn's.
        summary = select(C.c.summary_turn_id).where(C.c.id == carried).scalar_subquery()
        rows += con.execute(select(*cols).where(T.c.id == summary)).all()
        copied |= C.c.id == carried
    ids: dict[str, str] = {r.id: new_id() for r in rows}
    comp_rows = con.execute(
        # The session's compactions (compactions_by_session) whose summary turn is copied.
        select(C).select_from(C.join(P, P.c.turn_id == C.c.summary_turn_id))
        .where(C.c.session_id == session_id, copied)
    ).all()
    ids.update({c.id: new_id() for c in comp_rows})
    values: list[dict[str, Any]] = [
        {
            "id": ids[r.id],
            "session_id": fork_id,
            "seq": r.seq,
            "role": r.role,
            "blocks": _remap_blocks(r.blocks, ids),
            "aborted": r.aborted,
            "model": r.model,
            "usage": r.usage,
            "created_at": r.created_at,
        }
        for r in rows
    ]
    if values:
        con.execute(T.insert(), values)
        _link_chain(con, fork_id, [ids[r.id] for r in rows])
    for c in comp_rows:
        row = dict(c._mapping)
        row.update(
            id=ids[c.id],
            session_id=fork_id,
            summary_turn_id=ids[c.summary_turn_id],
            first_turn_id=ids.get(c.first_turn_id, c.first_turn_id),
            last_turn_id=ids.get(c.last_turn_id, c.last_turn_id),
        )
        con.execute(C.insert().values(**row))
    return sessions.get(con, fork_id)


def _link_chain(con: Connection, session_id: str, turn_ids: list[str]) -> None:
    """Link a new session's turns as one chain and make them its path (positions 0, 1,
    …): every turn gets one fresh stamp, the leaf that stamp + 1 (the path ends there:
    :mod:`parley.core.store.tree`'s choices)."""
    stamp = tree.fresh_stamp()
    last = len(turn_ids) - 1
    con.execute(L.insert(), [
        {"turn_id": tid, "session_id": session_id,
         "parent_id": turn_ids[i - 1] if i else None,
         "shown_at": stamp + 1 if i == last else stamp}
        for i, tid in enumerate(turn_ids)
    ])
    tree.add_path(con, session_id, 0, turn_ids)

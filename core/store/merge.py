"""Merge another Parley database into this one by ids: nothing duplicated, nothing overwritten.

What ``parley --import`` does with a Parley database file (sessions.db, a backup, a
rescue copy) and what the window does with a rescue copy found at start
(``parley.core.importing.parley_file``). :func:`merge` reads the source in one read
transaction and writes the destination in one write transaction (all or nothing):

* spaces, chats (sessions), attached files and compactions whose id (a file's
  sha256) the destination lacks are added as they are; those it has are left as
  they are (titles, counters, settings: the destination's own win);
* messages (turns) are matched by id. One the destination lacks is added at its
  place in its chat (its ``seq``) below its parent (its ``turn_links`` row comes
  along: a chat's branches come with it, ``parley.core.store.schema``). When that
  place is taken by another message (the chat went on differently here since the
  copy was made), it and the chat's later messages of the copy are added after
  the chat's last message (new ``seq`` values, in their order, so ``seq`` still
  grows along every path), below the same parents: another branch of the chat,
  counted (:attr:`MergeReport.branched`). One whose parent is not in its chat
  here (deleted here with the messages below it) is left out and counted
  (:attr:`MergeReport.left_out`). One the destination has is left alone —
  except a reply cut off by the end of Parley (``turns.aborted == CUT_OFF``, the
  journalled prefix) whose source copy is
  complete: the whole reply replaces that prefix and its usage is added to the
  chat's counters, as its own save would have done (``Store.finish_turn``);
* the path a chat shows (``turn_path``): a chat that is new here shows what it
  showed in the source; one that is here and shows the start of the source's path
  goes on along it through the messages added (the source went on after the copy
  was made), with fresh stamps (``parley.core.store.tree``); any other keeps its own
  (the messages added are branches of it, shown as ‹ n/m ›);
* the unsent texts a rescue copy holds (``draft:<chat>`` app state,
  ``parley.gui.composer.drafts``) are added where the destination has none. Other
  settings and app state are not merged (this machine's own stay).

The destination's triggers keep the search index and the links of messages to
files up to date (``parley.core.store.schema``, ``parley.core.store.postgres.sql``),
as for any saved turn. Works on SQLite and PostgreSQL destinations alike.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Table, func, inspect, select, tuple_, update
from sqlalchemy.engine import Connection

from parley.core.app_state import DRAFT
from parley.core.store import schema, sessions
from parley.core.store.errors import SourceWithoutTree
from parley.core.store.pages import BATCH_FILES, BATCH_ROWS, keyset_batches
from parley.core.store.tree import fresh_stamp
from parley.core.store.turns import CUT_OFF, usage_from_text


@dataclass(frozen=True, slots=True)
class MergeReport:
    """What a merge added.

    Attributes:
        chat_ids: the chats added (their forks included).
        messages: messages added (every branch's).
        completed: cut-off replies replaced by the source's complete copy.
        present: messages the destination held already (left as they were).
        left_out: messages not added because the message before them is not in
            their chat here.
        branched: of ``messages``, those added as another branch of a chat that
            went on differently here.
        files: attached files added. spaces, compactions, drafts: likewise.
    """

    chat_ids: tuple[str, ...] = ()
    messages: int = 0
    completed: int = 0
    present: int = 0
    left_out: int = 0
    files: int = 0
    spaces: int = 0
    compactions: int = 0
    drafts: int = 0
    branched: int = 0

    @property
    def changed(self) -> bool:
        """True when anything was added or completed."""
        return bool(self.chat_ids or self.messages or self.completed or self.files
                    or self.spaces or self.compactions or self.drafts)


class RolledBack(Exception):  # noqa: N818 - not an error: how a dry run ends
    """Raised inside a write transaction to undo a trial merge; carries its report."""

    def __init__(self, report: MergeReport) -> None:
        super().__init__("trial merge rolled back")
        self.report = report


def _columns(table: Table) -> list[Any]:
    """Every column but the destination's own row numbers (``n``)."""
    return [c for c in table.columns if c.name != "n"]


def _batches(con: Connection, table: Table, key: Any, size: int
             ) -> Iterator[list[dict[str, Any]]]:
    """The rows of ``table`` (as dicts) in ``key`` order, ``size`` at a time (keyset
    pagination)."""
    yield from keyset_batches(con, _columns(table), [key], size)


def _present(con: Connection, column: Any, values: list[Any]) -> set[Any]:
    if not values:
        return set()
    return set(con.execute(select(column).where(column.in_(values))).scalars())


def _insert(dst: Connection, table: Table, rows: list[dict[str, Any]]) -> None:
    if rows:
        dst.execute(table.insert(), rows)


def merge(src: Connection, dst: Connection) -> MergeReport:
    """Add what ``src`` holds and ``dst`` lacks (module docstring); call inside ``dst``'s
    write transaction and ``src``'s read transaction.

    Returns:
        What was added.

    Raises:
        SourceWithoutTree: ``src`` holds messages but not the conversation tree (a file
            of an older Parley that was not converted); nothing was written.
    """
    _check_tree(src)
    sp, se = schema.spaces, schema.sessions
    had = set(dst.execute(select(sp.c.id)).scalars())
    new_spaces = [dict(r._mapping) for r in src.execute(select(*_columns(sp))).all()
                  if r.id not in had]
    _insert(dst, sp, new_spaces)
    spaces_now = set(dst.execute(select(sp.c.id)).scalars())

    files = 0
    for rows in _batches(src, schema.attachments, schema.attachments.c.sha256, BATCH_FILES):
        have = _present(dst, schema.attachments.c.sha256, [r["sha256"] for r in rows])
        missing = [r for r in rows if r["sha256"] not in have]
        _insert(dst, schema.attachments, missing)
        files += len(missing)

    chat_ids: list[str] = []
    for rows in _batches(src, se, se.c.id, BATCH_ROWS):
        have = _present(dst, se.c.id, [r["id"] for r in rows])
        missing = [{**r, "space_id": r["space_id"] if r["space_id"] in spaces_now
                    else schema.DEFAULT_SPACE_ID} for r in rows if r["id"] not in have]
        _insert(dst, se, missing)
        chat_ids += [r["id"] for r in missing]

    counts, touched, partial = _merge_turns(src, dst)
    whole = set(chat_ids) - partial
    _copy_paths(src, dst, whole)
    _merge_paths(src, dst, touched - whole, set(chat_ids))
    compactions = 0
    co = schema.compactions
    for rows in _batches(src, co, co.c.id, BATCH_ROWS):
        have = _present(dst, co.c.id, [r["id"] for r in rows])
        chats = _present(dst, se.c.id, list({r["session_id"] for r in rows}))
        missing = [r for r in rows if r["id"] not in have and r["session_id"] in chats]
        _insert(dst, co, missing)
        compactions += len(missing)
    drafts = _merge_drafts(src, dst)
    return MergeReport(tuple(chat_ids), counts[0], counts[1], counts[2], counts[3], files,
                       len(new_spaces), compactions, drafts, counts[4])


def _check_tree(src: Connection) -> None:
    """Raise SourceWithoutTree when ``src`` has turns but no ``turn_links`` rows (or no
    such table: a file no Parley with the tree has opened)."""
    def one(table: Table) -> bool:
        return src.execute(select(1).select_from(table).limit(1)).first() is not None

    linked = inspect(src).has_table("turn_links") and one(schema.turn_links)
    if not linked and one(schema.turns):
        raise SourceWithoutTree()


def _merge_turns(src: Connection, dst: Connection
                 ) -> tuple[tuple[int, int, int, int, int], set[str], set[str]]:
    """Turns by id, with their links (module docstring): ((added, completed, present,
    left out, branched), the chats that got messages, the chats some message of the
    source's was not added to). Read chat by chat in ``seq`` order, so a parent is
    always added before its children (``seq`` grows along every path)."""
    tu, se, li = schema.turns, schema.sessions, schema.turn_links
    added = completed = present = left_out = branched = 0
    touched: set[str] = set()
    partial: set[str] = set()
    after_last: dict[str, int] = {}  # chats that went on here: the next seq at their end
    for rows in keyset_batches(src, _columns(tu), [tu.c.session_id, tu.c.seq], BATCH_ROWS,
                               key_columns=2):
        found = {f.id: f for f in dst.execute(
            select(tu.c.id, tu.c.session_id, tu.c.aborted).where(
                tu.c.id.in_([r["id"] for r in rows])))}
        new = [r for r in rows if r["id"] not in found]
        chats = _present(dst, se.c.id, list({r["session_id"] for r in new}))
        places = [(r["session_id"], r["seq"]) for r in new]
        taken = {tuple(t) for t in dst.execute(select(tu.c.session_id, tu.c.seq).where(
            tuple_(tu.c.session_id, tu.c.seq).in_(places)))} if new else set()
        placed = _places(dst, [r for r in new if r["session_id"] in chats], taken, after_last)
        fits, links = _with_parents(src, dst, [r for r, _moved in placed])
        kept = {r["id"] for r in fits}
        branched += sum(1 for r, moved in placed if moved and r["id"] in kept)
        _insert(dst, tu, fits)
        _insert(dst, li, links)
        touched.update(r["session_id"] for r in fits)
        partial.update(r["session_id"] for r in rows if r["id"] not in kept)
        added += len(fits)
        left_out += len(new) - len(fits)
        for r in rows:
            old = found.get(r["id"])
            if old is None:
                continue
            if (old.aborted == CUT_OFF and r["aborted"] == 0
                    and old.session_id == r["session_id"]):
                dst.execute(update(tu).where(tu.c.id == r["id"]).values(
                    blocks=r["blocks"], aborted=0, model=r["model"], usage=r["usage"]))
                usage = usage_from_text(r["usage"])
                if usage is not None:
                    sessions.add_usage(dst, r["session_id"], usage)
                completed += 1
            else:
                present += 1
    return (added, completed, present, left_out, branched), touched, partial


def _places(dst: Connection, new: list[dict[str, Any]], taken: set[tuple[Any, ...]],
            after_last: dict[str, int]) -> list[tuple[dict[str, Any], bool]]:
    """Each new turn (in ``seq`` order per chat) with the ``seq`` it gets here, and
    whether it moved: from the first whose place is taken, a chat's turns go after its
    last turn (``after_last``: the next free ``seq`` of such chats, kept across
    batches)."""
    tu = schema.turns
    out: list[tuple[dict[str, Any], bool]] = []
    last_here: dict[str, int] = {}  # the greatest seq placed in this batch, per chat
    for r in new:
        sid = r["session_id"]
        if sid not in after_last and (sid, r["seq"]) not in taken:
            out.append((r, False))
            last_here[sid] = r["seq"]
            continue
        if sid not in after_last:
            end = dst.execute(select(func.max(tu.c.seq)).where(tu.c.session_id == sid)).scalar()
            after_last[sid] = max(int(end if end is not None else -1),
                                  last_here.get(sid, -1)) + 1
        out.append(({**r, "seq": after_last[sid]}, True))
        after_last[sid] += 1
    return out


def _with_parents(src: Connection, dst: Connection, fits: list[dict[str, Any]]
                  ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The turns of ``fits`` (in ``seq`` order per chat) whose parent is in their chat
    here or added before them, and their ``turn_links`` rows from ``src``."""
    li, tu = schema.turn_links, schema.turns
    if not fits:
        return [], []
    links = {r["turn_id"]: r for r in (dict(x._mapping) for x in src.execute(
        select(*_columns(li)).where(li.c.turn_id.in_([r["id"] for r in fits]))))}
    parents = list({lk["parent_id"] for lk in links.values() if lk["parent_id"] is not None})
    owner = {r.id: r.session_id for r in dst.execute(
        select(tu.c.id, tu.c.session_id).where(tu.c.id.in_(parents)))} if parents else {}
    kept: list[dict[str, Any]] = []
    kept_links: list[dict[str, Any]] = []
    for r in fits:
        link = links.get(r["id"])
        if link is None:
            continue  # a turn the source's tree does not hold: left out
        parent = link["parent_id"]
        if parent is not None and owner.get(parent) != r["session_id"]:
            continue
        kept.append(r)
        kept_links.append(link)
        owner[r["id"]] = r["session_id"]
    return kept, kept_links


def _path(con: Connection, session_id: str) -> list[tuple[int, str]]:
    pa = schema.turn_path
    return [(int(r.pos), r.turn_id) for r in con.execute(
        select(pa.c.pos, pa.c.turn_id).where(pa.c.session_id == session_id).order_by(pa.c.pos))]


def _copy_paths(src: Connection, dst: Connection, chats: set[str]) -> None:
    """The paths of chats added here with every message of theirs, as the source shows
    them (keyset pages of the source's ``turn_path``: a few statements for thousands of
    chats)."""
    if not chats:
        return
    pa = schema.turn_path
    for rows in keyset_batches(src, _columns(pa), [pa.c.turn_id], BATCH_ROWS):
        _insert(dst, pa, [r for r in rows if r["session_id"] in chats])


def _merge_paths(src: Connection, dst: Connection, touched: set[str], new: set[str]) -> None:
    """The path each other chat that got messages shows (module docstring). Cost: the
    paths of those chats, read once on each side."""
    li, pa = schema.turn_links, schema.turn_path
    for sid in sorted(touched):
        theirs = _path(src, sid)
        mine = _path(dst, sid)
        if [t for _p, t in theirs[:len(mine)]] != [t for _p, t in mine]:
            continue  # it went another way here: what was added is another branch
        rest = theirs[len(mine):]
        parent_of = {r.turn_id: r.parent_id for r in dst.execute(
            select(li.c.turn_id, li.c.parent_id).where(
                li.c.turn_id.in_([t for _p, t in rest])))} if rest else {}
        prev = mine[-1][1] if mine else None
        suffix: list[tuple[int, str]] = []
        for pos, turn_id in rest:  # as far as it is here, unbroken
            if turn_id not in parent_of or parent_of[turn_id] != prev:
                break
            suffix.append((pos, turn_id))
            prev = turn_id
        if not suffix:
            continue
        if not mine and sid in new:  # a new chat: as it was shown there, stamps included
            _insert(dst, pa, [{"session_id": sid, "pos": p, "turn_id": t} for p, t in suffix])
            continue
        start = mine[-1][0] + 1 if mine else 0
        ids = [t for _p, t in suffix]
        _insert(dst, pa, [{"session_id": sid, "pos": start + i, "turn_id": t}
                          for i, t in enumerate(ids)])
        newest = dst.execute(select(func.max(li.c.shown_at)).where(li.c.session_id == sid)
                             ).scalar()
        stamp = fresh_stamp(newest)
        dst.execute(update(li).where(li.c.turn_id.in_(ids[:-1])).values(shown_at=stamp))
        dst.execute(update(li).where(li.c.turn_id == ids[-1]).values(shown_at=stamp + 1))


def _merge_drafts(src: Connection, dst: Connection) -> int:
    st = schema.app_state
    rows = src.execute(select(st.c.key, st.c.value).where(
        st.c.key.startswith(DRAFT.name, autoescape=True))).all()
    have = _present(dst, st.c.key, [r.key for r in rows])
    missing = [{"key": r.key, "value": r.value} for r in rows if r.key not in have]
    if missing:
        dst.execute(st.insert(), missing)
    return len(missing)

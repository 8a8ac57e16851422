"""Merge another Parley database into this one by ids: nothing duplicated, nothing overwritten.

What ``parley --import`` does with a Parley database file (sessions.db, a backup, a
rescue copy) and what the window does with a rescue copy found at start
(``parley.core.importing.parley_file``). :func:`merge` reads the source in one read
transaction and writes the destination in one write transaction (all or nothing):

* spaces, chats (sessions), attached files and compactions whose id (a file's
  sha256) the destination lacks are added as they are; those it has are left as
  they are (titles, counters, settings: the destination's own win);
* messages (turns) are matched by id. One the destination lacks is added at its
  place in its chat (its ``seq``); when that place is taken by another message
  (the chat went on differently since the copy was made) it is left out and
  counted (:attr:`MergeReport.left_out`), never put out of order. One the
  destination has is left alone — except a reply cut off by the end of Parley
  (``turns.aborted == CUT_OFF``, the journalled prefix) whose source copy is
  complete: the whole reply replaces that prefix and its usage is added to the
  chat's counters, as its own save would have done (``Store.finish_turn``);
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

from sqlalchemy import Table, select, tuple_, update
from sqlalchemy.engine import Connection

from parley.core.store import schema, sessions
from parley.core.store.pages import BATCH_FILES, BATCH_ROWS, keyset_batches
from parley.core.store.turns import CUT_OFF, usage_from_text

DRAFT_PREFIX = "draft:"


@dataclass(frozen=True, slots=True)
class MergeReport:
    """What a merge added.

    Attributes:
        chat_ids: the chats added (listed ones and their versions and forks).
        messages: messages added.
        completed: cut-off replies replaced by the source's complete copy.
        present: messages the destination held already (left as they were).
        left_out: messages not added because their place in their chat is taken.
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
    """
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

    counts = _merge_turns(src, dst)
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
                       len(new_spaces), compactions, drafts)


def _merge_turns(src: Connection, dst: Connection) -> tuple[int, int, int, int]:
    """Turns by id (module docstring): (added, completed, present, left out)."""
    tu, se = schema.turns, schema.sessions
    added = completed = present = left_out = 0
    for rows in _batches(src, tu, tu.c.id, BATCH_ROWS):
        found = {f.id: f for f in dst.execute(
            select(tu.c.id, tu.c.session_id, tu.c.aborted).where(
                tu.c.id.in_([r["id"] for r in rows])))}
        new = [r for r in rows if r["id"] not in found]
        chats = _present(dst, se.c.id, list({r["session_id"] for r in new}))
        places = [(r["session_id"], r["seq"]) for r in new]
        taken = {tuple(t) for t in dst.execute(select(tu.c.session_id, tu.c.seq).where(
            tuple_(tu.c.session_id, tu.c.seq).in_(places)))} if new else set()
        fits = [r for r in new
                if r["session_id"] in chats and (r["session_id"], r["seq"]) not in taken]
        _insert(dst, tu, fits)
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
    return added, completed, present, left_out


def _merge_drafts(src: Connection, dst: Connection) -> int:
    st = schema.app_state
    rows = src.execute(select(st.c.key, st.c.value).where(
        st.c.key.startswith(DRAFT_PREFIX, autoescape=True))).all()
    have = _present(dst, st.c.key, [r.key for r in rows])
    missing = [{"key": r.key, "value": r.value} for r in rows if r.key not in have]
    if missing:
        dst.execute(st.insert(), missing)
    return len(missing)

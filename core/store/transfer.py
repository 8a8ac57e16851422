"""Copy every chat from one store to another: a sessions.db file to PostgreSQL, and back.

:func:`copy_store` reads the source in one read transaction (one consistent
snapshot; nothing is written to it) and writes the destination in one write
transaction: spaces (with their documents), settings, app state, attached files, sessions,
turns, the conversation tree (``turn_links``: each turn's parent; ``turn_path``: the path each chat
shows, ``parley.core.store.schema``) and compactions, in the source's order, so a chat
opens on the same branch with the same branch points. The destination's own indexes follow
(SQLite: the FTS5 triggers; PostgreSQL: the generated ``tsvector`` columns),
as do the links of turns to files. Before committing, the copy is verified:
the rows of every table are counted on both sides and every turn is compared
(a sha256 over each turn's id, chat, position, role, content and time, its parent
and its place on the path shown, in id order); any difference rolls the whole copy
back — the destination is then as it was.

The destination must hold no chats (a new sessions.db, or an empty database:
:class:`DestinationNotEmpty` otherwise), so a copy never mixes two histories.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Table, delete, exists, func, select
from sqlalchemy.engine import Connection

from parley.core.store import schema
from parley.core.store.dialect import dual_literal
from parley.core.store.errors import CopyMismatch, DestinationNotEmpty
from parley.core.store.pages import BATCH_FILES, BATCH_ROWS, keyset_batches
from parley.core.store.postgres import sql as pg_sql
from parley.core.store.postgres.options import no_statement_timeout
from parley.core.store.store import Store

#: ``progress(done, total)``: rows copied so far, of all tables.
Progress = Callable[[int, int], None]

#: Tables copied, in this order (turn_attachments is rebuilt by the destination's triggers).
TABLES = ("spaces", "space_documents", "space_document_pages", "settings", "app_state",
          "attachments", "sessions", "turns", "turn_links", "turn_path", "compactions",
          "queued_messages", "queued_files")
#: Tables whose ``n`` the destination numbers itself (copied in the source's ``n`` order).
_NUMBERED = ("sessions", "turns", "space_document_pages")
#: Tables of files: copied a few rows at a time.
_FILES = ("attachments", "space_documents")


@dataclass(frozen=True, slots=True)
class CopyReport:
    """What was copied (and verified equal on both sides).

    Attributes:
        counts: rows per table, ``{"sessions": 12, "turns": 340, …}``.
        turns_digest: the sha256 (hex) both sides' turns gave.
    """

    counts: dict[str, int]
    turns_digest: str
    forks: int = 0

    def summary(self) -> str:
        """One line for a person, counting chats as the list shows them: ``8 chats (with
        1 fork), 340 messages, 1 attached file, 3 spaces, 0 compactions`` (forks: listed
        under their chats; messages: every turn of every branch, edits and regenerations
        included)."""
        c = self.counts

        def n(count: int, one: str, many: str) -> str:
            return f"{count} {one if count == 1 else many}"

        chats = n(c["sessions"] - self.forks, "chat", "chats")
        if self.forks:
            chats += f" (with {n(self.forks, 'fork', 'forks')})"
        return ", ".join([
            chats, n(c["turns"], "message", "messages"),
            n(c["attachments"], "attached file", "attached files"),
            n(c["spaces"], "space", "spaces"), n(c["compactions"], "compaction", "compactions"),
        ])


def _where(store: Store) -> str:
    return str(getattr(store, "where", None) or store.path)


def _table(name: str) -> Table:
    return schema.metadata.tables[name]


def _columns(table: Table) -> list[Any]:
    """The columns copied: all declared ones but the destination's own row numbers."""
    return [c for c in table.columns if not (c.name == "n" and table.name in _NUMBERED)]


def _order(table: Table) -> list[Any]:
    """The keyset order: a unique key first (``parley.core.store.pages``)."""
    if table.name in _NUMBERED:
        return [table.c.n]
    if table.name == "turn_path":  # its key (session_id, pos) is two columns; turn_id is unique
        return [table.c.turn_id]
    return [c for c in table.primary_key.columns]


def _count(con: Connection, name: str) -> int:
    return int(con.execute(select(func.count()).select_from(_table(name))).scalar_one())


def _rows(con: Connection, table: Table, batch: int) -> Iterator[list[dict[str, Any]]]:
    """The table's rows as dicts, in order, ``batch`` at a time (keyset pagination)."""
    cols = _columns(table)
    if table.name == "compactions":  # few; in the order they were written
        order_written = dual_literal("compactions.rowid", pg_sql.COMPACTION_ORDER)
        rows = con.execute(select(*cols).order_by(table.c.created_at, order_written)).all()
        for i in range(0, len(rows), batch):
            yield [{c.name: getattr(r, c.name) for c in cols} for r in rows[i : i + batch]]
        return
    order = _order(table)  # a key of several columns (queued_files) is one key
    yield from keyset_batches(con, cols, order, batch, key_columns=len(order))


def turns_digest(con: Connection) -> str:
    """sha256 over every turn (id, chat, position, role, content, flags, time; its parent,
    when the path shown last passed it, its place on that path), in id order."""
    t, links, path = _table("turns"), _table("turn_links"), _table("turn_path")
    h = hashlib.sha256()
    cols = (t.c.id, t.c.session_id, t.c.seq, t.c.role, t.c.blocks, t.c.aborted, t.c.model,
            t.c.usage, t.c.created_at, links.c.parent_id, links.c.shown_at, path.c.pos)
    tree = t.outerjoin(links, links.c.turn_id == t.c.id).outerjoin(path, path.c.turn_id == t.c.id)
    last = ""
    while True:
        rows = con.execute(select(*cols).select_from(tree).where(t.c.id > last)
                           .order_by(t.c.id).limit(BATCH_ROWS)).all()
        if not rows:
            return h.hexdigest()
        for r in rows:
            h.update("\x1f".join("" if v is None else str(v) for v in r).encode("utf-8"))
            h.update(b"\x1e")
        last = rows[-1].id


def _check_empty(dst: Connection, where: str) -> None:
    chats = _count(dst, "sessions")
    if chats:
        raise DestinationNotEmpty(where, chats)


def _copy(src: Connection, dst: Connection, progress: Progress | None) -> CopyReport:
    counts = {name: _count(src, name) for name in TABLES}
    total, done = sum(counts.values()), 0
    # The destination's default space, settings and state give way to the source's.
    for name in ("spaces", "settings", "app_state"):
        dst.execute(delete(_table(name)))
    for name in TABLES:
        table = _table(name)
        for rows in _rows(src, table, BATCH_FILES if name in _FILES else BATCH_ROWS):
            dst.execute(table.insert(), rows)
            done += len(rows)
            if progress is not None:
                progress(done, total)
    for name in TABLES:
        got = _count(dst, name)
        if got != counts[name]:
            raise CopyMismatch(f"{counts[name]} {name} in the original, {got} in the copy")
    digest = turns_digest(src)
    if turns_digest(dst) != digest:
        raise CopyMismatch("the messages differ")
    return CopyReport(counts, digest, _forks(src))


def _forks(con: Connection) -> int:
    """How many sessions were forked from a stored one (listed under it); a chat's
    branches are inside its session (``turn_links``) and are no sessions."""
    s, parent = _table("sessions").alias("s"), _table("sessions").alias("p")
    stored_parent = exists().where(parent.c.id == s.c.parent_session_id)
    return int(con.execute(select(func.count()).select_from(s).where(stored_parent)).scalar()
               or 0)


def copy_store(source: Store, dest: Store, progress: Progress | None = None) -> CopyReport:
    """Copy every chat of ``source`` into ``dest`` (module docstring), verified.

    Args:
        source: an open store (file or database); only read.
        dest: an open store holding no chats (file or database).
        progress: called as ``progress(done, total)`` rows, on this thread.

    Returns:
        The report: rows per table and the turns' digest, equal on both sides.

    Raises:
        DestinationNotEmpty: ``dest`` holds chats (nothing was written).
        CopyMismatch: the copy differed from the original (it was rolled back).
        StoreError: either store's errors (server unreachable, disk full…); the
            destination's transaction was rolled back.
    """
    where = _where(dest)

    def write(dst: Connection) -> CopyReport:
        no_statement_timeout(dst)  # one long transaction on purpose: copies are not stuck
        _check_empty(dst, where)

        def read(src: Connection) -> CopyReport:
            no_statement_timeout(src)
            return _copy(src, dst, progress)

        return source._r(read)

    return dest._w(write)

"""Compactions: a summary turn plus a row in ``compactions``, written together.

A compaction summarizes part of the path shown (``turn_path``:
:mod:`parley.core.store.tree`): its range's ends are turns of the path, and the summary
turn is appended below the path's leaf like any turn, so the branches made below it
later keep it and those made above it (before it was written) never see it.
"""

from __future__ import annotations

from dataclasses import replace

from sqlalchemy import select
from sqlalchemy.engine import Connection, Row

from parley.core.content import CompactSummaryBlock, Turn, Usage, new_id, now_ms
from parley.core.store import sessions, tree, turns
from parley.core.store.dialect import dual_literal
from parley.core.store.models import Compaction
from parley.core.store.postgres import sql as pg_sql
from parley.core.store.schema import compactions as C


def _compaction(row: Row) -> Compaction:
    return Compaction(
        id=row.id,
        session_id=row.session_id,
        summary_turn_id=row.summary_turn_id,
        first_turn_id=row.first_turn_id,
        last_turn_id=row.last_turn_id,
        replaced_count=row.replaced_count,
        dropped_count=row.dropped_count,
        model=row.model,
        usage=turns.usage_from_text(row.usage),
        reason=row.reason,
        tokens_before=row.tokens_before,
        tokens_after=row.tokens_after,
        created_at=row.created_at,
    )


def _fill_block(turn: Turn, compaction_id: str, first: str, last: str, replaced: int) -> Turn:
    """Fill the fields left None in the turn's summary block (ids, count); keep the rest."""
    blocks = []
    for b in turn.blocks:
        if isinstance(b, CompactSummaryBlock):
            b = replace(
                b,
                compaction_id=b.compaction_id or compaction_id,
                first_turn_id=b.first_turn_id or first,
                last_turn_id=b.last_turn_id or last,
                replaced_count=b.replaced_count or replaced,
            )
        blocks.append(b)
    return turn.with_blocks(blocks)


def record(
    con: Connection,
    session_id: str,
    summary_turn: Turn,
    *,
    first_turn_id: str,
    last_turn_id: str,
    replaced_count: int,
    dropped_count: int,
    model: str | None,
    usage: Usage | None,
    reason: str,
    tokens_before: int | None,
    tokens_after: int | None,
    count_usage: bool = False,
) -> tuple[Compaction, Turn]:
    """Append the summary turn below the path's leaf and insert the compaction row;
    return both.

    Raises:
        SessionNotFound: no such session.
        TurnNotInSession: ``first_turn_id`` or ``last_turn_id`` is not a turn of the
            path shown (a turn of another branch, or of another session).
        DuplicateTurn: the summary turn's id is already saved.
    """
    sessions.require(con, session_id)
    tree.pos_of(con, session_id, first_turn_id)
    tree.pos_of(con, session_id, last_turn_id)
    compaction_id = new_id()
    turn = _fill_block(summary_turn, compaction_id, first_turn_id, last_turn_id, replaced_count)
    turns.append(con, session_id, turn)
    con.execute(
        C.insert().values(
            id=compaction_id,
            session_id=session_id,
            summary_turn_id=turn.id,
            first_turn_id=first_turn_id,
            last_turn_id=last_turn_id,
            replaced_count=replaced_count,
            dropped_count=dropped_count,
            model=model,
            usage=turns.usage_to_text(usage),
            reason=reason,
            tokens_before=tokens_before,
            tokens_after=tokens_after,
            created_at=now_ms(),
        )
    )
    if count_usage and usage is not None:
        sessions.add_usage(con, session_id, usage)
    return get(con, compaction_id), turn


def get(con: Connection, compaction_id: str) -> Compaction:
    row = con.execute(select(C).where(C.c.id == compaction_id)).one()
    return _compaction(row)


def list_for(con: Connection, session_id: str) -> list[Compaction]:
    sessions.require(con, session_id)
    rows = con.execute(
        select(C)
        .where(C.c.session_id == session_id)
        .order_by(C.c.created_at, dual_literal("compactions.rowid", pg_sql.COMPACTION_ORDER))
    )
    return [_compaction(r) for r in rows]

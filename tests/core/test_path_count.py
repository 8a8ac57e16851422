"""The count of each session's path rows (``turn_path_counts``,
``parley.core.store.path_count``): kept by the database's triggers through every kind
of write, equal to counting ``turn_path`` (the aggregate ``outline.spans`` ran before
it, kept here as the oracle), on a sessions.db file and on PostgreSQL (``any_db``);
filled once when an older file or database is opened; and ``outline.spans`` no longer
counts a whole path."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import event, text
from sqlalchemy.engine import Connection

from parley.core.content import CompactSummaryBlock, TextBlock, Turn
from parley.core.store import outline, path_count
from parley.core.store.backends import open_store
from parley.core.store.outline import Span
from parley.core.store.store import Store
from parley.core.store.upgrade import tree
from parley.core.store.upgrade.migrations import FileKind, inspect_file

ALL_COUNTS = text("SELECT session_id, count(*) FROM turn_path GROUP BY session_id")
# What outline.spans read before the count: one aggregate over the session's whole path.
OLD_ENDS = text("SELECT count(*), min(pos), max(pos) FROM turn_path WHERE session_id = :sid")


@pytest.fixture
def db(any_db: Store) -> Store:
    return any_db


def old_ends(con: Connection, session_id: str) -> tuple[int, int] | None:
    total, low, high = con.execute(OLD_ENDS, {"sid": session_id}).one()
    return (int(low), int(high)) if total and total == high - low + 1 else None


def old_spans(db: Store, sid: str) -> dict[str, Span]:
    """outline.spans as it was computed before the count (the oracle)."""
    with mock.patch.object(path_count, "ends", old_ends):
        return db._r(lambda c: outline.spans(c, sid))


def count_rows(db: Store) -> dict[str, int]:
    """The table's rows, a path emptied (a row of 0) left out as the oracle has none."""
    rows = db._r(lambda c: c.execute(text("SELECT session_id, n FROM turn_path_counts")).all())
    assert all(r[1] >= 0 for r in rows)
    return {r[0]: r[1] for r in rows if r[1]}


def oracle_rows(db: Store) -> dict[str, int]:
    return {r[0]: r[1] for r in db._r(lambda c: c.execute(ALL_COUNTS).all())}


def check(db: Store, sids: list[str]) -> None:
    assert count_rows(db) == oracle_rows(db)
    for sid in sids:
        assert db._r(lambda c, s=sid: path_count.ends(c, s)) == db._r(
            lambda c, s=sid: old_ends(c, s))
        assert db._r(lambda c, s=sid: outline.spans(c, s)) == old_spans(db, sid)


def say(i: int) -> Turn:
    return Turn("user" if i % 2 == 0 else "assistant", [TextBlock(f"message {i}")])


def make_gap(con: Connection, sid: str, k: int) -> None:
    """Take one position out of the middle of the path (a path with a gap, as an
    older file or an import may hold)."""
    rows = con.execute(text("SELECT pos FROM turn_path WHERE session_id = :sid ORDER BY pos"),
                       {"sid": sid}).scalars().all()
    if len(rows) > 2:
        con.execute(text("DELETE FROM turn_path WHERE session_id = :sid AND pos = :pos"),
                    {"sid": sid, "pos": rows[1 + k % (len(rows) - 2)]})


OPS = st.lists(st.tuples(
    st.sampled_from(["append", "append", "append", "edit", "branch", "delete", "show",
                     "compact", "answers", "fork", "gap"]),
    st.integers(0, 1_000), st.booleans()), max_size=25)


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(ops=OPS)
def test_the_count_follows_every_write_and_spans_read_as_before(db, ops):
    sid = db.create_session().id
    sids = [sid]
    for n, (op, k, flag) in enumerate(ops):
        path = [t.id for t in db.get_turns(sid)]
        every = [t.turn.id for t in db.get_tree(sid)]
        if op == "append" or (not path and op in ("edit", "branch", "compact", "fork")):
            db.append_turn(sid, say(n))
        elif op == "edit":
            db.edit_turn(sid, path[k % len(path)], say(n))
        elif op == "branch":
            db.branch_before(sid, path[k % len(path)])
            if flag:
                db.append_turn(sid, say(n))
        elif op == "delete" and every:
            db.delete_turns(sid, [every[k % len(every)]])
        elif op == "show" and every:
            db.show_branch(sid, every[k % len(every)], exact=flag)
        elif op == "compact":
            first = k % len(path)
            last = first + (k // 7) % (len(path) - first)
            db.record_compaction(sid, Turn("user", [CompactSummaryBlock("summary", 1)]),
                                 first_turn_id=path[first], last_turn_id=path[last],
                                 replaced_count=last - first + 1)
        elif op == "answers" and every:
            db.add_answers(sid, every[k % len(every)], [say(n), say(n + 1)][: 1 + flag])
        elif op == "fork":
            sids.append(db.fork(sid, path[k % len(path)]).id)
        elif op == "gap":
            db._w(lambda c, k=k: make_gap(c, sid, k))
        check(db, sids)
    for gone in sids:
        db.delete_session(gone)
    assert not {s for s in count_rows(db) if s in sids}
    assert count_rows(db) == oracle_rows(db)


def compacted_chat(db: Store, n: int = 12) -> str:
    sid = db.create_session().id
    ids = [db.append_turn(sid, say(i)).id for i in range(n)]
    for last in range(3, n - 2, 3):  # each re-compaction from the first turn
        db.record_compaction(sid, Turn("user", [CompactSummaryBlock(f"summary {last}", 1)]),
                             first_turn_id=ids[0], last_turn_id=ids[last],
                             replaced_count=last + 1)
    return sid


def test_spans_of_a_path_without_gaps_count_no_path(db):
    """Every statement ``outline.spans`` runs on a path without gaps: none is a count
    (the whole path's was counted before the stored count, on every open and switch)."""
    sid = compacted_chat(db)
    seen: list[str] = []

    def record(_con: Any, _cursor: Any, statement: str, *_args: Any) -> None:
        seen.append(statement)

    def spans(con: Connection) -> dict[str, Span]:
        event.listen(con, "before_cursor_execute", record)
        try:
            return outline.spans(con, sid)
        finally:
            event.remove(con, "before_cursor_execute", record)

    found = db._r(spans)
    assert len(found) == 3 and found == old_spans(db, sid)
    assert seen and not [s for s in seen if "count(" in s.lower()]


def test_a_file_without_the_count_gets_it_filled_when_opened(tmp_path: Path):
    path = tmp_path / "sessions.db"
    with Store.open(path) as db:
        sid = compacted_chat(db)
        other = compacted_chat(db, 7)
        expected = db._r(lambda c: outline.spans(c, sid))
    con = sqlite3.connect(path)
    for name, _ddl in path_count.SQLITE_TRIGGERS:
        con.execute(f"DROP TRIGGER {name}")
    con.execute("DROP TABLE turn_path_counts")
    con.commit()
    con.close()
    assert inspect_file(path).kind is FileKind.OLDER_V4
    with Store.open(path) as db:
        assert db.migration_report is not None
        assert "turn_path_counts" in " ".join(db.migration_report.added)
        assert count_rows(db) == oracle_rows(db) == {sid: 15, other: 8}
        assert db._r(lambda c: outline.spans(c, sid)) == expected
        db.append_turn(sid, say(99))  # the triggers are back
        db.branch_before(sid, db.get_turns(sid)[-3].id)
        assert count_rows(db) == oracle_rows(db) == {sid: 14, other: 8}
    assert inspect_file(path).kind is FileKind.CURRENT


def test_a_database_without_the_count_gets_it_filled_when_opened(postgres_url: str):
    with open_store(postgres_url) as db:
        sid = compacted_chat(db)

        def drop(con: Connection) -> None:
            con.exec_driver_sql("DROP TRIGGER turn_path_count ON turn_path")
            con.exec_driver_sql("DROP TABLE turn_path_counts")

        db._w(drop)
    with open_store(postgres_url) as db:
        assert count_rows(db) == oracle_rows(db) == {sid: 15}
        db.append_turn(sid, say(99))  # the trigger is back
        db.branch_before(sid, db.get_turns(sid)[-3].id)
        assert count_rows(db) == oracle_rows(db) == {sid: 14}


def test_a_merge_into_another_file_brings_its_counts(tmp_path: Path, db: Store):
    with Store.open(tmp_path / "other.db") as src:
        compacted_chat(src)
        compacted_chat(src, 5)
        db.merge_from(src)
    assert sorted(count_rows(db).values()) == [5, 15] and count_rows(db) == oracle_rows(db)


def test_a_tree_made_again_from_the_turns_is_counted_again(tmp_path: Path):
    """Salvage of a file from before the tree drops ``turn_path`` and makes it again
    from the turns (``upgrade.tree.convert``, its bulk fill with the triggers off):
    the table is filled again and its triggers come back."""
    def again(con: Connection) -> None:
        for table in ("turn_path", "turn_links"):
            con.exec_driver_sql(f"DROP TABLE {table}")
        tree.convert(con)

    path = tmp_path / "sessions.db"
    with Store.open(path) as db:
        sid = compacted_chat(db)
        db.edit_turn(sid, db.get_turns(sid)[1].id, say(99))  # 2 on the path, 16 turns
        assert count_rows(db) == {sid: 2}
        db._w(again)  # a line of every turn, by seq
        assert count_rows(db) == oracle_rows(db) == {sid: 16}
        db.append_turn(sid, say(99))
        assert count_rows(db) == oracle_rows(db) == {sid: 17}
    assert inspect_file(path).kind is FileKind.CURRENT

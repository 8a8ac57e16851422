"""The forking parents' index (``turn_forks``, ``parley.core.store.fork_index``): kept by
the database's triggers through every kind of write, equal to grouping the whole
``turn_links`` index (the query branch points ran before it, kept here as the oracle),
on a sessions.db file and on PostgreSQL (``any_db``); filled once when an older file
or database is opened."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from unittest import mock

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import text
from sqlalchemy.engine import Connection

from parley.core.branches import Branches
from parley.core.content import CompactSummaryBlock, TextBlock, Turn
from parley.core.store import branch_points, fork_index
from parley.core.store.backends import open_store
from parley.core.store.store import Store
from parley.core.store.upgrade import tree
from parley.core.store.upgrade.migrations import FileKind, inspect_file

# What Store.branches read before the index: the session's links grouped by parent.
OLD_FORKING = text("SELECT parent_id FROM turn_links WHERE session_id = :sid "
                   "GROUP BY parent_id HAVING count(*) > 1")
ALL_FORKING = text("SELECT session_id, parent_id FROM turn_links "
                   "GROUP BY session_id, parent_id HAVING count(*) > 1")


@pytest.fixture
def db(any_db: Store) -> Store:
    return any_db


def old_forking(con: Connection, session_id: str) -> set[str | None]:
    return {r.parent_id for r in con.execute(OLD_FORKING, {"sid": session_id})}


def old_branches(db: Store, sid: str) -> Branches:
    """Store.branches as it was computed before the index (the oracle)."""
    with mock.patch.object(fork_index, "forking", old_forking):
        return db._r(lambda c: branch_points.branches(c, sid))


def index_rows(db: Store) -> set[tuple[str, str | None]]:
    rows = db._r(lambda c: c.execute(text("SELECT session_id, parent_key FROM turn_forks")).all())
    return {(r[0], None if r[1] == fork_index.ROOT_KEY else r[1]) for r in rows}


def oracle_rows(db: Store) -> set[tuple[str, str | None]]:
    return {(r[0], r[1]) for r in db._r(lambda c: c.execute(ALL_FORKING).all())}


def check(db: Store, sids: list[str]) -> None:
    assert index_rows(db) == oracle_rows(db)
    for sid in sids:
        assert db.branches(sid) == old_branches(db, sid)


def say(i: int) -> Turn:
    return Turn("user" if i % 2 == 0 else "assistant", [TextBlock(f"message {i}")])


OPS = st.lists(st.tuples(
    st.sampled_from(["append", "append", "edit", "branch", "delete", "show", "compact",
                     "answers", "fork"]),
    st.integers(0, 1_000), st.booleans()), max_size=25)


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(ops=OPS)
def test_the_index_follows_every_write_and_branches_read_as_before(db, ops):
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
            db.record_compaction(sid, Turn("user", [CompactSummaryBlock("summary", 1)]),
                                 first_turn_id=path[0], last_turn_id=path[-1],
                                 replaced_count=len(path))
        elif op == "answers" and every:
            db.add_answers(sid, every[k % len(every)], [say(n), say(n + 1)][: 1 + flag])
        elif op == "fork":
            sids.append(db.fork(sid, path[k % len(path)]).id)
        check(db, sids)
    for gone in sids:
        db.delete_session(gone)
    assert not {row for row in index_rows(db) if row[0] in sids}
    assert index_rows(db) == oracle_rows(db)


def forked_chat(db: Store) -> str:
    """A chat with two first messages (an edited first message) and an edited answer."""
    sid = db.create_session().id
    q = db.append_turn(sid, say(0))
    db.edit_turn(sid, q.id, say(2))
    db.append_turn(sid, say(1))
    a = db.append_turn(sid, say(3))
    db.edit_turn(sid, a.id, say(5))
    return sid


def test_the_first_messages_and_an_edit_are_forks(db):
    sid = forked_chat(db)
    forks = db._r(lambda c: fork_index.forking(c, sid))
    assert None in forks and len(forks) == 2
    assert forks == db._r(lambda c: old_forking(c, sid))


def test_a_file_without_the_index_gets_it_filled_when_opened(tmp_path: Path):
    path = tmp_path / "sessions.db"
    with Store.open(path) as db:
        sid = forked_chat(db)
        expected = db.branches(sid)
    con = sqlite3.connect(path)
    for name, _ddl in fork_index.SQLITE_TRIGGERS:
        con.execute(f"DROP TRIGGER {name}")
    con.execute("DROP TABLE turn_forks")
    con.commit()
    con.close()
    assert inspect_file(path).kind is FileKind.OLDER_V4
    with Store.open(path) as db:
        assert db.migration_report is not None
        assert "turn_forks" in " ".join(db.migration_report.added)
        assert index_rows(db) == oracle_rows(db) and len(index_rows(db)) == 2
        assert db.branches(sid) == expected
        db.append_turn(sid, say(7))  # the triggers are back
        db.edit_turn(sid, db.get_turns(sid)[-1].id, say(9))
        assert index_rows(db) == oracle_rows(db) and len(index_rows(db)) == 3
    assert inspect_file(path).kind is FileKind.CURRENT


def test_a_database_without_the_index_gets_it_filled_when_opened(postgres_url: str):
    with open_store(postgres_url) as db:
        sid = forked_chat(db)
        expected = db.branches(sid)

        def drop(con: Connection) -> None:
            con.exec_driver_sql("DROP TRIGGER turn_links_forks ON turn_links")
            con.exec_driver_sql("DROP TABLE turn_forks")

        db._w(drop)
    with open_store(postgres_url) as db:
        assert index_rows(db) == oracle_rows(db) and len(index_rows(db)) == 2
        assert db.branches(sid) == expected
        db.append_turn(sid, say(7))  # the trigger is back
        db.edit_turn(sid, db.get_turns(sid)[-1].id, say(9))
        assert index_rows(db) == oracle_rows(db) and len(index_rows(db)) == 3


def test_a_merge_into_another_file_brings_its_forks(tmp_path: Path, db: Store):
    with Store.open(tmp_path / "other.db") as src:
        forked_chat(src)
        forked_chat(src)
        db.merge_from(src)
    assert len(index_rows(db)) == 4 and index_rows(db) == oracle_rows(db)


def test_a_tree_made_again_from_the_turns_leaves_no_stale_fork(tmp_path: Path):
    """Salvage of a file from before the tree drops ``turn_links`` and makes it again
    from the turns (``upgrade.tree.convert``: lines): the index is emptied, its
    triggers come back."""
    def again(con: Connection) -> None:
        for table in ("turn_path", "turn_links"):
            con.exec_driver_sql(f"DROP TABLE {table}")
        tree.convert(con)

    path = tmp_path / "sessions.db"
    with Store.open(path) as db:
        sid = forked_chat(db)
        assert len(index_rows(db)) == 2
        db._w(again)
        assert index_rows(db) == oracle_rows(db) == set()
        db.edit_turn(sid, db.get_turns(sid)[-1].id, say(9))
        assert index_rows(db) == oracle_rows(db) and len(index_rows(db)) == 1
    assert inspect_file(path).kind is FileKind.CURRENT

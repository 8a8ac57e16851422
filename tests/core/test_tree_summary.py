"""A branch made after a summary keeps it (``parley.core.store.summary_carry``) and
summary turns are transparent at branch points (``parley.core.store.branch_points``);
on a sessions.db file and on PostgreSQL (``any_db``)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from sqlalchemy import event
from sqlalchemy.engine import Engine

from parley.core.content import CompactSummaryBlock, TextBlock, Turn
from parley.core.store.store import Store


@pytest.fixture
def db(any_db: Store) -> Store:
    return any_db


def chat(db: Store, n: int) -> str:
    sid = db.create_session().id
    for i in range(n):
        db.append_turn(sid, Turn("user" if i % 2 == 0 else "assistant",
                                 [TextBlock(f"message {i}")], id=f"t{i}"))
    return sid


def compact_now(db: Store, sid: str, last: str) -> None:
    """A compaction of t0..``last`` written below the leaf, as Compact now does."""
    db.record_compaction(sid, Turn("user", [CompactSummaryBlock("summary", 1)], id="s1"),
                         first_turn_id="t0", last_turn_id=last, replaced_count=1)


def ids(db: Store, sid: str) -> list[str]:
    return [t.id for t in db.get_turns(sid)]


def test_regenerate_after_compact_now_starts_the_new_branch_with_a_copy(db):
    sid = chat(db, 10)
    compact_now(db, sid, "t5")                      # path: … t8, t9, s1
    copy = db.branch_before(sid, "t9")              # Regenerate t9
    assert copy is not None and copy.id != "s1"
    assert ids(db, sid) == [*(f"t{i}" for i in range(9)), copy.id]
    db.append_turn(sid, Turn("assistant", [TextBlock("again")], id="a9"))
    [block] = copy.blocks
    assert isinstance(block, CompactSummaryBlock)
    assert (block.first_turn_id, block.last_turn_id, block.summary) == ("t0", "t5", "summary")
    rows = {c.summary_turn_id: c for c in db.list_compactions(sid)}
    assert rows[copy.id].id == block.compaction_id != rows["s1"].id
    assert [t.id for t in db.context_turns(sid)] == ["t0", "t5", "t6", "t7", "t8",
                                                     copy.id, "a9"]
    win = db.transcript_window(sid)
    assert list(win.spans) == [copy.id]
    assert [t.id for t in win.turns] == ["t6", "t7", "t8", copy.id, "a9"]

    points = db.branches(sid).points
    assert set(points) == {"a9"}                    # never under the summary copy
    point = points["a9"]
    assert (point.index, point.total, point.turn_ids) == (2, 2, ("t9", "a9"))
    assert point.exact == (False, False)
    db.show_branch(sid, point.target(-1)[0])        # ‹: the old answer with its summary
    assert ids(db, sid)[-3:] == ["t8", "t9", "s1"]
    assert list(db.transcript_window(sid).spans) == ["s1"]
    back = db.branches(sid).points
    assert set(back) == {"t9"} and back["t9"].target(+1) == ("a9", False)
    db.show_branch(sid, "a9")                       # ›: the new one with the copy
    assert ids(db, sid)[-3:] == ["t8", copy.id, "a9"]


def test_regenerating_again_below_the_copy_adds_an_answer_there(db):
    sid = chat(db, 10)
    compact_now(db, sid, "t5")
    copy = db.branch_before(sid, "t9")
    assert copy is not None
    db.append_turn(sid, Turn("assistant", [TextBlock("b")], id="a9"))
    assert db.branch_before(sid, "a9") is None      # nothing cut away holds a summary
    db.append_turn(sid, Turn("assistant", [TextBlock("c")], id="b9"))
    assert ids(db, sid)[-2:] == [copy.id, "b9"]
    point = db.branches(sid).points["b9"]
    assert (point.index, point.total, point.turn_ids) == (3, 3, ("t9", "a9", "b9"))
    assert len(db.list_compactions(sid)) == 2


def test_a_failed_regenerate_after_compact_now_is_a_point_under_the_prompt(db):
    sid = chat(db, 10)
    compact_now(db, sid, "t5")
    copy = db.branch_before(sid, "t9")              # the new answer failed: none saved
    assert copy is not None and ids(db, sid)[-2:] == ["t8", copy.id]
    point = db.branches(sid).points["t8"]
    assert (point.index, point.total, point.turn_ids, point.exact) == (
        2, 2, ("t9", copy.id), (False, True))
    db.show_branch(sid, "t9")
    assert ids(db, sid)[-2:] == ["t9", "s1"]
    assert set(db.branches(sid).points) == set()    # one answer and the path ended at t8
    db.show_branch(sid, "t8", exact=True)
    assert ids(db, sid)[-1] == "t8"


def test_edit_of_the_last_message_after_compact_now_keeps_the_summary(db):
    sid = chat(db, 10)
    compact_now(db, sid, "t5")
    edited = db.edit_turn(sid, "t8", Turn("user", [TextBlock("edited")], id="u8"))
    shown = ids(db, sid)
    copy = shown[-2]
    assert shown == [*(f"t{i}" for i in range(8)), copy, "u8"] and copy != "s1"
    assert [t.id for t in db.context_turns(sid)] == ["t0", "t5", "t6", "t7", copy, "u8"]
    point = db.branches(sid).points[edited.id]
    assert (point.index, point.total, point.turn_ids) == (2, 2, ("t8", "u8"))
    db.show_branch(sid, "t8")
    assert ids(db, sid)[-3:] == ["t8", "t9", "s1"]


def test_edit_inside_the_summarized_range_carries_no_summary(db):
    sid = chat(db, 10)
    compact_now(db, sid, "t5")
    db.edit_turn(sid, "t4", Turn("user", [TextBlock("edited")], id="u4"))
    assert ids(db, sid) == ["t0", "t1", "t2", "t3", "u4"]
    assert [t.id for t in db.context_turns(sid)] == ["t0", "t1", "t2", "t3", "u4"]
    assert len(db.list_compactions(sid)) == 1
    # a sibling of the last replaced turn: the range reaches below the cut, nothing carried
    db.show_branch(sid, "t9")
    assert db.branch_before(sid, "t5") is None
    assert ids(db, sid) == ["t0", "t1", "t2", "t3", "t4"]
    assert db.transcript_window(sid).spans == {}
    # the first turn kept: the range ends at its parent, the summary applies
    db.show_branch(sid, "t9")
    db.edit_turn(sid, "t6", Turn("user", [TextBlock("edited")], id="u6"))
    copy = ids(db, sid)[-2]
    assert [t.id for t in db.context_turns(sid)] == ["t0", "t5", copy, "u6"]


@contextmanager
def bound_values() -> Iterator[list[int]]:
    """Count the values bound to the SQL statements run meanwhile (one number per
    statement): how many turn ids a read asks the database about."""
    counts: list[int] = []

    def note(_con, _cursor, _sql, params, _context, _many) -> None:
        counts.append(len(params) if isinstance(params, dict | list | tuple) else 0)

    event.listen(Engine, "before_cursor_execute", note)
    try:
        yield counts
    finally:
        event.remove(Engine, "before_cursor_execute", note)


def test_a_chat_compacted_many_times_finds_its_points_without_asking_about_each_summary(db):
    """40 compactions in the path (as a long chat has: one every 20 turns), then a
    Regenerate: the point on the new answer is found asking about a few turns, not
    about every summary and its parent (that grew with the history: 120 ids here,
    1,000 in a 100,000-turn chat)."""
    sid = db.create_session().id
    for i in range(800):
        db.append_turn(sid, Turn("user" if i % 2 == 0 else "assistant",
                                 [TextBlock(f"message {i}")], id=f"t{i}"))
        if i % 20 == 19:
            db.record_compaction(sid, Turn("user", [CompactSummaryBlock("s", 1)], id=f"s{i}"),
                                 first_turn_id="t0", last_turn_id=f"t{i - 4}",
                                 replaced_count=i - 4)
    db.append_turn(sid, Turn("user", [TextBlock("last question")], id="q"))
    db.append_turn(sid, Turn("assistant", [TextBlock("answer")], id="a"))
    db.branch_before(sid, "a")
    db.append_turn(sid, Turn("assistant", [TextBlock("again")], id="a2"))
    with bound_values() as counts:
        points = db.branches(sid).points
    assert {k: (p.index, p.total) for k, p in points.items()} == {"a2": (2, 2)}
    assert sum(counts) <= 12, counts

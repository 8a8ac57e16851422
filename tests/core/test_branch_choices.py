"""Branches of a chat as a person meets them: ‹ n/m › on messages, the choice made at each
branch point remembered (across a restart too), branches kept through a compaction,
deleting branches, counts. These replace the tests of the version sessions (each edit
or regeneration a copy of the chat) that the tree made unnecessary.

Every test runs on a sessions.db file and on a PostgreSQL database.
"""

from __future__ import annotations

import pytest

from parley.core.chat.edit import edit_message
from parley.core.content import CompactSummaryBlock, TextBlock, Turn
from parley.core.store.async_store import AsyncStore
from parley.core.store.backends import open_store
from parley.core.store.store import Store
from tests.core.rawdb import raw_rows

MODEL = "anthropic:claude-sonnet-4-6"


@pytest.fixture
def db(any_db: Store) -> Store:
    return any_db


@pytest.fixture
def store(any_store: AsyncStore) -> AsyncStore:
    return any_store


def chat(db: Store, *texts: str, title: str = "Trip") -> str:
    session = db.create_session(title=title, model=MODEL)
    for i, text in enumerate(texts):
        db.append_turn(session.id, Turn("user" if i % 2 == 0 else "assistant", [TextBlock(text)],
                                        id=text))
    return session.id


def texts(db: Store, sid: str) -> list[str]:
    return [t.text() for t in db.get_turns(sid)]


def regenerate(db: Store, sid: str, answer: str) -> Turn:
    """What Regenerate does in the store: the last reply leaves the path, a new one follows."""
    db.branch_before(sid, db.get_turns(sid, last=1)[0].id)
    return db.append_turn(sid, Turn("assistant", [TextBlock(answer)], id=answer))


def edit(db: Store, sid: str, turn_id: str, text: str) -> Turn:
    """What Edit does in the store: a sibling of the message, shown."""
    return db.edit_turn(sid, turn_id, Turn("user", [TextBlock(text)], id=text))


def n_of_m(db: Store, sid: str) -> dict[str, tuple[int, int]]:
    return {k: (p.index, p.total) for k, p in db.branches(sid).points.items()}


def test_regenerations_show_as_n_of_m_on_the_reply_and_are_no_chats(db):
    sid = chat(db, "Plan Lisbon", "Answer A")
    regenerate(db, sid, "Answer B")
    regenerate(db, sid, "Answer C")
    assert [s.id for s in db.list_sessions()] == [sid]
    assert texts(db, sid) == ["Plan Lisbon", "Answer C"]
    assert n_of_m(db, sid) == {"Answer C": (3, 3)}
    assert db.branches(sid).points["Answer C"].turn_ids == ("Answer A", "Answer B", "Answer C")
    assert db.get_session(sid).turn_count == 2
    assert db.count_turns(sid) == 2 and len(db.get_tree(sid)) == 4


def test_each_branch_point_keeps_the_choice_last_made_there(db):
    """Edit 3/3 with reply 2/4 chosen; switching the edit to 2/3 and back shows reply
    2/4 again (not the latest reply, 4/4)."""
    sid = chat(db, "Hi", "Hello", "Plan Lisbon", "Day 1")
    edit(db, sid, "Plan Lisbon", "Plan Porto")
    db.append_turn(sid, Turn("assistant", [TextBlock("Porto day 1")]))
    edit(db, sid, "Plan Porto", "Plan Faro")
    db.append_turn(sid, Turn("assistant", [TextBlock("Reply 1")], id="Reply 1"))
    for n in (2, 3, 4):
        regenerate(db, sid, f"Reply {n}")
    assert n_of_m(db, sid) == {"Plan Faro": (3, 3), "Reply 4": (4, 4)}

    target = db.branches(sid).points["Reply 4"].turn_ids[1]  # choose reply 2/4
    db.show_branch(sid, target)
    assert texts(db, sid)[-1] == "Reply 2"
    step = db.branches(sid).points["Plan Faro"].target(-1)  # the edit to 2/3
    assert step is not None
    db.show_branch(sid, step[0], exact=step[1])
    assert texts(db, sid) == ["Hi", "Hello", "Plan Porto", "Porto day 1"]
    step = db.branches(sid).points["Plan Porto"].target(+1)  # and back to 3/3
    assert step is not None
    db.show_branch(sid, step[0], exact=step[1])
    assert texts(db, sid) == ["Hi", "Hello", "Plan Faro", "Reply 2"]
    assert n_of_m(db, sid) == {"Plan Faro": (3, 3), "Reply 2": (2, 4)}


def test_the_choice_is_kept_across_a_restart(any_target):
    db = open_store(any_target)
    try:
        sid = chat(db, "Plan Lisbon", "Answer A")
        regenerate(db, sid, "Answer B")
        db.show_branch(sid, "Answer A")
    finally:
        db.close()
    db = open_store(any_target)
    try:
        assert texts(db, sid) == ["Plan Lisbon", "Answer A"]
        assert n_of_m(db, sid) == {"Answer A": (1, 2)}
    finally:
        db.close()


def test_a_failed_regeneration_leads_back_to_the_old_answer(db):
    sid = chat(db, "Plan Lisbon", "Answer A")
    db.branch_before(sid, "Answer A")  # the new answer failed before anything was saved
    assert texts(db, sid) == ["Plan Lisbon"]
    point = db.branches(sid).points["Plan Lisbon"]
    assert (point.index, point.total) == (2, 2)
    step = point.target(-1)
    assert step == ("Answer A", False)
    db.show_branch(sid, step[0], exact=step[1])
    assert texts(db, sid) == ["Plan Lisbon", "Answer A"]


async def test_branches_made_before_a_compaction_stay_on_their_messages(any_target):
    """The trial's steps: edit the first message, regenerate its reply, talk on, compact,
    restart. The summary (stored last, standing for the first turns) is no message: each
    branch is still offered where it parts."""
    store = await AsyncStore.open(any_target)
    try:
        sid = (await store.create_session(title="Alpha", model=MODEL)).id
        first = await store.append_turn(sid, Turn("user", [TextBlock("alpha question")]))
        old_answer = await store.append_turn(sid, Turn("assistant", [TextBlock("answer one")]))
        beta = await edit_message(store, sid, first.id, [TextBlock("beta question")])
        two = await store.append_turn(sid, Turn("assistant", [TextBlock("answer two")]))
        await store.branch_before(sid, two.id)
        three = await store.append_turn(sid, Turn("assistant", [TextBlock("answer three")]))
        for n in range(3):
            await store.append_turn(sid, Turn("user", [TextBlock(f"more {n}")]))
            await store.append_turn(sid, Turn("assistant", [TextBlock(f"reply {n}")]))
        shown = await store.get_turns(sid)
        await store.record_compaction(
            sid, Turn("user", [CompactSummaryBlock("<summary>beta…</summary>", 4)]),
            first_turn_id=shown[0].id, last_turn_id=shown[3].id, replaced_count=4)
    finally:
        await store.close()

    store = await AsyncStore.open(any_target)  # a restart
    try:
        points = (await store.branches(sid)).points
        assert {k: (p.index, p.total) for k, p in points.items()} == {
            beta.id: (2, 2), three.id: (2, 2)}
        assert points[beta.id].target(-1) == (first.id, False)
        assert points[three.id].target(-1) == (two.id, False)
        leaf = await store.show_branch(sid, first.id)  # the first version, as it was
        assert leaf == old_answer.id
        assert [t.text() for t in await store.get_turns(sid)] == ["alpha question",
                                                                 "answer one"]
        back = (await store.branches(sid)).points
        assert {k: (p.index, p.total) for k, p in back.items()} == {first.id: (1, 2)}
        await store.show_branch(sid, three.id)  # back: the compacted branch, whole
        assert len(await store.get_turns(sid)) == len(shown) + 1
        assert [c.summary_turn_id for c in await store.list_compactions(sid)] == [
            (await store.get_turns(sid, last=1))[0].id]
    finally:
        await store.close()


def test_a_long_chats_branches_are_found_at_its_end_and_its_beginning(db):
    sid = chat(db, *(f"m{i}" for i in range(12)))
    regenerate(db, sid, "m11 again")
    db.show_branch(sid, "m4")  # no-op: on the path
    edit(db, sid, "m4", "m4 edited")
    assert n_of_m(db, sid) == {"m4 edited": (2, 2)}
    db.show_branch(sid, "m4")
    assert n_of_m(db, sid) == {"m4": (1, 2), "m11 again": (2, 2)}
    assert texts(db, sid)[-1] == "m11 again"


def test_deleting_turns_deletes_the_branches_below_them(db):
    sid = chat(db, "q1", "a1", "q2", "a2")
    regenerate(db, sid, "a2 again")
    edit(db, sid, "q2", "q2 edited")
    db.append_turn(sid, Turn("assistant", [TextBlock("a3")], id="a3"))
    assert len(db.get_tree(sid)) == 7
    # The edited message taken back: its answer goes with it, the original branch stays.
    assert db.delete_turns(sid, ["q2 edited"]) == 2
    assert texts(db, sid) == ["q1", "a1"]  # the parent is the leaf now
    assert n_of_m(db, sid) == {"a1": (2, 2)}  # its other child is a step away
    db.show_branch(sid, "q2")
    assert texts(db, sid) == ["q1", "a1", "q2", "a2 again"]
    assert db.delete_turns_after(sid, "q1") == 4  # a1 and every branch below it
    assert texts(db, sid) == ["q1"] and len(db.get_tree(sid)) == 1
    assert db.branches(sid).points == {}
    assert db.search("again") == []
    left = raw_rows(db, "SELECT count(*) FROM turn_links WHERE session_id = ?", (sid,))
    assert left == [(1,)]


def test_deleting_a_chat_deletes_every_branch(db):
    sid = chat(db, "q1", "a1")
    regenerate(db, sid, "a1 again")
    keep = chat(db, "other", "fine")
    db.delete_session(sid)
    assert raw_rows(db, "SELECT count(*) FROM turns") == [(2,)]
    assert raw_rows(db, "SELECT count(*) FROM turn_links") == [(2,)]
    assert raw_rows(db, "SELECT count(*) FROM turn_path") == [(2,)]
    assert texts(db, keep) == ["other", "fine"]

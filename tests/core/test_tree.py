"""A session's conversation tree (``parley.core.store.tree``): turns saved below the
leaf, Edit and Regenerate as siblings, branch points, switching branches, deleting
branches; on a sessions.db file and on PostgreSQL (``any_db``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from parley.core.content import TextBlock, Turn
from parley.core.store.backends import open_store
from parley.core.store.errors import SessionNotFound, TurnNotInSession
from parley.core.store.store import Store


@pytest.fixture
def db(any_db: Store) -> Store:
    return any_db


def user(text: str) -> Turn:
    return Turn("user", [TextBlock(text)])


def reply(text: str) -> Turn:
    return Turn("assistant", [TextBlock(text)])


def texts(turns: list[Turn]) -> list[str]:
    return [t.text() for t in turns]


def path(db: Store, sid: str) -> list[str]:
    """The texts of the path shown, read from the whole tree (seq grows along a path)."""
    return [t.turn.text() for t in db.get_tree(sid) if t.on_path]


def parents(db: Store, sid: str) -> dict[str, str | None]:
    by_id = {t.turn.id: t.turn.text() for t in db.get_tree(sid)}
    return {t.turn.text(): by_id.get(t.parent_id or "") for t in db.get_tree(sid)}


def chat(db: Store, *words: str) -> tuple[str, list[Turn]]:
    """A session of alternating user / assistant turns with these texts."""
    sid = db.create_session().id
    saved = [db.append_turn(sid, (user if i % 2 == 0 else reply)(w)) for i, w in enumerate(words)]
    return sid, saved


def test_appended_turns_make_a_chain(db):
    sid, _ = chat(db, "q1", "a1", "q2", "a2")
    assert parents(db, sid) == {"q1": None, "a1": "q1", "q2": "a1", "a2": "q2"}
    assert path(db, sid) == ["q1", "a1", "q2", "a2"]
    assert db.branches(sid).points == {}


def test_an_edit_is_a_sibling_with_nothing_copied_and_no_new_session(db):
    sid, (q1, a1, q2, a2) = chat(db, "q1", "a1", "q2", "a2")
    before = len(db.list_sessions())
    edited = db.edit_turn(sid, q2.id, user("q2 edited"))
    assert len(db.get_tree(sid)) == 5  # one turn more, none copied
    assert len(db.list_sessions()) == before
    assert parents(db, sid)["q2 edited"] == "a1"
    assert path(db, sid) == ["q1", "a1", "q2 edited"]
    point = db.branches(sid).points[edited.id]
    assert (point.index, point.total, point.turn_ids) == (2, 2, (q2.id, edited.id))
    assert point.exact == (False, False)


def test_regenerate_adds_an_answer_as_a_sibling(db):
    sid, (q1, a1) = chat(db, "q1", "a1")
    db.branch_before(sid, a1.id)
    assert path(db, sid) == ["q1"]
    a2 = db.append_turn(sid, reply("a1 again"))
    assert parents(db, sid)["a1 again"] == "q1"
    assert path(db, sid) == ["q1", "a1 again"]
    point = db.branches(sid).points[a2.id]
    assert (point.index, point.total, point.turn_ids) == (2, 2, (a1.id, a2.id))


def test_editing_the_first_message_makes_a_second_first_message(db):
    sid, (q1, a1) = chat(db, "q1", "a1")
    q1b = db.edit_turn(sid, q1.id, user("q1 edited"))
    assert parents(db, sid)["q1 edited"] is None
    assert path(db, sid) == ["q1 edited"]
    assert db.branches(sid).points[q1b.id].turn_ids == (q1.id, q1b.id)


def test_branch_points_list_siblings_oldest_first_and_show_the_chosen_one(db):
    sid, (q1, a1) = chat(db, "q1", "a1")
    db.branch_before(sid, a1.id)
    a2 = db.append_turn(sid, reply("a2"))
    db.branch_before(sid, a2.id)
    a3 = db.append_turn(sid, reply("a3"))
    point = db.branches(sid).points[a3.id]
    assert (point.index, point.total, point.turn_ids) == (3, 3, (a1.id, a2.id, a3.id))
    assert point.target(-1) == (a2.id, False) and point.target(+1) is None
    db.show_branch(sid, a1.id)
    point = db.branches(sid).points[a1.id]
    assert (point.index, point.total) == (1, 3)
    assert point.target(-1) is None


def test_show_branch_follows_the_choices_made_below_last_time(db):
    sid, (q1, a1, q2, a2) = chat(db, "q1", "a1", "q2", "a2")
    db.branch_before(sid, a1.id)                      # regenerate a1
    b1 = db.append_turn(sid, reply("b1"))
    db.append_turn(sid, user("bq2"))
    db.append_turn(sid, reply("ba2"))
    assert path(db, sid) == ["q1", "b1", "bq2", "ba2"]
    leaf = db.show_branch(sid, a1.id)                 # back to the first answer: its rest
    assert leaf == a2.id
    assert path(db, sid) == ["q1", "a1", "q2", "a2"]
    db.edit_turn(sid, q2.id, user("q2 edited"))       # a choice made below a1
    db.append_turn(sid, reply("a2 edited"))
    db.show_branch(sid, b1.id)
    assert path(db, sid) == ["q1", "b1", "bq2", "ba2"]
    db.show_branch(sid, a1.id)                        # the edit chosen there is remembered
    assert path(db, sid) == ["q1", "a1", "q2 edited", "a2 edited"]
    assert db.show_branch(sid, q2.id) == a2.id        # a turn deeper in another branch
    assert path(db, sid) == ["q1", "a1", "q2", "a2"]


def test_show_branch_of_a_turn_on_the_path_changes_nothing_unless_exact(db):
    sid, (q1, a1, q2, a2) = chat(db, "q1", "a1", "q2", "a2")
    assert db.show_branch(sid, a1.id) == a2.id
    assert path(db, sid) == ["q1", "a1", "q2", "a2"]
    assert db.show_branch(sid, a1.id, exact=True) == a1.id
    assert path(db, sid) == ["q1", "a1"]
    # The path ends where it was left: its descent stops at a1 too.
    db.show_branch(sid, q1.id)
    assert path(db, sid) == ["q1", "a1"]


def test_the_leaf_a_failed_regenerate_left_is_a_branch_point(db):
    sid, (q1, a1) = chat(db, "q1", "a1")
    db.branch_before(sid, a1.id)          # the new answer failed: nothing was saved
    assert path(db, sid) == ["q1"]
    point = db.branches(sid).points[q1.id]
    assert (point.index, point.total, point.turn_ids, point.exact) == (
        2, 2, (a1.id, q1.id), (False, True))
    target = point.target(-1)
    assert target == (a1.id, False)
    db.show_branch(sid, *target[:1], exact=target[1])
    assert path(db, sid) == ["q1", "a1"]
    back = db.branches(sid).points
    assert q1.id not in back and a1.id not in back  # a single answer: nothing to choose
    db.show_branch(sid, q1.id, exact=True)  # the path that ended at the prompt
    assert path(db, sid) == ["q1"]
    db.show_branch(sid, q1.id)  # opened again: it still ends there
    assert path(db, sid) == ["q1"]


def test_errors_name_the_turn_and_change_nothing(db):
    sid, (q1, a1) = chat(db, "q1", "a1")
    other, (o1,) = chat(db, "o1")
    with pytest.raises(TurnNotInSession):
        db.branch_before(sid, o1.id)
    with pytest.raises(TurnNotInSession):
        db.show_branch(sid, o1.id)
    with pytest.raises(TurnNotInSession):
        db.edit_turn(sid, "no-such-turn", user("x"))
    db.branch_before(sid, a1.id)
    db.append_turn(sid, reply("a2"))
    with pytest.raises(TurnNotInSession):  # stored, but on another branch
        db.branch_before(sid, a1.id)
    with pytest.raises(SessionNotFound):
        db.branches("no-such-session")
    with pytest.raises(SessionNotFound):
        db.show_branch("no-such-session", q1.id)
    assert path(db, sid) == ["q1", "a2"]
    assert path(db, other) == ["o1"]


def test_get_tree_holds_every_branch_in_seq_order(db):
    sid, (q1, a1) = chat(db, "q1", "a1")
    db.branch_before(sid, a1.id)
    db.append_turn(sid, reply("a2"))
    tree = db.get_tree(sid)
    assert [(t.turn.text(), t.on_path) for t in tree] == [
        ("q1", True), ("a1", False), ("a2", True)]
    assert [t.parent_id for t in tree] == [None, q1.id, q1.id]


def test_stamps_keep_choices_when_switching_within_one_millisecond(db):
    sid, (q1, a1) = chat(db, "q1", "a1")
    answers = [a1]
    for i in range(5):
        db.branch_before(sid, answers[-1].id)
        answers.append(db.append_turn(sid, reply(f"a{i + 2}")))
    for a in (answers[2], answers[0], answers[4], answers[1]):
        db.show_branch(sid, a.id)
        assert path(db, sid) == ["q1", a.text()]
        assert db.branches(sid).points[a.id].index == answers.index(a) + 1


def test_choices_are_kept_in_the_file(tmp_path: Path):
    target = tmp_path / "sessions.db"
    db = open_store(target)
    sid, (q1, a1, q2, a2) = chat(db, "q1", "a1", "q2", "a2")
    db.edit_turn(sid, q2.id, user("q2 edited"))
    db.append_turn(sid, reply("a2 edited"))
    db.show_branch(sid, q2.id)
    db.close()
    db = open_store(target)
    try:
        assert path(db, sid) == ["q1", "a1", "q2", "a2"]
        assert db.branches(sid).points[q2.id].index == 1
    finally:
        db.close()


def test_the_turn_count_follows_the_path_shown_through_edits_switches_and_deletes(db):
    """``count_turns`` and a session's ``turn_count`` read the path's last position + 1
    (issue 36: not a count of the whole path): equal to the turns on the path."""

    def counts() -> tuple[int, int, int]:
        session = next(s for s in db.list_sessions() if s.id == sid)
        return db.count_turns(sid), db.get_session(sid).turn_count, session.turn_count

    sid = db.create_session().id
    assert counts() == (0, 0, 0)
    sid, (q1, a1, q2, a2) = chat(db, "q1", "a1", "q2", "a2")
    assert counts() == (4, 4, 4)
    edited = db.edit_turn(sid, q2.id, user("q2 edited"))
    assert counts() == (3, 3, 3) == (len(path(db, sid)),) * 3
    db.show_branch(sid, a2.id)  # back to the first branch, to its end
    assert counts() == (4, 4, 4) == (len(path(db, sid)),) * 3
    db.show_branch(sid, edited.id)
    db.append_turn(sid, reply("a2 again"))
    db.delete_turns(sid, [q1.id])  # the first message and all below it
    assert counts() == (0, 0, 0) and path(db, sid) == []

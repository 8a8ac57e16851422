"""Edits and regenerations are versions of the chat, not chats.

Every store test here runs on a sessions.db file and on a PostgreSQL database
(``db``, ``store`` and ``any_target``: tests/core/conftest.py).
"""

from __future__ import annotations

import pytest

from parley.core.chat.edit import edit_and_fork
from parley.core.content import TextBlock, Turn
from parley.core.store.async_store import AsyncStore
from parley.core.store.backends import open_store
from parley.core.store.store import Store
from parley.core.versions import Member, TurnKey, branch_points
from tests.core.rawdb import raw_rows


@pytest.fixture
def db(any_db: Store) -> Store:
    """This module's tests run on a sessions.db file and on PostgreSQL (tests/core/conftest.py)."""
    return any_db


@pytest.fixture
def store(any_store: AsyncStore) -> AsyncStore:
    """The async store, on both backends too."""
    return any_store

MODEL = "anthropic:claude-sonnet-4-6"


def chat(db, *texts: str, title: str = "Trip") -> str:
    session = db.create_session(title=title, model=MODEL)
    for i, text in enumerate(texts):
        db.append_turn(session.id, Turn("user" if i % 2 == 0 else "assistant", [TextBlock(text)]))
    return session.id


def texts(db, sid: str) -> list[str]:
    return [t.text() for t in db.get_turns(sid)]


def regenerate(db, sid: str, answer: str) -> str:
    """What Regenerate does in the store: the reply to a version, a new one in its place."""
    turns = db.get_turns(sid)
    fork = db.set_aside_reply(sid, turns[-2].id, title="Answer 1 (Sonnet, 12:00) · Trip")
    db.append_turn(sid, Turn("assistant", [TextBlock(answer)]))
    return fork.id


def listed(db) -> list[str]:
    return [s.id for s in db.list_sessions()]


async def test_edits_and_regenerations_are_versions_not_listed(store):
    sid = (await store.create_session(title="Trip", model=MODEL)).id
    for role, text in (("user", "Plan Lisbon"), ("assistant", "Day 1"), ("user", "Add Porto"),
                       ("assistant", "Day 4")):
        await store.append_turn(sid, Turn(role, [TextBlock(text)]))  # type: ignore[arg-type]
    turns = await store.get_turns(sid)

    first = await edit_and_fork(store, sid, turns[2].id, [TextBlock("Add Sintra")])
    second = await edit_and_fork(store, first.id, (await store.get_turns(first.id))[2].id,
                                 [TextBlock("Add Faro")])

    assert first.is_version and second.is_version
    assert [s.id for s in await store.list_sessions()] == [sid]
    v = await store.versions(second.id)
    assert v.chat_id == sid and set(v.members) == {sid, first.id, second.id}
    point = v.points[(await store.get_turns(second.id))[2].id]
    assert (point.index, point.total) == (3, 3)
    assert point.sessions == (sid, first.id, second.id)


def test_regenerations_show_as_n_of_m_on_the_reply(db):
    sid = chat(db, "Plan Lisbon", "Answer A")
    a = regenerate(db, sid, "Answer B")
    b = regenerate(db, sid, "Answer C")

    assert listed(db) == [sid]
    v = db.versions(sid)
    reply = db.get_turns(sid)[-1]
    assert list(v.points) == [reply.id]  # the shared prompt has one version
    point = v.points[reply.id]
    assert (point.index, point.total) == (3, 3)
    assert point.sessions == (a, b, sid)
    assert texts(db, point.sessions[0]) == ["Plan Lisbon", "Answer A"]
    assert point.target(-1)[0] == b and point.target(+1) is None


def test_the_chosen_version_is_remembered_in_the_store(any_target):
    db = open_store(any_target)
    sid = chat(db, "Plan Lisbon", "Answer A")
    old = regenerate(db, sid, "Answer B")
    assert db.version_to_open(sid) == sid  # latest activity: the new answer
    db.show_version(old)
    db.close()

    db = open_store(any_target)
    try:
        assert db.version_to_open(sid) == old
        assert db.version_to_open(old) == old
        assert db.versions(old).points[db.get_turns(old)[-1].id].index == 1
    finally:
        db.close()


def test_a_fork_made_on_purpose_is_listed_and_nests_under_the_chat(db):
    sid = chat(db, "Plan Lisbon", "Answer A")
    old = regenerate(db, sid, "Answer B")
    fork = db.fork(sid, db.get_turns(sid)[0].id)
    from_version = db.fork(old, db.get_turns(old)[-1].id)

    assert not fork.is_version and not from_version.is_version
    assert set(listed(db)) == {sid, fork.id, from_version.id}
    assert from_version.meta.get("nest_under") == sid
    assert db.versions(fork.id).members == (fork.id,)  # a chat of its own


def test_a_fork_of_a_version_is_titled_with_its_chat(db):
    """A version's own title ("Answer 1 (…) · Trip", "Trip (edited)") is internal:
    a fork made from it on purpose reads "<the chat's title> (fork)"."""
    sid = chat(db, "Plan Lisbon", "Answer A")
    old = regenerate(db, sid, "Answer B")
    edited = db.fork(old, db.get_turns(old)[0].id, title="Trip (edited)", kind="version")

    assert db.fork(old, db.get_turns(old)[-1].id).title == "Trip (fork)"
    assert db.fork(edited.id, db.get_turns(edited.id)[0].id).title == "Trip (fork)"
    assert db.fork(sid, db.get_turns(sid)[-1].id).title == "Trip (fork)"


def test_each_branch_point_keeps_the_version_last_chosen_there(db):
    """Edit 3/3 with reply 2/4 chosen; switching the edit to 2/3 and back shows reply
    2/4 again (not the latest reply, 4/4)."""
    def edit(sid: str, text: str) -> str:  # what Edit does: a version from the prompt on
        fork = db.fork(sid, db.get_turns(sid)[1].id, title="Trip (edited)", kind="version")
        db.append_turn(fork.id, Turn("user", [TextBlock(text)]))
        return fork.id

    sid = chat(db, "Hi", "Hello", "Plan Lisbon", "Day 1")
    e2 = edit(sid, "Plan Porto")
    db.append_turn(e2, Turn("assistant", [TextBlock("Porto day 1")]))
    e3 = edit(e2, "Plan Faro")
    db.append_turn(e3, Turn("assistant", [TextBlock("Reply 1")]))
    replies = [regenerate(db, e3, f"Reply {n}") for n in (2, 3, 4)]  # e3 shows reply 4

    def point(sid: str, n: int):
        return db.versions(sid).points[db.get_turns(sid)[n].id]

    second = point(e3, 3).sessions[1]  # choose reply 2/4
    assert second == replies[1] and texts(db, second)[-1] == "Reply 2"
    db.show_version(second)
    edit_point = point(second, 2)
    assert (edit_point.index, edit_point.total) == (3, 3)
    back_to = edit_point.sessions[1]  # the edit to 2/3
    assert back_to == e2
    db.show_version(e2)

    again = point(e2, 2).sessions[2]  # and back to 3/3
    assert again == second
    assert (point(again, 3).index, point(again, 3).total) == (2, 4)


def test_writing_to_a_version_moves_its_chat_up_the_list(db):
    sid = chat(db, "Plan Lisbon", "Answer A")
    old = regenerate(db, sid, "Answer B")
    other = chat(db, "Something else", "Sure")
    assert listed(db) == [other, sid]

    db.append_turn(old, Turn("user", [TextBlock("And Porto?")]))

    assert listed(db) == [sid, other]


def test_search_hits_open_the_version_holding_them(db):
    sid = chat(db, "Plan Lisbon", "Answer with castles")
    old = regenerate(db, sid, "Answer with trams")
    hit = db.search("castles")[0]
    assert hit.session_id == old
    assert db.locate_message(hit.session_id, hit.turn_id) == (old, hit.turn_id)
    # A message every version shares opens in the version shown.
    prompt = db.search("Lisbon")[0]
    shown = db.version_to_open(sid)
    assert db.locate_message(prompt.session_id, prompt.turn_id) == (
        shown, db.get_turns(shown)[0].id)


def test_forks_of_earlier_builds_are_recognised_by_their_titles(any_target):
    db = open_store(any_target)
    sid = chat(db, "Plan Lisbon", "Answer A", "More", "Yes")
    turns = db.get_turns(sid)
    edited = db.fork(sid, turns[1].id, title="Trip (edited)")
    kept = db.fork(sid, turns[-1].id, title="Answer 1 (Sonnet 4.6, 14:32) · Trip")
    previous = db.fork(sid, turns[-1].id, title="Trip (previous answer)")
    shouted = db.fork(sid, turns[1].id, title="Trip (EDITED)")  # either case, either backend
    explicit = db.fork(sid, turns[1].id)  # "Trip (fork)"
    from_edit = db.fork(edited.id, db.get_turns(edited.id)[-1].id)  # Fork from here, in it
    untitled = db.fork(sid, turns[1].id)
    db.rename_session(untitled.id, None)  # an untitled fork (v3 files have them)
    db.close()
    raw_rows(db, "UPDATE sessions SET meta = '{}'")  # as an earlier build wrote them: no kind

    db = open_store(any_target)
    try:
        assert set(listed(db)) == {sid, explicit.id, untitled.id, from_edit.id}
        # a fork made in an edit is listed under the chat, as one made now would be
        [nested] = [s for s in db.list_sessions() if s.id == from_edit.id]
        assert nested.meta["nest_under"] == sid
        assert not db.get_session(untitled.id).is_version
        assert {s.id for s in db.list_forks(sid) if s.is_version} == {
            edited.id, kept.id, previous.id, shouted.id}
        assert set(db.versions(sid).members) == {
            sid, edited.id, kept.id, previous.id, shouted.id}
    finally:
        db.close()


def test_deleting_a_chat_deletes_its_versions_not_its_forks(db):
    sid = chat(db, "Plan Lisbon", "Answer A")
    old = regenerate(db, sid, "Answer B")
    fork = db.fork(old, db.get_turns(old)[0].id)
    db.delete_session(sid)
    assert listed(db) == [fork.id]
    assert [s.id for s in db.list_sessions(include_versions=True)] == [fork.id]


def test_a_version_whose_chat_is_gone_is_listed(any_target):
    db = open_store(any_target)
    sid = chat(db, "Plan Lisbon", "Answer A")
    old = regenerate(db, sid, "Answer B")
    db.close()
    # an earlier build deleted its chat and kept the fork
    raw_rows(db, "UPDATE sessions SET parent_session_id = 'deleted' WHERE id = ?", (old,))
    db = open_store(any_target)
    try:
        assert set(listed(db)) == {sid, old}  # nothing is lost from view
    finally:
        db.close()


def _member(sid: str, *keys: tuple[str, int, str], created: int = 0) -> Member:
    turns = tuple(TurnKey(f"{sid}-{i}", role, at, text) for i, (role, at, text) in
                  enumerate(keys))
    return Member(sid, created, created, turns)


def test_branch_points_follow_the_shared_beginning():
    root = _member("r", ("user", 1, "a"), ("assistant", 2, "b"), ("user", 3, "c"))
    edit = _member("e", ("user", 1, "a"), ("assistant", 2, "b"), ("user", 9, "c2"), created=9)
    other = _member("o", ("user", 1, "x"), created=5)  # the first message edited
    pts = branch_points("e", [root, edit, other])
    assert [(p.turn_id, p.index, p.total) for p in pts.values()] == [
        ("e-0", 1, 2), ("e-2", 2, 2)]
    assert pts["e-2"].sessions == ("r", "e") and pts["e-0"].sessions == ("e", "o")
    assert branch_points("missing", [root]) == {}


def test_moving_a_chat_moves_its_versions(db):
    sid = chat(db, "Plan Lisbon", "Answer A")
    old = regenerate(db, sid, "Answer B")
    work = db.create_space("Work")
    db.move_session(sid, work.id)
    assert db.get_session(old).space_id == work.id
    assert [s.id for s in db.list_sessions(space_id=work.id)] == [sid]


def test_a_hit_in_a_version_is_titled_with_its_chat(db):
    sid = chat(db, "Plan Lisbon", "Answer with castles")
    regenerate(db, sid, "Answer with trams")
    db.rename_session(sid, "Lisbon in May")
    [hit] = db.search("castles")
    assert hit.session_title == "Lisbon in May"


def test_an_untitled_fork_is_a_chat_of_the_list(db):
    sid = chat(db, "Plan Lisbon", "Answer A")
    fork = db.fork(sid, db.get_turns(sid)[0].id)
    db.rename_session(fork.id, None)
    assert set(listed(db)) == {sid, fork.id}
    assert not db.get_session(fork.id).is_version


def test_a_failed_regeneration_leads_back_to_the_old_answer(db):
    sid = chat(db, "Plan Lisbon", "Answer A")
    turns = db.get_turns(sid)
    old = db.set_aside_reply(sid, turns[0].id).id  # the new answer never came
    prompt = db.get_turns(sid)[0].id
    point = db.versions(sid).points[prompt]  # on the prompt the chat now ends with
    assert (point.index, point.total) == (2, 2)
    assert point.target(-1) == (old, db.get_turns(old)[1].id)
    back = db.versions(old).points[db.get_turns(old)[1].id]  # and from the old answer
    assert (back.index, back.total) == (1, 2) and back.target(+1) == (sid, prompt)


def test_versions_are_not_counted_as_other_chats_in_search(db):
    sid = chat(db, "Plan Lisbon", "Answer A")
    regenerate(db, sid, "Answer B")
    regenerate(db, sid, "Answer C")
    [hit] = db.search("Lisbon")
    assert hit.fork_copies == 0  # one chat holds it, in three versions
    db.fork(sid, db.get_turns(sid)[0].id)
    [hit] = db.search("Lisbon")
    assert hit.fork_copies == 1


async def test_versions_made_before_a_compaction_stay_on_their_messages(any_target):
    """The trial's steps: edit the first message, regenerate its reply, talk on, compact,
    restart. The summary (stored last, standing for the first turns) is no message: each
    version is still offered where it parts, and the compacted chat is no version."""
    from parley.core.content import CompactSummaryBlock

    store = await AsyncStore.open(any_target)
    try:
        sid = (await store.create_session(title="Alpha", model=MODEL)).id
        first = await store.append_turn(sid, Turn("user", [TextBlock("alpha question")]))
        await store.append_turn(sid, Turn("assistant", [TextBlock("answer one")]))
        edited = await edit_and_fork(store, sid, first.id, [TextBlock("beta question")])
        await store.append_turn(edited.id, Turn("assistant", [TextBlock("answer two")]))
        beta = (await store.get_turns(edited.id))[0]
        old = (await store.set_aside_reply(edited.id, beta.id,
                                           title="Answer 1 (Sonnet, 21:40) · Alpha")).id
        await store.append_turn(edited.id, Turn("assistant", [TextBlock("answer three")]))
        for n in range(3):
            await store.append_turn(edited.id, Turn("user", [TextBlock(f"more {n}")]))
            await store.append_turn(edited.id, Turn("assistant", [TextBlock(f"reply {n}")]))
        shown = await store.get_turns(edited.id)
        await store.record_compaction(
            edited.id, Turn("user", [CompactSummaryBlock("<summary>beta…</summary>", 4)]),
            first_turn_id=shown[0].id, last_turn_id=shown[3].id, replaced_count=4)
        await store.show_version(edited.id)
    finally:
        await store.close()

    store = await AsyncStore.open(any_target)  # a restart
    try:
        v = await store.versions(edited.id)
        got = {k: (p.index, p.total) for k, p in v.points.items()}
        # on the edited message (inside the summary card) and on its regenerated reply
        assert got == {shown[0].id: (2, 2), shown[1].id: (2, 2)}
        assert v.points[shown[0].id].target(-1) == (sid, first.id)
        assert v.points[shown[1].id].target(-1)[0] == old
        # seen from the first version (as search opens it): one point, two versions
        back = await store.versions(sid)
        assert {k: (p.index, p.total) for k, p in back.points.items()} == {first.id: (1, 2)}
        assert back.points[first.id].target(+1)[0] == edited.id
        older = await store.versions(old)
        old_turns = await store.get_turns(old)
        assert {k: (p.index, p.total) for k, p in older.points.items()} == {
            old_turns[0].id: (2, 2), old_turns[1].id: (1, 2)}
    finally:
        await store.close()


async def test_search_names_versions_by_their_chat_not_their_own_titles(store):
    """The trial: "alpha" listed "Alpha question (edited)" and "Answer 1 (…) · Alpha
    question (edited)" as title matches: names the person never gave, three for one chat."""
    sid = (await store.create_session(title="Alpha question", model=MODEL)).id
    first = await store.append_turn(sid, Turn("user", [TextBlock("alpha question")]))
    await store.append_turn(sid, Turn("assistant", [TextBlock("answer one")]))
    edited = await edit_and_fork(store, sid, first.id, [TextBlock("beta question")])
    await store.append_turn(edited.id, Turn("assistant", [TextBlock("answer two")]))
    beta = (await store.get_turns(edited.id))[0]
    await store.set_aside_reply(edited.id, beta.id,
                                title="Answer 1 (Claude Sonnet 4.6, 21:40) · Alpha question "
                                      "(edited)")
    hits = await store.search("alpha")
    titles = [(h.session_title, h.snippet) for h in hits if h.turn_id is None]
    assert len(titles) == 1 and titles[0][0] == "Alpha question"
    assert all("(edited)" not in h.snippet and "Answer 1" not in h.snippet for h in hits)
    assert {h.session_title for h in hits} == {"Alpha question"}


async def test_versions_of_a_long_chat_are_told_apart_after_what_they_share(store):
    """The versions are compared from the earliest message a version was made at (every
    version holds copies of what comes before): a regeneration at the end and an edit of
    an early message are both found, from the chat and from each version."""
    session = await store.create_session(title="long", model=MODEL)
    sid = session.id
    for i in range(12):
        await store.append_turn(sid, Turn("user" if i % 2 == 0 else "assistant",
                                          [TextBlock(f"m{i}")], id=f"m{i}"))
    answer = await store.set_aside_reply(sid, "m10", reply_turn_ids=["m11"])
    await store.append_turn(sid, Turn("assistant", [TextBlock("m11 again")], id="m11b"))
    edit = await edit_and_fork(store, sid, "m4", [TextBlock("m4 edited")])

    seen = await store.versions(sid)
    assert set(seen.points) == {"m4", "m11b"}
    assert (seen.points["m4"].index, seen.points["m4"].total) == (1, 2)
    assert seen.points["m4"].sessions == (sid, edit.id)
    assert (seen.points["m11b"].index, seen.points["m11b"].total) == (2, 2)
    assert seen.points["m11b"].sessions == (answer.id, sid)
    from_edit = await store.versions(edit.id)
    [edited] = [t.id for t in await store.get_turns(edit.id) if t.text() == "m4 edited"]
    assert set(from_edit.points) == {edited}
    assert from_edit.points[edited].index == 2
    from_answer = await store.versions(answer.id)
    copy_of_m4 = (await store.get_turns(answer.id))[4].id
    assert set(from_answer.points) == {copy_of_m4, (await store.get_turns(answer.id))[11].id}

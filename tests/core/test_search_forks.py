"""Search lists a message once, however many forks copied it and however often it was
regenerated (``parley.core.store.search``).

A fork starts with copies of the path its parent shows (``Store.fork``); Edit and
Regenerate copy nothing (a branch inside the chat: ``Store.branch_before``).
Searching a word of an early message must give one hit, in the chat where it was
written (or the oldest surviving copy), saying how many other chats hold it; the
limit counts messages; a fork's own later turns and identical text in unrelated
chats stay separate hits. Real stores (a sessions.db file and a PostgreSQL database),
the store's real fork functions.
"""

from __future__ import annotations

import pytest

from parley.core.content import CompactSummaryBlock, TextBlock, Turn
from parley.core.store import Store
from parley.core.store import search as search_mod


@pytest.fixture
def db(any_db: Store) -> Store:
    """This module's tests run on a sessions.db file and on PostgreSQL (tests/core/conftest.py)."""
    return any_db

T0 = 1_700_000_000_000


def _chat(db: Store, title: str, texts: list[str], start: int = T0, space=None):
    s = db.create_session(title=title, space_id=space)
    turns = [
        db.append_turn(
            s.id,
            Turn("user" if i % 2 == 0 else "assistant", [TextBlock(t)], created_at=start + i),
        )
        for i, t in enumerate(texts)
    ]
    return s, turns


@pytest.fixture
def family(db):
    """A chat forked four ways: twice from it, a fork of a fork, and one late fork after
    a Regenerate (a branch inside the chat: nothing copied).

    Every fork holds a copy of the first message ("… Zanzibar …").
    """
    orig, turns = _chat(
        db,
        "Trip planning",
        [
            "Let's plan the Zanzibar trip for June",
            "Sure: flights, a hotel in Stone Town, and a spice tour.",
            "What about the ferry?",
            "Ferries leave Dar es Salaam four times a day.",
        ],
    )
    f1 = db.fork(orig.id, turns[1].id)
    f2 = db.fork(orig.id, turns[3].id)
    f1a = db.fork(f1.id, db.get_turns(f1.id)[1].id)
    db.branch_before(orig.id, turns[3].id)  # Regenerate: the old answer stays a branch
    db.append_turn(orig.id, Turn("assistant", [TextBlock("Ferries run hourly.")]))
    f4 = db.fork(orig.id, db.get_turns(orig.id)[-1].id)
    return orig, turns, [f1, f2, f1a, f4]


def test_a_copied_message_is_one_hit_in_the_original(db, family):
    orig, turns, forks = family
    assert all(t.text() != "" for t in db.get_turns(forks[2].id))  # really copies
    [hit] = db.search("zanzibar")
    assert (hit.session_id, hit.turn_id) == (orig.id, turns[0].id)
    assert hit.session_title == "Trip planning"
    # the other chats holding it: the forks (Regenerate's branch is in the chat itself)
    assert hit.fork_copies == 4
    assert "\x02Zanzibar\x03" in hit.snippet
    # search as you type (prefix), and a phrase: the same single hit
    assert [h.turn_id for h in db.search("zanzib")] == [turns[0].id]
    assert [h.turn_id for h in db.search('"zanzibar trip"')] == [turns[0].id]


def test_the_original_deleted_the_oldest_surviving_copy_stands_for_it(db, family):
    orig, _turns, forks = family
    db.delete_session(orig.id)  # the forks are kept, "parent deleted"
    [hit] = db.search("zanzibar")
    oldest = forks[0]
    assert hit.session_id == oldest.id
    assert hit.turn_id == db.get_turns(oldest.id)[0].id
    # the other forks, the fork of a fork included
    assert hit.fork_copies == 3
    # The fork of a fork loses its parent too: nothing links it to the others any
    # more (a known limit), so it is a family, and a hit, of its own.
    db.delete_session(oldest.id)
    hits = db.search("zanzibar")
    assert {(h.session_id, h.fork_copies) for h in hits} == {(forks[1].id, 1), (forks[2].id, 0)}


def test_a_forks_own_later_message_is_found(db, family):
    orig, turns, forks = family
    f1 = forks[0]
    own = db.append_turn(f1.id, Turn("user", [TextBlock("Zanzibar ferry timetable?")]))
    hits = db.search("zanzibar")
    assert {(h.session_id, h.turn_id, h.fork_copies) for h in hits} == {
        (orig.id, turns[0].id, 4),
        (f1.id, own.id, 0),
    }
    # the fork's own turn is copied into a fork of it: one hit, in the fork it was written in
    db.fork(f1.id, own.id)
    hits = db.search("timetable")
    assert [(h.session_id, h.turn_id, h.fork_copies) for h in hits] == [(f1.id, own.id, 1)]


def test_the_same_text_written_after_the_fork_point_is_another_message(db):
    orig, turns = _chat(db, "Chat", ["hello there", "hi", "say papaya", "papaya"])
    fork = db.fork(orig.id, turns[1].id)
    # typed again in the fork at the same position, later: not a copy
    db.append_turn(fork.id, Turn("user", [TextBlock("say papaya")], created_at=T0 + 999))
    hits = db.search("papaya say")
    assert len(hits) == 2 and {h.session_id for h in hits} == {orig.id, fork.id}
    assert all(h.fork_copies == 0 for h in hits)


def test_identical_text_in_unrelated_chats_is_two_hits(db):
    # Same text, same position, even the same millisecond: not forks of each other.
    a, _ = _chat(db, "A", ["the quokka smiled"])
    b, _ = _chat(db, "B", ["the quokka smiled"])
    hits = db.search("quokka")
    assert sorted(h.session_id for h in hits) == sorted([a.id, b.id])
    assert all(h.fork_copies == 0 for h in hits)


@pytest.mark.parametrize("common", [False, True], ids=["ranked", "newest-first"])
def test_the_limit_counts_messages_not_copies(db, monkeypatch, common):
    if common:  # every word counts as common: hits come newest first (rank 0.0)
        monkeypatch.setattr(search_mod, "COMMON_ROWS", 0)
    originals = []
    for i in range(6):
        s, turns = _chat(db, f"Chat {i}", [f"walrus number {i}", "ok"], start=T0 + 100 * i)
        for _ in range(8):
            db.fork(s.id, turns[1].id)
        originals.append((s.id, turns[0].id))
    for limit in (1, 3, 6, 20):
        hits = db.search("walrus", limit=limit)
        assert len(hits) == min(limit, 6)
        assert len({h.turn_id for h in hits}) == len(hits)
        assert all((h.session_id, h.turn_id) in originals for h in hits)
        assert all(h.fork_copies == 8 for h in hits)
        assert all((h.rank == 0.0) == common for h in hits)


def test_scopes_and_exclusions(db, family):
    orig, turns, forks = family
    work = db.create_space("Work")
    db.move_session(forks[1].id, work.id)
    moved_copy = db.get_turns(forks[1].id)[0].id
    # This space: only the copies there count; the one there stands for the message.
    [hit] = db.search("zanzibar", space_id=work.id)
    assert (hit.session_id, hit.turn_id, hit.fork_copies) == (forks[1].id, moved_copy, 0)
    [hit] = db.search("zanzibar", space_id=orig.space_id)
    assert (hit.session_id, hit.fork_copies) == (orig.id, 3)  # f1, f1a, f4
    # This chat: a fork's own copy, nothing collapsed into another chat.
    [hit] = db.search("zanzibar", session_id=forks[2].id)
    assert hit.session_id == forks[2].id and hit.fork_copies == 0
    # A chat left out (a delete still undoable): as if deleted, its copy included.
    [hit] = db.search("zanzibar", exclude_session_ids={orig.id})
    assert (hit.session_id, hit.fork_copies) == (forks[0].id, 3)
    assert db.search("zanzibar", exclude_session_ids={orig.id, *(f.id for f in forks)}) == []


def test_a_copied_compaction_summary_is_one_hit(db):
    orig, turns = _chat(db, "Long", ["first", "second", "third", "fourth"])
    db.record_compaction(
        orig.id,
        Turn("user", [CompactSummaryBlock("we compared narwhal tusks")], created_at=T0 + 10),
        first_turn_id=turns[0].id,
        last_turn_id=turns[1].id,
        replaced_count=2,
    )
    summary = db.get_turns(orig.id)[-1]
    fork = db.fork(orig.id, summary.id)
    copy = db.get_turns(fork.id)[-1]
    assert copy.blocks[0].compaction_id != summary.blocks[0].compaction_id  # re-linked
    [hit] = db.search("narwhal")
    assert (hit.session_id, hit.turn_id, hit.fork_copies) == (orig.id, summary.id, 1)


async def test_async_store_passes_the_count_and_the_exclusions(any_store):
    db = any_store
    s = await db.create_session(title="Async")
    t = await db.append_turn(s.id, Turn("user", [TextBlock("ocelot sighting")]))
    fork = await db.fork(s.id, t.id)
    [hit] = await db.search("ocelot")
    assert (hit.session_id, hit.fork_copies) == (s.id, 1)
    [hit] = await db.search("ocelot", exclude_session_ids=[s.id])
    assert (hit.session_id, hit.fork_copies) == (fork.id, 0)


def test_a_chat_regenerated_50_times_lists_each_message_once(db):
    """Each answer is its own message, stored once; the prompt they answer is one hit,
    not one per answer. A fork copies the path shown only."""
    orig, turns = _chat(db, "Dhow", ["Which dhow sails to Zanzibar?", "Zanzibar dhow 0."])
    answers = [turns[1]]
    for i in range(1, 51):  # Regenerate: a sibling of the answer shown
        db.branch_before(orig.id, answers[-1].id)
        answers.append(db.append_turn(orig.id, Turn(
            "assistant", [TextBlock(f"Zanzibar dhow {i}.")], created_at=T0 + 10 + i)))
    assert [t.id for t in db.transcript_window(orig.id).turns] == [turns[0].id, answers[-1].id]
    hits = db.search("zanzibar", limit=100)
    assert len(hits) == 52
    assert sorted(h.turn_id for h in hits) == sorted([turns[0].id, *(a.id for a in answers)])
    assert all(h.session_id == orig.id and h.fork_copies == 0 for h in hits)
    # only the prompt and the last answer are on the path shown: the 50 others say so
    assert {h.turn_id for h in hits if not h.off_path} == {turns[0].id, answers[-1].id}
    assert [h.turn_id for h in db.search("which")] == [turns[0].id]
    assert [h.turn_id for h in db.search('"dhow 7"')] == [answers[7].id]
    fork = db.fork(orig.id, answers[-1].id)
    hits = db.search("zanzibar", limit=100)
    assert len(hits) == 52 and {h.session_id for h in hits} == {orig.id}
    assert {h.turn_id for h in hits if h.fork_copies} == {turns[0].id, answers[-1].id}
    assert [h.session_id for h in db.search("zanzibar", session_id=fork.id, limit=100)] == [
        fork.id, fork.id]
    # a hit on another branch: the chat is shown through it (Store.show_branch)
    db.show_branch(orig.id, answers[7].id)
    assert [t.id for t in db.transcript_window(orig.id).turns] == [turns[0].id, answers[7].id]
    assert [h.off_path for h in db.search('"dhow 7"')] == [False]
    assert [h.off_path for h in db.search('"dhow 50"')] == [True]
    assert not any(h.off_path for h in db.search("dhow", session_id=fork.id, limit=100))

"""Turns, forks and compactions through the Store API, on a sessions.db file and on PostgreSQL."""

from __future__ import annotations

import dataclasses
import sqlite3

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from parley.core.content import (
    CompactSummaryBlock,
    DocumentBlock,
    ImageBlock,
    MediaPart,
    TextBlock,
    TextOrigin,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    Turn,
    UnknownBlock,
    Usage,
)
from parley.core.store import Store
from parley.core.store.errors import (
    DuplicateTurn,
    SessionNotFound,
    TurnInOtherSession,
    TurnNotFound,
    TurnNotInSession,
)
from parley.core.store.imports import NewChat
from parley.core.store.postgres.store import PgStore
from parley.core.store.textindex import register_functions


@pytest.fixture
def db(any_db: Store) -> Store:
    """This module's tests run on a sessions.db file and on PostgreSQL (tests/core/conftest.py)."""
    return any_db


def user(text: str) -> Turn:
    return Turn("user", [TextBlock(text)])


def assistant(text: str, **kw) -> Turn:
    return Turn("assistant", [TextBlock(text)], **kw)


def conversation(db: Store, n: int, title: str = "chat") -> tuple[str, list[Turn]]:
    s = db.create_session(title=title)
    turns = [
        db.append_turn(s.id, user(f"q{i}") if i % 2 == 0 else assistant(f"a{i}"))
        for i in range(n)
    ]
    return s.id, turns


# --- append / get ------------------------------------------------------------------------


def test_append_keeps_order_and_bumps_activity(db):
    other = db.create_session(title="other")
    sid, turns = conversation(db, 5)
    assert [t.id for t in db.get_turns(sid)] == [t.id for t in turns]
    assert [t.text() for t in db.get_turns(sid, last=2)] == ["a3", "q4"]
    assert db.get_turns(sid, last=0) == []
    assert db.get_turns(sid, last=99) == db.get_turns(sid)
    assert db.count_turns(sid) == 5
    assert db.get_session(sid).turn_count == 5
    assert db.list_sessions()[0].id == sid
    db.append_turn(other.id, user("late"))
    assert db.list_sessions()[0].id == other.id


def test_get_turn_and_unknown_ids(db):
    sid, turns = conversation(db, 2)
    assert db.get_turn(turns[1].id) == turns[1]
    with pytest.raises(TurnNotFound):
        db.get_turn("nope")
    with pytest.raises(DuplicateTurn):
        db.append_turn(sid, turns[0])
    other = db.create_session()
    with pytest.raises(DuplicateTurn):
        db.append_turn(other.id, turns[0])
    assert db.count_turns(other.id) == 0


def test_upsert_journals_a_streaming_reply(db):
    sid, _ = conversation(db, 1)
    partial = assistant("Once upon", aborted=True)
    db.upsert_turn(sid, partial)
    grown = partial.with_blocks([TextBlock("Once upon a time")])
    db.upsert_turn(sid, grown)
    [_, saved] = db.get_turns(sid)
    assert (saved.id, saved.text(), saved.aborted) == (partial.id, "Once upon a time", True)
    assert db.search("time")[0].turn_id == partial.id
    assert db.search("upon")[0].turn_id == partial.id
    other = db.create_session()
    with pytest.raises(TurnInOtherSession):
        db.upsert_turn(other.id, grown)


def test_finish_turn_saves_turn_and_usage_together(db):
    sid, _ = conversation(db, 1)
    reply = assistant("done", model="anthropic:claude", usage=Usage(10, 5))
    db.finish_turn(sid, reply, Usage(10, 5, 100, 0, 0.5))
    assert db.get_turns(sid)[-1] == reply
    assert db.get_session(sid).usage == Usage(10, 5, 100, 0, 0.5)
    with pytest.raises(SessionNotFound):
        db.finish_turn("nope", assistant("x"), Usage(1))


def test_finish_turn_is_all_or_nothing(db, monkeypatch):
    sid, _ = conversation(db, 1)
    from parley.core.store import sessions as repo

    def broken(*a, **k):
        raise RuntimeError("crash between the two writes")

    monkeypatch.setattr(repo, "add_usage", broken)
    with pytest.raises(RuntimeError):
        db.finish_turn(sid, assistant("lost"), Usage(1))
    assert db.count_turns(sid) == 1
    assert db.search("lost") == []


def test_delete_turns_after(db):
    sid, turns = conversation(db, 5)
    assert db.delete_turns_after(sid, turns[1].id) == 3
    assert [t.id for t in db.get_turns(sid)] == [t.id for t in turns[:2]]
    assert db.search("q4") == []
    db.append_turn(sid, user("again"))
    assert db.get_turns(sid)[-1].text() == "again"
    with pytest.raises(TurnNotInSession):
        db.delete_turns_after(sid, turns[4].id)


def test_loading_the_tail_of_a_long_session(db):
    chat = NewChat("long", [Turn("user", [TextBlock(f"n{i}")], id=f"t{i}", created_at=i)
                            for i in range(10_000)], source="test")
    [sid] = db.import_chats([chat]).session_ids
    tail = db.get_turns(sid, last=200)
    assert [t.text() for t in tail] == [f"n{i}" for i in range(9800, 10_000)]
    assert db.count_turns(sid) == 10_000
    assert db.search("n9999")[0].turn_id == tail[-1].id


def test_a_raw_writer_of_the_file_must_register_the_index_functions(sqlite_db):
    # The file's search triggers call Python functions (PostgreSQL's are in the database).
    db = sqlite_db
    s = db.create_session()
    con = sqlite3.connect(db.path)
    with pytest.raises(sqlite3.OperationalError, match="parley_turn_text"):
        con.execute(
            "INSERT INTO turns (id, session_id, seq, role, blocks, created_at) "
            "VALUES ('x', ?, 0, 'user', '[]', 0)",
            (s.id,),
        )
    register_functions(con)
    con.executemany(
        "INSERT INTO turns (id, session_id, seq, role, blocks, created_at) VALUES (?,?,?,?,?,?)",
        [(f"t{i}", s.id, i, "user", f'[{{"type":"text","text":"n{i}"}}]', i) for i in range(10)],
    )
    # The chat's tree too: each turn below the one before, all of them on the path shown.
    con.executemany(
        "INSERT INTO turn_links (turn_id, session_id, parent_id, shown_at) VALUES (?,?,?,?)",
        [(f"t{i}", s.id, f"t{i - 1}" if i else None, i) for i in range(10)],
    )
    con.executemany("INSERT INTO turn_path (session_id, pos, turn_id) VALUES (?,?,?)",
                    [(s.id, i, f"t{i}") for i in range(10)])
    con.commit()
    con.close()
    assert [t.id for t in db.get_turns(s.id, last=2)] == ["t8", "t9"]
    assert db.search("n9")[0].turn_id == "t9"


# --- fork --------------------------------------------------------------------------------


def test_a_fork_of_a_fork_has_one_fork_mark_and_a_title_of_its_own(db):
    """Not "Plan (fork) (fork)" (trial 16, shot-26): one mark, numbered once taken."""
    s = db.create_session(title="Plan")
    first = db.append_turn(s.id, user("a"))
    f1 = db.fork(s.id, first.id)
    f1a = db.fork(f1.id, db.get_turns(f1.id)[0].id)
    f2 = db.fork(s.id, first.id)
    f1b = db.fork(f1.id, db.get_turns(f1.id)[0].id)
    assert [f.title for f in (f1, f1a, f2, f1b)] == \
        ["Plan (fork)", "Plan (fork 2)", "Plan (fork 3)", "Plan (fork 4)"]
    assert db.fork(s.id, first.id, title="Mine").title == "Mine"
    untitled = db.create_session()
    assert db.fork(untitled.id, db.append_turn(untitled.id, user("x")).id).title == \
        "Untitled (fork)"


def test_fork_copies_turns_up_to_the_point_with_new_ids(db):
    work = db.create_space("Work")
    s = db.create_session(
        space_id=work.id, title="Plan", model="openai:gpt-5", system_prompt="sys"
    )
    turns = [db.append_turn(s.id, t) for t in (user("a"), assistant("b"), user("c"))]
    db.add_usage(s.id, Usage(100))
    fork = db.fork(s.id, turns[1].id)
    assert fork.title == "Plan (fork)"
    assert (fork.space_id, fork.model, fork.system_prompt) == (work.id, "openai:gpt-5", "sys")
    assert (fork.parent_session_id, fork.forked_from_turn_id) == (s.id, turns[1].id)
    assert fork.parent_session_id is not None and fork.parent_exists
    assert fork.turn_count == 2 and fork.usage == Usage()
    copied = db.get_turns(fork.id)
    assert [t.text() for t in copied] == ["a", "b"]
    assert not {t.id for t in copied} & {t.id for t in turns}
    assert [t.created_at for t in copied] == [t.created_at for t in turns[:2]]
    assert db.list_forks(s.id) == [db.get_session(fork.id)]
    db.append_turn(fork.id, user("diverge"))
    assert db.count_turns(s.id) == 3
    assert db.fork(s.id, turns[0].id, title="Mine").title == "Mine"


def test_a_fork_copies_the_path_shown_as_a_chain(db):
    """A chat with an edited first message and a regenerated answer: a fork copies the
    path up to the turn, not the other branches, linked one after the other."""
    s = db.create_session(title="Trip")
    q1, _a1 = db.append_turn(s.id, user("three days?")), db.append_turn(s.id, assistant("x"))
    db.branch_before(s.id, q1.id)
    q2, a2 = db.append_turn(s.id, user("two days?")), db.append_turn(s.id, assistant("y"))
    db.branch_before(s.id, a2.id)
    a3 = db.append_turn(s.id, assistant("z"))
    db.append_turn(s.id, user("and a third?"))
    fork = db.fork(s.id, a3.id)
    assert (fork.parent_session_id, fork.forked_from_turn_id) == (s.id, a3.id)
    assert db.list_forks(s.id) == [db.get_session(fork.id)] and fork.turn_count == 2
    tree = db.get_tree(fork.id)
    assert [t.turn.text() for t in tree] == ["two days?", "z"]
    assert [t.parent_id for t in tree] == [None, tree[0].turn.id] and all(t.on_path for t in tree)
    assert not {t.turn.id for t in tree} & {q2.id, a3.id}
    assert [t.id for t in db.transcript_window(fork.id).turns] == [t.turn.id for t in tree]
    db.append_turn(fork.id, user("diverge"))  # below the fork's leaf
    assert db.get_tree(fork.id)[-1].parent_id == tree[-1].turn.id
    with pytest.raises(TurnNotInSession):  # a turn of another branch: show it first
        db.fork(s.id, a2.id)
    db.show_branch(s.id, a2.id)
    assert [t.text() for t in db.get_turns(db.fork(s.id, a2.id).id)] == ["two days?", "y"]


def test_fork_of_deleted_parent_keeps_its_turns(db):
    s = db.create_session(title="Parent")
    t = db.append_turn(s.id, user("shared words"))
    fork = db.fork(s.id, t.id)
    db.delete_session(s.id)
    orphan = db.get_session(fork.id)
    assert orphan.parent_session_id is not None and not orphan.parent_exists
    assert orphan.parent_session_id == s.id
    assert db.get_turns(fork.id)[0].text() == "shared words"
    assert [h.session_id for h in db.search("shared")] == [fork.id]


def test_fork_bad_inputs_write_nothing(db):
    s = db.create_session()
    other = db.create_session()
    t = db.append_turn(other.id, user("x"))
    with pytest.raises(TurnNotInSession):
        db.fork(s.id, t.id)
    with pytest.raises(TurnNotInSession):
        db.fork(s.id, "missing")
    with pytest.raises(SessionNotFound):
        db.fork("missing", t.id)
    assert len(db.list_sessions()) == 2


# --- compactions -------------------------------------------------------------------------


def compact(db: Store, sid: str, first: Turn, last: Turn, text: str = "summary") -> Turn:
    summary = Turn("user", [CompactSummaryBlock(text)])
    c = db.record_compaction(
        sid,
        summary,
        first_turn_id=first.id,
        last_turn_id=last.id,
        replaced_count=2,
        dropped_count=1,
        model="anthropic:haiku",
        usage=Usage(50, 10),
        reason="auto",
        tokens_before=9000,
        tokens_after=1200,
    )
    assert c.summary_turn_id == summary.id
    return db.get_turn(summary.id)


def test_record_compaction_and_history(db):
    sid, turns = conversation(db, 4)
    saved = compact(db, sid, turns[0], turns[1])
    block = saved.blocks[0]
    assert isinstance(block, CompactSummaryBlock)
    assert (block.first_turn_id, block.last_turn_id, block.replaced_count) == (
        turns[0].id,
        turns[1].id,
        2,
    )
    [c] = db.list_compactions(sid)
    assert block.compaction_id == c.id
    assert (c.reason, c.tokens_before, c.tokens_after, c.usage) == (
        "auto",
        9000,
        1200,
        Usage(50, 10),
    )
    assert (c.dropped_count, c.model) == (1, "anthropic:haiku")
    assert [t.id for t in db.history(sid)] == [saved.id, turns[2].id, turns[3].id]
    assert len(db.get_turns(sid)) == 5  # non-destructive
    assert db.search("summary")[0].turn_id == saved.id


def test_record_compaction_rejects_foreign_range(db):
    sid, turns = conversation(db, 2)
    other, other_turns = conversation(db, 2)
    with pytest.raises(TurnNotInSession):
        db.record_compaction(
            sid,
            Turn("user", [CompactSummaryBlock("s")]),
            first_turn_id=other_turns[0].id,
            last_turn_id=turns[1].id,
            replaced_count=2,
        )
    assert db.count_turns(sid) == 2 and db.list_compactions(sid) == []


def test_fork_relinks_compaction_to_copied_turns(db):
    sid, turns = conversation(db, 4)
    summary = compact(db, sid, turns[0], turns[1])
    fork = db.fork(s_id := sid, summary.id)
    assert s_id == sid
    copied = db.get_turns(fork.id)
    [fc] = db.list_compactions(fork.id)
    block = copied[-1].blocks[0]
    assert isinstance(block, CompactSummaryBlock)
    assert (block.first_turn_id, block.last_turn_id) == (copied[0].id, copied[1].id)
    assert (fc.first_turn_id, fc.last_turn_id, fc.summary_turn_id) == (
        copied[0].id,
        copied[1].id,
        copied[-1].id,
    )
    assert block.compaction_id == fc.id
    # A fork at the summary (its card) starts from it: the turns it kept are not copied.
    assert len(copied) == 3
    assert [t.id for t in db.history(fork.id)] == [copied[-1].id]


# --- any turn round-trips ------------------------------------------------------------------

text_st = st.text(max_size=40)
opt_text = st.none() | text_st
json_scalar = st.none() | st.booleans() | st.integers(-(10**6), 10**6) | text_st
json_obj = st.dictionaries(st.text(max_size=8), json_scalar, max_size=4)
parts = st.one_of(
    st.builds(TextBlock, text_st),
    st.builds(ImageBlock, text_st, data=text_st),
    st.builds(DocumentBlock, text_st, text_st, opt_text),
    st.builds(MediaPart, st.sampled_from(["audio", "video"]), text_st, text_st),
)
blocks = st.one_of(
    st.builds(
        TextBlock,
        text_st,
        st.none()
        | st.builds(
            TextOrigin, st.sampled_from(["user", "signal", "event"]), opt_text, opt_text, opt_text
        ),
        st.booleans(),
    ),
    st.builds(ImageBlock, text_st, url=text_st),
    st.builds(ToolUseBlock, text_st, text_st, json_obj),
    st.builds(ToolResultBlock, text_st, st.lists(parts, max_size=3).map(tuple), st.booleans()),
    st.builds(ThinkingBlock, text_st, opt_text),
    st.builds(
        CompactSummaryBlock,
        text_st,
        st.integers(0, 99),
        opt_text,
        opt_text,
        opt_text,
        st.booleans(),
    ),
    st.builds(UnknownBlock, json_obj.map(lambda d: {**d, "type": "from-the-future"})),
)
usage_st = st.none() | st.builds(
    Usage,
    st.integers(0, 10**7),
    st.integers(0, 10**7),
    st.integers(0, 10**7),
    st.integers(0, 10**7),
    st.floats(0, 100, allow_nan=False),
)
turn_st = st.builds(
    Turn,
    st.sampled_from(["user", "assistant"]),
    st.lists(blocks, max_size=4),
    created_at=st.integers(0, 2**42),
    aborted=st.booleans(),
    model=opt_text,
    usage=usage_st,
)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(turn=turn_st)
def test_any_turn_round_trips(db, turn):
    s = db.create_session()
    db.append_turn(s.id, turn)
    if isinstance(db, PgStore) and turn.model is not None:  # no NUL in PostgreSQL's text
        turn = dataclasses.replace(turn, model=turn.model.replace("\x00", ""))
    assert db.get_turn(turn.id) == turn
    assert db.get_turns(s.id) == [turn]
    db.delete_session(s.id)


def test_record_compaction_can_count_its_usage_in_the_same_transaction(db):
    sid, turns = conversation(db, 2)
    db.record_compaction(sid, Turn("user", [CompactSummaryBlock("s")]),
                            first_turn_id=turns[0].id, last_turn_id=turns[1].id,
                            replaced_count=2, usage=Usage(7, 3, cost_usd=0.5))
    assert db.get_session(sid).usage == Usage()
    db.record_compaction(sid, Turn("user", [CompactSummaryBlock("s2")]),
                            first_turn_id=turns[0].id, last_turn_id=turns[1].id,
                            replaced_count=2, usage=Usage(7, 3, cost_usd=0.5), count_usage=True)
    assert db.get_session(sid).usage == Usage(7, 3, cost_usd=0.5)

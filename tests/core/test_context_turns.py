"""What a request is built from in a compacted chat: ``Store.context_turns`` and
``parley.core.context.since_summary``, on a real SQLite file (and PostgreSQL when set up).

The turns a summary replaced are not read for a message; whatever the chat went through
(a re-compaction, an edit cutting back past a summary, a summary made elsewhere), the
list read must give the model exactly what the whole history gives it.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

import pytest
from sqlalchemy import event, text
from sqlalchemy.engine import Engine

from parley.core.content import CompactSummaryBlock, TextBlock, Turn, apply_compactions
from parley.core.context.since_summary import since_summary, stored_prefix
from parley.core.providers.capabilities import CAPS_BY_KIND
from parley.core.store import Store
from parley.core.store import schema as S
from parley.core.store.errors import TurnNotInSession
from parley.core.store.upgrade.migrations import FileKind, inspect_file
from parley.core.wire import to_messages
from tests.core.compaction_support import SONNET, TAGGED, Env
from tests.core.rawdb import raw_rows


@pytest.fixture
def db(any_db: Store) -> Store:
    """A sessions.db file, and PostgreSQL when tests/core/conftest.py has one."""
    return any_db


def chat(db: Store, n: int, prefix: str = "t") -> str:
    s = db.create_session(title="long")
    for i in range(n):
        db.append_turn(s.id, Turn("user" if i % 2 == 0 else "assistant",
                                  [TextBlock(f"message {i}")], id=f"{prefix}{i}"))
    return s.id


def compact(db: Store, sid: str, first: str, last: str, summary_id: str) -> None:
    db.record_compaction(sid, Turn("user", [CompactSummaryBlock(f"summary {summary_id}")],
                                   id=summary_id),
                         first_turn_id=first, last_turn_id=last, replaced_count=1)


def sent(turns: list[Turn]) -> list[Turn]:
    return to_messages(turns, CAPS_BY_KIND["anthropic"])


def same_as_whole(db: Store, sid: str) -> list[Turn]:
    """The context turns, checked against the whole history; returned."""
    whole = db.get_turns(sid)
    got = db.context_turns(sid)
    assert got == since_summary(whole)
    assert apply_compactions(got) == apply_compactions(whole)
    assert sent(got) == sent(whole)
    return got


def ids(turns: list[Turn]) -> list[str]:
    return [t.id for t in turns]


def test_a_chat_never_compacted_is_read_whole(db):
    sid = chat(db, 6)
    assert ids(same_as_whole(db, sid)) == [f"t{i}" for i in range(6)]


def test_the_turns_inside_the_summarys_range_are_not_read(db):
    sid = chat(db, 40)
    compact(db, sid, "t0", "t35", "s1")
    got = same_as_whole(db, sid)
    assert ids(got) == ["t0", "t35", "t36", "t37", "t38", "t39", "s1"]


def test_a_summary_of_one_turn(db):
    """A range of one turn (a long paste compacted alone): nothing is left out, nothing
    is read twice."""
    sid = chat(db, 6)
    compact(db, sid, "t0", "t0", "s1")
    assert ids(same_as_whole(db, sid)) == ["t0", "t1", "t2", "t3", "t4", "t5", "s1"]


def test_a_re_compaction_and_what_follows_it(db):
    sid = chat(db, 40)
    compact(db, sid, "t0", "t35", "s1")
    for i in range(40, 50):
        db.append_turn(sid, Turn("user" if i % 2 == 0 else "assistant",
                                 [TextBlock(f"message {i}")], id=f"t{i}"))
    assert ids(same_as_whole(db, sid))[:2] == ["t0", "t35"]
    compact(db, sid, "t0", "t45", "s2")
    db.append_turn(sid, Turn("user", [TextBlock("and now?")], id="u1"))
    got = same_as_whole(db, sid)
    assert ids(got) == ["t0", "t45", "t46", "t47", "t48", "t49", "s2", "u1"]
    assert "s1" not in ids(got)


def test_cutting_back_past_the_latest_summary_brings_the_earlier_one_back(db):
    """An edit deletes what follows the edited message, the latest summary with it: the
    next request is built from the earlier summary's range, not a stale one."""
    sid = chat(db, 40)
    compact(db, sid, "t0", "t25", "s1")
    for i in range(40, 50):
        db.append_turn(sid, Turn("user" if i % 2 == 0 else "assistant",
                                 [TextBlock(f"message {i}")], id=f"t{i}"))
    compact(db, sid, "t0", "t45", "s2")
    before = same_as_whole(db, sid)
    db.delete_turns_after(sid, "t44")  # s2 (and t45 … t49) go
    after = same_as_whole(db, sid)
    assert "s2" not in ids(after) and ids(after)[:2] == ["t0", "t25"]
    assert "t30" in ids(after)  # kept by s1: read again
    assert sent(after) != sent(before)


def test_a_summary_turn_made_aborted_is_not_used(db):
    """The wire rules skip an aborted summary turn: the whole history is read."""
    sid = chat(db, 20)
    compact(db, sid, "t0", "t15", "s1")
    summary = db.get_turn("s1")
    db.upsert_turn(sid, replace(summary, aborted=True))
    assert len(same_as_whole(db, sid)) == 21


def test_a_summary_turn_without_its_compaction_row_still_decides(db):
    """A summary turn saved as a plain turn (no ``compactions`` row) after a recorded
    one: the list read is the one its range gives."""
    sid = chat(db, 30)
    compact(db, sid, "t0", "t9", "s1")
    for i in range(30, 36):
        db.append_turn(sid, Turn("user" if i % 2 == 0 else "assistant",
                                 [TextBlock(f"message {i}")], id=f"t{i}"))
    db.append_turn(sid, Turn("user", [CompactSummaryBlock("made elsewhere", 30, "t0", "t31")],
                             id="s2"))
    got = same_as_whole(db, sid)
    assert ids(got) == ["t0", "t31", "t32", "t33", "t34", "t35", "s2"]


def test_an_edited_turn_is_read_as_it_is_now(db):
    sid = chat(db, 20)
    compact(db, sid, "t0", "t15", "s1")
    db.upsert_turn(sid, Turn("user", [TextBlock("changed")], id="t16"))
    got = same_as_whole(db, sid)
    assert [t.text() for t in got if t.id == "t16"] == ["changed"]


def test_stored_prefix_finds_the_turns_a_request_was_built_from(db):
    sid = chat(db, 30)
    compact(db, sid, "t0", "t25", "s1")
    then = db.context_turns(sid)
    db.append_turn(sid, Turn("user", [TextBlock("later")], id="u1"))
    whole = db.get_turns(sid)
    assert stored_prefix(then, whole) == tuple(whole[:-1])
    db.upsert_turn(sid, Turn("assistant", [TextBlock("rewritten")], id="t27"))
    assert stored_prefix(then, db.get_turns(sid)) is None  # the history changed since


def test_the_transcripts_card_counts_turns_when_one_was_taken_back(db):
    """A turn gone from the middle of the path (as a rescue or a merge can leave it: the
    store itself deletes a turn with every turn below it) leaves a gap in the path's
    positions: the card counts what is stored, not the width of its range."""
    sid = chat(db, 30)
    raw_rows(db, "UPDATE turn_links SET parent_id = 't9' WHERE turn_id = 't11'")
    # Deleted on the store's own connection (search index triggers, foreign keys on):
    # its link and path rows go with it.
    db._w(lambda c: c.execute(text("DELETE FROM turns WHERE id = 't10'")))
    assert len(db.get_turns(sid)) == 29
    compact(db, sid, "t0", "t25", "s1")
    win = db.transcript_window(sid, last=50)
    assert win.spans["s1"].stored_count == 25


async def test_a_second_compaction_resends_the_chats_last_request(env: Env, fake_provider):
    """The run builds its request from the turns since the summary; the next compaction
    still finds it is the history's start and resends it
    for the provider to read from its cache."""
    for i in range(3):
        fake_provider.script(f"reply {i}")
        await env.send(f"message {i} " + "detail " * 20)
    fake_provider.script(TAGGED)
    first = await env.runner.compact(env.sid, keep_turns=1)
    assert first.compacted
    for i in range(3, 6):
        fake_provider.script(f"reply {i}")
        await env.send(f"message {i} " + "detail " * 20)
    stored = await env.store.get_turns(env.sid)
    sent_from = env.runner.sent[env.sid].stored_turns
    assert len(sent_from) < len(stored) - 1  # built without the summarized turns
    fake_provider.script(TAGGED)
    again = await env.runner.compact(env.sid, keep_turns=1)
    assert again.compacted and again.cache_reused


@pytest.mark.parametrize("edited", ["t26", "t24", "t2"])
async def test_editing_in_a_compacted_chat_branches_at_the_turn_before_it(any_store, edited):
    """A message after the summary, the last one the summary replaced and one under its
    card: the edit's branch holds the path's turns before the edited one, then the edit.
    The summary, written below the chat's last turn, stays in the original's branch; a
    copy of it starts the edit's branch when its range (t0..t24) lies wholly before the
    edited message (t26), and only then (issue 32: a branch made after a summary keeps
    it; one cut inside its range cannot)."""
    from parley.core.chat.edit import edit_message

    store = any_store
    session = await store.create_session(title="long")
    for i in range(30):
        await store.append_turn(session.id, Turn("user" if i % 2 == 0 else "assistant",
                                                 [TextBlock(f"message {i}")], id=f"t{i}"))
    await store.record_compaction(session.id, Turn("user", [CompactSummaryBlock("s")], id="s1"),
                                  first_turn_id="t0", last_turn_id="t24", replaced_count=25)
    whole = await store.get_turns(session.id)
    at = next(i for i, t in enumerate(whole) if t.id == edited)

    new = await edit_message(store, session.id, edited, [TextBlock("edited")])

    shown = await store.get_turns(session.id)
    parent = {t.turn.id: t.parent_id for t in await store.get_tree(session.id)}
    assert parent[edited] == whole[at - 1].id
    if edited == "t26":
        copy = shown[at]
        assert copy.id != "s1" and copy.blocks[0].summary == "s"
        assert [t.text() for t in shown] == [t.text() for t in whole[:at]] + ["", "edited"]
        assert parent[copy.id] == whole[at - 1].id and parent[new.id] == copy.id
        context = await store.context_turns(session.id)
        assert [t.id for t in context] == ["t0", "t24", "t25", copy.id, new.id]
    else:
        assert [t.text() for t in shown] == [t.text() for t in whole[:at]] + ["edited"]
        assert parent[new.id] == whole[at - 1].id
        assert len(await store.list_compactions(session.id)) == 1


async def test_regenerate_in_a_compacted_chat_answers_its_last_message(env: Env, fake_provider):
    from parley.core.chat.regenerate import regenerate

    for i in range(3):
        fake_provider.script(f"reply {i}")
        await env.send(f"message {i} " + "detail " * 20)
    fake_provider.script(TAGGED)
    assert (await env.runner.compact(env.sid, keep_turns=1)).compacted
    fake_provider.script("reply 3")
    await env.send("message 3")
    fake_provider.script("again")
    new = await regenerate(env.runner, env.sid, model_ref=SONNET)
    assert new is not None and new.text() == "again"
    last = fake_provider.model_requests[-1].body["messages"]
    assert "message 3" in str(last[-1]) and "reply 3" not in str(last)
    stored = await env.store.get_turns(env.sid)
    assert [t.text() for t in stored[-2:]] == ["message 3", "again"]




# --- branches: a summary belongs to the branch it was written on ----------------------


def path(db: Store, sid: str) -> list[Turn]:
    """The path shown, read through the whole tree (``Store.get_tree``)."""
    return [t.turn for t in db.get_tree(sid, hydrate=True) if t.on_path]


def same_as_path(db: Store, sid: str) -> list[Turn]:
    """The context turns, checked against the whole path shown; returned."""
    shown = path(db, sid)
    got = db.context_turns(sid)
    assert got == since_summary(shown)
    assert sent(got) == sent(shown)
    return got


def say(db: Store, sid: str, *names: str) -> None:
    for name in names:
        db.append_turn(sid, Turn("user" if name.startswith("u") else "assistant",
                                 [TextBlock(f"message {name}")], id=name))


def test_a_branch_made_after_the_summary_keeps_it(db):
    """Compacted, then the last answer regenerated twice: every branch below the
    summary is sent from it."""
    sid = chat(db, 40)
    compact(db, sid, "t0", "t35", "s1")
    say(db, sid, "u40", "a41")
    db.branch_before(sid, "a41")  # Regenerate
    say(db, sid, "a41b")
    got = same_as_path(db, sid)
    assert ids(got) == ["t0", "t35", "t36", "t37", "t38", "t39", "s1", "u40", "a41b"]
    db.branch_before(sid, "u40")  # Edit of the message after the summary
    say(db, sid, "u40b")
    assert ids(same_as_path(db, sid))[-3:] == ["t39", "s1", "u40b"]
    assert db.messages_between(sid, "t0", "t35") == 34
    win = db.transcript_window(sid, last=10)
    assert [t.id for t in win.turns] == ["t36", "t37", "t38", "t39", "s1", "u40b"]
    assert list(win.spans) == ["s1"]


def test_a_branch_made_below_the_summarized_range_keeps_a_copy_of_the_summary(db):
    """An edit of a message kept after the summary's range (the summary was written below
    the chat's last turn, so the cut leaves it behind): the range lies wholly before the
    branch point, so the new branch starts with one copy of the summary and is sent
    from it (issue 32: a branch made after a summary keeps it)."""
    sid = chat(db, 40)
    compact(db, sid, "t0", "t35", "s1")
    say(db, sid, "u40")
    db.branch_before(sid, "t38")
    say(db, sid, "ut38")
    got = same_as_path(db, sid)
    copy = got[4]
    assert ids(got) == ["t0", "t35", "t36", "t37", copy.id, "ut38"]
    assert copy.id != "s1" and copy.blocks[0].summary == "summary s1"
    win = db.transcript_window(sid)
    assert list(win.spans) == [copy.id] and "s1" not in [t.id for t in win.turns]
    assert db.messages_between(sid, "t0", "t35") == 34
    db.show_branch(sid, "u40")  # the original branch keeps the original
    assert ids(same_as_path(db, sid))[-3:] == ["t39", "s1", "u40"]


def test_a_branch_made_before_the_summary_does_not_see_it(db):
    """An edit of a message the summary replaced (on the original branch, and on the
    branch holding a copy of the summary): neither new branch holds a summary (it
    cannot apply), so the whole path is sent; going back to the summary's branch sends
    from it again."""
    sid = chat(db, 40)
    compact(db, sid, "t0", "t35", "s1")
    say(db, sid, "u40")
    db.branch_before(sid, "t38")
    say(db, sid, "ut38")  # below a copy of s1 (the test above)
    for edited in ("t10", "t20"):
        db.show_branch(sid, "u40" if edited == "t10" else "ut38")
        db.branch_before(sid, edited)
        say(db, sid, f"u{edited}")
        got = same_as_path(db, sid)
        assert ids(got) == [f"t{i}" for i in range(int(edited[1:]))] + [f"u{edited}"]
        win = db.transcript_window(sid)
        assert win.spans == {} and "s1" not in [t.id for t in win.turns]
        assert db.compacted_turns(sid, "s1").turns == []
        with pytest.raises(TurnNotInSession):  # s1's range is no longer all on the path
            db.messages_between(sid, "t0", "t39")
    assert len(db.list_compactions(sid)) == 2  # s1 and its one copy
    db.show_branch(sid, "u40")
    assert ids(same_as_path(db, sid))[:2] == ["t0", "t35"]
    assert list(db.transcript_window(sid).spans) == ["s1"]


def test_a_compaction_is_of_the_path_shown(db):
    """A range with an end on another branch is refused; the summary is appended below
    the leaf, so the branch it was written on holds it."""
    sid = chat(db, 10)
    db.branch_before(sid, "t8")
    say(db, sid, "u8")
    with pytest.raises(TurnNotInSession):
        compact(db, sid, "t0", "t9", "s1")  # t9 is on the other branch
    compact(db, sid, "t0", "t5", "s1")
    tree = {t.turn.id: t for t in db.get_tree(sid)}
    assert tree["s1"].parent_id == "u8" and tree["s1"].on_path
    assert ids(same_as_path(db, sid)) == ["t0", "t5", "t6", "t7", "u8", "s1"]


@contextmanager
def sqlite_steps(path: Path) -> Iterator[list[int]]:
    """Count the SQLite virtual-machine steps (in hundreds) of the statements run
    meanwhile on the file at ``path``: the work a read makes the database do, whatever
    the machine's speed."""
    steps = [0]
    seen: list[sqlite3.Connection] = []

    def tick() -> int:
        steps[0] += 1
        return 0

    def note(con, cursor, *_args) -> None:
        if Path(str(con.engine.url.database)) == path and cursor.connection not in seen:
            seen.append(cursor.connection)
            cursor.connection.set_progress_handler(tick, 100)

    event.listen(Engine, "before_cursor_execute", note)
    try:
        yield steps
    finally:
        event.remove(Engine, "before_cursor_execute", note)
        for con in seen:
            con.set_progress_handler(None, 100)


def compacted_chat(db: Store, compactions: int, every: int = 10) -> str:
    """A chat compacted every ``every`` turns, ``compactions`` times, each range from
    its first turn (as re-compactions are), and six turns after the last summary."""
    sid = db.create_session().id
    n = compactions * every + 6
    for i in range(n):
        db.append_turn(sid, Turn("user" if i % 2 == 0 else "assistant",
                                 [TextBlock(f"message {i}")], id=f"{sid}-{i}"))
        if i % every == every - 1 and i < compactions * every:
            compact(db, sid, f"{sid}-0", f"{sid}-{i - 2}", f"{sid}-s{i}")
    return sid


def test_the_latest_summary_is_found_without_reading_every_compaction(sqlite_db: Store):
    """A chat compacted 200 times reads its context with about the work of one compacted
    4 times (the same turns since the summary): the latest summary is found walking the
    path back from its end (index compactions_by_summary), not by joining every
    compaction row the chat ever had to the path (that grew with the history)."""
    few, many = compacted_chat(sqlite_db, 4), compacted_chat(sqlite_db, 200)
    costs = []
    for sid in (few, many):
        assert len(same_as_whole(sqlite_db, sid)) == len(same_as_whole(sqlite_db, few))
        with sqlite_steps(sqlite_db.path) as steps:
            sqlite_db.context_turns(sid)
        costs.append(steps[0])
    assert costs[1] <= costs[0] * 1.5 + 5, costs


def test_a_file_made_before_the_summary_index_gets_it(tmp_path: Path):
    path = tmp_path / "sessions.db"
    with Store.open(path) as db:
        sid = chat(db, 12)
        compact(db, sid, "t0", "t5", "s")
    con = sqlite3.connect(path)
    con.execute("DROP INDEX compactions_by_summary")
    con.commit()
    con.close()
    assert inspect_file(path).kind is FileKind.OLDER_V4
    with Store.open(path) as db:
        assert len(same_as_whole(db, sid)) < len(db.get_turns(sid))
    assert inspect_file(path).kind is FileKind.CURRENT
    con = sqlite3.connect(path)
    names = {r[0] for r in con.execute("SELECT name FROM sqlite_master")}
    con.close()
    assert names >= S.COMPACTION_INDEX_OBJECTS

"""Editing an earlier user message adds a branch beside it; the original stays intact.

Every test runs on a sessions.db file and on a PostgreSQL database (``store`` below).
"""

from __future__ import annotations

import pytest

from parley.core.chat.edit import CannotEditTurn, EmptyEdit, edit_message
from parley.core.chat.run import ChatRunner
from parley.core.content import ImageBlock, TextBlock, ToolResultBlock, ToolUseBlock, Turn
from parley.core.keys import FileBackend, KeyStore
from parley.core.providers.hub import ProviderHub
from parley.core.providers.retry import RetryPolicy
from parley.core.store import turns as turns_repo
from parley.core.store.async_store import AsyncStore
from parley.core.store.errors import DiskFull, SessionNotFound, TurnNotInSession
from tests.fakes.validation import validate_anthropic

MODEL = "anthropic:claude-sonnet-4-6"


@pytest.fixture
def store(any_store: AsyncStore) -> AsyncStore:
    """The shared ``store`` (tests/core/conftest.py), once on each backend."""
    return any_store


async def chat(store, *texts: str, title: str | None = "Trip") -> tuple[str, list[Turn]]:
    """A session alternating user / assistant turns with these texts."""
    session = await store.create_session(title=title, model=MODEL, system_prompt="Be brief.")
    for i, text in enumerate(texts):
        role = "user" if i % 2 == 0 else "assistant"
        await store.append_turn(session.id, Turn(role, [TextBlock(text)]))  # type: ignore[arg-type]
    return session.id, await store.get_turns(session.id)


def texts(turns: list[Turn]) -> list[str]:
    return [t.text() for t in turns]


async def tree_of(store, sid: str) -> list[tuple[str, str | None, bool]]:
    """``(text, parent's text, on the path)`` of every turn of the session."""
    tree = await store.get_tree(sid)
    text_of = {t.turn.id: t.turn.text() for t in tree}
    return [(t.turn.text(), text_of.get(t.parent_id or ""), t.on_path) for t in tree]


async def test_editing_a_middle_message_adds_a_branch_and_keeps_the_original(store):
    sid, before = await chat(store, "Plan Lisbon", "Day 1…", "Add Porto", "Day 4…", "Thanks")
    sessions_before = [s.id for s in await store.list_sessions()]

    edited = await edit_message(store, sid, before[2].id, [TextBlock("Add Sintra")])

    assert edited.role == "user" and edited.text() == "Add Sintra"
    assert texts(await store.get_turns(sid)) == ["Plan Lisbon", "Day 1…", "Add Sintra"]
    assert await tree_of(store, sid) == [
        ("Plan Lisbon", None, True), ("Day 1…", "Plan Lisbon", True),
        ("Add Porto", "Day 1…", False), ("Day 4…", "Add Porto", False),
        ("Thanks", "Day 4…", False), ("Add Sintra", "Day 1…", True),
    ]  # nothing copied, nothing rewritten
    assert [t.id for t in (await store.get_turns(sid))[:2]] == [t.id for t in before[:2]]
    assert [s.id for s in await store.list_sessions()] == sessions_before  # no session made
    assert await store.list_forks(sid) == []
    session = await store.get_session(sid)
    assert session.turn_count == 3 and session.title == "Trip"
    point = (await store.branches(sid)).points[edited.id]
    assert (point.index, point.total, point.turn_ids) == (2, 2, (before[2].id, edited.id))
    await store.show_branch(sid, before[2].id)  # the original, as it was
    assert [t.id for t in await store.get_turns(sid)] == [t.id for t in before]


async def test_editing_the_first_message_adds_a_first_message(store):
    sid, before = await chat(store, "Plan Lisbon", "Day 1…", title=None)

    edited = await edit_message(store, sid, before[0].id, [TextBlock("Plan Madrid")])

    assert texts(await store.get_turns(sid)) == ["Plan Madrid"]
    assert (await tree_of(store, sid))[-1] == ("Plan Madrid", None, True)
    assert (await store.branches(sid)).points[edited.id].turn_ids == (before[0].id, edited.id)
    hits = await store.search("Madrid")
    assert [h.turn_id for h in hits] == [edited.id]  # the search index follows the edit
    assert [h.turn_id for h in await store.search("Lisbon")] == [before[0].id]  # once


@pytest.mark.parametrize("reply", ["aborted", "none"])
async def test_last_message_with_a_failed_or_no_reply_is_edited_the_same_way(store, reply):
    sid, _ = await chat(store, "Plan Lisbon", "Day 1…", "Add Porto")
    if reply == "aborted":
        await store.append_turn(sid, Turn("assistant", [TextBlock("Por")], aborted=True))
    before = await store.get_turns(sid)

    await edit_message(store, sid, before[2].id, [TextBlock("Add Faro")])

    assert texts(await store.get_turns(sid)) == ["Plan Lisbon", "Day 1…", "Add Faro"]
    assert len(await store.get_tree(sid)) == len(before) + 1  # the original kept


async def test_edit_then_retry_sends_the_edit_in_its_branch(store, tmp_path, fake_provider):
    keys = KeyStore(backend=FileBackend(tmp_path / "keys.json"), environ={})
    hub = ProviderHub(store, keys=keys, retry=RetryPolicy(max_retries=0), environ={})
    await hub.load()
    await hub.add_provider("anthropic", base_url=fake_provider.anthropic_base_url,
                           api_key="sk-test", default_model="claude-sonnet-4-6")
    runner = ChatRunner(store, hub, journal_interval_s=0.02, emit_interval_s=0.0)
    try:
        sid, before = await chat(store, "Plan Lisbon", "Day 1…", "Add Porto", "Day 4…")
        edited = await edit_message(store, sid, before[2].id, [TextBlock("Add Sintra")])
        fake_provider.script("Sintra is a day trip.")
        reply = await runner.retry(sid, model_ref=MODEL)
    finally:
        await hub.aclose()

    assert reply is not None and reply.text() == "Sintra is a day trip."
    body = fake_provider.model_requests[-1].body
    assert validate_anthropic(body) is None
    assert body["messages"][-1]["content"][0]["text"] == "Add Sintra"
    assert len(body["messages"]) == 3  # the original's branch is not sent
    assert texts(await store.get_turns(sid)) == [
        "Plan Lisbon", "Day 1…", "Add Sintra", "Sintra is a day trip."]
    assert (await tree_of(store, sid))[-1] == ("Sintra is a day trip.", "Add Sintra", True)
    await store.show_branch(sid, before[2].id)
    assert texts(await store.get_turns(sid)) == texts(before)
    assert (await store.branches(sid)).points[before[2].id].turn_ids == (
        before[2].id, edited.id)


async def test_edit_keeps_images_and_an_edit_can_be_edited_again(store):
    sid, before = await chat(store, "Look", "Nice", "Again", "Sure")
    image = ImageBlock("image/png", "iVBORw0KGgo=")
    edited = await edit_message(store, sid, before[2].id, [TextBlock("Look at this"), image])
    (last,) = await store.hydrate((await store.get_turns(sid))[-1:])
    assert last.id == edited.id and [b.type for b in last.blocks] == ["text", "image"]
    assert last.blocks[0] == TextBlock("Look at this") and last.blocks[1].data == image.data

    again = await edit_message(store, sid, edited.id, [TextBlock("Third")])
    point = (await store.branches(sid)).points[again.id]
    assert (point.index, point.total) == (3, 3)
    assert point.turn_ids == (before[2].id, edited.id, again.id)


async def test_tool_results_of_the_edited_turn_are_kept(store):
    session = await store.create_session(title="Tools")
    use = ToolUseBlock("t1", "clock", {})
    result = ToolResultBlock("t1", (TextBlock("12:00"),))
    for turn in (
        Turn("user", [TextBlock("Time?")]),
        Turn("assistant", [use]),
        Turn("user", [result, TextBlock("and the date?")]),
    ):
        await store.append_turn(session.id, turn)
    turns = await store.get_turns(session.id)
    await edit_message(store, session.id, turns[2].id, [TextBlock("and the year?")])
    assert (await store.get_turns(session.id))[-1].blocks == [result, TextBlock("and the year?")]


async def test_what_cannot_be_edited(store):
    session = await store.create_session(title="Tools")
    for turn in (
        Turn("user", [TextBlock("Time?")]),
        Turn("assistant", [ToolUseBlock("t1", "clock", {})]),
        Turn("user", [ToolResultBlock("t1", (TextBlock("12:00"),))]),
    ):
        await store.append_turn(session.id, turn)
    turns = await store.get_turns(session.id)
    with pytest.raises(CannotEditTurn):
        await edit_message(store, session.id, turns[1].id, [TextBlock("x")])  # a reply
    with pytest.raises(CannotEditTurn):
        await edit_message(store, session.id, turns[2].id, [TextBlock("x")])  # tool results
    with pytest.raises(EmptyEdit):
        await edit_message(store, session.id, turns[0].id, [TextBlock("  \n ")])
    with pytest.raises(TurnNotInSession):
        await edit_message(store, session.id, "no-such-turn", [TextBlock("x")])
    with pytest.raises(SessionNotFound):
        await edit_message(store, "no-such-session", turns[0].id, [TextBlock("x")])
    assert len(await store.get_tree(session.id)) == 3  # nothing was added


async def test_a_failed_write_changes_nothing(store, monkeypatch):
    sid, before = await chat(store, "Plan Lisbon", "Day 1…", "Add Porto")

    def disk_full(*_args, **_kwargs):
        raise DiskFull(store.path)

    # The edited turn's insert fails after the path was cut, in the same transaction.
    monkeypatch.setattr(turns_repo, "append", disk_full)
    with pytest.raises(DiskFull):
        await edit_message(store, sid, before[2].id, [TextBlock("Add Faro")])
    assert texts(await store.get_turns(sid)) == texts(before)
    assert len(await store.get_tree(sid)) == len(before)
    assert (await store.branches(sid)).points == {}

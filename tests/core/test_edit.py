"""Editing an earlier user message forks; the original session stays intact.

Every test runs on a sessions.db file and on a PostgreSQL database (``store`` below).
"""

from __future__ import annotations

import pytest

from parley.core.chat.edit import CannotEditTurn, EmptyEdit, edit_and_fork, edited_title
from parley.core.chat.run import ChatRunner
from parley.core.content import ImageBlock, TextBlock, ToolResultBlock, ToolUseBlock, Turn
from parley.core.keys import FileBackend, KeyStore
from parley.core.providers.hub import ProviderHub
from parley.core.providers.retry import RetryPolicy
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


async def test_editing_a_middle_message_forks_and_keeps_the_original(store):
    sid, before = await chat(store, "Plan Lisbon", "Day 1…", "Add Porto", "Day 4…", "Thanks")

    fork = await edit_and_fork(store, sid, before[2].id, [TextBlock("Add Sintra")])

    assert texts(await store.get_turns(sid)) == texts(before)  # untouched
    assert [t.id for t in await store.get_turns(sid)] == [t.id for t in before]
    assert fork.parent_session_id == sid and fork.forked_from_turn_id == before[1].id
    assert fork.title == "Trip (edited)"
    assert (fork.model, fork.system_prompt) == (MODEL, "Be brief.")
    forked = await store.get_turns(fork.id)
    assert texts(forked) == ["Plan Lisbon", "Day 1…", "Add Sintra"]
    assert fork.turn_count == 3 and forked[-1].role == "user"
    assert [s.id for s in await store.list_forks(sid)] == [fork.id]


async def test_editing_the_first_message_forks_with_only_the_edit(store):
    sid, before = await chat(store, "Plan Lisbon", "Day 1…", title=None)

    fork = await edit_and_fork(store, sid, before[0].id, [TextBlock("Plan Madrid")])

    assert texts(await store.get_turns(sid)) == ["Plan Lisbon", "Day 1…"]
    assert texts(await store.get_turns(fork.id)) == ["Plan Madrid"]
    assert fork.parent_session_id == sid and fork.forked_from_turn_id == before[0].id
    assert fork.title == "Untitled (edited)"
    hits = await store.search("Madrid")
    assert [h.session_id for h in hits] == [fork.id]  # the search index follows the edit
    assert not [h for h in await store.search("Lisbon") if h.session_id == fork.id]


@pytest.mark.parametrize("reply", ["aborted", "none"])
async def test_last_message_with_a_failed_or_no_reply_still_forks(store, reply):
    sid, _ = await chat(store, "Plan Lisbon", "Day 1…", "Add Porto")
    if reply == "aborted":
        await store.append_turn(sid, Turn("assistant", [TextBlock("Por")], aborted=True))
    before = await store.get_turns(sid)

    fork = await edit_and_fork(store, sid, before[2].id, [TextBlock("Add Faro")])

    assert texts(await store.get_turns(sid)) == texts(before)
    assert texts(await store.get_turns(fork.id)) == ["Plan Lisbon", "Day 1…", "Add Faro"]


async def test_edit_then_retry_sends_the_edit_in_the_fork(store, tmp_path, fake_provider):
    keys = KeyStore(backend=FileBackend(tmp_path / "keys.json"), environ={})
    hub = ProviderHub(store, keys=keys, retry=RetryPolicy(max_retries=0), environ={})
    await hub.load()
    await hub.add_provider("anthropic", base_url=fake_provider.anthropic_base_url,
                           api_key="sk-test", default_model="claude-sonnet-4-6")
    runner = ChatRunner(store, hub, journal_interval_s=0.02, emit_interval_s=0.0)
    try:
        sid, before = await chat(store, "Plan Lisbon", "Day 1…", "Add Porto", "Day 4…")
        fork = await edit_and_fork(store, sid, before[2].id, [TextBlock("Add Sintra")])
        fake_provider.script("Sintra is a day trip.")
        reply = await runner.retry(fork.id, model_ref=MODEL)
    finally:
        await hub.aclose()

    assert reply is not None and reply.text() == "Sintra is a day trip."
    body = fake_provider.model_requests[-1].body
    assert validate_anthropic(body) is None
    assert body["messages"][-1]["content"][0]["text"] == "Add Sintra"
    assert len(body["messages"]) == 3
    assert texts(await store.get_turns(sid)) == texts(before)


async def test_edit_keeps_images_and_an_edited_title_is_not_suffixed_twice(store):
    sid, before = await chat(store, "Look", "Nice", "Again", "Sure")
    image = ImageBlock("image/png", "iVBORw0KGgo=")
    fork = await edit_and_fork(store, sid, before[2].id, [TextBlock("Look at this"), image])
    (last,) = await store.hydrate((await store.get_turns(fork.id))[-1:])
    assert [b.type for b in last.blocks] == ["text", "image"]
    assert last.blocks[0] == TextBlock("Look at this") and last.blocks[1].data == image.data

    in_fork = await store.get_turns(fork.id)
    again = await edit_and_fork(store, fork.id, in_fork[2].id, [TextBlock("Third")])
    assert again.title == "Trip (edited)" and again.parent_session_id == fork.id
    assert edited_title("Notes (edited)") == "Notes (edited)"
    assert edited_title("  ") == "Untitled (edited)"


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
    fork = await edit_and_fork(store, session.id, turns[2].id, [TextBlock("and the year?")])
    assert (await store.get_turns(fork.id))[-1].blocks == [result, TextBlock("and the year?")]


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
        await edit_and_fork(store, session.id, turns[1].id, [TextBlock("x")])  # a reply
    with pytest.raises(CannotEditTurn):
        await edit_and_fork(store, session.id, turns[2].id, [TextBlock("x")])  # tool results
    with pytest.raises(EmptyEdit):
        await edit_and_fork(store, session.id, turns[0].id, [TextBlock("  \n ")])
    with pytest.raises(TurnNotInSession):
        await edit_and_fork(store, session.id, "no-such-turn", [TextBlock("x")])
    with pytest.raises(SessionNotFound):
        await edit_and_fork(store, "no-such-session", turns[0].id, [TextBlock("x")])
    assert await store.list_forks(session.id) == []


class FailingStore:
    """The real store, whose disk fills up when the edited turn is written (fault injection)."""

    def __init__(self, store) -> None:
        self._store = store

    def __getattr__(self, name):
        return getattr(self._store, name)

    async def append_turn(self, session_id, turn):
        raise DiskFull(self._store.path)


async def test_a_failed_write_leaves_no_half_made_fork(store):
    sid, before = await chat(store, "Plan Lisbon", "Day 1…", "Add Porto")
    with pytest.raises(DiskFull):
        await edit_and_fork(FailingStore(store), sid, before[2].id, [TextBlock("Add Faro")])
    assert await store.list_forks(sid) == []
    assert texts(await store.get_turns(sid)) == texts(before)

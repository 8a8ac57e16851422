"""Parley's tools on a real store: memory, skills, session search, the frozen prompt.

Every test runs on a sessions.db file and on a PostgreSQL database (``store`` below).
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from parley.core.content import CompactSummaryBlock, TextBlock, ToolResultBlock, ToolUseBlock, Turn
from parley.core.providers.base import ToolSpec
from parley.core.providers.errors import BadRequest, ServerError
from parley.core.store.async_store import AsyncStore
from parley.core.tools import ToolContext, ToolError, ToolExecutor
from parley.core.tools.loop import limit_results, max_rounds, rejects_tools, wants_tools
from parley.core.tools.memory import (
    DEFAULT_LIMIT_TOKENS,
    InvalidMemoryLimit,
    MemoryStore,
    MemoryTooLong,
)
from parley.core.tools.registry import check_input, run_tool
from parley.core.tools.skills import (
    BUNDLED_DIR,
    SkillLibrary,
    parse_skill,
    skill_states,
    stub_unloaded,
)
from parley.core.tools.system_prompt import MEMORY_HEADING, SKILLS_HEADING


@pytest.fixture
def store(any_store: AsyncStore) -> AsyncStore:
    """The shared ``store`` (tests/core/conftest.py), once on each backend."""
    return any_store


@pytest.fixture
def skills_dir(tmp_path) -> Path:
    folder = tmp_path / "skills"
    folder.mkdir()
    (folder / "Haiku Style.md").write_text(
        "---\nname: Haiku\ndescription: Write haiku in 5-7-5.\n---\nCount syllables: 5, 7, 5.\n"
    )
    (folder / "plain.md").write_text("# Plain notes\n\nA skill with no front matter.\n\nBody.\n")
    (folder / "empty.md").write_text("---\nname: Nothing\n---\n\n")
    return folder


def call(name: str, id: str = "call_1", **input) -> ToolUseBlock:
    return ToolUseBlock(id, name, input)


def result_text(block: ToolResultBlock) -> str:
    return "".join(p.text for p in block.content if isinstance(p, TextBlock))


def ctx(store, session_id="s", space_id="sp", turns=()) -> ToolContext:
    return ToolContext(store, session_id, space_id, list(turns))


# --- running a call ------------------------------------------------------------


class _Tool:
    def __init__(self, behaviour):
        self.behaviour = behaviour
        self.spec = ToolSpec(
            "t", "test", {"type": "object", "properties": {"n": {"type": "integer"}},
                          "required": ["n"], "additionalProperties": False},
        )

    async def run(self, input, ctx):
        return await self.behaviour(input)


async def test_tool_failures_become_error_results_never_exceptions():
    async def boom(_input):
        raise RuntimeError("kaput")

    async def refuse(_input):
        raise ToolError("cannot do that; try X")

    async def slow(_input):
        await asyncio.sleep(5)

    async def ok(input):
        return f"n={input['n']}"

    c = ctx(None)
    assert result_text(await run_tool({"t": _Tool(ok)}, call("t", n=3), c)) == "n=3"
    unknown = await run_tool({"t": _Tool(ok)}, call("nope", n=1), c)
    assert unknown.is_error and "no tool called 'nope'" in result_text(unknown)
    assert "t" in result_text(unknown)
    bad = await run_tool({"t": _Tool(ok)}, call("t", n="3"), c)
    assert bad.is_error and "input.n must be of type integer" in result_text(bad)
    missing = await run_tool({"t": _Tool(ok)}, call("t"), c)
    assert missing.is_error and "input.n is required" in result_text(missing)
    extra = await run_tool({"t": _Tool(ok)}, call("t", n=1, x=2), c)
    assert extra.is_error and "input.x is not an argument" in result_text(extra)
    refused = await run_tool({"t": _Tool(refuse)}, call("t", n=1), c)
    assert refused.is_error and result_text(refused) == "cannot do that; try X"
    crashed = await run_tool({"t": _Tool(boom)}, call("t", n=1), c)
    assert crashed.is_error and "RuntimeError: kaput" in result_text(crashed)
    timed_out = await run_tool({"t": _Tool(slow)}, call("t", n=1), c, timeout_s=0.05)
    assert timed_out.is_error and "did not finish" in result_text(timed_out)
    assert all(r.tool_use_id == "call_1" for r in (unknown, bad, refused, crashed, timed_out))


async def test_stopping_a_run_cancels_the_tool_call():
    async def slow(_input):
        await asyncio.sleep(5)

    task = asyncio.ensure_future(run_tool({"t": _Tool(slow)}, call("t", n=1), ctx(None)))
    await asyncio.sleep(0.01)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


def test_check_input_covers_enum_bool_and_length():
    schema = {"type": "object", "properties": {
        "mode": {"type": "string", "enum": ["a", "b"]},
        "n": {"type": "integer"},
        "q": {"type": "string", "maxLength": 3},
    }}
    assert check_input(schema, {"mode": "a", "n": 2, "q": "abc"}) is None
    assert "one of 'a', 'b'" in check_input(schema, {"mode": "c"})
    assert "type integer" in check_input(schema, {"n": True})
    assert "at most 3" in check_input(schema, {"q": "abcd"})
    assert "type object" in check_input(schema, [])


# --- memory -----------------------------------------------------------------------


async def test_memory_append_replace_and_per_space(store):
    memories = MemoryStore(store)
    work = await store.create_space("Work")
    home = await store.create_space("Home")
    assert (await memories.get(work.id)).text == ""
    await memories.write(work.id, "User's name is Ada.", "append")
    await memories.write(work.id, "Prefers metric units.", "append")
    assert (await memories.get(work.id)).text == "User's name is Ada.\nPrefers metric units."
    assert (await memories.get(home.id)).text == ""
    await memories.write(work.id, "Only this.", "replace")
    memory = await memories.get(work.id)
    assert memory.text == "Only this." and memory.limit == DEFAULT_LIMIT_TOKENS
    assert memory.updated_at > 0


async def test_memory_over_its_limit_is_refused_and_unchanged(store):
    memories = MemoryStore(store)
    space = await store.create_space("Work")
    await memories.set(space.id, "keep me", limit=100)
    with pytest.raises(MemoryTooLong) as err:
        await memories.write(space.id, "word " * 200, "append")
    assert err.value.limit == 100 and err.value.tokens > 100
    assert "100 tokens" in err.value.message
    assert (await memories.get(space.id)).text == "keep me"
    with pytest.raises(InvalidMemoryLimit):
        await memories.set(space.id, "x", limit=5)
    assert (await memories.get(space.id)).limit == 100


async def test_set_context_tool_reports_use_and_refuses_over_limit(store):
    tools = ToolExecutor(store, library=SkillLibrary(user_dir=Path("/nonexistent")))
    space = await store.create_space("Work")
    c = ctx(store, space_id=space.id)
    ok = await tools.run(call("set_context", content="Likes tea.", mode="append"), c)
    assert not ok.is_error and "Likes tea." in result_text(ok)
    assert f"of {DEFAULT_LIMIT_TOKENS:,} tokens" in result_text(ok)
    big = await tools.run(call("set_context", content="tea " * 2000), c)
    assert big.is_error
    assert "limit" in result_text(big) and f"{DEFAULT_LIMIT_TOKENS:,} tokens" in result_text(big)
    assert (await tools.memories.get(space.id)).text == "Likes tea."


# --- skills -----------------------------------------------------------------------


def test_parse_skill_front_matter_and_fallbacks(skills_dir):
    haiku = parse_skill(skills_dir / "Haiku Style.md", (skills_dir / "Haiku Style.md").read_text())
    assert (haiku.key, haiku.name, haiku.description) == (
        "haiku-style", "Haiku", "Write haiku in 5-7-5."
    )
    assert haiku.body == "Count syllables: 5, 7, 5."
    plain = parse_skill(skills_dir / "plain.md", (skills_dir / "plain.md").read_text())
    assert (plain.name, plain.description) == ("Plain notes", "A skill with no front matter.")
    assert parse_skill(skills_dir / "empty.md", (skills_dir / "empty.md").read_text()) is None


def test_library_lists_bundled_and_user_skills_user_wins(skills_dir):
    bundled = SkillLibrary(user_dir=skills_dir / "none").skills()
    assert {"commit-messages", "markdown-tables"} <= {s.key for s in bundled}
    assert all(s.bundled and s.description and s.body for s in bundled)
    assert all(s.tokens < 1000 for s in bundled)  # bundled skills stay small
    (skills_dir / "markdown-tables.md").write_text("My own table rules.\n")
    lib = SkillLibrary(user_dir=skills_dir)
    keys = [s.key for s in lib.skills()]
    assert keys == sorted(keys) and "haiku-style" in keys and "empty" not in keys
    mine = lib.get("Markdown-Tables")
    assert mine is not None and not mine.bundled and mine.body == "My own table rules."


def test_library_default_folder_is_in_the_data_folder(_isolated_home):
    lib = SkillLibrary()
    assert lib.folder() == _isolated_home / "skills"
    (_isolated_home / "skills").mkdir()
    (_isolated_home / "skills" / "mine.md").write_text("# Mine\nDo it my way.\n")
    assert lib.get("mine") is not None
    assert BUNDLED_DIR.is_dir()


def _load_round(key: str, id: str, text: str = "body", error: bool = False) -> list[Turn]:
    return [
        Turn("assistant", [ToolUseBlock(id, "load_context", {"key": key})]),
        Turn("user", [ToolResultBlock(id, (TextBlock(text),), is_error=error)]),
    ]


def _unload_round(key: str, id: str) -> list[Turn]:
    return [
        Turn("assistant", [ToolUseBlock(id, "unload_context", {"key": key})]),
        Turn("user", [ToolResultBlock(id, (TextBlock("Unloaded"),))]),
    ]


def test_skill_states_and_stub_follow_load_and_unload():
    turns = [
        Turn("user", [TextBlock("hi")]),
        *_load_round("a", "l1", "A " * 300),
        *_load_round("b", "l2"),
        *_load_round("c", "l3", error=True),
        *_unload_round("a", "u1"),
        *_load_round("a", "l4", "A again"),
    ]
    states = skill_states(turns)
    assert states.loaded == {"b": ["l2"], "a": ["l4"]}
    assert states.unloaded == {"l1"}
    sent = stub_unloaded(turns)
    assert [t.id for t in sent] == [t.id for t in turns]
    stubbed = sent[2].blocks[0]
    assert isinstance(stubbed, ToolResultBlock) and stubbed.tool_use_id == "l1"
    assert "'a' was unloaded" in result_text(stubbed) and "tokens" in result_text(stubbed)
    assert sent[4] is turns[4] and result_text(sent[10].blocks[0]) == "A again"
    assert result_text(turns[2].blocks[0]).startswith("A A")  # stored turns untouched
    assert stub_unloaded(sent) == sent  # idempotent
    assert stub_unloaded(turns[:4]) is None  # nothing unloaded: sent as stored


async def test_load_and_unload_tools(store, skills_dir):
    tools = ToolExecutor(store, library=SkillLibrary(user_dir=skills_dir))
    loaded = await tools.run(call("load_context", key="haiku-style"), ctx(store))
    assert not loaded.is_error and "Count syllables" in result_text(loaded)
    unknown = await tools.run(call("load_context", key="nope"), ctx(store))
    assert unknown.is_error and "haiku-style" in result_text(unknown)
    not_loaded = await tools.run(call("unload_context", key="haiku-style"), ctx(store))
    assert not_loaded.is_error and "not loaded" in result_text(not_loaded)
    history = _load_round("haiku-style", "l1")
    again = await tools.run(call("load_context", key="haiku-style"), ctx(store, turns=history))
    assert not again.is_error and "already loaded" in result_text(again)


async def test_a_round_sees_its_own_earlier_results(store, skills_dir):
    tools = ToolExecutor(store, library=SkillLibrary(user_dir=skills_dir))
    session = await store.create_session()
    asked = Turn("assistant", [
        ToolUseBlock("a", "load_context", {"key": "plain"}),
        ToolUseBlock("b", "unload_context", {"key": "plain"}),
        ToolUseBlock("c", "no_such_tool", {}),
    ])
    turn = await tools.run_round(
        [b for b in asked.blocks if isinstance(b, ToolUseBlock)],
        ToolContext(store, session.id, session.space_id, [asked]),
    )
    assert turn.role == "user"
    assert [b.tool_use_id for b in turn.blocks] == ["a", "b", "c"]
    assert [b.is_error for b in turn.blocks] == [False, False, True]
    assert tools.active_skills(session.id) == []


# --- session search --------------------------------------------------------------


async def test_session_search_finds_other_sessions_with_titles_and_dates(store):
    tools = ToolExecutor(store, library=SkillLibrary(user_dir=Path("/nonexistent")))
    here = await store.create_session(title="Current chat")
    await store.append_turn(here.id, Turn("user", [TextBlock("zebra crossing here")]))
    other = await store.create_session(title="Trip to Kenya")
    await store.append_turn(other.id, Turn("user", [TextBlock("We saw a zebra at dawn.")]))
    for i in range(15):
        s = await store.create_session(title=f"Zoo {i}")
        await store.append_turn(s.id, Turn("user", [TextBlock(f"zebra number {i}")]))
    result = await tools.run(call("session_search", query="zebra"), ctx(store, here.id))
    text = result_text(result)
    assert not result.is_error
    assert text.count("\n   ") == 10  # top 10
    assert "Current chat" not in text and "**zebra**" in text
    assert "UTC" in text and "\x02" not in text
    kenya = await tools.run(call("session_search", query="zebra dawn"), ctx(store, here.id))
    assert '"Trip to Kenya"' in result_text(kenya) and other.id in result_text(kenya)
    mine = await tools.run(
        call("session_search", query="crossing", include_current=True), ctx(store, here.id)
    )
    assert "Current chat" in result_text(mine)
    none = await tools.run(call("session_search", query="okapi"), ctx(store, here.id))
    assert not none.is_error and "No past conversation" in result_text(none)
    bad = await tools.run(call("session_search", query="!!!"), ctx(store, here.id))
    assert bad.is_error and "search" in result_text(bad).lower()


# --- the frozen system prompt ------------------------------------------------------


async def test_frozen_prompt_is_byte_identical_until_refreshed(store, skills_dir):
    tools = ToolExecutor(store, library=SkillLibrary(user_dir=skills_dir))
    space = await store.create_space("Work")
    session = await store.create_session(space_id=space.id, system_prompt="Be brief.")
    await tools.memories.set(space.id, "Name: Ada.")
    turns = [Turn("user", [TextBlock("hi")])]
    first = await tools.system_prompt(session, turns, tools_on=True)
    assert first.startswith("Be brief.\n\n" + MEMORY_HEADING)
    assert "Name: Ada." in first and '"Work"' in first and SKILLS_HEADING in first
    assert "- haiku-style: Write haiku in 5-7-5." in first

    await tools.memories.write(space.id, "Lives in Lisbon.", "append")
    (skills_dir / "new.md").write_text("# New\nA new skill.\n")
    turns.append(Turn("assistant", [TextBlock("hello")]))
    assert await tools.system_prompt(session, turns, tools_on=True) == first

    other = await store.create_session(space_id=space.id)  # a new session sees the new memory
    assert "Lives in Lisbon." in await tools.system_prompt(other, [], tools_on=True)

    turns.append(Turn("user", [CompactSummaryBlock("summary", 2, turns[0].id, turns[1].id)]))
    after_compaction = await tools.system_prompt(session, turns, tools_on=True)
    assert "Lives in Lisbon." in after_compaction and "- new: A new skill." in after_compaction

    await tools.memories.write(space.id, "Has a cat.", "append")
    assert await tools.system_prompt(session, turns, tools_on=True) == after_compaction
    await tools.prompts.refresh(session.id)
    assert "Has a cat." in await tools.system_prompt(session, turns, tools_on=True)


async def test_a_fork_starts_with_its_parents_frozen_prompt(store, skills_dir):
    tools = ToolExecutor(store, library=SkillLibrary(user_dir=skills_dir))
    session = await store.create_session(system_prompt="Be brief.")
    await tools.memories.set(session.space_id, "Old note.")
    turn = await store.append_turn(session.id, Turn("user", [TextBlock("hi")]))
    parent = await tools.system_prompt(session, [turn], tools_on=True)
    await tools.memories.set(session.space_id, "New note.")
    fork = await store.fork(session.id, turn.id)
    assert await tools.system_prompt(fork, await store.get_turns(fork.id), tools_on=True) == parent
    other = await store.create_session(system_prompt="Be brief.")
    assert "New note." in await tools.system_prompt(other, [], tools_on=True)
    changed = await store.fork(session.id, turn.id)
    changed = await store.set_session_system_prompt(changed.id, "Be verbose.")
    assert "New note." in await tools.system_prompt(changed, [], tools_on=True)


async def test_prompt_without_tools_shows_only_a_nonempty_memory(store, skills_dir):
    tools = ToolExecutor(store, library=SkillLibrary(user_dir=skills_dir))
    session = await store.create_session()
    assert await tools.system_prompt(session, [], tools_on=False) is None
    await tools.memories.set(session.space_id, "Note.")
    await tools.prompts.refresh(session.id)
    text = await tools.system_prompt(session, [], tools_on=False)
    assert "Note." in text and SKILLS_HEADING not in text and "set_context" not in text
    # switching tools on is a change the user made: the prompt is rendered again
    assert SKILLS_HEADING in await tools.system_prompt(session, [], tools_on=True)


# --- the switch and the loop's rules ---------------------------------------------------


async def test_tools_switch_defaults_by_provider_and_remembers_rejections(store):
    tools = ToolExecutor(store)
    sp = (await store.create_space("Local")).id
    assert await tools.enabled(sp, "anthropic", "anthropic:m")
    assert await tools.enabled(sp, "openai", "openai:m")
    assert not await tools.enabled(sp, "openai_compatible", "ollama:m")
    await tools.set_enabled(sp, True)
    assert await tools.enabled(sp, "openai_compatible", "ollama:m")
    await tools.mark_unsupported("ollama:m")
    assert not await tools.enabled(sp, "openai_compatible", "ollama:m")
    assert await tools.enabled(sp, "openai_compatible", "ollama:other")
    await tools.set_enabled(sp, True)  # switching on again tries the model again
    assert await tools.enabled(sp, "openai_compatible", "ollama:m")
    await tools.set_enabled(sp, False)
    assert not await tools.enabled(sp, "anthropic", "anthropic:m")
    names = [s.name for s in tools.specs()]
    assert names == ["set_context", "load_context", "unload_context", "session_search"]


def test_rejects_tools_only_for_compatible_servers_saying_so():
    said = [
        "registry.ollama.ai/library/gemma:2b does not support tools",
        "tools param requires --jinja flag",
        '"auto" tool choice requires --enable-auto-tool-choice',
    ]
    for text in said:
        assert rejects_tools(BadRequest("Ollama", text), "openai_compatible")
    assert rejects_tools(ServerError("llama.cpp", 500, said[1]), "openai_compatible")
    assert not rejects_tools(BadRequest("Anthropic", said[0]), "anthropic")
    pairing = "tool_use ids were found without tool_result blocks immediately after"
    assert not rejects_tools(BadRequest("vLLM", pairing), "openai_compatible")
    said_pairing = "messages: 'tool_calls' must be followed by tool messages"
    assert not rejects_tools(BadRequest("vLLM", said_pairing), "openai_compatible")


async def test_max_rounds_setting_and_limit_results(store):
    assert await max_rounds(store) == 8
    await store.set_setting("tools.max_rounds", 3)
    assert await max_rounds(store) == 3
    await store.set_setting("tools.max_rounds", 0)
    assert await max_rounds(store) == 8
    calls = [call("x", "a"), call("y", "b")]
    turn = limit_results(calls, 3)
    assert [b.tool_use_id for b in turn.blocks] == ["a", "b"]
    assert all(b.is_error and "3 rounds" in result_text(b) for b in turn.blocks)
    asked = Turn("assistant", [TextBlock("hm"), *calls])
    assert wants_tools(asked, "tool_use") and not wants_tools(asked, "max_tokens")
    assert not wants_tools(Turn("assistant", [TextBlock("done")]), "tool_use")

"""The tool loop of a run: the fake provider calls Parley's tools over real HTTP.

Every test runs on a sessions.db file and on a PostgreSQL database (``env`` below).
"""

from __future__ import annotations

import asyncio
import json

import pytest

from parley.core.chat.run import ChatRunner, RunCancelled, RunFinished
from parley.core.content import TextBlock, ToolResultBlock, ToolUseBlock, Turn
from parley.core.events import RequestEnded
from parley.core.providers.base import ToolSpec
from parley.core.tools.loop import (
    ToolResultsSaved,
    ToolRoundLimit,
    ToolStepFinished,
    ToolsUnavailable,
)
from parley.core.wire import INTERRUPTED_RESULT
from tests.core.tool_support import (
    GPT,
    SKILL_BODY,
    SONNET,
    Env,
    say_tools,
    system_text,
    tool_names,
    tool_results,
    validate,
)

LOCAL = "local:llama3.2"


@pytest.fixture
def env(tools_env: Env) -> Env:
    """The runner with tools (tests/core/conftest.py), once on each backend."""
    return tools_env


# --- memory ------------------------------------------------------------------------


@pytest.mark.parametrize("model", [SONNET, GPT])
async def test_memory_persists_across_sessions_of_a_space_and_respects_its_limit(env, model):
    first = await env.session("Work")
    env.fake.script("", tool_calls=[{"name": "set_context", "input": {
        "content": "The user's cat is called Miso.", "mode": "append"}}])
    env.fake.script("Noted: Miso.")
    events: list = []
    reply = await env.send(first, "Remember my cat is Miso.", model, events)

    assert reply is not None and reply.text() == "Noted: Miso."
    stored = await env.store.get_turns(first)
    assert [t.role for t in stored] == ["user", "assistant", "user", "assistant"]
    assert isinstance(stored[1].blocks[-1], ToolUseBlock)
    (result,) = stored[2].blocks
    assert isinstance(result, ToolResultBlock) and not result.is_error
    ask, answer = env.bodies()
    assert tool_names(ask) == ["set_context", "load_context", "unload_context", "session_search"]
    for body in (ask, answer):
        validate(body, model)
    (sent,) = tool_results(answer)
    assert "Miso" in sent["text"] and not sent["error"]
    assert [type(e) for e in events if isinstance(
        e, ToolStepFinished | ToolResultsSaved | RunFinished)] == [
        ToolStepFinished, ToolResultsSaved, RunFinished]

    # Another session of the space reads it; a session of another space does not.
    second = await env.session("Work")
    env.fake.script("Hello again.")
    await env.send(second, "Hi", model)
    assert "The user's cat is called Miso." in system_text(env.bodies()[-1])
    elsewhere = await env.session("Home")
    env.fake.script("Hello.")
    await env.send(elsewhere, "Hi", model)
    assert "Miso" not in system_text(env.bodies()[-1])

    # A write over the limit is refused with the limit named; the memory is unchanged.
    env.fake.script("", tool_calls=[{"name": "set_context", "input": {
        "content": "purr " * 3000, "mode": "replace"}}])
    env.fake.script("Too long, sorry.")
    await env.send(second, "Remember this long text.", model)
    (refused,) = tool_results(env.bodies()[-1])[-1:]
    assert "1,100 tokens" in refused["text"] and "Nothing was changed" in refused["text"]
    if model == SONNET:
        assert refused["error"] is True
    space = (await env.store.get_session(second)).space_id
    assert (await env.tools.memories.get(space)).text == "The user's cat is called Miso."


# --- skills -------------------------------------------------------------------------


@pytest.mark.parametrize("model", [SONNET, GPT])
async def test_skills_load_then_unload_leaves_a_stub_on_the_wire(env, model):
    sid = await env.session()
    env.fake.script("", tool_calls=[{"name": "load_context", "input": {"key": "bullets"}}])
    env.fake.script("- one\n- two\n- three")
    await env.send(sid, "Answer the way the bullets skill says.", model)
    assert "- bullets: Answer in three bullets." in system_text(env.bodies()[0])
    (loaded,) = tool_results(env.bodies()[-1])
    assert SKILL_BODY.strip() in loaded["text"]

    env.fake.script("", tool_calls=[{"name": "unload_context", "input": {"key": "bullets"}}])
    env.fake.script("Done with it.")
    await env.send(sid, "Thanks, you can drop the skill.", model)
    env.fake.script("Plain answer.")
    await env.send(sid, "Next question.", model)

    for body in env.bodies():
        validate(body, model)
    after_unload = tool_results(env.bodies()[-1])
    stub = next(r for r in after_unload if "bullets" in r["text"] and "unloaded:" in r["text"])
    assert SKILL_BODY.strip() not in json.dumps(env.bodies()[-1])
    assert stub["text"].startswith("[skill 'bullets' was unloaded")
    stored = await env.store.get_turns(sid)  # the stored result keeps the whole text
    kept = [b for t in stored for b in t.blocks if isinstance(b, ToolResultBlock)]
    assert SKILL_BODY.strip() in "".join(p.text for p in kept[0].content)
    assert env.tools.active_skills(sid) == []


async def test_a_loaded_skill_is_restored_after_a_summary(env):
    sid = await env.session()
    env.fake.script("", tool_calls=[{"name": "load_context", "input": {"key": "bullets"}}])
    # A reply long enough that a summary makes the context smaller (would-not-reduce).
    env.fake.script("Loaded. " + "From now on every answer comes as short bullet points. " * 6)
    await env.send(sid, "Use the bullets skill.")
    env.fake.script("Fine.")
    await env.send(sid, "Next.")
    env.fake.script("<summary>The user asked for answers in bullets; the bullets skill was "
                    "loaded with load_context and the assistant confirmed it.</summary>")
    result = await env.runner.compact(sid, keep_turns=2, model_ref=SONNET)
    assert result.compacted and result.restored_skills == ("bullets",)
    env.fake.script("Still bullets.")
    await env.send(sid, "And now?")
    body = env.bodies()[-1]
    validate(body, SONNET)
    first = json.dumps(body["messages"][0])
    assert "Active skill" in first and "three bullet points" in first


# --- session search ---------------------------------------------------------------


async def test_session_search_returns_matches_from_other_sessions(env):
    old = await env.session()
    await env.store.rename_session(old, "Planning the Lisbon trip")
    await env.store.append_turn(old, Turn("user", [TextBlock("Book the hotel near Alfama.")]))
    sid = await env.session()
    env.fake.script("", tool_calls=[{"name": "session_search", "input": {"query": "Alfama"}}])
    env.fake.script("You planned a hotel near Alfama.")
    await env.send(sid, "Where did I want to stay (Alfama?)", SONNET)
    (found,) = tool_results(env.bodies()[-1])
    assert '"Planning the Lisbon trip"' in found["text"] and "**Alfama**" in found["text"]
    assert "Where did I want" not in found["text"]  # this session's own turn is left out


# --- the frozen system prompt -------------------------------------------------------


async def test_frozen_prompt_stays_byte_identical_across_turns_until_refreshed(env):
    sid = await env.session("Work")
    space = (await env.store.get_session(sid)).space_id
    await env.store.set_session_system_prompt(sid, "You are terse.")
    await env.tools.memories.set(space, "Prefers tea.")
    env.fake.script("", tool_calls=[{"name": "set_context", "input": {"content": "Likes jazz."}}])
    env.fake.script("Noted.")
    await env.send(sid, "I like jazz.")
    await env.tools.memories.write(space, "Lives in Porto.", "append")  # the user's edit
    env.fake.script("Sure.")
    await env.send(sid, "Another thing.")
    systems = [json.dumps(b["system"]) for b in env.bodies()]
    assert len(systems) == 3 and len(set(systems)) == 1
    assert "Prefers tea." in systems[0] and "jazz" not in systems[0]
    assert env.bodies()[-1]["system"][-1].get("cache_control")  # still the cached prefix
    usages = [t.usage for t in await env.store.get_turns(sid) if t.usage is not None]
    assert usages[0].cache_write_tokens > 0  # the provider re-reads all it cached before
    written = usages[0].cache_write_tokens + usages[1].cache_write_tokens
    assert usages[-1].cache_read_tokens >= written

    await env.runner.refresh_system_prompt(sid)
    env.fake.script("Refreshed.")
    await env.send(sid, "And now?")
    refreshed = system_text(env.bodies()[-1])
    assert "Likes jazz." in refreshed and "Lives in Porto." in refreshed
    assert refreshed.startswith("You are terse.")

    # Compaction renders it again too.
    await env.tools.memories.write(space, "Has a bike.", "append")
    # A summary in the words of the turns it replaces (a summary sharing too few of them is
    # asked again as a separate transcript: parley.core.compaction's summary checks).
    env.fake.script("<summary>The user likes jazz (noted in the memory: prefers tea, likes "
                    "jazz) and then said another thing.</summary>")
    result = await env.runner.compact(sid, keep_turns=2, model_ref=SONNET)
    assert result.compacted
    env.fake.script("After compaction.")
    await env.send(sid, "Still there?")
    assert "Has a bike." in system_text(env.bodies()[-1])


# --- durability and interruptions -----------------------------------------------------


class SlowTool:
    def __init__(self) -> None:
        self.started = asyncio.Event()
        self.spec = ToolSpec("slow", "waits", {"type": "object", "properties": {}})

    async def run(self, input, ctx):
        self.started.set()
        await asyncio.sleep(30)
        return "never"


@pytest.mark.parametrize("model", [SONNET, GPT])
async def test_an_interrupted_tool_round_is_repaired_on_the_wire(env, model):
    slow = SlowTool()
    env.tools.tools["slow"] = slow
    sid = await env.session()
    env.fake.script("Let me wait.", tool_calls=[{"name": "slow", "input": {}}])
    events: list = []
    task = asyncio.ensure_future(env.send(sid, "Wait for it.", model, events))
    await asyncio.wait_for(slow.started.wait(), 10)
    assert env.runner.cancel(sid)
    assert await task is None
    assert any(isinstance(e, RunCancelled) for e in events)
    stored = await env.store.get_turns(sid)
    assert [t.role for t in stored] == ["user", "assistant"]
    assert not stored[1].aborted and isinstance(stored[1].blocks[-1], ToolUseBlock)

    env.fake.script("Sorry, the wait was interrupted.")
    reply = await env.runner.retry(sid, model_ref=model)
    assert reply is not None and reply.text() == "Sorry, the wait was interrupted."
    body = env.bodies()[-1]
    validate(body, model)
    (repaired,) = tool_results(body)
    assert repaired["text"].endswith(INTERRUPTED_RESULT)


async def test_every_step_is_saved_as_it_completes_and_usage_adds_up(env):
    sid = await env.session()
    seen_after_step: list[list[str]] = []

    def on_event(e):
        if isinstance(e, ToolResultsSaved):
            seen_after_step.append([t.role for t in env.store.sync.get_turns(sid)])

    env.fake.script("", tool_calls=[{"name": "session_search", "input": {"query": "x y"}}],
                    usage={"output_tokens": 7})
    env.fake.script("", tool_calls=[{"name": "no_such_tool", "input": {}}],
                    usage={"output_tokens": 5})
    env.fake.script("Done.", usage={"output_tokens": 3})
    ends: list[RequestEnded] = []
    env.runner.events.on(RequestEnded, ends.append)
    reply = await env.runner.send(sid, [TextBlock("go")], model_ref=SONNET, on_event=on_event)
    assert reply is not None and reply.text() == "Done."
    assert seen_after_step == [["user", "assistant", "user"],
                               ["user", "assistant", "user", "assistant", "user"]]
    stored = await env.store.get_turns(sid)
    assert len(stored) == 6 and not any(t.aborted for t in stored)
    unknown = stored[4].blocks[0]
    assert isinstance(unknown, ToolResultBlock) and unknown.is_error  # the run went on
    assert (await env.store.get_session(sid)).usage.output_tokens == 15
    assert ends[-1].status == "ok" and ends[-1].turn_range == (0, 6)
    for body in env.bodies():
        validate(body, SONNET)


async def test_tool_rounds_are_capped_per_message(env):
    await env.store.set_setting("tools.max_rounds", 2)
    sid = await env.session()
    for _ in range(3):
        env.fake.script("", tool_calls=[{"name": "session_search", "input": {"query": "a"}}])
    env.fake.script("Giving up on searching.")
    events: list = []
    reply = await env.send(sid, "Search forever.", SONNET, events)
    assert reply is not None and reply.text() == "Giving up on searching."
    assert len(env.bodies()) == 4
    last = tool_results(env.bodies()[-1])[-1]
    assert last["error"] and "2 rounds" in last["text"]
    (notice,) = [e for e in events if isinstance(e, ToolRoundLimit)]
    assert notice.rounds == 2 and "tools.max_rounds" in notice.message


async def test_a_model_asking_again_after_the_cap_ends_the_run(env):
    await env.store.set_setting("tools.max_rounds", 1)
    sid = await env.session()
    for _ in range(3):
        env.fake.script("", tool_calls=[{"name": "session_search", "input": {"query": "a"}}])
    reply = await env.send(sid, "Search forever.", SONNET)
    assert reply is not None and isinstance(reply.blocks[-1], ToolUseBlock)
    assert len(env.bodies()) == 3
    stored = await env.store.get_turns(sid)
    assert stored[-1].role == "user" and all(b.is_error for b in stored[-1].blocks)
    env.fake.script("Fine.")
    await env.send(sid, "Stop searching.", SONNET)
    validate(env.bodies()[-1], SONNET)


# --- the per-space switch and servers without tools ----------------------------------


async def test_tools_are_off_by_default_for_compatible_servers_and_per_space(env):
    sid = await env.session("Local")
    env.fake.script("No tools here.")
    await env.send(sid, "hi", LOCAL)
    assert "tools" not in env.bodies()[-1]
    assert "set_context" not in json.dumps(env.bodies()[-1])
    space = (await env.store.get_session(sid)).space_id
    await env.tools.set_enabled(space, False)
    env.fake.script("Still none.")
    await env.send(sid, "hi again", SONNET)
    assert "tools" not in env.bodies()[-1]


async def test_a_server_rejecting_tools_gets_the_request_again_without_and_a_notice(env):
    sid = await env.session("Local")
    space = (await env.store.get_session(sid)).space_id
    await env.tools.set_enabled(space, True)
    said = "registry.ollama.ai/library/llama3.2 does not support tools"
    env.fake.fail("bad_request", message=said)
    env.fake.script("Answer without tools.")
    events: list = []
    reply = await env.send(sid, "hi", LOCAL, events)
    assert reply is not None and reply.text() == "Answer without tools."
    rejected, retried = env.bodies()
    assert tool_names(rejected) and "tools" not in retried
    assert "load_context" not in system_text(retried)
    (notice,) = [e for e in events if isinstance(e, ToolsUnavailable)]
    assert notice.model_ref == LOCAL and "does not accept tools" in notice.message
    env.fake.script("Again without.")
    await env.send(sid, "more", LOCAL)
    assert "tools" not in env.bodies()[-1]
    assert await env.store.get_turns(sid) and [t.role for t in await env.store.get_turns(
        sid)] == ["user", "assistant", "user", "assistant"]


async def test_a_runner_without_tools_sends_none(env, fake_provider):
    plain = ChatRunner(env.store, env.hub, journal_interval_s=0.02, emit_interval_s=0.0)
    sid = await env.session()
    fake_provider.script("ok")
    await plain.send(sid, [TextBlock("hi")], model_ref=SONNET)
    assert "tools" not in env.bodies()[-1] and "system" not in env.bodies()[-1]


# --- compatible servers that say their model takes tools ------------------------------


@pytest.mark.parametrize("how", ["props_caps", "props_template", "ollama"])
async def test_a_compatible_server_that_says_its_model_takes_tools_gets_them(env, how):
    say_tools(env.fake, how, takes=True)
    sid = await env.session("Local")
    env.fake.script("With tools.")
    await env.send(sid, "hi", LOCAL)
    body = env.bodies()[-1]
    assert tool_names(body) == ["set_context", "load_context", "unload_context",
                                "session_search"]
    assert "set_context tool" in system_text(body) and "load_context(key)" in system_text(body)
    assert env.hub.model_info(LOCAL).tools is True
    space = (await env.store.get_session(sid)).space_id
    await env.tools.set_enabled(space, False)  # the space's switch still wins
    env.fake.script("Without.")
    await env.send(sid, "again", LOCAL)
    assert "tools" not in env.bodies()[-1]


@pytest.mark.parametrize("how", ["props_caps", "props_template", "ollama"])
async def test_a_compatible_server_saying_no_or_nothing_gets_no_tools_nor_their_prompt(
    env, how
):
    say_tools(env.fake, how, takes=False)
    sid = await env.session("Local")
    memories = env.tools.memories
    await memories.set((await env.store.get_session(sid)).space_id, "Prefers metric units.")
    env.fake.script("No tools.")
    await env.send(sid, "hi", LOCAL)
    body = env.bodies()[-1]
    assert "tools" not in body and env.hub.model_info(LOCAL).tools is False
    system = system_text(body)
    assert "Prefers metric units." in system  # the notes, as plain context
    assert "set_context" not in system and "load_context" not in system
    assert "max_tokens" in body

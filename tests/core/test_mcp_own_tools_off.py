"""MCP servers' tools are independent of the space's switch for Parley's own tools:
with the own tools off a space still offers its MCP servers, over real HTTP (the fake
provider), real SQLite and a real stdio MCP server."""

from __future__ import annotations

import pytest

from parley.core.mcp.names import is_mcp_name
from tests.core.tool_support import (
    ECHO,
    GPT,
    OWN,
    SONNET,
    echo_call,
    open_mcp_env,
    say_tools,
    system_text,
    tool_names,
    tool_results,
    validate,
)

LOCAL = "local:llama3.2"


@pytest.fixture
async def env(tmp_path, fake_provider):
    from tests.fakes.mcp_server import stdio_entry

    e = await open_mcp_env(tmp_path, fake_provider, {"fake": stdio_entry()}, compatible={
        "name": "Local", "provider_id": "local", "default_model": "llama3.2"})
    yield e
    await e.host.close()
    await e.hub.aclose()
    await e.store.close()


async def own_off(env, sid: str, memory: str = "") -> str:
    space = (await env.store.get_session(sid)).space_id
    await env.tools.set_enabled(space, False)
    if memory:
        await env.tools.memories.set(space, memory)
    return space


@pytest.mark.parametrize("model", [SONNET, GPT])
async def test_own_tools_off_still_offers_the_spaces_mcp_tools_and_a_call_runs(env, model):
    sid = await env.session("Work")
    space = await own_off(env, sid, "Prefers metric units.")
    env.approver.answers.append("once")
    env.fake.script("", tool_calls=[echo_call("hello")])
    env.fake.script("It said hello.")
    reply = await env.send(sid, "Echo hello.", model)
    assert reply is not None and reply.text() == "It said hello."
    ask, answer = env.bodies()
    names = tool_names(ask)
    assert ECHO in names and all(is_mcp_name(n) for n in names)
    assert not set(names) & set(OWN)
    assert tool_names(answer) == names  # the same definitions, in the same order
    for body in (ask, answer):
        validate(body, model)
        system = system_text(body)
        assert "Prefers metric units." in system  # the notes, as plain context
        assert "set_context" not in system and "load_context" not in system
    (result,) = tool_results(answer)
    assert result["text"] == "echo: hello" and not result["error"]
    assert len(env.approver.asked) == 1  # approval as with the own tools on
    # The list stays frozen for the chat: the next message sends it byte for byte.
    env.fake.script("Again.")
    await env.send(sid, "Next.", model)
    assert env.bodies()[-1].get("tools") == ask.get("tools")
    assert (await env.tools.memories.get(space)).text == "Prefers metric units."


async def test_own_tools_off_refuses_a_call_of_one_of_them(env):
    sid = await env.session("Work")
    space = await own_off(env, sid, "Likes tea.")
    env.fake.script("", tool_calls=[{"name": "set_context",
                                     "input": {"content": "Likes coffee.", "mode": "replace"}}])
    env.fake.script("Could not.")
    await env.send(sid, "Remember coffee.", SONNET)
    (result,) = tool_results(env.bodies()[-1])
    assert result["error"] and "no tool called 'set_context'" in result["text"]
    assert (await env.tools.memories.get(space)).text == "Likes tea."


async def test_own_tools_and_every_server_off_sends_no_tools(env):
    sid = await env.session("Quiet")
    space = await own_off(env, sid)
    await env.mcp.set_server_on(space, "fake", False)
    env.fake.script("No tools at all.")
    await env.send(sid, "hi", SONNET)
    body = env.bodies()[-1]
    assert "tools" not in body
    assert "set_context" not in system_text(body) and "load_context" not in system_text(body)
    # Another space keeps both.
    other = await env.session("Busy")
    env.fake.script("Everything.")
    await env.send(other, "hi", SONNET)
    names = tool_names(env.bodies()[-1])
    assert names[:4] == OWN and ECHO in names


async def test_a_compatible_server_without_proven_tools_gets_no_mcp_tools(env):
    sid = await env.session("Local")
    env.fake.script("No tools here.")
    await env.send(sid, "hi", LOCAL)
    assert "tools" not in env.bodies()[-1]
    await own_off(env, sid)  # switched off on purpose: still none
    env.fake.script("Still none.")
    await env.send(sid, "again", LOCAL)
    assert "tools" not in env.bodies()[-1]


async def test_a_compatible_server_that_takes_tools_gets_only_mcp_with_own_off(env):
    say_tools(env.fake, "props_caps", takes=True)
    sid = await env.session("Local")
    await own_off(env, sid)
    env.approver.answers.append("once")
    env.fake.script("", tool_calls=[echo_call("local")])
    env.fake.script("Done.")
    await env.send(sid, "Echo.", LOCAL)
    ask, answer = env.bodies()[-2:]
    names = tool_names(ask)
    assert ECHO in names and all(is_mcp_name(n) for n in names)
    assert tool_results(answer)[0]["text"] == "echo: local"

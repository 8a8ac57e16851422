"""MCP tools in the tool loop: the fake provider calls a real stdio MCP server's tools
over real HTTP and SQLite; the approver is scripted."""

from __future__ import annotations

import asyncio
import json

import pytest

from parley.core.chat.run import RunCancelled
from parley.core.content import ImageBlock, ToolResultBlock
from parley.core.mcp.tools import declined_text
from parley.core.wire import INTERRUPTED_RESULT
from tests.core.tool_support import (
    ECHO,
    GPT,
    OWN,
    SONNET,
    echo_call,
    open_mcp_env,
    tool_names,
    tool_results,
    validate,
)
from tests.fakes.mcp_server import stdio_entry


@pytest.fixture
async def env(tmp_path, fake_provider):
    e = await open_mcp_env(tmp_path, fake_provider, {"fake": stdio_entry()})
    yield e
    await e.host.close()
    await e.hub.aclose()
    await e.store.close()


@pytest.mark.parametrize("model", [SONNET, GPT])
async def test_mcp_tools_are_offered_after_parleys_and_an_allowed_call_is_answered(env, model):
    sid = await env.session()
    env.approver.answers.append("once")
    env.fake.script("", tool_calls=[echo_call("hello")])
    env.fake.script("It said hello.")
    reply = await env.send(sid, "Echo hello.", model)
    assert reply is not None and reply.text() == "It said hello."
    ask, answer = env.bodies()
    names = tool_names(ask)
    assert names[:4] == OWN and ECHO in names and "mcp__fake__crash" in names
    assert tool_names(answer) == names  # the same definitions, in the same order
    for body in (ask, answer):
        validate(body, model)
    (result,) = tool_results(answer)
    assert result["text"] == "echo: hello" and not result["error"]
    (asked,) = env.approver.asked
    assert (asked.server, asked.tool, dict(asked.arguments)) == ("fake", "echo",
                                                                 {"text": "hello"})
    assert asked.description == "Return the text unchanged."


async def test_each_approval_choice(env):
    first, second = await env.session(), await env.session()

    async def call(sid: str, text: str) -> dict:
        env.fake.script("", tool_calls=[echo_call(text)])
        env.fake.script("ok")
        await env.send(sid, "go", SONNET)
        return tool_results(env.bodies()[-1])[-1]

    # Deny: the model reads that the user declined.
    env.approver.answers.append("deny")
    denied = await call(first, "a")
    assert denied["error"] and denied["text"] == declined_text("fake", "echo")
    # Allow once: asked again the next time.
    env.approver.answers.append("once")
    assert (await call(first, "b"))["text"] == "echo: b"
    # Always for this chat: not asked again in this chat, asked in another.
    env.approver.answers.append("chat")
    assert (await call(first, "c"))["text"] == "echo: c"
    assert (await call(first, "d"))["text"] == "echo: d"
    assert len(env.approver.asked) == 3
    env.approver.answers.append("tool")
    assert (await call(second, "e"))["text"] == "echo: e"
    assert len(env.approver.asked) == 4
    # Always for this tool: written to mcp.json, so a new chat is not asked either.
    saved = json.loads(env.path.read_text())["mcpServers"]["fake"]
    assert saved["alwaysAllow"] == ["echo"]
    third = await env.session()
    assert (await call(third, "f"))["text"] == "echo: f"
    assert len(env.approver.asked) == 4


async def test_always_allow_from_the_config_file_needs_no_click(tmp_path, fake_provider):
    env = await open_mcp_env(tmp_path, fake_provider,
                             {"fake": stdio_entry(alwaysAllow=["echo"])})
    try:
        sid = await env.session()
        env.fake.script("", tool_calls=[echo_call("x")])
        env.fake.script("done")
        await env.send(sid, "go", SONNET)
        assert tool_results(env.bodies()[-1])[0]["text"] == "echo: x"
        assert env.approver.asked == []
    finally:
        await env.host.close()
        await env.hub.aclose()
        await env.store.close()


@pytest.mark.parametrize("model", [SONNET, GPT])
async def test_a_server_crashing_mid_call_gives_the_model_an_error(env, model):
    sid = await env.session()
    env.approver.answers.extend(["chat", "chat"])
    env.fake.script("", tool_calls=[{"name": "mcp__fake__crash", "input": {}}])
    env.fake.script("The server crashed.")
    reply = await env.send(sid, "Crash it.", model)
    assert reply is not None and reply.text() == "The server crashed."
    body = env.bodies()[-1]
    validate(body, model)
    (result,) = tool_results(body)
    assert result["error"] in (True, None)  # OpenAI has no error flag on the wire
    assert "stopped while running crash" in result["text"]
    assert "crashing on purpose" in result["text"]
    assert env.host.status("fake").state == "failed"
    # The next call starts the server again.
    env.fake.script("", tool_calls=[echo_call("again")])
    env.fake.script("Back.")
    await env.send(sid, "Again.", model)
    assert tool_results(env.bodies()[-1])[-1]["text"] == "echo: again"


async def test_a_hanging_tool_times_out_with_an_error_result(tmp_path, fake_provider):
    env = await open_mcp_env(tmp_path, fake_provider, {"fake": stdio_entry(
        timeout=1, alwaysAllow=["sleep"])})
    try:
        sid = await env.session()
        env.fake.script("", tool_calls=[{"name": "mcp__fake__sleep",
                                         "input": {"seconds": 30}}])
        env.fake.script("It hung.")
        reply = await env.send(sid, "Sleep.", SONNET)
        assert reply is not None and reply.text() == "It hung."
        (result,) = tool_results(env.bodies()[-1])
        assert result["error"] and "did not answer within 1 seconds" in result["text"]
    finally:
        await env.host.close()
        await env.hub.aclose()
        await env.store.close()


async def test_a_huge_result_is_cut_and_an_image_is_sent_as_an_image(env):
    sid = await env.session()
    env.approver.answers.extend(["once", "once"])
    env.fake.script("", tool_calls=[{"name": "mcp__fake__huge", "input": {"n": 500_000}},
                                    {"name": "mcp__fake__picture", "input": {}}])
    env.fake.script("Seen.")
    await env.send(sid, "Big and picture.", SONNET)
    body = env.bodies()[-1]
    validate(body, SONNET)
    huge, picture = tool_results(body)
    assert len(huge["text"]) < 101_000 and "500,000 characters" in huge["text"]
    stored = await env.store.get_turns(sid)
    results = [b for b in stored[2].blocks if isinstance(b, ToolResultBlock)]
    assert any(isinstance(p, ImageBlock) for p in results[1].content)
    sent = [b for m in body["messages"] if isinstance(m["content"], list)
            for b in m["content"] if b.get("type") == "tool_result"][1]
    assert [p["type"] for p in sent["content"]] == ["text", "image"]


async def test_the_tool_list_is_frozen_per_chat_until_refresh(env):
    sid = await env.session()
    env.approver.answers.append("once")
    env.fake.script("", tool_calls=[{"name": "mcp__fake__grow", "input": {}}])
    env.fake.script("Grown.")
    await env.send(sid, "Grow.", SONNET)
    for _ in range(100):
        if "extra" in [t.name for t in env.host.status("fake").tools]:
            break
        await asyncio.sleep(0.05)
    env.fake.script("Same tools.")
    await env.send(sid, "Next.", SONNET)
    before = tool_names(env.bodies()[-1])
    assert "mcp__fake__extra" not in before
    assert before == tool_names(env.bodies()[0])
    await env.mcp.refresh(sid)
    env.fake.script("New tools.")
    await env.send(sid, "After refresh.", SONNET)
    assert "mcp__fake__extra" in tool_names(env.bodies()[-1])


async def test_a_space_can_turn_a_server_off(env):
    home = await env.session("Home")
    space = (await env.store.get_session(home)).space_id
    await env.mcp.set_server_on(space, "fake", False)
    env.fake.script("No MCP here.")
    await env.send(home, "Hi", SONNET)
    assert tool_names(env.bodies()[-1]) == OWN
    work = await env.session("Work")
    env.fake.script("MCP here.")
    await env.send(work, "Hi", SONNET)
    assert ECHO in tool_names(env.bodies()[-1])
    await env.mcp.set_server_on(space, "fake", True)
    env.fake.script("Back on.")
    await env.send(home, "Hi again", SONNET)
    assert ECHO in tool_names(env.bodies()[-1])


async def test_stop_during_a_call_cancels_it_and_the_history_stays_valid(env):
    sid = await env.session()
    env.approver.answers.append("once")
    env.fake.script("", tool_calls=[{"name": "mcp__fake__sleep", "input": {"seconds": 30}}])
    events: list = []
    task = asyncio.ensure_future(env.send(sid, "Wait.", SONNET, events))
    for _ in range(200):
        if env.approver.asked:
            break
        await asyncio.sleep(0.05)
    await asyncio.sleep(0.3)  # the call is with the server now
    assert env.runner.cancel(sid)
    assert await asyncio.wait_for(task, 10) is None
    assert any(isinstance(e, RunCancelled) for e in events)
    env.fake.script("Interrupted.")
    await env.runner.retry(sid, model_ref=SONNET)
    body = env.bodies()[-1]
    validate(body, SONNET)
    assert tool_results(body)[0]["text"].endswith(INTERRUPTED_RESULT)
    # The server is still usable.
    assert (await env.host.call("fake", "echo", {"text": "still"}, 10)).content[0].text == \
        "echo: still"


async def test_no_approver_means_denied(env):
    env.mcp.approver = None
    sid = await env.session()
    env.fake.script("", tool_calls=[echo_call()])
    env.fake.script("ok")
    await env.send(sid, "go", SONNET)
    (result,) = tool_results(env.bodies()[-1])
    assert result["error"] and "declined" in result["text"]


async def test_parley_closing_mid_round_leaves_a_valid_history(tmp_path, fake_provider):
    servers = {"fake": stdio_entry(alwaysAllow=["sleep"])}
    env = await open_mcp_env(tmp_path, fake_provider, servers)
    sid = await env.session()
    env.fake.script("", tool_calls=[{"name": "mcp__fake__sleep", "input": {"seconds": 30}}])
    task = asyncio.ensure_future(env.send(sid, "Wait.", SONNET))
    for _ in range(200):
        if env.host.status("fake").state == "ready":
            break
        await asyncio.sleep(0.05)
    await asyncio.sleep(0.3)
    # Parley quits while the server works: the run is stopped, the servers and store close.
    env.runner.cancel(sid)
    await asyncio.wait_for(task, 10)
    await env.host.close()
    await env.hub.aclose()
    await env.store.close()

    again = await open_mcp_env(tmp_path, fake_provider, servers)
    try:
        stored = await again.store.get_turns(sid)
        assert [t.role for t in stored] == ["user", "assistant"]
        again.fake.script("", tool_calls=[echo_call("after restart")])
        again.fake.script("Back.")
        again.approver.answers.append("once")
        await again.runner.retry(sid, model_ref=SONNET)
        for body in again.bodies()[-2:]:
            validate(body, SONNET)
        first, last = again.bodies()[-2:]
        assert tool_results(first)[0]["text"].endswith(INTERRUPTED_RESULT)
        texts = sorted(r["text"] for r in tool_results(last))
        assert texts[0] == "echo: after restart" and texts[1].endswith(INTERRUPTED_RESULT)
    finally:
        await again.host.close()
        await again.hub.aclose()
        await again.store.close()


async def test_a_changed_tool_list_is_taken_at_the_next_compaction(env):
    sid = await env.session()
    env.approver.answers.append("once")
    env.fake.script("", tool_calls=[{"name": "mcp__fake__grow", "input": {}}])
    # A reply long enough that a summary makes the context smaller (would-not-reduce).
    env.fake.script("Grown. " + "The server now offers more tools than before. " * 12)
    await env.send(sid, "Grow.", SONNET)
    for _ in range(100):
        if "extra" in [t.name for t in env.host.status("fake").tools]:
            break
        await asyncio.sleep(0.05)
    env.fake.script("Still the same tools.")
    await env.send(sid, "Next.", SONNET)
    assert "mcp__fake__extra" not in tool_names(env.bodies()[-1])
    env.fake.script("## Summary\nThe user asked the fake server to grow its tools; it did, "
                    "and the assistant confirmed it. Nothing else is pending. " * 3)
    await env.runner.compact(sid, keep_turns=1, model_ref=SONNET)
    env.fake.script("New tools.")
    await env.send(sid, "After the compaction.", SONNET)
    body = env.bodies()[-1]
    validate(body, SONNET)
    assert "mcp__fake__extra" in tool_names(body)


async def test_a_failed_server_does_not_hold_up_every_new_chat(tmp_path, fake_provider):
    env = await open_mcp_env(tmp_path, fake_provider, {
        "fake": stdio_entry(), "broken": stdio_entry("--fail-start")})
    try:
        starts: list[str] = []
        env.host.on_change(lambda s: starts.append(s.name) if s.state == "starting" else None)
        for text in ("first", "second"):
            sid = await env.session()
            env.fake.script("ok")
            await env.send(sid, text, SONNET)
            assert ECHO in tool_names(env.bodies()[-1])
        await asyncio.sleep(0.1)  # the listeners run on this loop
        assert starts.count("broken") == 1 and env.host.status("broken").state == "failed"
        # Start / restart tries again at once.
        assert (await env.host.restart("broken")).state == "failed"
        await asyncio.sleep(0.1)
        assert starts.count("broken") == 2
    finally:
        await env.host.close()
        await env.hub.aclose()
        await env.store.close()

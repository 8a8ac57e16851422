"""MCP approvals are about the program and stay on their machine: two "machines" (two
machine names, each with its own ``mcp.json``) share one database (a sessions.db file,
then PostgreSQL); the real MCP test server runs over stdio; the provider is the fake
server over real HTTP; the approver is scripted."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from parley.core import machine
from parley.core.app_state import MCP_ALLOWED
from parley.core.chat.run import ChatRunner
from parley.core.content import TextBlock
from parley.core.mcp.approvals import program_of
from parley.core.mcp.config import load
from parley.core.mcp.host import McpHost
from parley.core.mcp.tools import McpTools, declined_text
from parley.core.store.async_store import AsyncStore
from parley.core.tools import ToolExecutor
from parley.core.tools.skills import SkillLibrary
from tests.core.hubs import fake_hub
from tests.core.tool_support import SONNET, Approver, echo_call, tool_results
from tests.fakes.mcp_server import stdio_entry


class Machine:
    """One computer: its name, its own mcp.json and MCP servers, the shared store."""

    def __init__(self, name: str, folder: Path, store: AsyncStore, hub, fake,
                 monkeypatch: pytest.MonkeyPatch, servers: dict) -> None:
        folder.mkdir()
        self.name, self.store, self.fake, self.monkeypatch = name, store, fake, monkeypatch
        self.path = folder / "mcp.json"
        self.write(servers)
        self.host = McpHost(self.path)
        self.host.load()
        self.approver = Approver()
        self.mcp = McpTools(self.host, store, approver=self.approver)
        tools = ToolExecutor(store, library=SkillLibrary(user_dir=folder, bundled_dir=None),
                             mcp=self.mcp)
        self.runner = ChatRunner(store, hub, journal_interval_s=0.02, emit_interval_s=0.0,
                                 tools=tools)

    def write(self, servers: dict) -> None:
        self.path.write_text(json.dumps({"mcpServers": servers}))

    async def call_echo(self, sid: str, text: str) -> dict:
        """The model calls ``fake``'s echo on this machine; returns the tool result it got."""
        self.monkeypatch.setattr(machine, "machine_name", lambda: self.name)
        self.fake.script("", tool_calls=[echo_call(text)])
        self.fake.script("ok")
        await self.runner.send(sid, [TextBlock("go")], model_ref=SONNET)
        return tool_results(self.fake.model_requests[-1].body)[-1]


@pytest.fixture
async def two(tmp_path, fake_provider, any_target, monkeypatch):
    store = await AsyncStore.open(any_target)
    hub = await fake_hub(store, tmp_path, fake_provider)
    laptop = Machine("laptop", tmp_path / "laptop", store, hub, fake_provider, monkeypatch,
                     {"fake": stdio_entry()})
    # The desktop names another program under the same server name, with no alwaysAllow.
    desktop = Machine("desktop", tmp_path / "desktop", store, hub, fake_provider, monkeypatch,
                      {"fake": stdio_entry("--on-the-desktop")})
    yield laptop, desktop
    for m in (laptop, desktop):
        await m.host.close()
    await hub.aclose()
    await store.close()


async def test_always_for_this_chat_on_one_machine_asks_on_another(two):
    laptop, desktop = two
    sid = (await laptop.store.create_session()).id
    laptop.approver.answers.append("chat")
    assert (await laptop.call_echo(sid, "a"))["text"] == "echo: a"
    assert (await laptop.call_echo(sid, "b"))["text"] == "echo: b"
    assert len(laptop.approver.asked) == 1  # allowed for the chat on the laptop
    # The same chat, the same server name, another machine's program: it asks.
    desktop.approver.answers.append("deny")
    denied = await desktop.call_echo(sid, "c")
    assert denied["error"] and denied["text"] == declined_text("fake", "echo")
    (asked,) = desktop.approver.asked
    assert (asked.session_id, asked.server, asked.tool) == (sid, "fake", "echo")
    # The laptop's approval is untouched by the desktop's no.
    assert (await laptop.call_echo(sid, "d"))["text"] == "echo: d"
    assert len(laptop.approver.asked) == 1


async def test_a_changed_command_asks_again(two):
    laptop, _ = two
    sid = (await laptop.store.create_session()).id
    laptop.approver.answers.append("chat")
    assert (await laptop.call_echo(sid, "a"))["text"] == "echo: a"
    before = program_of(laptop.host.configs["fake"])
    laptop.write({"fake": stdio_entry("--now-another-program")})
    assert await laptop.host.reload()
    assert program_of(laptop.host.configs["fake"]) != before
    laptop.approver.answers.append("deny")
    assert (await laptop.call_echo(sid, "b"))["error"]
    assert len(laptop.approver.asked) == 2


async def test_always_for_this_tool_holds_until_the_program_changes(two):
    laptop, desktop = two
    first = (await laptop.store.create_session()).id
    laptop.approver.answers.append("tool")
    assert (await laptop.call_echo(first, "a"))["text"] == "echo: a"
    assert load(laptop.path)["fake"].always_allow == ("echo",)
    second = (await laptop.store.create_session()).id
    assert (await laptop.call_echo(second, "b"))["text"] == "echo: b"
    assert len(laptop.approver.asked) == 1
    # The desktop's mcp.json has no alwaysAllow: it asks.
    assert (await desktop.call_echo(second, "c"))["error"]
    assert len(desktop.approver.asked) == 1
    # The laptop's mcp.json now starts another program under the name, alwaysAllow kept.
    laptop.write({"fake": stdio_entry("--now-another-program", alwaysAllow=["echo"])})
    assert await laptop.host.reload()
    laptop.approver.answers.append("once")
    assert (await laptop.call_echo(second, "d"))["text"] == "echo: d"
    assert len(laptop.approver.asked) == 2
    # Allowed always again, for the new program: not asked after that.
    laptop.approver.answers.append("tool")
    await laptop.call_echo(second, "e")
    assert (await laptop.call_echo(second, "f"))["text"] == "echo: f"
    assert len(laptop.approver.asked) == 3
    assert [a.program_changed for a in laptop.approver.asked] == [False, True, True]


async def test_an_approval_by_name_from_an_older_parley_is_not_trusted(two):
    laptop, _ = two
    sid = (await laptop.store.create_session()).id
    await laptop.store.set_state(MCP_ALLOWED.key(sid), ["fake/echo"])  # name only, any machine
    laptop.approver.answers.append("deny")
    assert (await laptop.call_echo(sid, "a"))["error"]
    assert len(laptop.approver.asked) == 1


async def test_an_edit_of_mcp_json_is_used_at_the_next_call_not_the_old_process(two):
    """Nothing asks the host to reload: the call itself sees mcp.json changed on disk,
    stops the process started from the old entry, asks for the new program, and runs it;
    changed back, the first program runs again (and is asked about again)."""
    laptop, _ = two
    sid = (await laptop.store.create_session()).id

    def entry(secret: str) -> dict:
        return {"fake": stdio_entry(env={"FAKE_MCP_SECRET": secret})}

    async def whoami() -> str:
        laptop.monkeypatch.setattr(machine, "machine_name", lambda: laptop.name)
        laptop.fake.script("", tool_calls=[{"name": "mcp__fake__whoami", "input": {}}])
        laptop.fake.script("ok")
        await laptop.runner.send(sid, [TextBlock("go")], model_ref=SONNET)
        return tool_results(laptop.fake.model_requests[-1].body)[-1]["text"]

    laptop.write(entry("first"))
    laptop.approver.answers.append("chat")
    assert (await whoami()).startswith("env=first ")
    laptop.write(entry("second-program"))
    laptop.approver.answers.append("chat")
    assert (await whoami()).startswith("env=second-program ")
    assert laptop.approver.asked[-1].program == laptop.host.configs["fake"].describe()
    laptop.write(entry("first"))
    laptop.approver.answers.append("once")
    assert (await whoami()).startswith("env=first ")
    assert len(laptop.approver.asked) == 3
    assert [a.program_changed for a in laptop.approver.asked] == [False, True, True]

"""Shared set-up of the tool and MCP tests: a runner with tools over the fake server (and
MCP servers), and readers of what the model was sent."""

from __future__ import annotations

import json
from collections import deque
from typing import Any

from parley.core.chat.run import ChatRunner
from parley.core.content import TextBlock
from parley.core.mcp.host import McpHost
from parley.core.mcp.tools import ApprovalRequest, McpTools
from parley.core.providers.hub import ProviderHub
from parley.core.store.async_store import AsyncStore
from parley.core.tools import ToolExecutor
from parley.core.tools.skills import SkillLibrary
from tests.core.hubs import fake_hub
from tests.fakes.validation import validate_anthropic, validate_openai

SONNET = "anthropic:claude-sonnet-4-6"
GPT = "openai:gpt-5"


class Env:
    def __init__(self, store: AsyncStore, hub: ProviderHub, runner: ChatRunner, fake: Any):
        self.store, self.hub, self.runner, self.fake = store, hub, runner, fake
        self.tools: ToolExecutor = runner.tools  # type: ignore[assignment]

    async def session(self, space: str | None = None) -> str:
        space_id = None
        if space is not None:
            spaces = {s.name: s.id for s in await self.store.list_spaces()}
            space_id = spaces.get(space) or (await self.store.create_space(space)).id
        return (await self.store.create_session(space_id=space_id)).id

    async def send(self, sid: str, text: str, model: str = SONNET, events: list | None = None):
        return await self.runner.send(
            sid, [TextBlock(text)], model_ref=model,
            on_event=None if events is None else events.append,
        )

    def bodies(self) -> list[dict]:
        return [r.body for r in self.fake.model_requests]


def validate(body: dict, model: str) -> None:
    check = validate_anthropic if model == SONNET else validate_openai
    assert check(body) is None, check(body)


def system_text(body: dict) -> str:
    system = body.get("system")
    if system is None:  # OpenAI: the first message
        first = body["messages"][0]
        return first["content"] if first["role"] in ("system", "developer") else ""
    return "".join(b["text"] for b in system) if isinstance(system, list) else system


def tool_results(body: dict) -> list[dict]:
    """Every tool result of a request as {"id", "text", "error"} (either API)."""
    out = []
    for m in body["messages"]:
        if m["role"] == "tool":
            out.append({"id": m["tool_call_id"], "text": m["content"] if isinstance(
                m["content"], str) else "".join(p["text"] for p in m["content"]), "error": None})
        elif isinstance(m.get("content"), list):
            for b in m["content"]:
                if b.get("type") == "tool_result":
                    content = b["content"]
                    text = content if isinstance(content, str) else "".join(
                        p.get("text", "") for p in content)
                    out.append({"id": b["tool_use_id"], "text": text,
                                "error": b.get("is_error", False)})
    return out


def tool_names(body: dict) -> list[str]:
    return [t.get("name") or t["function"]["name"] for t in body.get("tools", [])]


def say_tools(fake: Any, how: str, takes: bool) -> None:
    """Make the fake answer like a server saying whether ``llama3.2`` takes tools."""
    fake.openai_models = [{"id": "llama3.2"}]
    if how == "ollama":  # Ollama's /api/show capabilities
        caps = ["completion", "tools"] if takes else ["completion"]
        fake.windows.ollama_show["llama3.2"] = {
            "capabilities": caps, "model_info": {"llama.context_length": 8_192}}
        return
    fake.windows.llamacpp(8_192)
    props = fake.windows.props
    if how == "props_caps":  # llama.cpp since 2025
        props["chat_template_caps"] = {"supports_tools": takes, "supports_system_role": True}
    else:  # an older llama.cpp: only the chat template tells
        props["chat_template"] = (
            "{% if tools %}<tools>{{ tools | tojson }}</tools>{% endif %}{{ messages }}"
            if takes else "{% for m in messages %}{{ m.content }}{% endfor %}")


OWN = ["set_context", "load_context", "unload_context", "session_search"]
ECHO = "mcp__fake__echo"


class Approver:
    """Answers approval requests from a queue, and records them."""

    def __init__(self) -> None:
        self.answers: deque[str] = deque()
        self.asked: list[ApprovalRequest] = []

    async def __call__(self, request: ApprovalRequest) -> str:
        self.asked.append(request)
        return self.answers.popleft() if self.answers else "deny"


class McpEnv(Env):
    host: McpHost
    approver: Approver
    mcp: McpTools
    path = None


async def open_mcp_env(tmp_path, fake_provider, servers: dict,
                       compatible: dict | None = None):
    path = tmp_path / "mcp.json"
    path.write_text(json.dumps({"mcpServers": servers}))
    store = await AsyncStore.open(tmp_path / "sessions.db")
    hub = await fake_hub(store, tmp_path, fake_provider, compatible=compatible)
    host = McpHost(path)
    host.load()
    approver = Approver()
    mcp = McpTools(host, store, approver=approver)
    tools = ToolExecutor(store, library=SkillLibrary(user_dir=tmp_path, bundled_dir=None),
                         mcp=mcp)
    runner = ChatRunner(store, hub, journal_interval_s=0.02, emit_interval_s=0.0, tools=tools)
    env = McpEnv(store, hub, runner, fake_provider)
    env.host, env.approver, env.mcp, env.path = host, approver, mcp, path
    return env


def echo_call(text: str = "hi", name: str = ECHO) -> dict:
    return {"name": name, "input": {"text": text}}


SKILL_BODY = "Always answer in exactly three bullet points. " * 20

"""Shared set-up of the compaction tests: a real sessions.db, the hub over the fake server.

A helper module (no tests; not named ``test_*``): the compaction test files import its
helpers, and tests/core/conftest.py makes the ``env`` fixture with :func:`open_env`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from parley.core.chat.run import ChatRunner
from parley.core.content import Block, TextBlock, ToolResultBlock, ToolUseBlock, Turn
from parley.core.providers.hub import ProviderHub
from parley.core.store.async_store import AsyncStore
from tests.core.hubs import fake_workspace
from tests.fakes.validation import validate_anthropic, validate_openai

SONNET = "anthropic:claude-sonnet-4-6"
GPT = "openai:gpt-5"
SUMMARY = (
    "## Topic\nPlanning the ZEBRA-42 migration.\n## Key points\n- Port is 8443.\n"
    "## Current state\nDesign agreed.\n## Open items\n- Write the script.\n"
    "## Exact details\n/srv/zebra/config.toml"
)
#: SUMMARY as a model answers it: an answer without the tags is no summary.
TAGGED = f"<summary>\n{SUMMARY}\n</summary>"


def tagged_summary(steps: int) -> str:
    """SUMMARY with ``steps`` more lines (about 13 tokens each), as a model answers it."""
    lines = "".join(f"\n- Step {i} of the ZEBRA-42 plan was agreed on day {i}."
                    for i in range(steps))
    return f"<summary>\n{SUMMARY}{lines}\n</summary>"


#: A summary long enough for any conversation (over parley.core.compaction.check.FLOOR_MAX).
LONG = tagged_summary(60)


class Env:
    """What a compaction test works with."""

    def __init__(self, store: AsyncStore, hub: ProviderHub, runner: ChatRunner, sid: str):
        self.store = store
        self.hub = hub
        self.runner = runner
        self.sid = sid

    @property
    def compactor(self) -> Any:
        return self.runner.compactor

    async def settings(self, **values: Any) -> None:
        """Save settings (``model_overrides`` reloads the hub)."""
        for key, value in values.items():
            await self.store.set_setting(key.replace("__", "."), value)
        if "model_overrides" in values:
            await self.hub.load()

    async def seed(self, pairs: int, *, words: int = 20, start: int = 0) -> list[Turn]:
        """Append ``pairs`` user/assistant turns of about ``words`` words each."""
        out = []
        for i in range(start, start + pairs):
            filler = " ".join(f"w{i}x{k}" for k in range(words))
            out.append(await self.store.append_turn(
                self.sid, Turn("user", [TextBlock(f"Question {i}: {filler}")])))
            out.append(await self.store.append_turn(
                self.sid, Turn("assistant", [TextBlock(f"Answer {i}: {filler}")])))
        return out

    async def tool_round(self, name: str, output: str, call_id: str) -> None:
        """Append an assistant tool_use turn and the user turn with its result."""
        await self.store.append_turn(
            self.sid, Turn("assistant", [ToolUseBlock(call_id, name, {"q": name})]))
        await self.store.append_turn(
            self.sid, Turn("user", [ToolResultBlock(call_id, (TextBlock(output),))]))

    async def send(self, text: str, model: str = SONNET, **kw: Any) -> Turn | None:
        return await self.runner.send(self.sid, [TextBlock(text)], model_ref=model, **kw)


def blocks_text(message: dict[str, Any]) -> str:
    """All text of a wire message (Anthropic or OpenAI shape)."""
    content = message.get("content")
    if isinstance(content, str):
        return content
    out = []
    for b in content or []:
        if isinstance(b, dict):
            if b.get("type") == "text":
                out.append(b["text"])
            elif b.get("type") == "tool_result":
                inner = b.get("content")
                out.append(inner if isinstance(inner, str) else blocks_text({"content": inner}))
    return "\n".join(out)


def validate(request: Any) -> str | None:
    """The real API's verdict (as the fake knows it) on a recorded model request."""
    if request.api == "anthropic":
        return validate_anthropic(request.body)
    return validate_openai(request.body)


def summary_turns(turns: list[Turn]) -> list[Turn]:
    return [t for t in turns if any(b.type == "compact_summary" for b in t.blocks)]


def user_blocks(*blocks: Block) -> Turn:
    return Turn("user", list(blocks))


@asynccontextmanager
async def open_env(tmp_path: Path, fake_provider: Any,
                   compatible: dict[str, Any] | None = None,
                   at: Path | str | None = None) -> AsyncIterator[Env]:
    """A workspace (``tests.core.hubs.fake_workspace``): a store, a hub with both fake
    providers set up (plus an OpenAI-compatible one when ``compatible`` gives its
    settings), a runner without tools, and one session; closed after. ``at``: where the
    store is (a sessions.db path or a PostgreSQL URL; default ``tmp_path/sessions.db``)."""
    ws = await fake_workspace(tmp_path, fake_provider, at=at, compatible=compatible)
    try:
        session = await ws.store.create_session()
        yield Env(ws.store, ws.hub, ws.runner, session.id)
    finally:
        await ws.close()

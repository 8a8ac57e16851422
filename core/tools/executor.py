"""Parley's own tools over its own data, as one executor the run loop calls.

:class:`ToolExecutor` offers ``set_context`` (memory), ``load_context`` /
``unload_context`` (skills) and ``session_search``, and ``search_space_documents`` to a
chat whose space's documents are too large to send (``parley.core.tools.space_documents``);
runs a round of tool calls (:meth:`ToolExecutor.run_round`), never raising for a tool's
failure; keeps the per-space tools switch; and assembles the frozen system prompt
(``parley.core.tools.system_prompt``).

The tools switch (Parley's own tools only): app state ``tools_enabled:<space_id>``
(True / False); unset means on for Anthropic and OpenAI and off for OpenAI-compatible servers,
many of which reject tools, unless the server said the model takes them
(``ModelInfo.tools``: llama.cpp's ``/props``, Ollama's ``/api/show``, LM Studio's
model list). A model whose server rejected tools is remembered
(app state ``tools_unsupported``: a list of ``provider:model``) and gets no
tools until tools are switched on again for a space.

MCP servers' tools do not follow that switch: like in Claude desktop, a
configured server is offered in every space unless the space turns it off
(``parley.core.mcp.tools.McpTools.set_server_on``). They go to a model that
takes tools at all (:meth:`ToolExecutor.takes_tools`); :meth:`ToolExecutor.offered`
says which of the two kinds go with a request.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from parley.core.app_state import TOOLS_ENABLED, TOOLS_UNSUPPORTED
from parley.core.compaction.types import Skill as ActiveSkill
from parley.core.content import Block, ToolResultBlock, ToolUseBlock, Turn
from parley.core.providers.base import ToolSpec
from parley.core.providers.capabilities import ProviderKind
from parley.core.tools.memory import MemoryStore, SetContextTool
from parley.core.tools.registry import Tool, ToolContext, run_tool, specs_of
from parley.core.tools.session_search import SessionSearchTool
from parley.core.tools.skills import (
    LoadContextTool,
    SkillLibrary,
    UnloadContextTool,
    skill_states,
    stub_unloaded,
)
from parley.core.tools.space_documents import SEARCH_TOOL, SpaceDocumentsSearchTool
from parley.core.tools.system_prompt import FrozenPrompts

if TYPE_CHECKING:
    from parley.core.store.async_store import AsyncStore
    from parley.core.store.models import Session

#: Tools are on by default for these provider kinds (the per-space switch overrides).
ON_BY_DEFAULT: frozenset[ProviderKind] = frozenset({"anthropic", "openai"})


class ToolExecutor:
    """The tools the model may call in a session, and running them.

    Args:
        store: the ``AsyncStore``.
        library: the skills (default: bundled ones plus ``<data folder>/skills``).
        mcp: the MCP servers' tools (``parley.core.mcp.tools.McpTools``), offered after
            Parley's own; None for none.
    """

    def __init__(self, store: AsyncStore, *, library: SkillLibrary | None = None,
                 mcp: Any = None) -> None:
        self.store = store
        self.mcp = mcp
        self.memories = MemoryStore(store)
        self.library = library or SkillLibrary()
        self.prompts = FrozenPrompts(store, self.memories, self.library)
        tools: Sequence[Tool] = (
            SetContextTool(self.memories),
            LoadContextTool(self.library),
            UnloadContextTool(),
            SessionSearchTool(),
        )
        self.tools: dict[str, Tool] = {t.spec.name: t for t in tools}
        #: Offered only to chats that search their space's documents (:meth:`request_specs`).
        self.document_search = SpaceDocumentsSearchTool()
        self._active: dict[str, list[str]] = {}

    # --- what is offered ------------------------------------------------------

    def specs(self, space: Any = None) -> list[ToolSpec]:
        """Return the tool definitions to send (the same list, in the same order, every time).

        Args:
            space: the session's space (reserved: every space offers the same tools).
        """
        return specs_of(list(self.tools.values()))

    async def request_specs(
        self, session: Session, turns: Sequence[Turn], *, own: bool = True, mcp: bool = True
    ) -> list[ToolSpec]:
        """Every tool a session's request carries: Parley's own (when ``own``; with
        ``search_space_documents`` when the chat's frozen prompt says it searches its
        space's documents), then its MCP servers' (when ``mcp``; their list frozen per
        session: ``parley.core.mcp.tools``). Either part alone keeps its order, so the
        list stays byte-identical per chat. Call it after :meth:`system_prompt`."""
        specs = self.specs() if own else []
        if own and await self._searches_documents(session.id):
            specs.append(self.document_search.spec)
        if mcp and self.mcp is not None:
            specs += await self.mcp.specs_for(session, turns)
        return specs

    async def _searches_documents(self, session_id: str) -> bool:
        given = await self.prompts.given(session_id)
        return given is not None and given.way == "search"

    async def enabled(
        self, space_id: str, kind: ProviderKind, model_ref: str, *, proven: bool = False
    ) -> bool:
        """True when tools go with requests of this space to this model.

        Args:
            space_id: the session's space.
            kind: the provider's API family.
            model_ref: ``provider:model``.
            proven: the model's server said it takes tools (``ModelInfo.tools``): on
                by default then, whatever the kind.
        """
        switch = await TOOLS_ENABLED.get(self.store, space_id)
        on = (kind in ON_BY_DEFAULT or proven) if switch is None else bool(switch)
        if not on:
            return False
        unsupported = await TOOLS_UNSUPPORTED.get(self.store, default=[])
        return model_ref not in (unsupported or [])

    async def takes_tools(
        self, space_id: str, kind: ProviderKind, model_ref: str, *, proven: bool = False
    ) -> bool:
        """True when this model may be sent tools at all (MCP servers' tools go then).

        That is: its kind takes tools (Anthropic, OpenAI), its server said it does
        (``proven``), or the user switched Parley's tools on for the space (so
        vouched for it); and its server has not rejected tools since.

        Args:
            space_id: the session's space.
            kind: the provider's API family.
            model_ref: ``provider:model``.
            proven: the model's server said it takes tools (``ModelInfo.tools``).
        """
        switch = await TOOLS_ENABLED.get(self.store, space_id)
        if not (kind in ON_BY_DEFAULT or proven or switch is True):
            return False
        unsupported = await TOOLS_UNSUPPORTED.get(self.store, default=[])
        return model_ref not in (unsupported or [])

    async def mcp_on(self, space_id: str) -> bool:
        """True when some configured MCP server is on in this space."""
        if self.mcp is None or not self.mcp.host.configs:
            return False
        off = set(await self.mcp.servers_off(space_id))
        return any(name not in off for name in self.mcp.host.configs)

    async def offered(
        self, space_id: str, kind: ProviderKind, model_ref: str, *, proven: bool = False
    ) -> tuple[bool, bool]:
        """Which tools go with requests of this space to this model.

        Returns:
            ``(own, mcp)``: Parley's own tools (:meth:`enabled`, the space's switch)
            and the MCP servers' (some server on in the space, and the model
            :meth:`takes_tools`). ``(False, False)``: no tools go.
        """
        own = await self.enabled(space_id, kind, model_ref, proven=proven)
        mcp = await self.mcp_on(space_id) and (
            own or await self.takes_tools(space_id, kind, model_ref, proven=proven))
        return own, mcp

    async def set_enabled(self, space_id: str, on: bool | None) -> None:
        """Switch tools on or off for a space (None: back to the provider's default).

        Switching on also forgets which models rejected tools, so they are tried again.
        """
        await TOOLS_ENABLED.set(self.store, on, space_id)
        if on:
            await TOOLS_UNSUPPORTED.set(self.store, None)

    async def mark_unsupported(self, model_ref: str) -> None:
        """Remember that this model's server rejects tools (no tools are sent to it)."""
        known = list(await TOOLS_UNSUPPORTED.get(self.store, default=[]) or [])
        if model_ref not in known:
            await TOOLS_UNSUPPORTED.set(self.store, [*known, model_ref])

    # --- the prompt and the turns sent ---------------------------------------

    async def system_prompt(
        self, session: Session, turns: Sequence[Turn], *, tools_on: bool,
        window: int | None = None,
    ) -> str | None:
        """Return the session's frozen system prompt (``FrozenPrompts.get``; ``window``:
        the model's context window in tokens, None when unknown)."""
        self.note_turns(session.id, turns)
        return await self.prompts.get(session, turns, tools_on=tools_on, window=window)

    def wire_turns(self, turns: Sequence[Turn]) -> list[Turn] | None:
        """Return the turns to put in a request, unloaded skills' output stubbed; None
        when nothing is stubbed (``turns`` go as they are: ``stub_unloaded``)."""
        return stub_unloaded(turns)

    def note_turns(self, session_id: str, turns: Sequence[Turn]) -> None:
        """Remember which skills are loaded in a session (for :meth:`active_skills`)."""
        self._active[session_id] = list(skill_states(turns).loaded)

    def active_skills(self, session_id: str) -> list[ActiveSkill]:
        """The skills loaded in a session, as compaction restores them after a summary.

        Synchronous (the ``Compactor``'s ``skills`` callback): read from the
        turns last seen by :meth:`system_prompt` / :meth:`run_round`.
        """
        out: list[ActiveSkill] = []
        for key in self._active.get(session_id, []):
            skill = self.library.get(key)
            if skill is not None:
                out.append(ActiveSkill(skill.key, skill.body))
        return out

    # --- running calls ----------------------------------------------------------

    async def run(
        self, tool_use: ToolUseBlock, ctx: ToolContext, *, own: bool = True
    ) -> ToolResultBlock:
        """Run one call; a failure comes back as an ``is_error`` result (never raised).

        An MCP tool's call goes to its server, after the user's approval
        (``parley.core.mcp.tools.McpTools.run``; the time limit counts from approval).
        With ``own`` False (Parley's tools off in the space) a call of one of them
        is refused as an unknown tool.
        """
        if self.mcp is not None and self.mcp.owns(tool_use.name):
            result: ToolResultBlock = await self.mcp.run(tool_use, ctx)
            return result
        if not own:
            return await run_tool({}, tool_use, ctx)
        if tool_use.name == SEARCH_TOOL:
            return await run_tool({SEARCH_TOOL: self.document_search}, tool_use, ctx)
        return await run_tool(self.tools, tool_use, ctx)

    async def run_round(
        self, calls: Sequence[ToolUseBlock], ctx: ToolContext, *, own: bool = True
    ) -> Turn:
        """Run the calls of one assistant turn, in order, and return the user turn of results.

        Each call sees the results of the calls before it (``ctx.turns`` grows),
        so ``load_context`` then ``unload_context`` in one turn works.

        Args:
            calls: the assistant turn's tool_use blocks.
            ctx: the session; ``ctx.turns`` ends with that assistant turn.
            own: Parley's own tools are on (else only MCP tools run: :meth:`run`).

        Returns:
            A user turn holding one tool_result per call, in the calls' order.

        Raises:
            asyncio.CancelledError: the run was stopped (nothing is returned).
        """
        results: list[Block] = []
        base = list(ctx.turns)
        for call in calls:
            step = replace(ctx, turns=[*base, Turn("user", list(results))])
            results.append(await self.run(call, step, own=own))
        turn = Turn("user", results)
        self.note_turns(ctx.session_id, [*base, turn])
        return turn

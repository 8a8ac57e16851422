"""The tool loop's rules, used by ``parley.core.chat.run``.

After a reply whose stop reason is ``tool_use`` (OpenAI's ``tool_calls``
is mapped to it by the adapter) and that holds tool_use blocks, Parley runs
the calls (``ToolExecutor.run_round``), saves the user turn of results and
sends again, until the model stops for another reason. The number of rounds
one message may take is capped by the setting ``tools.max_rounds``
(:data:`DEFAULT_MAX_ROUNDS`): when the model asks for more, its calls are
answered with error results saying the limit was reached
(:func:`limit_results`), and the model gets one last request to answer with
what it has; if it still asks for tools, the run ends there.

A server that rejects tools (many OpenAI-compatible servers answer a request
with ``tools`` with a 400 naming them; :func:`rejects_tools`) gets the request
again without tools, and the user a notice (:class:`ToolsUnavailable`).
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from parley.core.attachments.limits import MediaRefused, explain_refusal
from parley.core.content import Block, ToolUseBlock, Turn
from parley.core.providers.base import ChatRequest
from parley.core.providers.errors import BadRequest, ProviderError, ServerError
from parley.core.settings import Settings, spec
from parley.core.tools import space_images
from parley.core.tools.executor import ToolExecutor
from parley.core.tools.registry import ToolContext, text_result

if TYPE_CHECKING:
    from parley.core.providers.base import Provider
    from parley.core.store.async_store import AsyncStore
    from parley.core.store.models import Session

log = logging.getLogger(__name__)

MAX_ROUNDS_KEY = "tools.max_rounds"
DEFAULT_MAX_ROUNDS: int = spec(MAX_ROUNDS_KEY).default
#: How servers that take no tools say so: the parameter's name, or "tool choice".
#: (Pairing errors name ``tool_use`` / ``tool_calls`` / ``tool_call_id``, not these.)
_REJECTS_TOOLS = re.compile(r"\btools\b|\btool[ _-]?choice\b", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class ToolResultsSaved:
    """A round of tool calls ran; ``turn`` (a user turn of tool_results) is saved."""

    session_id: str
    turn: Turn


@dataclass(frozen=True, slots=True)
class ToolStepFinished:
    """An assistant turn that called tools is complete and saved (the run goes on)."""

    session_id: str
    turn: Turn


@dataclass(frozen=True, slots=True)
class ToolsUnavailable:
    """A notice for the user: the model's server rejected tools; the run went on without.

    Attributes:
        message: what happened and what to do, for people.
    """

    session_id: str
    model_ref: str
    message: str


@dataclass(frozen=True, slots=True)
class ToolRoundLimit:
    """A notice for the user: the model asked for more tool rounds than allowed."""

    session_id: str
    rounds: int
    message: str


async def max_rounds(store: AsyncStore) -> int:
    """Return the setting ``tools.max_rounds`` (tool rounds per message).

    Read through its declaration in ``parley.core.settings`` (1–100): an unset,
    non-integer or out-of-range value gives :data:`DEFAULT_MAX_ROUNDS`.
    """
    rounds: int = await Settings.of(store).get(MAX_ROUNDS_KEY)
    return rounds


def tool_calls(turn: Turn) -> list[ToolUseBlock]:
    """Return the tool_use blocks of a turn, in order."""
    return [b for b in turn.blocks if isinstance(b, ToolUseBlock)]


def wants_tools(turn: Turn, stop_reason: str | None) -> bool:
    """True when a finished reply asks Parley to run tools.

    Only a reply that stopped for ``tool_use`` counts: a reply cut at
    ``max_tokens`` may hold a tool call with half its input, which is not run
    (the wire rules answer it as interrupted).
    """
    return stop_reason == "tool_use" and bool(tool_calls(turn))


def rejects_tools(exc: BaseException, kind: str) -> bool:
    """True when a provider error says the server does not take tools.

    Only OpenAI-compatible servers are suspected (Anthropic and OpenAI take
    tools; their 400s about tools are about the history, not the feature).
    Seen: Ollama's "<model> does not support tools" (400), llama.cpp's "tools
    param requires --jinja flag" (500), vLLM's "auto tool choice requires
    --enable-auto-tool-choice" (400).

    Args:
        exc: the error a request raised.
        kind: the provider's API family (``openai_compatible`` …).
    """
    if kind != "openai_compatible" or not isinstance(exc, BadRequest | ServerError):
        return False
    return isinstance(exc, ProviderError) and bool(_REJECTS_TOOLS.search(exc.message))


def said_tools(provider: Provider, model_ref: str) -> bool:
    """True when the adapter knows that the model's server said it takes tools
    (``ModelInfo.tools``, learnt when it listed its models); never asks the server.

    Args:
        provider: the adapter (its ``model_info`` takes the bare model id).
        model_ref: ``provider:model``.
    """
    model_info = getattr(provider, "model_info", None)
    if model_info is None:
        return False
    info = model_info(model_ref.split(":", 1)[-1])
    return getattr(info, "tools", None) is True


def limit_results(calls: Sequence[ToolUseBlock], rounds: int) -> Turn:
    """Return the user turn answering ``calls`` when the round limit is reached.

    Every call gets an error result saying none ran and the model should answer now.
    """
    text = (
        f"Not run: this message already used its {rounds} rounds of tool calls. "
        "Answer the user now with what you have, and say what is left undone."
    )
    blocks: list[Block] = [text_result(c.id, text, is_error=True) for c in calls]
    return Turn("user", blocks)


def unavailable_message(model_ref: str, detail: str) -> str:
    """Return the notice shown when a server rejected tools.

    Args:
        model_ref: ``provider:model``.
        detail: the provider error's message; the server's own words (in
            its parentheses) are quoted when present.
    """
    quoted = re.search(r"\((.+)\)", detail)
    detail = quoted.group(1) if quoted else detail
    return (
        f"The server of {model_ref} does not accept tools, so this reply was written "
        "without memory, skills or session search, and tools stay off for this model. "
        "Switch tools on again in the space's settings once the server supports them. "
        f"(The server said: {detail})"
    )


def limit_message(rounds: int) -> str:
    """Return the notice shown when a message reached the tool-round limit."""
    return (
        f"The model asked for more than {rounds} rounds of tool calls for one message; "
        "Parley stopped running tools and asked it to answer. You can raise the limit "
        "(tools.max_rounds) in Settings."
    )


ToolEvent = ToolResultsSaved | ToolStepFinished | ToolsUnavailable | ToolRoundLimit


@dataclass
class ToolRounds:
    """The tool rounds of one run (one user message).

    Attributes:
        executor: runs the calls.
        store: the ``AsyncStore`` the results are saved to.
        session_id: the session.
        space_id: its space.
        limit: rounds allowed (``tools.max_rounds``).
        rounds: rounds answered so far (the limit's refusals included).
        own: Parley's own tools go with the requests (the space's tools switch).
        mcp: the MCP servers' tools go with them (some server on in the space).
    """

    executor: ToolExecutor
    store: AsyncStore
    session_id: str
    space_id: str
    limit: int
    rounds: int = 0
    own: bool = True
    mcp: bool = True

    async def answer(
        self, turn: Turn, stored: Sequence[Turn], emit: Callable[[ToolEvent], None]
    ) -> bool:
        """Answer the calls of a saved assistant turn and save the user turn of results.

        Within the limit the calls run; at the limit they get
        :func:`limit_results` (and the user a :class:`ToolRoundLimit` notice);
        after it too, and the run should end.

        Args:
            turn: the assistant turn asking for tools (already saved).
            stored: the session's stored turns before it.
            emit: receives :class:`ToolRoundLimit` and :class:`ToolResultsSaved`.

        Returns:
            True when the model should be asked again, False when the run ends here.

        Raises:
            asyncio.CancelledError: the run was stopped while a tool worked;
                nothing was saved for this round (the wire rules answer the
                calls as interrupted).
            StoreError: the results could not be saved.
        """
        calls = tool_calls(turn)
        answered = self.rounds
        if answered < self.limit:
            ctx = ToolContext(self.store, self.session_id, self.space_id, [*stored, turn])
            results = await self.executor.run_round(calls, ctx, own=self.own)
        else:
            results = limit_results(calls, self.limit)
            if answered == self.limit:
                emit(ToolRoundLimit(self.session_id, self.limit, limit_message(self.limit)))
        self.rounds += 1
        await asyncio.shield(self.store.append_turn(self.session_id, results))
        emit(ToolResultsSaved(self.session_id, results))
        return answered <= self.limit


class RunTools:
    """What a run asks of the tools; without an executor, requests go out as before.

    Args:
        executor: Parley's tools, or None for a runner without tools.
        store: the ``AsyncStore``.
    """

    def __init__(self, executor: ToolExecutor | None, store: AsyncStore) -> None:
        self.executor = executor
        self.store = store

    async def rounds(
        self, session: Session, provider: Provider, model_ref: str, limit: int | None = None
    ) -> ToolRounds | None:
        """The tool rounds of a run, or None when no tools go with its requests.

        Parley's own tools follow the space's switch; the MCP servers' go when some
        server is on in the space and the model takes tools
        (``ToolExecutor.offered``): either may go without the other.

        Args:
            session: the session (``id``, ``space_id``).
            provider: the adapter (its ``caps.kind`` picks the switch's default).
            model_ref: ``provider:model``.
            limit: the ``tools.max_rounds`` setting as the run read it (None: read now).
        """
        caps = getattr(provider, "caps", None)
        if self.executor is None or caps is None:
            return None
        proven = said_tools(provider, model_ref)
        own, mcp = await self.executor.offered(session.space_id, caps.kind, model_ref,
                                               proven=proven)
        if not (own or mcp):
            return None
        if limit is None:
            limit = await max_rounds(self.store)
        return ToolRounds(self.executor, self.store, session.id, session.space_id, limit,
                          own=own, mcp=mcp)

    async def system(self, session: Session, stored: Sequence[Turn], tools_on: bool,
                     window: int | None = None) -> str | None:
        """The system prompt: frozen with its blocks, or without Parley's own tools
        (``tools_on`` False) the session's own with the space's notes (and documents).
        ``window``: the model's context window, tokens (None: unknown)."""
        if self.executor is None:
            return session.system_prompt or None
        return await self.executor.system_prompt(session, stored, tools_on=tools_on,
                                                 window=window)

    async def request(
        self, session: Session, model_id: str, stored: list[Turn], tools_on: bool,
        *, own: bool = True, mcp: bool = True, window: int | None = None,
    ) -> ChatRequest:
        """The request for the stored turns, before compaction has its say.

        Args:
            session: the session.
            model_id: the model's id at its provider.
            stored: the session's stored turns.
            tools_on: tools go with the request at all.
            own: Parley's own tools go (and their part of the system prompt).
            mcp: the MCP servers' tools go.
            window: the model's context window, tokens (None: unknown): whether the
                space's documents are sent or searched.
        """
        system = await self.system(session, stored, tools_on and own, window)
        tools = (await self.executor.request_specs(session, stored, own=own, mcp=mcp)
                 if self.executor is not None and tools_on else [])
        return ChatRequest(model=model_id, turns=stored, system=system, tools=tools)

    async def finish(
        self,
        request: ChatRequest,
        session: Session,
        stored: list[Turn],
        tools_on: bool,
        *,
        compacted: bool,
        own: bool = True,
        mcp: bool = True,
        window: int | None = None,
    ) -> ChatRequest:
        """The request to send: the prompt rendered again after a compaction, unloaded
        skills' output stubbed (``parley.core.tools.skills.stub_unloaded``), and the space's
        images the chat was given put at the start of its first user turn
        (``parley.core.tools.space_images``; never saved in the turn).
        ``tools_on``, ``own``, ``mcp`` and ``window`` as for :meth:`request`."""
        if self.executor is None:
            return request
        if compacted:
            request = replace(request, system=await self.system(
                session, stored, tools_on and own, window))
            if tools_on:  # MCP tools changed since are taken now (parley.core.mcp.tools)
                request = replace(request, tools=await self.executor.request_specs(
                    session, stored, own=own, mcp=mcp))
        stubbed = self.executor.wire_turns(request.turns)
        given = await self.executor.prompts.given(session.id)
        if given is None or not given.images:  # nothing stubbed: the turns converted stay
            return request if stubbed is None else replace(request, turns=stubbed)
        turns = request.turns if stubbed is None else stubbed
        names = dict(zip(given.shas, given.names, strict=False))
        return replace(request, turns=await space_images.for_request(
            self.store, given.images, turns, names))

    async def without_images(self, request: ChatRequest, session: Session, model_ref: str,
                             error: ProviderError) -> ChatRequest | None:
        """The request again with the space's images named in words
        (``space_images.as_words``) when ``error`` is the server refusing images and the
        request carries the chat's space images; else None."""
        given = (await self.executor.prompts.given(session.id)
                 if self.executor is not None else None)
        if given is None or not given.images:
            return None
        refusal = explain_refusal(error, model_ref=model_ref, turns=request.turns)
        if not (isinstance(refusal, MediaRefused) and refusal.media == "image"):
            return None
        names = dict(zip(given.shas, given.names, strict=False))
        turns = space_images.as_words(request.turns, given.images, names)
        return replace(request, turns=turns) if turns is not None else None

    def rejected(self, exc: BaseException, request: ChatRequest, provider: Provider) -> bool:
        """True when ``exc`` is the server refusing the request's tools (:func:`rejects_tools`)."""
        kind = getattr(getattr(provider, "caps", None), "kind", "")
        return bool(request.tools) and rejects_tools(exc, kind)

    async def without_tools(
        self,
        request: ChatRequest,
        session: Session,
        stored: list[Turn],
        model_ref: str,
        error: ProviderError,
        emit: Callable[[ToolEvent], None],
    ) -> ChatRequest:
        """Remember that the model's server takes no tools, tell the user, and return
        the request without tools (and with the prompt for tools off)."""
        log.info("%s rejected tools: %s", model_ref, error)
        if self.executor is not None:
            await self.executor.mark_unsupported(model_ref)
        message = unavailable_message(model_ref, error.message)
        emit(ToolsUnavailable(session.id, model_ref, message))
        return replace(request, tools=[], system=await self.system(session, stored, False))


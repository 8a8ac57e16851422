"""The tool loop's rules, used by ``core.run``.

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

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from core.content import Block, ToolUseBlock, Turn
from core.providers.errors import BadRequest, ProviderError, ServerError
from core.tools.registry import text_result

MAX_ROUNDS_KEY = "tools.max_rounds"
DEFAULT_MAX_ROUNDS = 8
MAX_ROUNDS_BOUNDS = (1, 100)
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


async def max_rounds(store: Any) -> int:
    """Return the setting ``tools.max_rounds`` (tool rounds per message), within bounds.

    An unset, non-integer or out-of-range value gives :data:`DEFAULT_MAX_ROUNDS`.
    """
    value = await store.get_setting(MAX_ROUNDS_KEY, DEFAULT_MAX_ROUNDS)
    low, high = MAX_ROUNDS_BOUNDS
    if isinstance(value, int) and not isinstance(value, bool) and low <= value <= high:
        return value
    return DEFAULT_MAX_ROUNDS


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
    """Return the notice shown when a server rejected tools."""
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

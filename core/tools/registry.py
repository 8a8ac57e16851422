"""Tools the model may call: the protocol one tool implements, and running a call safely.

A tool is a :class:`Tool`: a :class:`~parley.core.providers.base.ToolSpec` (name,
description, JSON Schema of its input) and ``async run(input, ctx)``
returning its output text. :func:`run_tool` turns one ``tool_use`` block into
its ``tool_result`` block and never raises for a tool's failure: a
:class:`ToolError` (what went wrong, said for the model), an input that does
not match the schema, an unknown tool name, a store error, a timeout or even a
bug all become a result with ``is_error`` set that the model can read and act
on (Anthropic's tool-use guide: "return the error with is_error: true"). Only
cancellation (Stop) propagates.

Input checking covers the schema subset Parley's own tools use: ``type``
(object, string, integer, number, boolean, array), ``required``,
``properties``, ``enum``, ``maxLength``; unknown keys are refused when
``additionalProperties`` is false.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from parley.core.content import TextBlock, ToolResultBlock, ToolUseBlock, Turn
from parley.core.errors import ParleyError
from parley.core.providers.base import ToolSpec

if TYPE_CHECKING:
    from parley.core.store.async_store import AsyncStore

log = logging.getLogger(__name__)

#: A tool call running longer than this is stopped and reported as an error (seconds).
TOOL_TIMEOUT_S = 60.0

_TYPES: dict[str, tuple[type, ...]] = {
    "object": (dict,),
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "array": (list,),
}


class ToolError(ParleyError):
    """A tool could not do what it was asked; the message is shown to the model
    (and in the transcript) as the tool's error result, so it says what happened
    and what the model can do instead."""


@dataclass(frozen=True)
class ToolContext:
    """What a tool call may read: the session it runs in.

    Attributes:
        store: the ``AsyncStore``.
        session_id: the session whose run called the tool.
        space_id: that session's space.
        turns: the session's stored turns when the round began (the assistant
            turn holding the calls included), oldest first.
    """

    store: AsyncStore
    session_id: str
    space_id: str
    turns: Sequence[Turn] = field(default_factory=tuple)


class Tool(Protocol):
    """One tool: its spec and what a call does."""

    @property
    def spec(self) -> ToolSpec:
        """The name, description and input schema sent to the model."""
        ...

    async def run(self, input: Mapping[str, Any], ctx: ToolContext) -> str:
        """Do the call and return its output as text.

        Args:
            input: the call's arguments, already checked against ``spec.input_schema``.
            ctx: the session the call runs in.

        Raises:
            ToolError: the call failed in a way the model should read.
        """
        ...


def check_input(schema: Mapping[str, Any], value: Any, where: str = "input") -> str | None:
    """Check a value against the JSON Schema subset described in the module docstring.

    Args:
        schema: the schema (of the tool's whole input, or of one property).
        value: the value the model sent.
        where: the path named in the message (``input.key``).

    Returns:
        None when the value fits; otherwise one sentence naming the first problem.
    """
    kind = schema.get("type")
    if isinstance(kind, str) and kind in _TYPES:
        wanted = _TYPES[kind]
        bad_bool = isinstance(value, bool) and kind in ("integer", "number")
        if not isinstance(value, wanted) or bad_bool:
            return f"{where} must be of type {kind}, not {type(value).__name__}"
    if "enum" in schema and value not in schema["enum"]:
        allowed = ", ".join(repr(v) for v in schema["enum"])
        return f"{where} must be one of {allowed}, not {value!r}"
    limit = schema.get("maxLength")
    if isinstance(value, str) and isinstance(limit, int) and len(value) > limit:
        return f"{where} is {len(value):,} characters long; at most {limit:,} are allowed"
    if isinstance(value, dict):
        props: Mapping[str, Any] = schema.get("properties", {})
        for key in schema.get("required", ()):
            if key not in value:
                return f"{where}.{key} is required"
        for key, item in value.items():
            if key in props:
                problem = check_input(props[key], item, f"{where}.{key}")
                if problem:
                    return problem
            elif schema.get("additionalProperties") is False:
                known = ", ".join(props) or "none"
                return f"{where}.{key} is not an argument of this tool (arguments: {known})"
    return None


def text_result(tool_use_id: str, text: str, *, is_error: bool = False) -> ToolResultBlock:
    """Return a tool_result block holding one text part."""
    return ToolResultBlock(tool_use_id, (TextBlock(text),), is_error=is_error)


async def run_tool(
    tools: Mapping[str, Tool],
    call: ToolUseBlock,
    ctx: ToolContext,
    *,
    timeout_s: float = TOOL_TIMEOUT_S,
) -> ToolResultBlock:
    """Run one tool call and return its result; tool failures become error results.

    Args:
        tools: the tools on offer, by name.
        call: the model's tool_use block.
        ctx: the session the call runs in.
        timeout_s: the most a call may take (seconds).

    Returns:
        A tool_result answering ``call.id``: the tool's text, or with
        ``is_error`` set a sentence saying what went wrong (unknown tool, bad
        input, :class:`ToolError` or other Parley error, timeout, or an
        unexpected failure, which is also logged with its traceback).

    Raises:
        asyncio.CancelledError: the run was stopped while the tool worked.
    """
    tool = tools.get(call.name)
    if tool is None:
        names = ", ".join(sorted(tools)) or "none"
        return text_result(
            call.id, f"There is no tool called '{call.name}'. Tools available: {names}.",
            is_error=True,
        )
    problem = check_input(tool.spec.input_schema, dict(call.input))
    if problem:
        return text_result(call.id, f"Invalid arguments for {call.name}: {problem}.", is_error=True)
    try:
        async with asyncio.timeout(timeout_s):
            output = await tool.run(dict(call.input), ctx)
    except TimeoutError:
        message = f"{call.name} did not finish within {timeout_s:g} seconds and was stopped."
        return text_result(call.id, message, is_error=True)
    except ParleyError as exc:  # ToolError, StoreError, InvalidSearchQuery, ...
        return text_result(call.id, exc.message, is_error=True)
    except Exception as exc:  # a bug: keep the run going, tell the model, log it
        log.exception("tool %s failed", call.name)
        message = f"{call.name} failed unexpectedly ({type(exc).__name__}: {exc})."
        return text_result(call.id, message, is_error=True)
    return text_result(call.id, output)


def specs_of(tools: Sequence[Tool]) -> list[ToolSpec]:
    """Return the specs of ``tools``, in order (what ``ChatRequest.tools`` takes)."""
    return [t.spec for t in tools]

"""Assemble a streamed reply into an assistant turn.

Provider adapters yield small events (see ``parley.core.providers.base``); a
:class:`ReplyBuilder` folds them, in arrival order, into the content blocks of
one assistant turn: text, thinking (with its signature) and tool_use (with its
input JSON, streamed in pieces and parsed at its stop event).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from parley.core.content import (
    FAILED_STOP,
    OTHER_FAILURE,
    Block,
    TextBlock,
    ThinkingBlock,
    ToolUseBlock,
    Turn,
    Usage,
    new_id,
    now_ms,
)
from parley.core.providers.base import (
    Stop,
    TextDelta,
    ThinkingDelta,
    ThinkingSignature,
    ToolUseInputDelta,
    ToolUseStart,
    ToolUseStop,
    UsageUpdate,
)
from parley.core.providers.errors import ProviderError, StreamInterrupted


@dataclass
class _Part:
    kind: str  # "text" | "thinking" | "tool_use"
    text: list[str] = field(default_factory=list)
    signature: str | None = None
    tool_id: str = ""
    tool_name: str = ""
    tool_input: dict[str, Any] | None = None


class ReplyBuilder:
    """Fold provider stream events into one assistant turn.

    Args:
        turn_id: the id the finished (or journalled) turn carries.
        model: the ``provider:model`` reference stored on the turn.

    Usage is taken from the *last* :class:`UsageUpdate` (adapters report
    cumulative usage). ``stop_reason`` is the reason of the last :class:`Stop`.
    """

    def __init__(self, turn_id: str | None = None, model: str | None = None) -> None:
        self.turn_id = turn_id or new_id()
        self.model = model
        self.created_at = now_ms()
        self.usage: Usage | None = None
        self.stop_reason: str | None = None
        self._parts: list[_Part] = []
        self._tools: dict[str, _Part] = {}
        self.chars = 0

    def feed(self, event: object) -> None:
        """Apply one stream event; unknown event types are ignored."""
        if isinstance(event, TextDelta):
            self._open("text").text.append(event.text)
            self.chars += len(event.text)
        elif isinstance(event, ThinkingDelta):
            self._open("thinking").text.append(event.text)
            self.chars += len(event.text)
        elif isinstance(event, ThinkingSignature):
            self._open("thinking").signature = event.signature
        elif isinstance(event, ToolUseStart):
            part = _Part("tool_use", tool_id=event.id, tool_name=event.name)
            self._parts.append(part)
            self._tools[event.id] = part
        elif isinstance(event, ToolUseInputDelta):
            if event.id in self._tools:
                self._tools[event.id].text.append(event.partial_json)
        elif isinstance(event, ToolUseStop):
            if event.id in self._tools:
                self._tools[event.id].tool_input = dict(event.input)
        elif isinstance(event, UsageUpdate):
            self.usage = event.usage
        elif isinstance(event, Stop):
            self.stop_reason = event.reason

    def _open(self, kind: str) -> _Part:
        if not self._parts or self._parts[-1].kind != kind:
            self._parts.append(_Part(kind))
        return self._parts[-1]

    @property
    def has_content(self) -> bool:
        """True once any text, thinking or tool call has arrived."""
        return bool(self._parts)

    def blocks(self) -> list[Block]:
        """Return the blocks received so far (a tool call still streaming gets its
        partial input parsed when it is valid JSON, else ``{}``)."""
        out: list[Block] = []
        for p in self._parts:
            if p.kind == "text":
                out.append(TextBlock("".join(p.text)))
            elif p.kind == "thinking":
                out.append(ThinkingBlock("".join(p.text), p.signature))
            else:
                out.append(ToolUseBlock(p.tool_id, p.tool_name, self._tool_input(p)))
        return out

    @staticmethod
    def _tool_input(p: _Part) -> dict[str, Any]:
        if p.tool_input is not None:
            return p.tool_input
        try:
            value = json.loads("".join(p.text) or "{}")
        except json.JSONDecodeError:
            return {}
        return value if isinstance(value, dict) else {}

    def turn(self, *, aborted: bool) -> Turn:
        """Return the reply as an assistant turn (same id and time on every call).

        A complete reply that stopped at the output limit keeps that reason
        (``Turn.stop_reason == "max_tokens"``).
        """
        cut = not aborted and self.stop_reason == "max_tokens"
        return Turn(
            role="assistant",
            blocks=self.blocks(),
            id=self.turn_id,
            created_at=self.created_at,
            aborted=aborted,
            model=self.model,
            usage=self.usage,
            stop_reason="max_tokens" if cut else None,
        )


def failed_stop_reason(error: Exception) -> str:
    """The ``Turn.stop_reason`` of what a reply kept when ``error`` ended its run.

    Args:
        error: the failure (a ``ParleyError``: the stream broke, the provider sent an
            error…).

    Returns:
        ``"failed:"`` and the cause (``Turn.failure``): a broken stream's own
        (``StreamInterrupted.cause``), ``error`` for any other provider error,
        ``other`` for anything else.
    """
    if isinstance(error, StreamInterrupted):
        cause = error.cause
    elif isinstance(error, ProviderError):
        cause = "error"
    else:
        cause = OTHER_FAILURE
    return FAILED_STOP + cause

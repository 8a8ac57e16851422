"""Reading a Chat Completions reply that was asked for without streaming.

Some OpenAI-compatible servers answer a streamed request they cannot serve with
HTTP 200 and an empty stream: no chunk, no ``[DONE]``, no error
(llama-cpp-python's server does this for a prompt over its context window, and
writes the reason only to its own log). :class:`parley.core.providers.openai_provider.
OpenAIProvider` then sends the same request once more without streaming, which
such a server answers with its real error (HTTP 400 ``context_length_exceeded``)
or with a whole reply; :func:`plain_params` makes that request and
:func:`completion_events` turns a whole reply into the events a stream would
have given.
"""

from __future__ import annotations

from typing import Any, Protocol

from parley.core.providers.base import (
    Event,
    TextDelta,
    ThinkingDelta,
    ToolUseInputDelta,
    ToolUseStart,
)

#: The detail of the error raised when a stream and its unstreamed resend both gave nothing.
EMPTY_DETAIL = "the server closed the stream without a word"


class FoldLike(Protocol):
    """What of ``openai_provider._Fold`` is used here (its calls, finish and usage)."""

    calls: dict[int, Any]
    finish: str | None

    def _usage(self, raw: Any) -> Event: ...

    def close_calls(self) -> list[Event]: ...


def plain_params(params: dict[str, Any]) -> dict[str, Any]:
    """The streamed request's parameters without ``stream`` / ``stream_options``.

    Args:
        params: the Chat Completions parameters of a streamed request.

    Returns:
        A copy asking for the whole reply at once (``stream: False``).
    """
    plain = {k: v for k, v in params.items() if k not in ("stream", "stream_options")}
    plain["stream"] = False
    return plain


def completion_events(completion: Any, fold: FoldLike, new_call: Any) -> list[Event]:
    """The events of a whole ``chat.completion`` object, in stream order.

    Args:
        completion: the SDK's ``ChatCompletion``.
        fold: the attempt's fold: its ``calls`` receive the tool calls, its
            ``finish`` the finish reason, so its ``stop()`` gives the Stop event.
        new_call: ``(id, name) -> call record`` (the fold's call type).

    Returns:
        Thinking, text and tool-call events, then usage; empty when the reply
        has no choice (the caller treats that as nothing arrived). The caller
        adds ``fold.close_calls()`` and ``fold.stop()``.
    """
    out: list[Event] = []
    choices = [c for c in completion.choices or [] if c.index == 0]
    if not choices:
        return out
    choice = choices[0]
    message = choice.message
    extra = getattr(message, "model_extra", None) or {}
    reasoning = extra.get("reasoning_content") or extra.get("reasoning")
    if isinstance(reasoning, str) and reasoning:
        out.append(ThinkingDelta(reasoning))
    if message.content:
        out.append(TextDelta(message.content))
    for index, tc in enumerate(message.tool_calls or []):
        fn = getattr(tc, "function", None)
        call = new_call(tc.id, (fn and fn.name) or "")
        fold.calls[index] = call
        out.append(ToolUseStart(call.id, call.name))
        if fn is not None and fn.arguments:
            call.parts.append(fn.arguments)
            out.append(ToolUseInputDelta(call.id, fn.arguments))
    fold.finish = choice.finish_reason or "stop"
    if getattr(completion, "usage", None) is not None:
        out.append(fold._usage(completion.usage))
    return out

"""What the fake provider server is told to do next: replies and failures.

A test queues items with ``fake_provider.script(...)`` / ``fake_provider.fail(...)``;
each model request (``POST /v1/messages`` or ``POST /v1/chat/completions``) takes
the next item. With an empty queue the server answers with an echo of the last
user message (or lorem text), so a person can point the real app at it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias

FailureKind: TypeAlias = Literal[
    "auth",  # 401
    "permission",  # 403
    "not_found",  # 404, unknown model
    "rate_limit",  # 429 + retry-after
    "overloaded",  # Anthropic 529 / OpenAI 503
    "server_error",  # 500
    "prompt_too_long",  # 400 with the APIs' exact context-overflow bodies
    "bad_request",  # 400 invalid_request_error with `message`
    "mid_stream_error",  # an error event after `after_chars` streamed characters
    "cut",  # the connection dropped after `after_chars` streamed characters
    "hang",  # no response headers for `seconds` (for client timeouts)
]

FAILURE_KINDS: tuple[str, ...] = FailureKind.__args__  # type: ignore[attr-defined]

# How OpenAI-compatible servers word a context overflow (see openai_api.context_overflow).
OverflowFlavor: TypeAlias = Literal[
    "openai", "openai_new", "vllm", "llamacpp", "ollama", "lmstudio"
]

#: How an unscripted summary request is answered (``FakeProviderServer.summary_answers``):
#: ``summary`` — a summary in Parley's format; ``untagged`` — the same summary without the
#: ``<summary>`` tags; ``chatty`` — a chatty reply that is no summary, without tags;
#: ``cut`` — half of the summary, stopped at the output limit (``max_tokens``);
#: ``empty`` — an empty answer; ``error`` — HTTP 500.
SummaryAnswers: TypeAlias = Literal["summary", "untagged", "chatty", "cut", "empty", "error"]

#: What a tiny local model answers to everything (``summary_answers`` ``chatty``).
CHATTY = "Sure! Happy to help with that. Let me know if there is anything else. " * 12

LOREM = (
    "Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor "
    "incididunt ut labore et dolore magna aliqua. Ut enim ad minim veniam, quis nostrud "
    "exercitation ullamco laboris nisi ut aliquip ex ea commodo consequat."
)


@dataclass
class ToolCall:
    """A tool call the fake model makes.

    Attributes:
        name: the tool's name.
        input: the arguments (a JSON object), streamed as JSON text in chunks.
        id: the call id; generated (``toolu_…`` / ``call_…``) when None.
    """

    name: str
    input: dict[str, Any] = field(default_factory=dict)
    id: str | None = None


@dataclass
class Reply:
    """One scripted model reply.

    Attributes:
        text: the answer text; None means echo the last user message.
        thinking: extended thinking streamed before the text (Anthropic
            ``thinking_delta`` + ``signature_delta``; OpenAI-compatible
            ``reasoning_content`` deltas).
        signature: the thinking block's signature (generated when None).
        tool_calls: tool calls after the text.
        usage: overrides of the computed usage, Anthropic names
            (``input_tokens``, ``output_tokens``, ``cache_read_input_tokens``,
            ``cache_creation_input_tokens``).
        token_delay_ms: pause after each streamed chunk (a slow stream).
        chunk_size: characters per text / thinking / JSON delta.
        stop_reason: Anthropic stop reason; default ``tool_use`` when there are
            tool calls, else ``end_turn`` (mapped to OpenAI finish reasons).
    """

    text: str | None = None
    thinking: str | None = None
    signature: str | None = None
    tool_calls: list[ToolCall] = field(default_factory=list)
    usage: dict[str, int] | None = None
    token_delay_ms: float = 0.0
    chunk_size: int = 8
    stop_reason: str | None = None


@dataclass
class Failure:
    """One scripted failure.

    Attributes:
        kind: what goes wrong (see :data:`FailureKind`).
        retry_after: seconds in the ``retry-after`` header (rate_limit,
            overloaded); None sends no header.
        tokens: prompt size in the context-overflow message (None: computed).
        maximum: the context window in that message.
        flavor: OpenAI-side wording of a context overflow (compatible servers
            send flat bodies).
        message: the error message for ``bad_request`` (or an override).
        after_chars: for mid_stream_error / cut, how many characters of
            ``reply`` stream before it happens (0: before any output).
        reply: what streams before a mid-stream failure.
        seconds: how long ``hang`` holds the response back.
        error_type: the Anthropic ``error.type`` of a mid-stream error event.
    """

    kind: FailureKind
    retry_after: float | None = None
    tokens: int | None = None
    maximum: int = 200_000
    flavor: OverflowFlavor = "openai"
    message: str | None = None
    after_chars: int = 0
    reply: Reply = field(default_factory=lambda: Reply(text="Partial answer that is cut off"))
    seconds: float = 5.0
    error_type: str = "overloaded_error"


Item: TypeAlias = Reply | Failure

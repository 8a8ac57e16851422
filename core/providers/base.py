"""The one provider protocol: requests, stream events, model info.

An adapter (Anthropic, OpenAI, OpenAI-compatible) turns a :class:`ChatRequest`
holding the *stored* turns into its API's request (applying
``parley.core.wire.to_messages`` and the matching ``parley.core.convert`` function itself)
and yields :data:`Event` values while the reply streams:

- :class:`TextDelta` / :class:`ThinkingDelta` / :class:`ThinkingSignature`;
- :class:`ToolUseStart`, then :class:`ToolUseInputDelta` pieces of the input
  JSON, then :class:`ToolUseStop` with the parsed input;
- :class:`UsageUpdate` with the request's *cumulative* usage so far (the last
  one is the total; input tokens are known once the first content arrives);
- :class:`Stop` with the stop reason, last.

Failures are raised as :mod:`parley.core.providers.errors` types. Nothing is yielded
before the first piece of content, so an adapter can retry a failed attempt
without the caller seeing a duplicate.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, TypeAlias, runtime_checkable

from parley.core.content import Turn, Usage
from parley.core.providers.capabilities import ProviderCaps

ThinkingMode: TypeAlias = Literal["budget", "adaptive", "effort", "none"]
#: Where a model's context window or output limit came from: the provider itself
#: (its model list, a local server's ``/props`` or ``/api/show``, or the limit it
#: named when it refused a request), the user's ``model_overrides`` setting, the
#: built-in catalog, or a safe default for a model nobody described.
LimitSource: TypeAlias = Literal["provider", "settings", "catalog", "default"]


@dataclass(frozen=True)
class ModelInfo:
    """What Parley knows about one model.

    Attributes:
        id: the bare model id, e.g. ``claude-sonnet-4-5``.
        context_window: input + output tokens the model can hold.
        max_output_tokens: the most output tokens one request may ask for.
        input_usd_per_mtok: price of uncached input, USD per million tokens
            (None: unknown, e.g. a local model).
        output_usd_per_mtok: price of output, USD per million tokens.
        cache_read_usd_per_mtok: price of input read from the prompt cache.
        cache_write_usd_per_mtok: price of input written to the prompt cache
            (5-minute TTL; the 1-hour TTL costs twice the input price).
        display_name: a name for people (``Claude Sonnet 4.5``).
        thinking: how the model takes a thinking budget: ``budget``
            (Anthropic ``budget_tokens``), ``adaptive`` (Anthropic adaptive
            thinking, no budget), ``effort`` (OpenAI ``reasoning_effort``) or
            ``none``.
        accepts_temperature: False for models that reject a non-default
            temperature.
        known: False when this is a default guessed for an unknown model.
        window_source: where ``context_window`` came from (:data:`LimitSource`).
        output_source: where ``max_output_tokens`` came from.
        tools: whether the server said the model takes tools (a compatible server's
            ``/props``, ``/api/show``, LM Studio's list); None: not said.
    """

    id: str
    context_window: int
    max_output_tokens: int
    input_usd_per_mtok: float | None = None
    output_usd_per_mtok: float | None = None
    cache_read_usd_per_mtok: float | None = None
    cache_write_usd_per_mtok: float | None = None
    display_name: str = ""
    thinking: ThinkingMode = "none"
    accepts_temperature: bool = True
    known: bool = True
    window_source: LimitSource = "catalog"
    output_source: LimitSource = "catalog"
    tools: bool | None = None

    def cost_usd(self, usage: Usage, *, cache_write_hour: bool = False) -> float:
        """Return the cost of ``usage`` in USD (unknown prices count as 0).

        Args:
            usage: token counts of one request.
            cache_write_hour: the cache writes used the 1-hour TTL (2x input price).
        """
        write = self.cache_write_usd_per_mtok
        if cache_write_hour and self.input_usd_per_mtok is not None:
            write = 2 * self.input_usd_per_mtok
        total = (
            usage.input_tokens * (self.input_usd_per_mtok or 0.0)
            + usage.output_tokens * (self.output_usd_per_mtok or 0.0)
            + usage.cache_read_tokens * (self.cache_read_usd_per_mtok or 0.0)
            + usage.cache_write_tokens * (write or 0.0)
        )
        return round(total / 1_000_000, 8)


@dataclass(frozen=True)
class ToolSpec:
    """A tool the model may call.

    Attributes:
        name: the tool's name (letters, digits, ``_`` and ``-``).
        description: what it does, for the model.
        input_schema: a JSON Schema object for its input.
    """

    name: str
    description: str
    input_schema: dict[str, Any]


@dataclass
class ChatRequest:
    """One model request, provider-neutral.

    Attributes:
        model: the bare model id (``claude-sonnet-4-5``, not ``anthropic:…``).
        turns: the session's stored turns, raw; the adapter applies the wire
            rules and converts them.
        system: the system prompt.
        max_tokens: output limit; None means the model's output limit capped
            at :data:`DEFAULT_MAX_TOKENS_CAP` (Anthropic), the model's output
            limit bounded by what the input leaves of the window
            (OpenAI-compatible servers), or left to the server (OpenAI).
        tools: tools the model may call.
        thinking_budget: thinking tokens to allow (None: no extended
            thinking). Adaptive models ignore the number; OpenAI reasoning
            models map it to ``reasoning_effort``.
        temperature: sampling temperature (dropped with thinking and for
            models that reject it).
        cache: place prompt-cache breakpoints (Anthropic).

    The turns as sent (:meth:`messages`) are converted once per request and API: the
    length checks, the token estimate and the adapter share them. A request made with
    ``dataclasses.replace`` converts again; ``turns`` is not changed in place.
    """

    model: str
    turns: list[Turn]
    system: str | None = None
    max_tokens: int | None = None
    tools: list[ToolSpec] = field(default_factory=list)
    thinking_budget: int | None = None
    temperature: float | None = None
    cache: bool = True
    _wire: tuple[list[Turn], ProviderCaps, list[Turn]] | None = field(
        default=None, init=False, repr=False, compare=False)

    def messages(self, caps: ProviderCaps) -> list[Turn]:
        """The turns as sent to an API with ``caps``: ``parley.core.wire.to_messages`` of
        :attr:`turns`, converted once (read it, do not change it)."""
        known = self._wire
        if known is not None and known[0] is self.turns and known[1] == caps:
            return known[2]
        from parley.core.wire import to_messages

        out = to_messages(self.turns, caps)
        self._wire = (self.turns, caps, out)
        return out

    def keep_messages(self, turns: list[Turn], caps: ProviderCaps, messages: list[Turn]) -> None:
        """Take ``messages``, ``to_messages(turns, caps)`` converted already, as
        :meth:`messages` of this request when ``turns`` is its :attr:`turns` (else no-op)."""
        if turns is self.turns:
            self._wire = (turns, caps, messages)


#: The default output limit asked of models whose limit is higher (tokens).
DEFAULT_MAX_TOKENS_CAP = 32_000


@dataclass(frozen=True)
class TextDelta:
    """A piece of answer text."""

    text: str


@dataclass(frozen=True)
class ThinkingDelta:
    """A piece of extended thinking (or a compatible server's reasoning)."""

    text: str


@dataclass(frozen=True)
class ThinkingSignature:
    """The signature closing a thinking block (to send back unchanged)."""

    signature: str


@dataclass(frozen=True)
class ToolUseStart:
    """The model starts a tool call."""

    id: str
    name: str


@dataclass(frozen=True)
class ToolUseInputDelta:
    """A piece of a tool call's input JSON text."""

    id: str
    partial_json: str


@dataclass(frozen=True)
class ToolUseStop:
    """A tool call is complete; ``input`` is the parsed JSON object."""

    id: str
    input: dict[str, Any]


@dataclass(frozen=True)
class UsageUpdate:
    """The request's cumulative usage so far (the last one is the total)."""

    usage: Usage


@dataclass(frozen=True)
class Stop:
    """The reply is complete.

    ``reason``: ``end_turn`` | ``max_tokens`` | ``tool_use`` |
    ``stop_sequence`` | ``refusal`` | ``pause_turn`` | another provider value.
    """

    reason: str


Event: TypeAlias = (
    TextDelta
    | ThinkingDelta
    | ThinkingSignature
    | ToolUseStart
    | ToolUseInputDelta
    | ToolUseStop
    | UsageUpdate
    | Stop
)


@runtime_checkable
class Provider(Protocol):
    """One configured model provider.

    Attributes:
        id: the provider id used in model references (``anthropic``).
        caps: what its API accepts (read by the wire rules).
    """

    id: str
    caps: ProviderCaps

    def stream(self, request: ChatRequest) -> AsyncIterator[Event]:
        """Send the request and yield its reply as events (an async generator).

        Raises:
            ProviderError: a subclass from parley.core.providers.errors.
        """
        ...

    async def count_tokens(self, request: ChatRequest) -> int | None:
        """Return the request's input tokens by the provider's count, or None if it has none."""
        ...

    async def list_models(self) -> list[ModelInfo]:
        """Return the models the provider offers (catalog data filled in)."""
        ...

    def model_info(self, model_id: str) -> ModelInfo:
        """Return what the catalog knows of a model (defaults for unknown ones)."""
        ...

    async def aclose(self) -> None:
        """Close the HTTP connections."""
        ...

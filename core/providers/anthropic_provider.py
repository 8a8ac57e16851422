"""The Anthropic Messages API adapter (``AsyncAnthropic``, streamed raw events).

Request: the stored turns go through ``parley.core.wire.to_messages`` and
``parley.core.convert.anthropic.to_anthropic``; then prompt-cache breakpoints are set
(:mod:`parley.core.providers.cache_points`). Reply: the raw SSE events are folded
into :mod:`parley.core.providers.base` events; ``message_start``'s usage is held back
until the first content so a failed attempt can be retried unseen. Usage
records ``cache_read_input_tokens`` and ``cache_creation_input_tokens``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import AsyncGenerator, Awaitable, Callable, Mapping
from dataclasses import replace
from typing import Any

import anthropic
import httpx2

from parley.core.content import Usage
from parley.core.convert.anthropic import to_anthropic
from parley.core.providers import cache_points, catalog
from parley.core.providers.base import (
    DEFAULT_MAX_TOKENS_CAP,
    ChatRequest,
    Event,
    ModelInfo,
    Stop,
    TextDelta,
    ThinkingDelta,
    ThinkingSignature,
    ToolUseInputDelta,
    ToolUseStart,
    ToolUseStop,
    UsageUpdate,
)
from parley.core.providers.capabilities import ANTHROPIC, DEFAULT_URLS
from parley.core.providers.errors import (
    NetworkError,
    ProviderError,
    StreamInterrupted,
)
from parley.core.providers.failures import classify
from parley.core.providers.retry import RetryPolicy, call_with_retries
from parley.core.providers.sdk_provider import SdkProvider, parse_tool_input

log = logging.getLogger(__name__)

DEFAULT_BASE_URL = DEFAULT_URLS["anthropic"]
MIN_THINKING_BUDGET = 1024


class _Fold:
    """Turns raw Messages stream events into Parley events for one attempt."""

    def __init__(self, info: ModelInfo, hour_cache: bool) -> None:
        self.info = info
        self.hour_cache = hour_cache
        self.usage: dict[str, int] = {}
        self.usage_sent = False
        self.blocks: dict[int, tuple[str, str, list[str]]] = {}  # index -> (type, tool id, json)
        self.stop_reason: str | None = None
        self.stopped = False

    def _usage_event(self) -> UsageUpdate:
        u = self.usage
        usage = Usage(
            input_tokens=u.get("input_tokens", 0),
            output_tokens=u.get("output_tokens", 0),
            cache_read_tokens=u.get("cache_read_input_tokens", 0),
            cache_write_tokens=u.get("cache_creation_input_tokens", 0),
        )
        cost = self.info.cost_usd(usage, cache_write_hour=self.hour_cache)
        return UsageUpdate(replace(usage, cost_usd=cost))

    def _merge_usage(self, raw: Any) -> None:
        if raw is None:
            return
        for key in (
            "input_tokens",
            "output_tokens",
            "cache_read_input_tokens",
            "cache_creation_input_tokens",
        ):
            value = getattr(raw, key, None)
            if isinstance(value, int):
                self.usage[key] = value

    def _content(self, event: Event) -> list[Event]:
        if self.usage_sent:
            return [event]
        self.usage_sent = True
        return [self._usage_event(), event]

    def feed(self, ev: Any) -> list[Event]:
        kind = ev.type
        if kind == "message_start":
            self._merge_usage(ev.message.usage)
            return []
        if kind == "content_block_start":
            block = ev.content_block
            if block.type == "tool_use":
                self.blocks[ev.index] = ("tool_use", block.id, [])
                return self._content(ToolUseStart(block.id, block.name))
            self.blocks[ev.index] = (block.type, "", [])
            return []
        if kind == "content_block_delta":
            return self._delta(ev.index, ev.delta)
        if kind == "content_block_stop":
            btype, tool_id, parts = self.blocks.get(ev.index, ("", "", []))
            if btype == "tool_use":
                return self._content(ToolUseStop(tool_id, parse_tool_input("".join(parts))))
            return []
        if kind == "message_delta":
            self._merge_usage(ev.usage)
            self.stop_reason = ev.delta.stop_reason or self.stop_reason
            self.usage_sent = True
            return [self._usage_event()]
        if kind == "message_stop":
            self.stopped = True
            return [Stop(self.stop_reason or "end_turn")]
        return []

    def _delta(self, index: int, delta: Any) -> list[Event]:
        dtype = delta.type
        if dtype == "text_delta":
            return self._content(TextDelta(delta.text)) if delta.text else []
        if dtype == "thinking_delta":
            return self._content(ThinkingDelta(delta.thinking)) if delta.thinking else []
        if dtype == "signature_delta":
            return self._content(ThinkingSignature(delta.signature))
        if dtype == "input_json_delta":
            _, tool_id, parts = self.blocks.get(index, ("tool_use", "", []))
            parts.append(delta.partial_json)
            if not delta.partial_json:
                return []
            return self._content(ToolUseInputDelta(tool_id, delta.partial_json))
        return []


class AnthropicProvider(SdkProvider[anthropic.AsyncAnthropic]):
    """A provider speaking the Anthropic Messages API.

    Args:
        api_key: the key (None: requests fail with AuthenticationFailed(missing)).
        base_url: the API root (``ANTHROPIC_BASE_URL`` style, without ``/v1``).
        id: the provider id in model references.
        name: the display name used in messages.
        retry: when to send a failed request again.
        timeout_s: read timeout per request, seconds.
        connect_timeout_s: connect timeout, seconds.
        cache_ttl_s: prompt cache TTL to ask for (300 or 3600).
        model_overrides: catalog overrides from settings.
        sleep: the wait used between retries (injectable for tests).
    """

    _WARM_ATTRIBUTES = ("messages", "models")
    _WARM_MODULES = ("anyio._backends._asyncio", "opentelemetry.propagate")

    def warm(self) -> None:
        """:meth:`SdkProvider.warm`, and the SDK's validator of stream events built: the
        SDK builds it (a pydantic schema of the events' union, 50-100 ms) at the first
        event of the first reply, on the GUI thread (issue 33). Never fails."""
        super().warm()
        with contextlib.suppress(Exception):
            from anthropic._models import construct_type
            from anthropic.types import RawMessageStreamEvent

            construct_type(value={"type": "message_stop"}, type_=RawMessageStreamEvent)

    def __init__(
        self,
        api_key: str | None,
        base_url: str | None = None,
        *,
        id: str = "anthropic",
        name: str = "Anthropic",
        retry: RetryPolicy | None = None,
        timeout_s: float = 600.0,
        connect_timeout_s: float = 10.0,
        cache_ttl_s: int = 300,
        model_overrides: Mapping[str, Mapping[str, Any]] | None = None,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        self._setup(api_key=api_key, base_url=base_url or DEFAULT_BASE_URL, id=id, name=name,
                    retry=retry, model_overrides=model_overrides, sleep=sleep)
        self.caps = replace(ANTHROPIC, cache_ttl_s=cache_ttl_s)
        if self._key:
            self._client = anthropic.AsyncAnthropic(
                api_key=self._key,
                base_url=self.base_url,
                max_retries=0,
                timeout=httpx2.Timeout(timeout_s, connect=connect_timeout_s),
            )

    def __repr__(self) -> str:
        key = "set" if self._key else "missing"
        return f"AnthropicProvider(id={self.id!r}, base_url={self.base_url!r}, key={key})"

    # --- request building ------------------------------------------------

    def model_info(self, model_id: str) -> ModelInfo:
        """Return what is known of a model: the limits the API listed for it, else the
        catalog entry (with settings overrides)."""
        return self._with_reported(catalog.lookup("anthropic", model_id, self.model_overrides))

    def request_params(self, request: ChatRequest) -> dict[str, Any]:
        """Return the Messages API parameters for a request (without ``stream``).

        The stored turns go through the wire rules and the converter; breakpoints
        go on the system prompt (or last tool) and on the moving end (see
        :mod:`parley.core.providers.cache_points`) when ``request.cache``.
        """
        info = self.model_info(request.model)
        ttl = self.caps.cache_ttl_s or 300
        lost: list[str] = []
        messages = to_anthropic(request.messages(self.caps), lost=lost)
        if lost:
            log.debug("not sent to %s: %s", self.name, "; ".join(lost))
        if request.cache:
            messages = cache_points.mark_messages(messages, ttl)
        params: dict[str, Any] = {"model": request.model, "messages": messages}
        tools = [
            {"name": t.name, "description": t.description, "input_schema": t.input_schema}
            for t in request.tools
        ]
        if request.system:
            params["system"] = cache_points.system_blocks(request.system, ttl, request.cache)
        elif tools and request.cache:
            tools = cache_points.mark_last_tool(tools, ttl)
        if tools:
            params["tools"] = tools
        max_tokens = request.max_tokens or min(info.max_output_tokens, DEFAULT_MAX_TOKENS_CAP)
        thinking: dict[str, Any] | None = None
        if request.thinking_budget and info.thinking == "adaptive":
            thinking = {"type": "adaptive"}
        elif request.thinking_budget and info.thinking == "budget":
            budget = max(MIN_THINKING_BUDGET, request.thinking_budget)
            if budget >= max_tokens:
                max_tokens = min(info.max_output_tokens, budget + 8192)
            budget = min(budget, max(MIN_THINKING_BUDGET, max_tokens - MIN_THINKING_BUDGET))
            thinking = {"type": "enabled", "budget_tokens": budget}
        params["max_tokens"] = max_tokens
        if thinking is not None:
            params["thinking"] = thinking
        elif request.temperature is not None and info.accepts_temperature:
            params["temperature"] = request.temperature
        return params

    # --- protocol --------------------------------------------------------

    def _map(self, exc: BaseException, model: str, in_stream: bool) -> ProviderError:
        if isinstance(exc, ProviderError):
            return exc
        if isinstance(exc, anthropic.APIStatusError):
            status = exc.status_code if exc.status_code >= 400 else None
            return classify(
                self.name,
                status,
                exc.body,
                headers=exc.response.headers,
                model=model,
                secrets=[self._key],
            )
        if isinstance(exc, anthropic.APITimeoutError):
            if in_stream:
                return StreamInterrupted(self.name, "no data arrived in time")
            return NetworkError(self.name, self.base_url, timed_out=True)
        if isinstance(exc, anthropic.APIConnectionError | httpx2.TransportError):
            if in_stream:
                return StreamInterrupted(self.name)
            return NetworkError(self.name, self.base_url)
        if isinstance(exc, ValueError):  # malformed SSE data
            return StreamInterrupted(self.name, "the server sent data Parley could not read")
        raise exc

    async def _attempt(
        self, params: dict[str, Any], info: ModelInfo
    ) -> AsyncGenerator[Event, None]:
        client = self._require_client()
        try:
            stream = await client.messages.create(**params, stream=True)
        except (anthropic.APIError, httpx2.HTTPError) as exc:
            raise self._map(exc, params["model"], in_stream=False) from None
        fold = _Fold(info, hour_cache=(self.caps.cache_ttl_s or 0) >= 3600)
        try:
            async for raw in stream:
                for event in fold.feed(raw):
                    yield event
        except (anthropic.APIError, httpx2.HTTPError, json.JSONDecodeError) as exc:
            raise self._map(exc, params["model"], in_stream=True) from None
        finally:
            await stream.close()
        if not fold.stopped:
            raise StreamInterrupted(self.name, "the stream ended before the reply was complete")

    async def count_tokens(self, request: ChatRequest) -> int | None:
        """Return the input tokens of ``request`` by the API's count_tokens endpoint.

        Raises:
            ProviderError: as for :meth:`stream` (no stream errors).
        """
        client = self._require_client()
        params = self.request_params(request)
        params.pop("max_tokens", None)
        params.pop("temperature", None)

        async def call() -> int:
            try:
                result = await client.messages.count_tokens(**params)
            except (anthropic.APIError, httpx2.HTTPError) as exc:
                raise self._map(exc, request.model, in_stream=False) from None
            return int(result.input_tokens)

        return await call_with_retries(call, self.retry, self._sleep)

    async def list_models(self) -> list[ModelInfo]:
        """Return the models the API lists, with catalog data.

        The limits the API gives (``max_input_tokens``, ``max_tokens``) win over
        the catalog's and are remembered for :meth:`model_info`.
        """
        client = self._require_client()

        async def call() -> list[ModelInfo]:
            out: list[ModelInfo] = []
            try:
                async for m in client.models.list(limit=100):
                    window = getattr(m, "max_input_tokens", None)
                    output = getattr(m, "max_tokens", None)
                    self.remember_limits(
                        m.id,
                        window if isinstance(window, int) else None,
                        output if isinstance(output, int) else None,
                    )
                    info = self.model_info(m.id)
                    out.append(replace(info, display_name=m.display_name or info.display_name))
            except (anthropic.APIError, httpx2.HTTPError) as exc:
                raise self._map(exc, "", in_stream=False) from None
            return out

        return await call_with_retries(call, self.retry, self._sleep)

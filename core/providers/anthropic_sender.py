"""The Anthropic half that needs the ``anthropic`` SDK: sending, in the provider process.

:class:`AnthropicSender` makes the ``AsyncAnthropic`` client (its own retries off:
``parley.core.providers.retry`` is the one policy) and does one attempt at a request
built by :class:`parley.core.providers.anthropic_provider.AnthropicProvider`: the raw
SSE events are folded into :mod:`parley.core.providers.base` events;
``message_start``'s usage is held back until the first content so a failed attempt
can be retried unseen. Usage records ``cache_read_input_tokens`` and
``cache_creation_input_tokens``. SDK and HTTP failures become
:mod:`parley.core.providers.errors` types (:func:`parley.core.providers.failures.classify`).
It runs in the provider process (``parley.core.providers.process.worker``).
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncGenerator
from dataclasses import replace
from typing import Any

import anthropic
import httpx2

from parley.core.content import Usage
from parley.core.providers.base import (
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
from parley.core.providers.errors import NetworkError, ProviderError, StreamInterrupted
from parley.core.providers.failures import classify
from parley.core.providers.process.protocol import ListedModel, SenderSpec
from parley.core.providers.sdk_provider import parse_tool_input


def warm() -> None:
    """Load what the SDK loads at its first request (its async HTTP backend, the tracing
    propagator) and build its validator of stream events (a pydantic schema of the
    events' union, 50-100 ms, else built at the first event of the first reply).
    Never fails: what cannot be loaded now is loaded by the request."""
    for module in ("anyio._backends._asyncio", "opentelemetry.propagate"):
        with contextlib.suppress(Exception):
            __import__(module)
    with contextlib.suppress(Exception):
        from anthropic._models import construct_type
        from anthropic.types import RawMessageStreamEvent

        construct_type(value={"type": "message_stop"}, type_=RawMessageStreamEvent)


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


class AnthropicSender:
    """Sends Messages API requests with the ``anthropic`` SDK (see the module docstring).

    Args:
        spec: the provider's address, key, timeouts and prompt-cache TTL. Without a
            key no client is made (the adapter refuses before sending).
    """

    def __init__(self, spec: SenderSpec) -> None:
        self.name = spec.name
        self.base_url = spec.base_url
        self._key = spec.api_key
        self._hour_cache = spec.cache_ttl_s >= 3600
        self._client = anthropic.AsyncAnthropic(
            api_key=spec.api_key or "",
            base_url=spec.base_url,
            max_retries=0,
            timeout=httpx2.Timeout(spec.timeout_s, connect=spec.connect_timeout_s),
        )
        for resource in ("messages", "models"):  # loaded lazily by the SDK
            getattr(self._client, resource, None)

    def _map(
        self, exc: BaseException, model: str, in_stream: bool, arrived: bool = True
    ) -> ProviderError:
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
                return StreamInterrupted(self.name, "no data arrived in time",
                                         nothing_arrived=not arrived, cause="timeout")
            return NetworkError(self.name, self.base_url, timed_out=True)
        if isinstance(exc, anthropic.APIConnectionError | httpx2.TransportError):
            if in_stream:
                return StreamInterrupted(self.name, nothing_arrived=not arrived)
            return NetworkError(self.name, self.base_url)
        if isinstance(exc, ValueError):  # malformed SSE data
            return StreamInterrupted(self.name, "the server sent data Parley could not read",
                                     cause="unreadable")
        raise exc

    async def attempt(
        self, params: dict[str, Any], info: ModelInfo
    ) -> AsyncGenerator[Event, None]:
        """One try at a streamed reply (``params``: the Messages API parameters without
        ``stream``; ``info``: the model, for the cost). Yields its events.

        Raises:
            ProviderError: the failure, mapped (StreamInterrupted when the stream ended
                before ``message_stop``).
        """
        try:
            stream = await self._client.messages.create(**params, stream=True)
        except (anthropic.APIError, httpx2.HTTPError) as exc:
            raise self._map(exc, params["model"], in_stream=False) from None
        fold = _Fold(info, hour_cache=self._hour_cache)
        try:
            async for raw in stream:
                for event in fold.feed(raw):
                    yield event
        except (anthropic.APIError, httpx2.HTTPError, json.JSONDecodeError) as exc:
            # Nothing of the reply shown yet: its message must not speak of a kept part.
            raise self._map(exc, params["model"], in_stream=True,
                            arrived=fold.usage_sent) from None
        finally:
            await stream.close()
        if not fold.stopped:
            raise StreamInterrupted(self.name, "the stream ended before the reply was complete",
                                    cause="ended")

    async def count(self, params: dict[str, Any]) -> int:
        """The input tokens of a request by the API's ``count_tokens`` endpoint.

        Raises:
            ProviderError: the failure, mapped.
        """
        try:
            result = await self._client.messages.count_tokens(**params)
        except (anthropic.APIError, httpx2.HTTPError) as exc:
            raise self._map(exc, str(params.get("model", "")), in_stream=False) from None
        return int(result.input_tokens)

    async def models(self) -> list[ListedModel]:
        """The models the API lists, with the limits it gives (``max_input_tokens``,
        ``max_tokens``) and display names.

        Raises:
            ProviderError: the failure, mapped.
        """
        out: list[ListedModel] = []
        try:
            async for m in self._client.models.list(limit=100):
                window = getattr(m, "max_input_tokens", None)
                output = getattr(m, "max_tokens", None)
                out.append(ListedModel(
                    m.id, m.display_name or "",
                    window if isinstance(window, int) else None,
                    output if isinstance(output, int) else None,
                ))
        except (anthropic.APIError, httpx2.HTTPError) as exc:
            raise self._map(exc, "", in_stream=False) from None
        return out

    async def server_json(self, method: str, path: str, body: Any = None) -> Any:
        """Anthropic's API has no server endpoints of its own to ask: None."""
        return None

    async def close(self) -> None:
        """Close the HTTP connections."""
        await self._client.close()


def make_sender(spec: SenderSpec) -> AnthropicSender:
    """The sender of ``spec`` (the provider process's entry to this module)."""
    return AnthropicSender(spec)

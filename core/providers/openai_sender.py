"""The OpenAI half that needs the ``openai`` SDK: sending, in the provider process.

:class:`OpenAISender` makes the ``AsyncOpenAI`` client (:mod:`parley.core.providers.
openai_client`; its own retries off) and does one attempt at a Chat Completions request
built by :class:`parley.core.providers.openai_provider.OpenAIProvider`: the chunks are
folded into :mod:`parley.core.providers.base` events (compatible servers'
``reasoning_content`` / ``reasoning`` deltas become thinking; the last chunk's usage,
with ``prompt_tokens_details.cached_tokens``, becomes usage). A compatible server's
stream that ends before its first chunk is sent once more unstreamed, to read the real
error or the whole reply (:mod:`parley.core.providers.openai_unstreamed`). Without a
key, each request says it has no Authorization header on purpose (never the
environment's ``OPENAI_API_KEY``). It runs in the provider process
(``parley.core.providers.process.worker``).
"""

from __future__ import annotations

import contextlib
import json
import uuid
from collections.abc import AsyncGenerator
from dataclasses import dataclass, field, replace
from typing import Any

import httpx2
import openai

from parley.core.content import Usage
from parley.core.providers.base import (
    Event,
    ModelInfo,
    Stop,
    TextDelta,
    ThinkingDelta,
    ToolUseInputDelta,
    ToolUseStart,
    ToolUseStop,
    UsageUpdate,
)
from parley.core.providers.errors import NetworkError, ProviderError, StreamInterrupted
from parley.core.providers.failures import classify
from parley.core.providers.openai_client import make_client
from parley.core.providers.openai_unstreamed import EMPTY_DETAIL, completion_events, plain_params
from parley.core.providers.process.protocol import ListedModel, SenderSpec
from parley.core.providers.sdk_provider import parse_tool_input

#: Seconds to wait for a compatible server's ``/props`` or ``/api/show``.
SERVER_PROBE_TIMEOUT_S = 5.0

FINISH_REASONS = {
    "stop": "end_turn",
    "length": "max_tokens",
    "tool_calls": "tool_use",
    "function_call": "tool_use",
    "content_filter": "refusal",
}


def warm() -> None:
    """Load what the SDK loads at its first request (its async HTTP backend, the JSON
    parser of its streams). Never fails."""
    for module in ("anyio._backends._asyncio", "jiter"):
        with contextlib.suppress(Exception):
            __import__(module)


@dataclass
class _Call:
    id: str
    name: str
    parts: list[str] = field(default_factory=list)
    closed: bool = False


class _Fold:
    """Turns chat.completion.chunk objects into Parley events for one attempt."""

    def __init__(self, info: ModelInfo) -> None:
        self.info = info
        self.calls: dict[int, _Call] = {}
        self.finish: str | None = None

    def _usage(self, raw: Any) -> UsageUpdate:
        details = getattr(raw, "prompt_tokens_details", None)
        cached = getattr(details, "cached_tokens", None) or 0
        prompt = raw.prompt_tokens or 0
        usage = Usage(
            input_tokens=max(0, prompt - cached),
            output_tokens=raw.completion_tokens or 0,
            cache_read_tokens=cached,
        )
        return UsageUpdate(replace(usage, cost_usd=self.info.cost_usd(usage)))

    def feed(self, chunk: Any) -> list[Event]:
        out: list[Event] = []
        for choice in chunk.choices or []:
            if choice.index != 0:
                continue
            out.extend(self._delta(choice.delta))
            if choice.finish_reason:
                self.finish = choice.finish_reason
                out.extend(self.close_calls())
        if getattr(chunk, "usage", None) is not None:
            out.append(self._usage(chunk.usage))
        return out

    def _delta(self, delta: Any) -> list[Event]:
        out: list[Event] = []
        if delta is None:
            return out
        extra = delta.model_extra or {}
        reasoning = extra.get("reasoning_content") or extra.get("reasoning")
        if isinstance(reasoning, str) and reasoning:
            out.append(ThinkingDelta(reasoning))
        if delta.content:
            out.append(TextDelta(delta.content))
        for tc in delta.tool_calls or []:
            call = self.calls.get(tc.index)
            fn = tc.function
            if call is None:
                call = _Call(tc.id or "call_" + uuid.uuid4().hex[:24], (fn and fn.name) or "")
                self.calls[tc.index] = call
                out.append(ToolUseStart(call.id, call.name))
            if fn is not None and fn.arguments:
                call.parts.append(fn.arguments)
                out.append(ToolUseInputDelta(call.id, fn.arguments))
        return out

    def close_calls(self) -> list[Event]:
        out: list[Event] = []
        for index in sorted(self.calls):
            call = self.calls[index]
            if not call.closed:
                call.closed = True
                out.append(ToolUseStop(call.id, parse_tool_input("".join(call.parts))))
        return out

    def stop(self) -> Stop:
        reason = FINISH_REASONS.get(self.finish or "stop", self.finish or "end_turn")
        if self.calls and reason == "end_turn":  # some servers say "stop" after tool calls
            reason = "tool_use"
        return Stop(reason)


class OpenAISender:
    """Sends Chat Completions requests with the ``openai`` SDK (see the module docstring).

    Args:
        spec: the server's address, key (optional for a compatible server) and timeouts.
    """

    def __init__(self, spec: SenderSpec) -> None:
        self.name = spec.name
        self.base_url = spec.base_url
        self.kind = spec.kind
        self._key = spec.api_key
        self._client = make_client(
            spec.api_key, spec.base_url, spec.timeout_s, spec.connect_timeout_s,
            error_lines=spec.kind == "openai_compatible",
        )
        # Without a key, each request says it has no Authorization header on purpose.
        self._headers: dict[str, Any] = {} if self._key else {"Authorization": openai.Omit()}
        for resource in ("chat.completions", "models"):  # loaded lazily by the SDK
            target: Any = self._client
            for name in resource.split("."):
                target = getattr(target, name, None)

    def _map(
        self, exc: BaseException, model: str, in_stream: bool, arrived: bool = True
    ) -> ProviderError:
        if isinstance(exc, openai.APIStatusError):
            return classify(
                self.name,
                exc.status_code,
                exc.body,
                headers=exc.response.headers,
                model=model,
                secrets=[self._key],
            )
        if isinstance(exc, openai.APITimeoutError):
            if in_stream:
                return StreamInterrupted(self.name, "no data arrived in time",
                                         nothing_arrived=not arrived, cause="timeout")
            return NetworkError(self.name, self.base_url, timed_out=True)
        if isinstance(exc, openai.APIConnectionError | httpx2.TransportError):
            if in_stream:
                return StreamInterrupted(self.name, nothing_arrived=not arrived)
            return NetworkError(self.name, self.base_url)
        if isinstance(exc, openai.APIError):  # an error object inside the stream
            return classify(
                self.name,
                None,
                exc.body if exc.body is not None else exc.message,
                model=model,
                secrets=[self._key],
            )
        return StreamInterrupted(self.name, "the server sent data Parley could not read",
                                 cause="unreadable")

    async def attempt(
        self, params: dict[str, Any], info: ModelInfo
    ) -> AsyncGenerator[Event, None]:
        """One try at a streamed reply (``params``: the Chat Completions parameters;
        ``info``: the model, for the cost). Yields its events.

        Raises:
            ProviderError: the failure, mapped (StreamInterrupted when the stream ended
                before its finish reason).
        """
        client = self._client
        try:
            stream = await client.chat.completions.create(**params, extra_headers=self._headers)
        except (openai.APIError, httpx2.HTTPError) as exc:
            raise self._map(exc, params["model"], in_stream=False) from None
        fold = _Fold(info)
        chunks = 0
        try:
            async for chunk in stream:
                chunks += 1
                for event in fold.feed(chunk):
                    yield event
        except (openai.APIError, httpx2.HTTPError, json.JSONDecodeError) as exc:
            raise self._map(exc, params["model"], in_stream=True, arrived=chunks > 0) from None
        finally:
            await stream.close()
        if not chunks and self.kind == "openai_compatible":
            async for event in self._unstreamed(params, fold):
                yield event
            return
        if fold.finish is None:
            if not chunks:
                raise StreamInterrupted(self.name, EMPTY_DETAIL, nothing_arrived=True)
            raise StreamInterrupted(self.name, "the stream ended before the reply was complete",
                                    cause="ended")
        for event in fold.close_calls():
            yield event
        yield fold.stop()

    async def _unstreamed(self, params: dict[str, Any], fold: _Fold) -> AsyncGenerator[Event, None]:
        """Send a request whose stream ended with no chunk at all once more, unstreamed
        (see :mod:`parley.core.providers.openai_unstreamed`): its whole reply, or its real error.

        Raises:
            ContextOverflow: the server refused the prompt as over its window.
            ProviderError: the refusal it gave, mapped; StreamInterrupted
                (``nothing_arrived``) when it gave nothing readable either.
        """
        client = self._client
        try:
            completion = await client.chat.completions.create(
                **plain_params(params), extra_headers=self._headers
            )
        except (openai.APIError, httpx2.HTTPError) as exc:
            error = self._map(exc, params["model"], in_stream=False)
            if isinstance(error, NetworkError):  # the server is gone: say what happened first
                raise StreamInterrupted(self.name, EMPTY_DETAIL, nothing_arrived=True) from None
            raise error from None
        events = completion_events(completion, fold, lambda i, n: _Call(
            i or "call_" + uuid.uuid4().hex[:24], n))
        if not events and not fold.calls:
            raise StreamInterrupted(self.name, EMPTY_DETAIL, nothing_arrived=True)
        for event in events:
            yield event
        for event in fold.close_calls():
            yield event
        yield fold.stop()

    async def count(self, params: dict[str, Any]) -> int:
        """Chat Completions has no token-counting endpoint (the adapter never asks)."""
        raise NotImplementedError

    async def models(self) -> list[ListedModel]:
        """The models ``GET /models`` lists (a compatible server's own fields in ``extra``).

        Raises:
            ProviderError: the failure, mapped.
        """
        try:
            models = self._client.models.list(extra_headers=self._headers)
            entries = [m async for m in models]
        except (openai.APIError, httpx2.HTTPError) as exc:
            raise self._map(exc, "", in_stream=False) from None
        return [ListedModel(m.id, extra=dict(m.model_extra or {})) for m in entries]

    async def server_json(self, method: str, path: str, body: Any = None) -> Any:
        """GET or POST one of the server's own endpoints (``path`` from the server's root,
        :func:`parley.core.providers.server_limits.server_root`); None when it fails or
        is not JSON."""
        from parley.core.providers.server_limits import server_root

        url = server_root(self.base_url) + path
        options: Any = {"headers": self._headers, "timeout": SERVER_PROBE_TIMEOUT_S}
        try:
            if method == "post":
                response = await self._client.post(url, body=body, cast_to=httpx2.Response,
                                                   options=options)
            else:
                response = await self._client.get(url, cast_to=httpx2.Response,
                                                  options=options)
            return response.json()
        except (openai.APIError, httpx2.HTTPError, ValueError):
            return None

    async def close(self) -> None:
        """Close the HTTP connections."""
        await self._client.close()


def make_sender(spec: SenderSpec) -> OpenAISender:
    """The sender of ``spec`` (the provider process's entry to this module)."""
    return OpenAISender(spec)

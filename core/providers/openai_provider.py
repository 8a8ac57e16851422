"""The OpenAI Chat Completions adapter, also for OpenAI-compatible servers.

One class serves OpenAI (``kind="openai"``) and any server speaking the same
API at a user-set base URL (``kind="openai_compatible"``: Ollama
``http://localhost:11434/v1``, LM Studio ``http://localhost:1234/v1``,
llama.cpp ``http://localhost:8080/v1``, vLLM ``http://localhost:8000/v1``),
where the key is optional and the model list comes from ``GET /v1/models``.

Streams ask for ``stream_options.include_usage`` so the last chunk carries the
usage, including ``prompt_tokens_details.cached_tokens`` (OpenAI's automatic
prompt cache). Compatible servers' ``reasoning_content`` / ``reasoning``
deltas become thinking. A compatible server's requests always carry
``max_tokens`` (:func:`parley.core.providers.server_limits.output_budget`), and its
model list is completed with the limits the server tells
(:mod:`parley.core.providers.server_limits`). A compatible server's stream that ends
before its first chunk is sent once more unstreamed, to read the real error
(llama-cpp-python's over-window refusal) or the whole reply
(:mod:`parley.core.providers.openai_unstreamed`).
"""

from __future__ import annotations

import asyncio
import json
import logging
import uuid
from collections.abc import AsyncGenerator, Awaitable, Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import httpx2
import openai

from parley.core.content import Usage
from parley.core.convert.openai import to_openai
from parley.core.providers import catalog, server_limits
from parley.core.providers.base import (
    ChatRequest,
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
from parley.core.providers.capabilities import CAPS_BY_KIND, DEFAULT_URLS, ProviderKind
from parley.core.providers.errors import (
    NetworkError,
    ProviderError,
    StreamInterrupted,
)
from parley.core.providers.failures import classify
from parley.core.providers.openai_client import make_client
from parley.core.providers.openai_unstreamed import EMPTY_DETAIL, completion_events, plain_params
from parley.core.providers.retry import RetryPolicy, call_with_retries
from parley.core.providers.sdk_provider import SdkProvider, parse_tool_input

log = logging.getLogger(__name__)

DEFAULT_BASE_URL = DEFAULT_URLS["openai"]
#: Seconds to wait for a compatible server's ``/props`` or ``/api/show``.
SERVER_PROBE_TIMEOUT_S = 5.0
#: At most this many models of one server are asked for their window one by one.
MAX_SHOW_PROBES = 32

FINISH_REASONS = {
    "stop": "end_turn",
    "length": "max_tokens",
    "tool_calls": "tool_use",
    "function_call": "tool_use",
    "content_filter": "refusal",
}


def reasoning_effort(budget: int) -> str:
    """Map a thinking budget (tokens) to OpenAI's ``reasoning_effort``."""
    if budget <= 2_048:
        return "low"
    if budget <= 16_384:
        return "medium"
    return "high"


_NOT_CHAT = (
    "audio",
    "realtime",
    "transcribe",
    "tts",
    "image",
    "embedding",
    "search",
    "moderation",
    "instruct",
    "codex",
)


def chat_models_first(ids: list[str]) -> list[str]:
    """Keep OpenAI's chat models (dropping embeddings, audio, images…), catalog ones first.

    Args:
        ids: model ids from ``GET /v1/models``.

    Returns:
        Models from the catalog in catalog order, then other ``gpt-``/``o``-series
        chat models sorted by id.
    """
    chat = [
        i
        for i in ids
        if i.startswith(("gpt-", "o1", "o3", "o4", "chatgpt-"))
        and not any(w in i for w in _NOT_CHAT)
    ]
    order = {m.id: n for n, m in enumerate(catalog.known_models("openai"))}
    known = sorted((i for i in chat if i in order), key=order.__getitem__)
    return known + sorted(i for i in chat if i not in order)


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


class OpenAIProvider(SdkProvider[openai.AsyncOpenAI]):
    """A provider speaking OpenAI Chat Completions (OpenAI or a compatible server).

    Args:
        api_key: the key; optional for ``openai_compatible`` (local servers).
        base_url: the API root including ``/v1``.
        kind: ``openai`` or ``openai_compatible``.
        id: the provider id in model references.
        name: the display name used in messages.
        retry: when to send a failed request again.
        timeout_s: read timeout per request, seconds.
        connect_timeout_s: connect timeout, seconds.
        model_overrides: catalog overrides from settings.
        sleep: the wait used between retries (injectable for tests).
    """

    _WARM_ATTRIBUTES = ("chat.completions", "models")
    _WARM_MODULES = ("anyio._backends._asyncio", "jiter")

    def __init__(
        self,
        api_key: str | None,
        base_url: str | None = None,
        *,
        kind: ProviderKind = "openai",
        id: str = "openai",
        name: str = "OpenAI",
        retry: RetryPolicy | None = None,
        timeout_s: float = 600.0,
        connect_timeout_s: float = 10.0,
        model_overrides: Mapping[str, Mapping[str, Any]] | None = None,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        if kind == "anthropic":
            raise ValueError("OpenAIProvider serves the openai and openai_compatible kinds")
        self._setup(api_key=api_key, base_url=base_url or DEFAULT_BASE_URL, id=id, name=name,
                    retry=retry, model_overrides=model_overrides, sleep=sleep)
        self.kind: ProviderKind = kind
        self.caps = CAPS_BY_KIND[kind]
        if self._key or kind == "openai_compatible":
            self._client = make_client(
                self._key, self.base_url, timeout_s, connect_timeout_s,
                error_lines=kind == "openai_compatible",
            )
        # Without a key, each request says it has no Authorization header on purpose.
        self._headers: dict[str, Any] = {} if self._key else {"Authorization": openai.Omit()}

    def __repr__(self) -> str:
        key = "set" if self._key else "none"
        return (
            f"OpenAIProvider(id={self.id!r}, kind={self.kind!r}, "
            f"base_url={self.base_url!r}, key={key})"
        )

    def model_info(self, model_id: str) -> ModelInfo:
        """Return what is known of a model: the limits the server gave for it, else
        the catalog entry (with settings overrides) or the local defaults."""
        return self._with_reported(catalog.lookup(self.kind, model_id, self.model_overrides))

    def request_params(self, request: ChatRequest) -> dict[str, Any]:
        """Return the Chat Completions parameters for a request (streaming, usage included)."""
        info = self.model_info(request.model)
        lost: list[str] = []
        turns = request.messages(self.caps)
        messages = to_openai(turns, system=request.system, lost=lost)
        if lost:
            log.debug("not sent to %s: %s", self.name, "; ".join(lost))
        params: dict[str, Any] = {
            "model": request.model,
            "messages": messages,
            "stream": True,
            "stream_options": {"include_usage": True},
        }
        if request.tools:
            params["tools"] = [
                {
                    "type": "function",
                    "function": {
                        "name": t.name,
                        "description": t.description,
                        "parameters": t.input_schema,
                    },
                }
                for t in request.tools
            ]
        if request.max_tokens:
            # OpenAI's reasoning models take only max_completion_tokens; servers know max_tokens.
            key = "max_completion_tokens" if self.kind == "openai" else "max_tokens"
            params[key] = request.max_tokens
        elif self.kind == "openai_compatible":
            # Without it a local model may write until its whole window is full.
            params["max_tokens"] = server_limits.output_budget(info, turns, request)
        thinking = bool(request.thinking_budget) and info.thinking == "effort"
        if thinking and request.thinking_budget:
            params["reasoning_effort"] = reasoning_effort(request.thinking_budget)
        if request.temperature is not None and info.accepts_temperature and not thinking:
            params["temperature"] = request.temperature
        return params

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
                                         nothing_arrived=not arrived)
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
        return StreamInterrupted(self.name, "the server sent data Parley could not read")

    async def _attempt(
        self, params: dict[str, Any], info: ModelInfo
    ) -> AsyncGenerator[Event, None]:
        client = self._require_client()
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
            raise StreamInterrupted(self.name, "the stream ended before the reply was complete")
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
        client = self._require_client()
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

    async def count_tokens(self, request: ChatRequest) -> int | None:
        """Chat Completions has no token-counting endpoint: always None."""
        return None

    async def list_models(self) -> list[ModelInfo]:
        """Return the models ``GET /models`` lists, with catalog data.

        A compatible server is also asked for its models' limits where it says
        them (:mod:`parley.core.providers.server_limits`: the list's own fields, then
        llama.cpp's ``/props``, LM Studio's ``/api/v0/models``, Ollama's
        ``/api/show``); they are remembered for :meth:`model_info`.
        """
        client = self._require_client()

        async def call() -> list[ModelInfo]:
            try:
                models = client.models.list(extra_headers=self._headers)
                entries = [m async for m in models]
            except (openai.APIError, httpx2.HTTPError) as exc:
                raise self._map(exc, "", in_stream=False) from None
            ids = [m.id for m in entries]
            if self.kind == "openai":
                return [self.model_info(i) for i in chat_models_first(ids)]
            for m in entries:
                self.remember_limits(m.id, *server_limits.entry_limits(m.model_extra or {}))
            await self._ask_server_limits([i for i in ids if not self.reported[i][0]])
            return [self.model_info(i) for i in ids]

        return await call_with_retries(call, self.retry, self._sleep)

    async def _server_json(self, method: str, path: str, body: Any = None) -> Any:
        """GET or POST one of the server's own endpoints; None when it fails or is not JSON."""
        client = self._require_client()
        url = server_limits.server_root(self.base_url) + path
        options: Any = {"headers": self._headers, "timeout": SERVER_PROBE_TIMEOUT_S}
        try:
            if method == "post":
                response = await client.post(url, body=body, cast_to=httpx2.Response,
                                             options=options)
            else:
                response = await client.get(url, cast_to=httpx2.Response, options=options)
            return response.json()
        except (openai.APIError, httpx2.HTTPError, ValueError):
            return None

    def _remember_tools(self, model_id: str, said: bool | None) -> None:
        if said is not None:
            self.tool_support[model_id] = said

    async def _ask_server_limits(self, ids: list[str]) -> None:
        """Ask llama.cpp's ``/props``, then LM Studio's ``/api/v0/models``, then Ollama's
        ``/api/show`` (one model at a time) for the windows of ``ids``, and whether
        their models take tools where the same answer says so."""
        if not ids:
            return
        props = await self._server_json("get", "/props")
        window = server_limits.props_window(props)
        if window:
            for model_id in ids:
                self.remember_limits(model_id, window)
                self._remember_tools(model_id, server_limits.props_tools(props))
            return
        body = await self._server_json("get", "/api/v0/models")
        for model_id, (window, output) in server_limits.lmstudio_limits(body).items():
            if model_id in ids:
                self.remember_limits(model_id, window, output)
        for model_id, said in server_limits.lmstudio_tools(body).items():
            if model_id in ids:
                self._remember_tools(model_id, said)
        ids = [i for i in ids if not self.reported.get(i, (None, None))[0]]
        gate = asyncio.Semaphore(4)

        async def show(model_id: str) -> None:
            async with gate:
                body = await self._server_json(
                    "post", "/api/show", {"model": model_id, "name": model_id}
                )
            self.remember_limits(model_id, server_limits.ollama_window(body))
            self._remember_tools(model_id, server_limits.capabilities_tools(body))

        await asyncio.gather(*(show(i) for i in ids[:MAX_SHOW_PROBES]))


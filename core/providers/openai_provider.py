"""The OpenAI Chat Completions adapter, also for OpenAI-compatible servers.

One class serves OpenAI (``kind="openai"``) and any server speaking the same
API at a user-set base URL (``kind="openai_compatible"``: Ollama
``http://localhost:11434/v1``, LM Studio ``http://localhost:1234/v1``,
llama.cpp ``http://localhost:8080/v1``, vLLM ``http://localhost:8000/v1``),
where the key is optional and the model list comes from ``GET /v1/models``.

Streams ask for ``stream_options.include_usage`` so the last chunk carries the
usage (OpenAI's automatic prompt cache included). A compatible server's requests
always carry ``max_tokens`` (:func:`parley.core.providers.server_limits.output_budget`),
and its model list is completed with the limits the server tells
(:mod:`parley.core.providers.server_limits`). Sending, the stream folded into events,
the SDK's failures mapped and a compatible server's empty stream sent again unstreamed
are :class:`parley.core.providers.openai_sender.OpenAISender`'s, in the provider process
(:mod:`parley.core.providers.process`): this module imports no SDK.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncGenerator, Awaitable, Callable, Mapping
from typing import Any

from parley.core.convert.openai import to_openai
from parley.core.providers import catalog, server_limits
from parley.core.providers.base import ChatRequest, Event, ModelInfo
from parley.core.providers.capabilities import CAPS_BY_KIND, DEFAULT_URLS, ProviderKind
from parley.core.providers.process.protocol import SenderSpec
from parley.core.providers.retry import RetryPolicy, call_with_retries
from parley.core.providers.sdk_provider import SdkProvider

log = logging.getLogger(__name__)

DEFAULT_BASE_URL = DEFAULT_URLS["openai"]
#: At most this many models of one server are asked for their window one by one.
MAX_SHOW_PROBES = 32

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


class OpenAIProvider(SdkProvider):
    """A provider speaking OpenAI Chat Completions (OpenAI or a compatible server).

    Args:
        api_key: the key; optional for ``openai_compatible`` (local servers).
        base_url: the API root including ``/v1``.
        kind: ``openai`` or ``openai_compatible``.
        id: the provider id in model references.
        name: the display name; messages name the provider as `naming.message_name` says
            (this name, or "the server at 127.0.0.1:8000" away from the vendor's address).
        retry: when to send a failed request again.
        timeout_s: read timeout per request, seconds.
        connect_timeout_s: connect timeout, seconds.
        model_overrides: catalog overrides from settings.
        sleep: the wait used between retries (injectable for tests).
    """

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
                    kind=kind, retry=retry, model_overrides=model_overrides, sleep=sleep)
        self.kind: ProviderKind = kind
        self.caps = CAPS_BY_KIND[kind]
        if self._key or kind == "openai_compatible":
            self._connect(SenderSpec(kind, self.name, self.base_url, self._key,
                                     timeout_s, connect_timeout_s))

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

    def _attempt(
        self, params: dict[str, Any], info: ModelInfo
    ) -> AsyncGenerator[Event, None]:
        return self._require_sender().attempt(params, info)

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
        sender = self._require_sender()
        entries = await call_with_retries(sender.models, self.retry, self._sleep)
        ids = [m.id for m in entries]
        if self.kind == "openai":
            return [self.model_info(i) for i in chat_models_first(ids)]
        for m in entries:
            self.remember_limits(m.id, *server_limits.entry_limits(m.extra))
        await self._ask_server_limits([i for i in ids if not self.reported[i][0]])
        return [self.model_info(i) for i in ids]

    async def _server_json(self, method: str, path: str, body: Any = None) -> Any:
        """GET or POST one of the server's own endpoints; None when it fails or is not JSON."""
        return await self._require_sender().server_json(method, path, body)
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


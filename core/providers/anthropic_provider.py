"""The Anthropic Messages API adapter: requests built here, sent by the SDK elsewhere.

Request: the stored turns go through ``parley.core.wire.to_messages`` and
``parley.core.convert.anthropic.to_anthropic``; then prompt-cache breakpoints are set
(:mod:`parley.core.providers.cache_points`). Sending, the reply stream folded into
:mod:`parley.core.providers.base` events and the SDK's failures mapped to Parley's are
:class:`parley.core.providers.anthropic_sender.AnthropicSender`'s, in the provider
process (:mod:`parley.core.providers.process`): this module imports no SDK.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncGenerator, Awaitable, Callable, Mapping
from dataclasses import replace
from typing import Any

from parley.core.convert.anthropic import to_anthropic
from parley.core.providers import cache_points, catalog
from parley.core.providers.base import (
    DEFAULT_MAX_TOKENS_CAP,
    ChatRequest,
    Event,
    ModelInfo,
)
from parley.core.providers.capabilities import ANTHROPIC, DEFAULT_URLS
from parley.core.providers.process.protocol import SenderSpec
from parley.core.providers.retry import RetryPolicy, call_with_retries
from parley.core.providers.sdk_provider import SdkProvider

log = logging.getLogger(__name__)

DEFAULT_BASE_URL = DEFAULT_URLS["anthropic"]
MIN_THINKING_BUDGET = 1024


class AnthropicProvider(SdkProvider):
    """A provider speaking the Anthropic Messages API.

    Args:
        api_key: the key (None: requests fail with AuthenticationFailed(missing)).
        base_url: the API root (``ANTHROPIC_BASE_URL`` style, without ``/v1``).
        id: the provider id in model references.
        name: the display name; messages name the provider as `naming.message_name` says
            (this name, or "the server at 127.0.0.1:8000" away from the vendor's address).
        retry: when to send a failed request again.
        timeout_s: read timeout per request, seconds.
        connect_timeout_s: connect timeout, seconds.
        cache_ttl_s: prompt cache TTL to ask for (300 or 3600).
        model_overrides: catalog overrides from settings.
        sleep: the wait used between retries (injectable for tests).
    """

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
                    kind="anthropic", retry=retry, model_overrides=model_overrides, sleep=sleep)
        self.caps = replace(ANTHROPIC, cache_ttl_s=cache_ttl_s)
        if self._key:
            self._connect(SenderSpec(
                "anthropic", self.name, self.base_url, self._key,
                timeout_s, connect_timeout_s, cache_ttl_s,
            ))

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

    def _attempt(
        self, params: dict[str, Any], info: ModelInfo
    ) -> AsyncGenerator[Event, None]:
        return self._require_sender().attempt(params, info)

    async def count_tokens(self, request: ChatRequest) -> int | None:
        """Return the input tokens of ``request`` by the API's count_tokens endpoint.

        Raises:
            ProviderError: as for :meth:`stream` (no stream errors).
        """
        sender = self._require_sender()
        params = self.request_params(request)
        params.pop("max_tokens", None)
        params.pop("temperature", None)
        return await call_with_retries(lambda: sender.count(params), self.retry, self._sleep)

    async def list_models(self) -> list[ModelInfo]:
        """Return the models the API lists, with catalog data.

        The limits the API gives (``max_input_tokens``, ``max_tokens``) win over
        the catalog's and are remembered for :meth:`model_info`.
        """
        sender = self._require_sender()
        listed = await call_with_retries(sender.models, self.retry, self._sleep)
        out: list[ModelInfo] = []
        for m in listed:
            self.remember_limits(m.id, m.window, m.output)
            info = self.model_info(m.id)
            out.append(replace(info, display_name=m.display_name or info.display_name))
        return out

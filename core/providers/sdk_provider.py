"""What the two SDK adapters share: set-up, the retried reply stream, closing.

:class:`parley.core.providers.anthropic_provider.AnthropicProvider` (the ``anthropic``
SDK) and :class:`parley.core.providers.openai_provider.OpenAIProvider` (the ``openai``
SDK) differ in how they build a request, read its stream and name failures;
they keep the same attributes, the same retry rule for a reply (retried only
while nothing was yielded, :func:`parley.core.providers.retry.stream_with_retries`)
and the same "no key: AuthenticationFailed(missing)" rule, which live here.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import json
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import replace
from typing import Any, Generic, Protocol, TypeVar

from parley.core.providers.base import ChatRequest, Event, ModelInfo
from parley.core.providers.catalog import with_reported
from parley.core.providers.errors import AuthenticationFailed
from parley.core.providers.retry import RetryPolicy, stream_with_retries


def parse_tool_input(text: str) -> dict[str, Any]:
    """Parse a tool call's streamed input JSON; ``""`` is ``{}``.

    Returns:
        The object; text that is not a JSON object comes back as ``{"_raw_input": text}``
        so the tool runner can report it instead of losing it.
    """
    if not text.strip():
        return {}
    try:
        value = json.loads(text)
    except ValueError:
        return {"_raw_input": text}
    return value if isinstance(value, dict) else {"_raw_input": text}


class _SdkClient(Protocol):
    async def close(self) -> None: ...


ClientT = TypeVar("ClientT", bound=_SdkClient)


class SdkProvider(Generic[ClientT]):
    """Base of the SDK adapters (see the module docstring).

    Attributes:
        id: the provider id in model references (``"anthropic"``, ``"ollama"`` …).
        name: the display name used in messages.
        base_url: the API root, without a trailing slash.
        retry: when to send a failed request again.
        model_overrides: catalog overrides from settings, ``{model_id: {field: value}}``.
        reported: limits the provider itself gave, ``{model_id: (context window,
            output limit)}`` in tokens (None: not given); filled by ``list_models``
            and :meth:`remember_limits`, read by ``model_info``.
        tool_support: whether the provider said a model takes tools, ``{model_id: bool}``
            (a compatible server's own endpoints); read by ``model_info``.
    """

    _client: ClientT | None

    def _setup(
        self,
        *,
        api_key: str | None,
        base_url: str,
        id: str,
        name: str,
        retry: RetryPolicy | None,
        model_overrides: Mapping[str, Mapping[str, Any]] | None,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        """Set the attributes every adapter has (the subclass then makes ``_client``)."""
        self.id = id
        self.name = name
        self.base_url = base_url.rstrip("/")
        self.retry = retry or RetryPolicy()
        self.model_overrides = dict(model_overrides or {})
        self._sleep = sleep
        self._key = api_key or None
        self._client = None
        self.reported: dict[str, tuple[int | None, int | None]] = {}
        self.tool_support: dict[str, bool] = {}

    def remember_limits(
        self, model_id: str, window: int | None = None, output: int | None = None
    ) -> None:
        """Record limits the provider gave for a model (None keeps what was known).

        Args:
            model_id: the bare model id.
            window: its context window, tokens.
            output: its output limit, tokens.
        """
        old_window, old_output = self.reported.get(model_id, (None, None))
        self.reported[model_id] = (window or old_window, output or old_output)

    def _with_reported(self, info: ModelInfo) -> ModelInfo:
        """``info`` (catalog and overrides) with the limits the provider gave, when it gave any."""
        window, output = self.reported.get(info.id, (None, None))
        info = with_reported(info, window, output)
        tools = self.tool_support.get(info.id)
        return replace(info, tools=tools) if tools is not None else info

    # --- for the subclass ------------------------------------------------------

    def model_info(self, model_id: str) -> ModelInfo:
        """Return the catalog entry of a model (with settings overrides)."""
        raise NotImplementedError

    def request_params(self, request: ChatRequest) -> dict[str, Any]:
        """Return the SDK call's parameters for ``request``."""
        raise NotImplementedError

    def _attempt(self, params: dict[str, Any], info: ModelInfo) -> AsyncGenerator[Event, None]:
        """One try at the request: its events, or a ProviderError."""
        raise NotImplementedError

    # --- shared ------------------------------------------------------------------

    #: Attribute paths of the SDK client that load lazily (its resources) and modules the
    #: SDK imports at its first request: :meth:`warm` loads both.
    _WARM_ATTRIBUTES: tuple[str, ...] = ()
    _WARM_MODULES: tuple[str, ...] = ("anyio._backends._asyncio",)

    def warm(self) -> None:
        """Load what the SDK would load at the first request (resources, its async HTTP
        backend), in the calling thread: ``ProviderHub.prepare`` calls it in a worker
        thread so the first request does not import on the GUI thread. Never fails:
        what cannot be loaded now is loaded by the request as before."""
        client = self._client
        for path in self._WARM_ATTRIBUTES if client is not None else ():
            target: Any = client
            for name in path.split("."):
                target = getattr(target, name, None)
        for module in self._WARM_MODULES:
            with contextlib.suppress(Exception):
                importlib.import_module(module)

    def _require_client(self) -> ClientT:
        if self._client is None:
            raise AuthenticationFailed(self.name, status=None, missing=True)
        return self._client

    async def stream(self, request: ChatRequest) -> AsyncIterator[Event]:
        """Stream the reply to ``request`` as events (see :mod:`parley.core.providers.base`).

        Failures before any event was yielded are retried per ``self.retry``.

        Raises:
            ProviderError: AuthenticationFailed, PermissionDenied, RateLimited,
                Overloaded, ServerError, NetworkError, ContextOverflow,
                StreamInterrupted, BadRequest or ModelNotFound.
        """
        self._require_client()
        params = self.request_params(request)
        info = self.model_info(request.model)
        events = stream_with_retries(lambda: self._attempt(params, info), self.retry, self._sleep)
        async with contextlib.aclosing(events):
            async for event in events:
                yield event

    async def aclose(self) -> None:
        """Close the HTTP connections."""
        if self._client is not None:
            await self._client.close()

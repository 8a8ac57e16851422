"""What the two SDK adapters share: set-up, the retried reply stream, closing.

:class:`parley.core.providers.anthropic_provider.AnthropicProvider` (the ``anthropic``
SDK) and :class:`parley.core.providers.openai_provider.OpenAIProvider` (the ``openai``
SDK) differ in how they build a request; they keep the same attributes, the same
retry rule for a reply (retried only while nothing was yielded,
:func:`parley.core.providers.retry.stream_with_retries`) and the same "no key:
AuthenticationFailed(missing)" rule, which live here. Each sends through its SDK
half (``anthropic_sender`` / ``openai_sender``) in the provider process
(:mod:`parley.core.providers.process`): an adapter imports no SDK.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import replace
from typing import Any

from parley.core.errors import ParleyError
from parley.core.providers.base import ChatRequest, Event, ModelInfo
from parley.core.providers.capabilities import ProviderKind
from parley.core.providers.catalog import with_reported
from parley.core.providers.errors import AuthenticationFailed
from parley.core.providers.naming import message_name
from parley.core.providers.process.client import RemoteSender, shared_process
from parley.core.providers.process.protocol import SenderSpec
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


class SdkProvider:
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

    _sender: RemoteSender | None

    def _setup(
        self,
        *,
        api_key: str | None,
        base_url: str,
        id: str,
        name: str,
        kind: ProviderKind,
        retry: RetryPolicy | None,
        model_overrides: Mapping[str, Mapping[str, Any]] | None,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        """Set the attributes every adapter has (the subclass then calls ``_connect``).

        ``name`` is the provider's display name; ``self.name``, which messages use, is
        what the person set up (``naming.message_name``): that name, or "the server at
        127.0.0.1:8000" for a default-named provider away from its vendor's address."""
        self.id = id
        self.name = message_name(kind, name, base_url)
        self.base_url = base_url.rstrip("/")
        self.retry = retry or RetryPolicy()
        self.model_overrides = dict(model_overrides or {})
        self._sleep = sleep
        self._key = api_key or None
        self._sender = None
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

    def _connect(self, spec: SenderSpec) -> None:
        """Send through a sender made from ``spec`` in the shared provider process."""
        self._sender = RemoteSender(spec, shared_process())

    async def connect(self) -> None:
        """Have the provider process start making this adapter's SDK client now (importing
        the SDK there, seconds on a cold start), without waiting: a request sent meanwhile
        waits there until it is made. Never fails: a failure is met again, and reported,
        by the first request."""
        if self._sender is not None:
            with contextlib.suppress(ParleyError):
                self._sender.send_open()

    async def connected(self) -> None:
        """Wait until the provider process has made this adapter's SDK client.

        Raises:
            AuthenticationFailed: no key (no client is made).
            ProviderError: the process could not start or make it
                (ProviderProcessStopped).
        """
        await self._require_sender().open()

    def _require_sender(self) -> RemoteSender:
        if self._sender is None:
            raise AuthenticationFailed(self.name, status=None, missing=True)
        return self._sender

    async def stream(self, request: ChatRequest) -> AsyncIterator[Event]:
        """Stream the reply to ``request`` as events (see :mod:`parley.core.providers.base`).

        Failures before any event was yielded are retried per ``self.retry``.

        Raises:
            ProviderError: AuthenticationFailed, PermissionDenied, RateLimited,
                Overloaded, ServerError, NetworkError, ContextOverflow,
                StreamInterrupted, BadRequest or ModelNotFound.
        """
        self._require_sender()
        params = self.request_params(request)
        info = self.model_info(request.model)
        events = stream_with_retries(lambda: self._attempt(params, info), self.retry, self._sleep)
        async with contextlib.aclosing(events):
            async for event in events:
                yield event

    async def aclose(self) -> None:
        """Close the HTTP connections (the SDK client in the provider process)."""
        if self._sender is not None:
            await self._sender.close()

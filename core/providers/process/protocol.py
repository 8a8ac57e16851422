"""What crosses between Parley and its provider process, and how.

Frames: an 8-byte big-endian length, then a pickle (the two processes are the same
program, started by one another: nothing else writes to these pipes). Messages are
tuples whose first item names them:

Parley to the process:

- ``("open", rid, cid, spec)``: make sender ``cid`` from a :class:`SenderSpec`
  (importing its SDK the first time); requests for ``cid`` sent after it wait until it
  is made, so Parley sends them without waiting for its answer (rid 0: none wanted);
- ``("call", rid, cid, method, args)``: ``await sender.method(*args)`` (method
  ``ready``: only wait until the sender is made);
- ``("stream", rid, cid, method, args)``: iterate ``sender.method(*args)``;
- ``("cancel", rid)``: stop request ``rid`` (its HTTP request is closed).
- ``("ping", 0)``: answered at once with ``("pong", 0, None)`` (the process still runs).

The process to Parley: ``("event", rid, value)`` for each item of a stream, then
``("done", rid, result)`` or ``("error", rid, exception)`` (a
:class:`parley.core.errors.ParleyError`, or :class:`RemoteFailure` for a bug); and
``("log", 0, (level, logger name, text))`` for its warnings, to go to Parley's log.

The sender methods (:class:`Sender`) are the SDK half of an adapter: one attempt at
a streamed reply, a token count, the model list, a server's own JSON endpoints.
Retries, request building and everything else stay in Parley's process.
"""

from __future__ import annotations

import os
import pickle
import struct
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any, Protocol

from parley.core.providers.base import Event, ModelInfo
from parley.core.providers.capabilities import ProviderKind

_LENGTH = struct.Struct(">Q")


def encode(message: tuple[Any, ...]) -> bytes:
    """Return one frame: the pickled ``message`` after its length (8 bytes)."""
    body = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    return _LENGTH.pack(len(body)) + body


def write_all(fd: int, data: bytes) -> None:
    """Write all of ``data`` to file descriptor ``fd`` (a pipe may take it in parts).

    Raises:
        OSError: the other end is closed (BrokenPipeError) or the write failed.
    """
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def _read_exactly(fd: int, size: int) -> bytes | None:
    parts: list[bytes] = []
    while size:
        chunk = os.read(fd, min(size, 1 << 20))
        if not chunk:
            return None
        parts.append(chunk)
        size -= len(chunk)
    return b"".join(parts)


def read_message(fd: int) -> tuple[Any, ...] | None:
    """Read one frame from ``fd`` (blocking); None when the other end closed the pipe."""
    head = _read_exactly(fd, _LENGTH.size)
    if head is None:
        return None
    body = _read_exactly(fd, _LENGTH.unpack(head)[0])
    if body is None:
        return None
    message: tuple[Any, ...] = pickle.loads(body)
    return message


@dataclass(frozen=True)
class SenderSpec:
    """How to make one provider's SDK client in the provider process.

    Attributes:
        kind: the API spoken (``anthropic``, ``openai``, ``openai_compatible``).
        name: the provider's display name (in error messages).
        base_url: the API root, without a trailing slash.
        api_key: its key (None: none; sent over the pipe, never on a command line).
        timeout_s: read timeout per request, seconds.
        connect_timeout_s: connect timeout, seconds.
        cache_ttl_s: the prompt-cache TTL asked for (Anthropic; 300 or 3600 s).
    """

    kind: ProviderKind
    name: str
    base_url: str
    api_key: str | None = field(default=None, repr=False)
    timeout_s: float = 600.0
    connect_timeout_s: float = 10.0
    cache_ttl_s: int = 300


@dataclass(frozen=True)
class ListedModel:
    """One model as a provider's model list gave it.

    Attributes:
        id: the model id.
        display_name: its name for people ("" when not given).
        window: the context window it gave, tokens (None: not given).
        output: the output limit it gave, tokens (None: not given).
        extra: the entry's other fields (a compatible server's own ones).
    """

    id: str
    display_name: str = ""
    window: int | None = None
    output: int | None = None
    extra: dict[str, Any] = field(default_factory=dict)


class Sender(Protocol):
    """The SDK half of an adapter (in the provider process; see the module docstring)."""

    def attempt(self, params: dict[str, Any], info: ModelInfo) -> AsyncIterator[Event]:
        """One try at a streamed reply: its events, or a ProviderError."""
        ...

    async def count(self, params: dict[str, Any]) -> int:
        """The input tokens of a request by the provider's count."""
        ...

    async def models(self) -> list[ListedModel]:
        """The models the provider lists."""
        ...

    async def server_json(self, method: str, path: str, body: Any = None) -> Any:
        """A server's own JSON endpoint (None when it fails or is not JSON)."""
        ...

    async def close(self) -> None:
        """Close the HTTP connections."""
        ...


class RemoteFailure(RuntimeError):
    """A bug in the provider process (not a provider's refusal): its traceback, as text."""

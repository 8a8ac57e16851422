"""Background requests to a local server wait for its chat requests.

A local OpenAI-compatible server often answers one request at a time, and
some stop the running request when a new one arrives (llama-cpp-python's
default, ``interrupt_requests``): a title request sent while a chat reply
streams cuts that reply off, and the SDK's retry of the title cuts it again.
So, for servers of kind ``openai_compatible`` (not OpenAI's own API, nor
Anthropic's, which serve requests side by side):

* *foreground* requests — a chat reply, a summary the run or the user asked
  for — go at once (:meth:`Traffic.foreground`); one that starts while a
  background request of the same server runs calls it off first (it is sent
  again when the server is free: it is queued, not lost);
* *background* requests — automatic titles — wait until no foreground request
  of the same server is in flight, and go one at a time
  (:meth:`Traffic.background`).

The same server is the same ``base_url``. One :class:`Traffic` per
``ProviderHub`` (:func:`traffic_for`), shared by the run loop, compaction and
titles.
"""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from parley.core.providers.base import Provider
    from parley.core.providers.hub import ProviderHub

T = TypeVar("T")

_BY_HUB: weakref.WeakKeyDictionary[Any, Traffic] = weakref.WeakKeyDictionary()


def server_key(provider: Provider | None) -> str | None:
    """The server a provider adapter talks to when its requests must be kept apart
    (kind ``openai_compatible``), else None (no waiting; also for no provider)."""
    caps = getattr(provider, "caps", None)
    if getattr(caps, "kind", None) != "openai_compatible":
        return None
    return str(getattr(provider, "base_url", "") or getattr(provider, "id", "")) or None


class Traffic:
    """Foreground and background requests per local server (module docstring)."""

    def __init__(self) -> None:
        self._foreground: dict[str, int] = {}
        self._running: dict[str, set[asyncio.Task[Any]]] = {}
        self._called_off: set[asyncio.Task[Any]] = set()
        self._waiters: dict[str, list[asyncio.Future[None]]] = {}
        self._turn: dict[str, asyncio.Lock] = {}

    def busy(self, key: str) -> bool:
        """True while a foreground request of server ``key`` is in flight."""
        return self._foreground.get(key, 0) > 0

    @asynccontextmanager
    async def foreground(self, provider: Provider | None) -> AsyncIterator[None]:
        """Hold while a foreground request to ``provider``'s server is in flight.

        Background requests of that server running now are called off (and
        awaited, so their connection is closed before this request goes);
        they are sent again after the last foreground request ends.
        """
        key = server_key(provider)
        if key is None:
            yield
            return
        self._foreground[key] = self._foreground.get(key, 0) + 1
        try:
            running = list(self._running.get(key, ()))
            for task in running:
                self._called_off.add(task)
                task.cancel()
            if running:
                await asyncio.wait(running)
            yield
        finally:
            self._foreground[key] -= 1
            if not self._foreground[key]:
                del self._foreground[key]
                for waiter in self._waiters.pop(key, []):
                    if not waiter.done():
                        waiter.set_result(None)

    async def background(self, provider: Provider, work: Callable[[], Awaitable[T]]) -> T:
        """Run ``work()`` (a request to ``provider``'s server) when the server is free.

        Args:
            provider: the adapter the request goes to.
            work: makes the request; called again if a foreground request calls
                it off.

        Returns:
            What ``work()`` returned.

        Raises:
            What ``work()`` raises; cancellation of the caller propagates.
        """
        key = server_key(provider)
        if key is None:
            return await work()
        lock = self._turn.setdefault(key, asyncio.Lock())
        async with lock:  # one background request per server at a time
            while True:
                while self.busy(key):
                    waiter = asyncio.get_running_loop().create_future()
                    self._waiters.setdefault(key, []).append(waiter)
                    await waiter
                task = asyncio.ensure_future(work())
                self._running.setdefault(key, set()).add(task)
                try:
                    return await task
                except asyncio.CancelledError:
                    if task not in self._called_off or not task.cancelled():
                        raise
                    current = asyncio.current_task()
                    if current is not None and current.cancelling():
                        raise
                finally:
                    self._running[key].discard(task)
                    self._called_off.discard(task)


def traffic_for(hub: ProviderHub) -> Traffic:
    """The :class:`Traffic` of a ``ProviderHub`` (made on first use)."""
    traffic = _BY_HUB.get(hub)
    if traffic is None:
        traffic = _BY_HUB[hub] = Traffic()
    return traffic

"""Retrying a streamed request while retrying is safe.

A request is sent again only when the failure is one that can pass
(rate limit, overloaded, server error, network, a stream that broke off) and
*no event has been yielded yet*: once text reached the caller, a retry would
duplicate it (and replace what the person is reading), so the error goes up
instead and the part that arrived is kept, marked cut off; Retry then keeps it
as the answer's earlier version (``parley.core.chat.regenerate.retry_incomplete``).
The SDKs' own retries are turned off (``max_retries=0``) so this is the one
policy: exponential backoff with jitter, and the provider's ``retry-after``
honoured when it gives one (a wait longer than ``max_retry_after_s`` is not
slept through: the error goes to the user, who can decide).

Waits are told, not hidden: before each wait the listener set with
:func:`retry_waits` (if any, for the code running the request: a context
variable, so concurrent requests each reach their own) gets a
:class:`RetryWait` with the wait's length and its cause; the run loop turns
it into a ``RetryWaiting`` event ("Rate limited — retrying in 12 s"; a stream that
broke off before any of the reply came is :attr:`RetryWait.dropped`: "The connection
dropped; trying again…").
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
from collections.abc import AsyncGenerator, Awaitable, Callable, Iterator
from contextvars import ContextVar
from dataclasses import dataclass
from typing import TypeVar

from parley.core.providers.errors import (
    ProviderError,
    ProviderProcessStopped,
    RateLimited,
    StreamInterrupted,
)

T = TypeVar("T")
log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class RetryWait:
    """A failed request will be sent again after a wait.

    Attributes:
        seconds: how long the wait is (the provider's ``retry-after``, or backoff).
        error: the failure that is waited out (``RateLimited``, ``Overloaded`` …).
        attempt: the number of the retry that follows the wait (1 for the first).
    """

    seconds: float
    error: ProviderError
    attempt: int

    @property
    def rate_limited(self) -> bool:
        """True when the provider refused for its rate limit (HTTP 429)."""
        return isinstance(self.error, RateLimited)

    @property
    def dropped(self) -> bool:
        """True when the connection dropped before any of the reply came: the stream
        broke off (``StreamInterrupted``) or Parley's provider process stopped
        (``ProviderProcessStopped``). Such a retry is told however short its wait."""
        return isinstance(self.error, StreamInterrupted | ProviderProcessStopped)


RetryListener = Callable[[RetryWait], None]
_listener: ContextVar[RetryListener | None] = ContextVar("parley_retry_listener", default=None)


@contextlib.contextmanager
def retry_waits(listener: RetryListener) -> Iterator[None]:
    """Tell ``listener`` about every retry wait of the requests made inside the block.

    Args:
        listener: called with a :class:`RetryWait` just before each wait (on the
            event loop; an exception it raises is logged and ignored).
    """
    token = _listener.set(listener)
    try:
        yield
    finally:
        _listener.reset(token)


def _tell(seconds: float, error: ProviderError, attempt: int) -> None:
    listener = _listener.get()
    if listener is None:
        return
    try:
        listener(RetryWait(seconds, error, attempt))
    except Exception:
        log.exception("retry listener failed")


@dataclass(frozen=True)
class RetryPolicy:
    """How often and how long to wait before sending a failed request again.

    Attributes:
        max_retries: further attempts after the first (0: never retry).
        initial_delay_s: wait before the first retry, seconds; doubles each time.
        max_delay_s: longest backoff wait, seconds.
        max_retry_after_s: longest ``retry-after`` Parley waits for by itself.
        jitter: random fraction (0..1) taken off each backoff wait.
    """

    max_retries: int = 2
    initial_delay_s: float = 0.5
    max_delay_s: float = 8.0
    max_retry_after_s: float = 60.0
    jitter: float = 0.25

    def delay_s(self, attempt: int, error: ProviderError) -> float | None:
        """Return how long to wait before retry number ``attempt + 1``, or None not to retry.

        Args:
            attempt: retries already made (0 for the first failure).
            error: the failure of the last attempt.
        """
        if not error.retryable or attempt >= self.max_retries:
            return None
        if isinstance(error, RateLimited) and error.retry_after_s is not None:
            if error.retry_after_s > self.max_retry_after_s:
                return None
            return max(0.0, error.retry_after_s)
        backoff = min(self.max_delay_s, self.initial_delay_s * (2**attempt))
        return backoff * (1 - self.jitter * random.random())


async def stream_with_retries(
    attempt: Callable[[], AsyncGenerator[T, None]],
    policy: RetryPolicy,
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
) -> AsyncGenerator[T, None]:
    """Yield the items of ``attempt()``, starting it again after a retryable failure.

    Args:
        attempt: makes a fresh async iterator for one try (one HTTP request).
        policy: when to retry and how long to wait.
        sleep: the wait function (injectable for tests).

    Raises:
        ProviderError: the last failure, when it may not or need not be retried,
            or when an item was already yielded.
    """
    tries = 0
    while True:
        started = False
        try:
            async with contextlib.aclosing(attempt()) as items:  # closes the HTTP stream early
                async for item in items:
                    started = True
                    yield item
            return
        except ProviderError as error:
            wait = None if started else policy.delay_s(tries, error)
            if wait is None:
                raise
            tries += 1
            _tell(wait, error, tries)
            await sleep(wait)


async def call_with_retries(
    call: Callable[[], Awaitable[T]],
    policy: RetryPolicy,
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
) -> T:
    """Await ``call()``, calling it again after a retryable failure (for non-streamed calls)."""
    tries = 0
    while True:
        try:
            return await call()
        except ProviderError as error:
            wait = policy.delay_s(tries, error)
            if wait is None:
                raise
            tries += 1
            _tell(wait, error, tries)
            await sleep(wait)

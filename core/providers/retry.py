"""Retrying a streamed request while retrying is safe.

A request is sent again only when the failure is one that can pass
(rate limit, overloaded, server error, network, a stream that broke off) and
*no event has been yielded yet*: once text reached the caller, a retry would
duplicate it, so the error goes up instead. The SDKs' own retries are turned
off (``max_retries=0``) so this is the one policy: exponential backoff with
jitter, and the provider's ``retry-after`` honoured when it gives one (a wait
longer than ``max_retry_after_s`` is not slept through: the error goes to the
user, who can decide).
"""

from __future__ import annotations

import asyncio
import contextlib
import random
from collections.abc import AsyncGenerator, Awaitable, Callable
from dataclasses import dataclass
from typing import TypeVar

from core.providers.errors import ProviderError, RateLimited

T = TypeVar("T")


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
            await sleep(wait)

"""A clock for :class:`parley.core.compaction.cache_timer.CacheTimer` that moves only when
a test tells it to, so nothing sleeps."""

from __future__ import annotations

from collections.abc import Callable

from parley.core.compaction.cache_timer import Handle


class _ManualHandle:
    def __init__(self, when: float, callback: Callable[[], None]) -> None:
        self.when, self.callback, self.cancelled = when, callback, False

    def cancel(self) -> None:
        self.cancelled = True


class ManualClock:
    """A clock that moves only when told to (tests, replays).

    Args:
        start: the initial time, epoch seconds.
    """

    def __init__(self, start: float = 1_750_000_000.0) -> None:
        self.now = start
        self._handles: list[_ManualHandle] = []

    def time(self) -> float:
        return self.now

    def call_at(self, when: float, callback: Callable[[], None]) -> Handle:
        handle = _ManualHandle(when, callback)
        self._handles.append(handle)
        return handle

    @property
    def pending(self) -> list[float]:
        """Due times of the handles not yet run or cancelled, earliest first."""
        return sorted(h.when for h in self._handles if not h.cancelled)

    def advance(self, seconds: float) -> None:
        """Move time forward, running each due callback at its own time, in order."""
        target = self.now + seconds
        while True:
            due = [h for h in self._handles if not h.cancelled and h.when <= target]
            if not due:
                break
            handle = min(due, key=lambda h: h.when)
            self._handles.remove(handle)
            self.now = max(self.now, handle.when)
            handle.callback()
        self._handles = [h for h in self._handles if not h.cancelled]
        self.now = target

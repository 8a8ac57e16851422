"""The events the core's parts tell each other, declared once, and the typed bus they go by.

A request, a compaction and the cache timer are watched by other parts (the cache
timer, the compaction back-off, the marks a restart reads, the window's meter and
edit banner): each subscribes to an event *type* on the run loop's :class:`Events`
(``ChatRunner.events``) and gets that dataclass, never a name and a dict. Events for
the one caller of a run (its progress, its reply) are ``parley.core.chat.events``'s
``RunEvent``\\ s instead; Qt signals stay for widgets.

The events on the bus:

* :class:`RequestStarted` / :class:`RequestEnded` — by ``ChatRunner`` around each run.
* :class:`CacheUpdated` — by ``parley.core.compaction.cache_timer.CacheTimer``.
* ``CompactEvent`` (``parley.core.compaction.types``: ``compact:start``,
  ``compact:progress``, ``compact:end``) — by ``parley.core.compaction.compact.Compact``;
  the same object its caller's listener gets.

A listener runs synchronously in :meth:`Events.emit`; an exception in it is logged and
never breaks the part that emitted.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal, TypeAlias, TypeVar

from parley.core.compaction.types import CompactEvent

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class RequestStarted:
    """A run of a session began (before its request is sent).

    Attributes:
        session_id: the session.
        model: ``provider:model`` the run asks.
    """

    session_id: str
    model: str


@dataclass(frozen=True, slots=True)
class RequestEnded:
    """A run of a session ended, however it ended.

    Attributes:
        session_id: the session.
        status: ``ok`` (a reply saved), ``cancelled`` or ``error``.
        turn_range: ``(first, end)`` turn positions the run added (end exclusive).
    """

    session_id: str
    status: Literal["ok", "cancelled", "error"]
    turn_range: tuple[int, int]


@dataclass(frozen=True, slots=True)
class CacheUpdated:
    """A session's prompt-cache estimate or its cache-timer deadline changed.

    Attributes:
        session_id: the session.
        expires_at: when the provider's cache of it is expected to expire (local), or None.
        compact_at: when the cache timer compacts it (local), or None.
    """

    session_id: str
    expires_at: datetime | None
    compact_at: datetime | None


#: Every event the bus carries.
Event: TypeAlias = RequestStarted | RequestEnded | CacheUpdated | CompactEvent
E = TypeVar("E", RequestStarted, RequestEnded, CacheUpdated, CompactEvent)


class Events:
    """Listeners per event type; :meth:`emit` calls those of the event's type."""

    def __init__(self) -> None:
        self._listeners: dict[type, list[Callable[[Any], None]]] = defaultdict(list)

    def on(self, kind: type[E], listener: Callable[[E], None]) -> Callable[[], None]:
        """Call ``listener`` with every ``kind`` event; returns a function that stops it."""
        self._listeners[kind].append(listener)
        return lambda: self._listeners[kind].remove(listener)

    def emit(self, event: Event) -> None:
        """Call the listeners of ``type(event)``, in the order they subscribed (one
        failing is logged; the rest are called)."""
        for listener in list(self._listeners.get(type(event), ())):
            try:
                listener(event)
            except Exception:  # a listener's bug must not break a run
                log.exception("listener of %s failed", type(event).__name__)

"""Named hook points (``session:start``, ``session:end``, ``compact:start`` …).

A tiny synchronous publish/subscribe registry. Listeners are plain callables
taking one payload dict; an exception in a listener is logged and never breaks
the run that fired it.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Callable
from typing import Any

log = logging.getLogger(__name__)

Listener = Callable[[dict[str, Any]], None]


class Hooks:
    """A registry of listeners per hook name."""

    def __init__(self) -> None:
        self._listeners: dict[str, list[Listener]] = defaultdict(list)

    def on(self, name: str, listener: Listener) -> Callable[[], None]:
        """Register ``listener`` for ``name``; returns a function that unregisters it."""
        self._listeners[name].append(listener)
        return lambda: self._listeners[name].remove(listener)

    def fire(self, name: str, **payload: Any) -> None:
        """Call every listener of ``name`` with ``payload`` (plus ``hook=name``)."""
        data = {"hook": name, **payload}
        for listener in list(self._listeners.get(name, ())):
            try:
                listener(data)
            except Exception:  # a listener's bug must not break a run
                log.exception("hook listener for %s failed", name)

"""Telling a request's sender that Parley's provider process does not answer it.

A request waits on the provider process (:class:`parley.core.providers.process.client.
ProviderProcess`). When the process has answered nothing — no event, not even the
watchdog's ping — for :data:`~parley.core.providers.process.client.SILENT_AFTER_S`
while a request waits, the code that sent the request is told, through the listener
set with :func:`process_silences` (a context variable, as with
``parley.core.providers.retry.retry_waits``: concurrent requests each reach their
own), and told again when the process answers or the request ends. The run loop turns
these into ``ProviderProcessSilent`` events ("Waiting for Parley's connection
process…"); a process silent for ``HUNG_AFTER_S`` is restarted, as before.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable, Iterator
from contextvars import ContextVar

log = logging.getLogger(__name__)

#: Called with True when the process stopped answering a request, False when it answers
#: again or the request ended.
SilenceListener = Callable[[bool], None]
_listener: ContextVar[SilenceListener | None] = ContextVar("parley_silence_listener",
                                                           default=None)


@contextlib.contextmanager
def process_silences(listener: SilenceListener) -> Iterator[None]:
    """Tell ``listener`` when the provider process stops answering, and answers again,
    the requests made inside the block.

    Args:
        listener: called on the event loop of the request (an exception it raises is
            logged and ignored).
    """
    token = _listener.set(listener)
    try:
        yield
    finally:
        _listener.reset(token)


class Silence:
    """What one request's listener was told (the listener is the one set where the
    request was made: taken when this is made, so a request ended later, elsewhere,
    still tells the same one)."""

    def __init__(self) -> None:
        self._listener = _listener.get()
        #: the listener was told the process is silent (and not told since that it is not)
        self.silent = False

    def tell(self, silent: bool) -> None:
        """Tell the listener that the process is silent (True) or no longer keeps the
        request waiting (False); only a change is told."""
        if silent == self.silent:
            return
        self.silent = silent
        if self._listener is None:
            return
        try:
            self._listener(silent)
        except Exception:
            log.exception("silence listener failed")

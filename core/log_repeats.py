"""Log lines that would repeat many times a second, written once per interval.

During an outage the same failure comes back at the pace of whatever retries it
(a streaming reply's journal every 250 ms, the change feed every 2 s): one line each
time would fill the log with copies and push out what came before.
:class:`RepeatLimiter` writes the first occurrence of a message at once, then at
most one line per :data:`EVERY_S` for the same message, saying how many were left out.
A different message (another error) is written at once.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

#: Seconds between two lines of the same message.
EVERY_S = 30.0


class RepeatLimiter:
    """Writes repeated log lines at most once per ``every_s`` each (module docstring).

    Args:
        logger: where lines go.
        every_s: seconds between two lines of the same message.
        clock: monotonic seconds (injectable for tests).

    Thread-safe: the change feed logs from its own thread.
    """

    def __init__(self, logger: logging.Logger, every_s: float = EVERY_S,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.logger, self.every_s, self.clock = logger, every_s, clock
        self._last: dict[str, tuple[float, int]] = {}  # message -> (written at, left out since)
        self._lock = threading.Lock()

    def log(self, level: int, msg: str, *args: object) -> bool:
        """Log ``msg % args`` at ``level`` unless the same text was written less than
        ``every_s`` ago; returns True when it was written."""
        text = msg % args if args else msg
        now = self.clock()
        with self._lock:
            written, skipped = self._last.get(text, (None, 0))
            if written is not None and now - written < self.every_s:
                self._last[text] = (written, skipped + 1)
                return False
            self._last[text] = (now, 0)
            if len(self._last) > 64:  # old messages are forgotten, not kept for ever
                self._last.pop(next(iter(self._last)))
        if skipped and written is not None:
            text += f" (and {skipped} more times in the last {now - written:.0f} s)"
        self.logger.log(level, "%s", text)
        return True

    def warning(self, msg: str, *args: object) -> bool:
        """:meth:`log` at WARNING."""
        return self.log(logging.WARNING, msg, *args)

    def info(self, msg: str, *args: object) -> bool:
        """:meth:`log` at INFO."""
        return self.log(logging.INFO, msg, *args)

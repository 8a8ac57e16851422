"""Parley's log file: private (``0600`` in a ``0700`` folder) and quiet when it cannot be written.

Python's logging prints a "--- Logging error ---" traceback to stderr for every
record a handler fails to write; on a full disk that is one traceback per log
line. :class:`PrivateLogFile` says it once — one warning line on stderr naming
the file and the reason — and then keeps trying quietly (lines written while
the disk is full are lost; writing resumes once there is room again).
"""

from __future__ import annotations

import logging
import logging.handlers
import os
import sys
from pathlib import Path

from parley.core import private


class PrivateLogFile(logging.handlers.RotatingFileHandler):
    """A rotating log file made ``0600`` (also after each rotation) that reports a write
    failure once, not per record.

    Args:
        path: the log file (its folder must exist).
        max_bytes: rotate beyond this size, bytes.
        backups: rotated files kept.

    Raises:
        OSError: the file cannot be opened.
    """

    def __init__(self, path: Path, max_bytes: int, backups: int) -> None:
        if not path.exists():
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, private.FILE_MODE)
            os.close(fd)
        private.narrow(path, private.FILE_MODE)
        super().__init__(path, maxBytes=max_bytes, backupCount=backups, encoding="utf-8")
        self.path = path
        self.failed = False  # a write failed and was told on stderr
        self._failing = False  # the record being written failed

    def doRollover(self) -> None:  # noqa: N802 - logging's name
        super().doRollover()
        for n in range(self.backupCount + 1):
            private.narrow(Path(f"{self.path}.{n}") if n else self.path, private.FILE_MODE)

    def emit(self, record: logging.LogRecord) -> None:
        self._failing = False
        super().emit(record)  # calls handleError when the write fails
        if not self._failing:
            self.failed = False  # written (space was freed): a next failure is told again

    def handleError(self, record: logging.LogRecord) -> None:  # noqa: N802 - logging's name
        self._failing = True
        if self.failed:
            return
        self.failed = True
        exc = sys.exc_info()[1]
        why = getattr(exc, "strerror", None) or exc
        try:
            sys.stderr.write(f"WARNING Parley cannot write its log {self.path}: {why}. "
                             "Log lines are dropped until it can.\n")
            sys.stderr.flush()
        except (OSError, ValueError, AttributeError):
            pass


def private_log_dir(log_dir: Path) -> None:
    """Create the log folder (with its parents) ``0700``, and narrow an existing one.

    Raises:
        OSError: it cannot be created.
    """
    private.private_dir(log_dir)

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
from typing import Any

from parley.core import private

log = logging.getLogger("parley")

LOG_FILE = "parley.log"
FAULT_LOG = "native-crashes.log"
_fault_file: Any = None


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


def setup_logging(log_dir: Path) -> Path | None:
    """Log to ``<log_dir>/parley.log`` (rotated at 2 MB, 3 kept) and warnings to stderr.

    The folder is created if missing. When it cannot be created or written (a
    read-only data folder, a file named ``logs`` in the way), Parley still
    starts: one warning naming the folder goes to stderr, and from then on the
    whole log (INFO and up) and native crash stacks go to stderr instead.

    Returns:
        The log file's path (shown in the crash dialog), or None when logging
        to stderr only.
    """
    root = logging.getLogger()
    root.setLevel(logging.INFO)
    console = logging.StreamHandler()
    root.addHandler(console)
    formatter = logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s")
    path = log_dir / LOG_FILE
    handler: logging.Handler | None = None
    try:
        private_log_dir(log_dir)  # 0700, the file 0600; a failing write is told once
        handler = PrivateLogFile(path, 2_000_000, 3)
        _log_native_crashes(log_dir / FAULT_LOG)
    except OSError as exc:
        from parley.core.paths import cannot_create_reason

        if handler is not None:
            handler.close()
        console.setFormatter(formatter)
        console.setLevel(logging.INFO)
        log.warning("Parley cannot write its log in %s: %s. Logging to standard error only.",
                    log_dir, cannot_create_reason(exc))
        _log_native_crashes(None)
        return None
    handler.setFormatter(formatter)
    root.addHandler(handler)
    console.setLevel(logging.WARNING)
    return path



def _log_native_crashes(path: Path | None) -> None:
    """Write the Python stack of a native crash (segfault, abort) to ``path`` (None:
    stderr), which the Python logger cannot do: the process dies before any handler runs.

    Raises:
        OSError: ``path`` cannot be opened for appending.
    """
    import contextlib
    import faulthandler

    global _fault_file
    if path is None:
        # No stderr with a file number (a windowed app, a captured stream): no stacks.
        with contextlib.suppress(AttributeError, ValueError, OSError, RuntimeError):
            faulthandler.enable()  # to sys.stderr
        return
    from parley.core import private

    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, private.FILE_MODE)
    private.narrow(path, private.FILE_MODE)
    _fault_file = os.fdopen(fd, "a", encoding="utf-8")  # open for the whole run
    faulthandler.enable(_fault_file)


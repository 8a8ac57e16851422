"""SIGTERM and SIGINT close Parley the way File → Quit does (Linux and macOS).

A desktop session at logout, ``systemctl``, ``kill`` and ``pkill`` send SIGTERM; Ctrl+C in
the terminal Parley was started from sends SIGINT. Left to their defaults, SIGTERM ended
Parley at once (no "Parley closed" in the log, the lock file left, the window's place and
anything not yet written not saved) and SIGINT raised ``KeyboardInterrupt`` wherever Python
happened to be.

Python runs its signal handlers only when the interpreter gets control, which Qt's event
loop does not give it while idle. So the C-level handler writes the signal's number to a
pipe (``signal.set_wakeup_fd``) watched by a ``QSocketNotifier``: the event loop wakes, and
the notifier's slot asks the window to close from the event loop, never from the middle of
whatever Python code the signal interrupted. A signal that comes while the window is
already shutting down (a second SIGTERM, a second Ctrl+C) ends the process at once, by the
signal's default action (exit status -15 / -2 to a parent).

Windows has no SIGTERM and ``set_wakeup_fd`` wants a socket there: :func:`install` does
nothing on Windows.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import sys
from collections.abc import Callable
from types import FrameType

from PySide6.QtCore import QObject, QSocketNotifier

log = logging.getLogger(__name__)

#: The signals that close Parley.
QUIT_SIGNALS = (signal.SIGTERM, signal.SIGINT)


class QuitOnSignal(QObject):
    """Closes the window on SIGTERM or SIGINT; a second one while closing ends the process.

    Args:
        close: asks the window to close (as File → Quit does); called from the event loop.
        closing: True while the window is shutting down (a signal then ends the process).
        parent: the QObject this one lives with (the application).

    Raises:
        OSError: the pipe could not be made.
        ValueError: not called from the main thread (``signal.signal`` refuses).
    """

    def __init__(self, close: Callable[[], object], closing: Callable[[], bool],
                 parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._close = close
        self._closing = closing
        self._read_fd, self._write_fd = os.pipe()
        for fd in (self._read_fd, self._write_fd):
            os.set_blocking(fd, False)
        self._previous_fd = signal.set_wakeup_fd(self._write_fd, warn_on_full_buffer=False)
        self._previous = {signum: signal.signal(signum, self._handler) for signum in QUIT_SIGNALS}
        self._notifier = QSocketNotifier(self._read_fd, QSocketNotifier.Type.Read, self)
        self._notifier.activated.connect(self._woken)

    def _handler(self, signum: int, _frame: FrameType | None) -> None:
        """Python's handler: runs whenever Python next gets control. Ends the process at
        once when the window is already shutting down; otherwise the wakeup byte written to
        the pipe makes :meth:`_woken` close the window from the event loop."""
        if self._closing():
            _die(signum)

    def _woken(self) -> None:
        """The pipe holds signal numbers: close the window (or end now, when closing)."""
        try:
            received = os.read(self._read_fd, 64)
        except BlockingIOError:
            return
        for signum in received:  # every signal with a Python handler writes its number
            if signum not in QUIT_SIGNALS:
                continue
            if self._closing():
                _die(signum)
            log.info("%s received: closing as File → Quit does", signal.Signals(signum).name)
            self._close()

    def uninstall(self) -> None:
        """Give the signals their handlers from before back and close the pipe."""
        for signum, previous in self._previous.items():
            signal.signal(signum, previous)
        signal.set_wakeup_fd(self._previous_fd)
        self._notifier.setEnabled(False)
        for fd in (self._read_fd, self._write_fd):
            os.close(fd)


def _die(signum: int) -> None:
    """End the process now, the way ``signum``'s default action does."""
    with contextlib.suppress(Exception):  # it may interrupt a write to the log
        log.warning("%s received again while closing: ending at once",
                    signal.Signals(signum).name)
    signal.signal(signum, signal.SIG_DFL)
    os.kill(os.getpid(), signum)
    os._exit(128 + signum)  # delivered to another thread first: not back here for long


def install(close: Callable[[], object], closing: Callable[[], bool],
            parent: QObject | None = None) -> QuitOnSignal | None:
    """Make SIGTERM and SIGINT close the window (see the module docstring).

    Args:
        close: asks the window to close, as File → Quit does.
        closing: True while the window is shutting down.
        parent: the QObject the watcher lives with (the application).

    Returns:
        The watcher, or None on Windows or when it could not be set up (logged; the
        signals keep their default actions).
    """
    if sys.platform == "win32":
        return None
    try:
        return QuitOnSignal(close, closing, parent)
    except (OSError, ValueError) as exc:
        log.warning("SIGTERM and SIGINT will end Parley without saving: %s", exc)
        return None

"""The one place unexpected exceptions end up: logged, then shown in a dialog."""

from __future__ import annotations

import logging
import sys
import threading
import traceback
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import asyncio

log = logging.getLogger("parley")

#: Where the crash dialog says the log is when no log file could be written.
NO_LOG_FILE = ("standard error (the terminal Parley was started from): the data folder's "
               "logs folder could not be written")


class CrashHandler:
    """The one place unexpected exceptions end up: logged, then shown in a dialog.

    Installed as ``sys.excepthook`` (exceptions in Qt slots and in tasks, via
    ``parley.core.tasks.report_bug``), ``threading.excepthook`` and the asyncio
    loop's exception handler. The app keeps running: what is saved stays saved.

    Args:
        log_path: the log file named in the dialog (None: the log goes to stderr).
    """

    def __init__(self, log_path: Path | None) -> None:
        from PySide6.QtCore import QObject, Signal

        class _Relay(QObject):
            crashed = Signal(str, str)

        self.log_path = log_path
        self._relay = _Relay()
        self._relay.crashed.connect(self._show)  # queued when emitted from another thread
        self._box: Any = None
        self.count = 0

    def install(self, loop: asyncio.AbstractEventLoop | None = None) -> None:
        """Become the handler of uncaught exceptions everywhere (and of ``loop``'s,
        when given: ``parley.gui.app`` makes its loop after the first paint)."""
        sys.excepthook = self
        threading.excepthook = lambda a: self(a.exc_type, a.exc_value, a.exc_traceback)
        if loop is not None:
            loop.set_exception_handler(self.loop_handler)

    def __call__(self, exc_type: type[BaseException], exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if issubclass(exc_type, KeyboardInterrupt):
            sys.__excepthook__(exc_type, exc or exc_type(), tb)
            return
        self.count += 1
        details = "".join(traceback.format_exception(exc_type, exc, tb))
        log.critical("unexpected error\n%s", details)
        summary = f"{exc_type.__name__}: {exc}"
        self._relay.crashed.emit(summary, details)

    def loop_handler(self, _loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        """asyncio's exception handler: route to :meth:`__call__` (or log a message)."""
        exc = context.get("exception")
        if isinstance(exc, BaseException):
            self(type(exc), exc, exc.__traceback__)
        else:
            log.error("asyncio: %s", context.get("message"))

    def _show(self, summary: str, details: str) -> None:
        from PySide6.QtWidgets import QApplication

        from parley.gui import dialogs

        if self._box is not None and self._box.isVisible():
            return  # one dialog at a time; the log has every report
        where = str(self.log_path) if self.log_path else NO_LOG_FILE
        self._box = dialogs.show_crash(QApplication.activeWindow(), summary, details, where)

"""Waiting for the window's first paint: what comes after it, and the event loop made then.

Start-up shows the window first and does the rest after its first paint has been
flushed (:func:`when_painted`); asyncio and qasync (~25 ms to import) are imported
then, in a worker thread, while Qt's own loop keeps taking keys
(:func:`loop_after_first_paint`).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QEvent, QObject, QTimer
from PySide6.QtWidgets import QWidget

#: ms after which what waits for the first paint goes ahead without it (a window
#: shown minimised gets no paint event).
PAINT_FALLBACK_MS = 500


def when_painted(target: QWidget, callback: Callable[[], None]) -> None:
    """Call ``callback`` once, right after ``target``'s first paint has been flushed."""
    _FirstPaint(target, callback)


class _FirstPaint(QObject):
    """Calls ``callback`` once, at the window's first paint event."""

    def __init__(self, target: QWidget, callback: Callable[[], None]) -> None:
        super().__init__(target)
        self.callback: Callable[[], None] | None = callback
        target.installEventFilter(self)

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:  # noqa: N802
        if event.type() == QEvent.Type.Paint and self.callback is not None:
            callback, self.callback = self.callback, None
            obj.removeEventFilter(self)
            QTimer.singleShot(0, callback)  # after this paint has been flushed
        return False


def loop_after_first_paint(app: Any, window: QWidget) -> Any:
    """Run Qt's event loop until ``window`` has painted and asyncio and qasync are
    imported (in a worker thread, begun at the first paint: the window takes keys
    meanwhile); then make qasync's loop on ``app`` and set it as asyncio's.

    Returns:
        The ``qasync.QEventLoop`` (not running yet), or None when the application
        was told to quit meanwhile (the window closed before it was ready).
    """
    from PySide6.QtCore import QEventLoop, Signal

    from parley.core.gc_pause import pausing_gc

    class _Relay(QObject):
        imported = Signal()

    relay = _Relay()
    waiting = QEventLoop()
    relay.imported.connect(waiting.quit)  # queued: emitted in the worker thread

    @pausing_gc
    def import_loop() -> None:
        try:
            import asyncio  # noqa: F401

            import qasync  # noqa: F401
        finally:
            relay.imported.emit()

    worker = threading.Thread(target=import_loop, name="import-asyncio", daemon=True)

    def begin() -> None:
        if worker.ident is None:
            worker.start()

    when_painted(window, begin)
    QTimer.singleShot(PAINT_FALLBACK_MS, begin)  # no paint event (started minimised …)
    waiting.exec()
    if worker.ident is not None:
        worker.join()
    if not window.isVisible():
        return None
    import asyncio

    import qasync

    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)
    return loop

"""The window's X11 window destroyed from outside: Parley closes as File → Quit does.

``xdotool windowclose`` (and any X client calling ``XDestroyWindow`` on Parley's window, or
``xkill``-like tools that do not end the connection) destroys the native window outright
instead of asking the window manager to close it. Qt (6.x, xcb) does not notice: the
``QMainWindow`` stays "visible", no close event comes, and Parley ran on with no window; a
second launch "brought its window to the front" and none appeared (trial 21a).

X does tell us: the X server sends a ``DestroyNotify`` event for the window (Qt selects
``StructureNotify`` on its top-level windows). :class:`WindowGoneWatch` reads it through a
native event filter and asks the window to close, the same shutdown as File → Quit
(``parley.gui.window.shutdown``): what is not saved yet is saved, the log says "Parley
closed", the lock file goes. Qt itself destroys a native window only when it makes a new
one in its place (the window's id then differs) or when the window has closed, both
ignored here.

Only on the ``xcb`` platform; elsewhere (Wayland, macOS, Windows) another program cannot
destroy Parley's window this way and nothing is installed.
"""

from __future__ import annotations

import ctypes
import logging
from collections.abc import Callable

from PySide6.QtCore import QAbstractNativeEventFilter, QByteArray, QTimer
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QWidget

log = logging.getLogger(__name__)

#: ``XCB_DESTROY_NOTIFY``: an X window was destroyed.
_DESTROY_NOTIFY = 17
#: Where ``xcb_destroy_notify_event_t`` holds the destroyed window's id (after
#: ``response_type``, ``pad0``, ``sequence`` and ``event``).
_WINDOW_OFFSET = 8


class WindowGoneWatch(QAbstractNativeEventFilter):
    """Calls ``close`` once when ``window()``'s X11 window is destroyed by someone else.

    Args:
        window: the window in use now (it changes after a recovery).
        close: asks that window to close, as File → Quit does.
    """

    def __init__(self, window: Callable[[], QWidget], close: Callable[[], object]) -> None:
        super().__init__()
        self._window = window
        self._close = close
        self.fired = False

    def nativeEventFilter(  # noqa: N802
            self, event_type: QByteArray | bytes | bytearray | memoryview,
            message: int) -> tuple[bool, int]:
        address = int(message)  # a shiboken VoidPtr in fact: of size 0, so never truthy
        if self.fired or not address or event_type != b"xcb_generic_event_t":
            return False, 0
        if ctypes.c_uint8.from_address(address).value & 0x7F != _DESTROY_NOTIFY:
            return False, 0
        gone = ctypes.c_uint32.from_address(address + _WINDOW_OFFSET).value
        window = self._window()
        if not window.isVisible() or window.windowHandle() is None \
                or int(window.winId()) != gone:
            return False, 0
        self.fired = True
        log.warning("the window (X11 id %#x) was destroyed by another program: closing as "
                    "File → Quit does", gone)
        QTimer.singleShot(0, self._close)  # from the event loop, not inside Qt's X event handling
        return False, 0


def install(app: QGuiApplication, window: Callable[[], QWidget],
            close: Callable[[], object]) -> WindowGoneWatch | None:
    """Watch for the window's X11 window being destroyed (see the module docstring).

    Returns:
        The watch (keep a reference: Qt does not own it), or None off X11.
    """
    if app.platformName() != "xcb":
        return None
    watch = WindowGoneWatch(window, close)
    app.installNativeEventFilter(watch)
    return watch

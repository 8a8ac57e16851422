"""Whether a window can be shown here, and telling the person why Parley cannot start.

Qt aborts the process when it cannot reach a display; :func:`display_problem` says the
real reason first. :func:`report_startup_error` tells an error the person can act on
(a data folder that cannot be made …) on stderr and, when a window can be shown, in a
message box.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from parley.core.errors import ParleyError

#: The exit status when Parley cannot start (e.g. its data folder cannot be created).
EXIT_CANNOT_START = 2

#: The sentence ``parley`` prints (exit 2) when no window can be shown (:func:`can_show_window`).
NO_DISPLAY = (
    "Parley needs a graphical desktop and found none (neither DISPLAY nor WAYLAND_DISPLAY "
    "is set): start it from a desktop session, or use 'parley --self-test', "
    "'--migrate-only' or '--import FILE', which need no window."
)

#: Said (exit 2) when ``DISPLAY`` names a local X display where no X server answers.
NO_X_SERVER = (
    "Parley cannot open a window: no X server answers at DISPLAY={display} (a desktop "
    "session that has ended, or a login without X forwarding?): start it from a running "
    "desktop session, or use 'parley --self-test', '--migrate-only' or '--import FILE', "
    "which need no window."
)


def can_show_window() -> bool:
    """Whether Qt can open a window here (creating a QApplication without a display
    aborts the process on Linux, so this is checked first)."""
    if sys.platform in ("darwin", "win32"):
        return True
    platform = os.environ.get("QT_QPA_PLATFORM", "")
    if platform and not platform.startswith(("xcb", "wayland")):
        return True  # offscreen, minimal, eglfs, vnc…: no display server needed
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


def x_server_answers(display: str) -> bool | None:
    """Whether an X server listens at a local X display (``:N`` or ``:N.S``).

    Connects to its socket (Linux's abstract ``@/tmp/.X11-unix/XN``, then the
    file), as Xlib would; a refused or missing socket answers within
    microseconds.

    Args:
        display: the ``DISPLAY`` value.

    Returns:
        True or False; None for a display that is not a local one (``host:N``:
        not checked).
    """
    import re
    import socket

    match = re.fullmatch(r"(?:unix)?:(\d+)(?:\.\d+)?", display.strip())
    if match is None:
        return None
    path = f"/tmp/.X11-unix/X{match.group(1)}"
    for address in ("\0" + path, path):
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
            conn.settimeout(1.0)
            try:
                conn.connect(address)
            except OSError:
                continue
            return True
    return False


def display_problem() -> str | None:
    """Why Qt could not open a window here, in one sentence (None: no reason known).

    Qt aborts the process (SIGABRT) when it cannot reach a display, after a
    misleading hint about ``xcb-cursor0``; this says the real reason first:
    no ``DISPLAY``/``WAYLAND_DISPLAY`` at all (:data:`NO_DISPLAY`), or a local
    ``DISPLAY`` where no X server answers, on X11 (:data:`NO_X_SERVER`).
    """
    if not can_show_window():
        return NO_DISPLAY
    if sys.platform != "linux":
        return None
    platform = os.environ.get("QT_QPA_PLATFORM", "")
    if platform and not platform.startswith("xcb"):
        return None
    if os.environ.get("WAYLAND_DISPLAY") and not platform:
        return None  # Qt may use Wayland
    display = os.environ.get("DISPLAY", "")
    if display and x_server_answers(display) is False:
        return NO_X_SERVER.format(display=display)
    return None


def report_startup_error(error: ParleyError, qt_argv: Sequence[str] = ()) -> int:
    """Tell the person why Parley cannot start: on stderr, and in a message box when
    a window can be shown (no traceback: ``error`` is one they can act on).

    Args:
        error: e.g. ``parley.core.paths.DataDirError``; its message is shown as is.
        qt_argv: Qt's own arguments, for the QApplication of the message box.

    Returns:
        :data:`EXIT_CANNOT_START` (2), the process exit status.
    """
    print(error.message, file=sys.stderr, flush=True)
    if can_show_window():
        show_startup_error(error, qt_argv)
    return EXIT_CANNOT_START


def show_startup_error(error: ParleyError, qt_argv: Sequence[str] = ()) -> None:
    """Show ``error`` in a modal message box titled "Parley cannot start"; returns when
    it is closed. Creates the QApplication if there is none yet.

    With ``PARLEY_PROBE`` set, prints ``parley-probe startup-error <epoch s>`` once
    the box is up; ``PARLEY_PROBE=quit`` also closes it (tests).
    """
    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QApplication, QMessageBox

    from parley.gui.startup.probe import StartupProbe

    if QApplication.instance() is None:
        app = QApplication([sys.argv[0], *qt_argv])
        app.setApplicationName("Parley")
    box = QMessageBox(QMessageBox.Icon.Critical, "Parley cannot start", error.message,
                      QMessageBox.StandardButton.Ok)
    box.setAccessibleName("Parley cannot start")
    probe_mode = os.environ.get("PARLEY_PROBE")
    if probe_mode:
        probe = StartupProbe(probe_mode)

        def shown() -> None:
            probe.mark("startup-error")
            if probe_mode == "quit":
                box.done(0)

        QTimer.singleShot(0, shown)
    box.exec()

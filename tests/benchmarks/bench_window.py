"""The real main window for a benchmark: a QApplication with Parley's look, a qasync loop, shown.

Benchmarks that measure the window (``bench_streaming``, ``bench_send_path``,
``bench_big_open``, ``bench_cards``, ``bench_sidebar_reveal``) make a data folder with
:func:`new_home` and open the window the same way the app does (``parley.gui.app``):
:func:`open_window` makes the application, applies the appearance, sets the qasync
event loop and shows a 1200×800 window on ``home``.
Anything that must be in place before the QApplication exists (a profile function
for the threads Qt starts) is set by the caller before calling it.
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import qasync

    from parley.gui.main_window import MainWindow


def new_home() -> Path:
    """A fresh data folder for a window benchmark, and the environment it runs in.

    Sets ``PARLEY_HOME`` to it and, unless set already, ``QT_QPA_PLATFORM=offscreen``
    and ``PARLEY_KEYRING=file`` (no desktop keyring prompt); call before Qt is imported.

    Returns:
        The new, empty folder (under the system's temporary folder).
    """
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    os.environ.setdefault("PARLEY_KEYRING", "file")
    home = Path(tempfile.mkdtemp(prefix="parley-bench-"))
    os.environ["PARLEY_HOME"] = str(home)
    return home


def open_window(home: Path, env: Mapping[str, str] | None = None
                ) -> tuple[qasync.QEventLoop, MainWindow]:
    """Make the application and show the main window on ``home``.

    Args:
        home: the data folder (``sessions.db`` inside).
        env: the environment the window reads (provider keys, base URLs); none by default.

    Returns:
        ``(loop, window)``: the qasync loop (already the asyncio event loop; run the
        scenario with ``with loop: loop.run_until_complete(...)``) and the shown window,
        whose start-up (``window.startup.start()``) the scenario awaits itself.
    """
    import qasync
    from PySide6.QtWidgets import QApplication

    from parley.gui.look import appearance
    from parley.gui.main_window import MainWindow

    app = QApplication.instance() or QApplication([sys.argv[0]])
    assert isinstance(app, QApplication)
    appearance.apply(app)
    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)
    window = MainWindow(home=home, env=dict(env or {}))
    window.resize(1200, 800)
    window.show()
    return loop, window

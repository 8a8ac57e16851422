"""Start Parley: command line, logging, crash handler, QApplication + qasync loop.

``main()`` is the ``parley`` gui-script. Start-up is ordered for speed (budget:
first painted window ≤ 1.0 s even with a 1 GB sessions.db, measured by
tests/benchmarks/bench_startup.py): only Qt and the window's own widgets are
imported before the window is shown; the store and the providers are imported and
opened after the first paint, off the GUI thread (see ``parley.gui.startup.phases``);
the provider SDKs are imported in the provider process, started once the window has
painted (``parley.core.providers.process``). The pieces are in ``parley.gui.startup``: the command
line, the log file, the crash handler, the display check, the first paint, SIGTERM and
SIGINT closing the window as File → Quit does (``quit_signals``), and so does its X11 window
destroyed by another program (``window_gone``).

Environment:
    PARLEY_HOME: where Parley keeps its data (``--home`` wins over it).
    PARLEY_DATABASE_URL: keep the chats in this PostgreSQL database instead of
        sessions.db (``--database`` wins over it).
    PARLEY_THEME: ``light`` or ``dark`` to override the system colour scheme.
    PARLEY_PROBE: when set, print ``parley-probe <event> <epoch s>`` lines on
        stdout at ``first-paint``, ``sessions-listed`` and ``ready`` (providers
        loaded; used by tests/benchmarks/bench_startup.py and the e2e tests),
        ``typed`` when the message box first holds text, or ``startup-error``
        when Parley cannot start and says why in a message box. Once ready and
        idle (no task left, e.g. a message sent while starting was answered),
        ``parley-stat gui-stall-max <s>`` gives the longest the GUI thread went
        without running its event loop from the first paint on (measured with a
        5 ms timer). ``PARLEY_PROBE=quit`` also closes the window then (or the box).
"""

from __future__ import annotations

# Before PySide6 is imported: it takes Python's own ``__import__`` (drop_pyside_import_hook).
from parley.gui.startup.import_hook import drop_pyside_import_hook  # isort: skip

import logging
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from parley.gui.startup.command_line import parse_args, version
from parley.gui.startup.crash import CrashHandler
from parley.gui.startup.display import (
    EXIT_CANNOT_START,
    display_problem,
    report_startup_error,
)
from parley.gui.startup.log_file import setup_logging
from parley.gui.startup.probe import StartupProbe

if TYPE_CHECKING:  # made after the first paint's imports (run)
    from parley.gui.main_window import MainWindow

log = logging.getLogger("parley")


def run(home: Path | None, qt_argv: list[str]) -> int:
    """Create the application and window, run the event loop until the window closes.

    Only Qt and the window's first-paint widgets come before the first paint;
    asyncio and qasync (~25 ms) are imported after it, in a worker thread, while
    Qt's own loop keeps taking keys (``parley.gui.startup.first_paint.loop_after_first_paint``).
    """
    from PySide6.QtCore import Qt, QTimer
    from PySide6.QtWidgets import QApplication

    drop_pyside_import_hook()  # every import from here on is faster

    from parley.core import paths
    from parley.core.appinfo import APP_ID
    from parley.gui.look import appearance
    from parley.gui.main_window import MainWindow

    folder = paths.data_dir(home)
    log_path = setup_logging(folder / paths.LOGS_NAME)
    QApplication.setHighDpiScaleFactorRoundingPolicy(
        Qt.HighDpiScaleFactorRoundingPolicy.PassThrough)
    # Fusion everywhere, given as Qt's own option: app.setStyle() would make Python
    # wrappers of QStyle and its ~600 enum values before the first paint (~5 ms).
    app = QApplication([sys.argv[0], *qt_argv, "-style", "Fusion"])
    app.setApplicationName("Parley")
    app.setApplicationDisplayName("Parley")
    app.setOrganizationName("Parley")
    app.setDesktopFileName(APP_ID)
    app.setWindowIcon(appearance.app_icon())
    appearance.pick_font(app)
    appearance.apply(app)

    from parley.gui.startup.single_instance import LockUnavailable, SingleInstance

    instance: SingleInstance | None = None
    if paths.is_writable(folder):
        instance = SingleInstance(folder)
        try:
            acquired = instance.acquire()
        except LockUnavailable as exc:
            from parley.core.paths import DataDirError

            advice = ("Free some space on that disk, then start Parley again."
                      if exc.disk_full else "Check that folder, then start Parley again.")
            log.warning("cannot take the lock in %s: %s", folder, exc.why)
            return report_startup_error(DataDirError(folder, exc.why, advice))
        if not acquired:
            print("Parley is already running with this data folder; its window was brought "
                  "to the front.")
            log.info("another Parley owns %s; asked it to show its window", folder)
            return 0
    else:  # no lock file can be made; opening sessions.db will say the folder is read-only
        log.info("%s cannot be written: not taking the one-Parley-per-folder lock", folder)

    crash = CrashHandler(log_path)
    crash.install()

    probe_mode = os.environ.get("PARLEY_PROBE")
    probe = StartupProbe(probe_mode) if probe_mode else None
    window = MainWindow(home=home, probe=probe.mark if probe else None)
    if probe is not None:
        probe.watch(window)
    from parley.gui.startup.first_paint import PAINT_FALLBACK_MS, when_painted

    when_painted(window, _start_provider_process)
    QTimer.singleShot(PAINT_FALLBACK_MS, _start_provider_process)  # no paint (minimised …)
    window.show()
    from parley.gui.startup.first_paint import loop_after_first_paint

    loop = loop_after_first_paint(app, window)
    if loop is None:  # the window was closed before it had painted
        if instance is not None:
            instance.release()
        log.info("Parley closed")
        return 0
    crash.install(loop)
    # Not before the first paint (~3 ms of imports): until the loop is made nothing is open,
    # and a signal's default action loses nothing (a lock file left is taken over).
    from parley.gui.startup import quit_signals, window_gone

    quit_signals.install(lambda: _current(window).quitting.close_from_outside(),
                         lambda: _closing(_current(window)), app)

    watch = window_gone.install(app, lambda: _current(window),  # noqa: F841 (kept alive)
                                lambda: _current(window).quitting.close_from_outside())
    window.startup.start_after_first_paint()
    if instance is not None:
        instance.listen()
        instance.activated.connect(lambda: _bring_to_front(_current(window)))
        instance.imported.connect(lambda: _list_imported(_current(window)))
    QTimer.singleShot(0, lambda: log.info("Parley %s starting (home: %s)", version(), folder))
    with loop:
        loop.run_forever()
    if instance is not None:
        instance.release()
    log.info("Parley closed")
    return 0


def _start_provider_process() -> None:
    """Start the provider process, whose SDK import (~1 s of CPU) runs on the other core
    while the store opens (``parley.core.providers.process.spawn.start_early``; once only).

    Called once the window has painted, not before: a second interpreter starting up
    beside the window's slowed the first paint, and the key typed at it, by ~30 ms on a
    2-core machine (issue 33, ``tests.benchmarks.bench_startup --runs 7``, Xvfb, this and
    the code that started it first thing launched in turn, two rounds, load 0.8-1.4, empty /
    1.2 GB store: the key kept at 0.232 / 0.238 and 0.228 / 0.231 s against 0.260 / 0.258
    and 0.234 / 0.265 s; the message at the provider 1.29 / 1.28 and 1.30 / 1.29 s against
    1.19 / 1.20 and 1.19 / 1.16 s, within its 2.0 s budget). A lower CPU priority for its
    imports instead (nice +10) kept the key no sooner and the message 0.1-0.2 s later.
    """
    from parley.core.providers.process.spawn import start_early

    start_early()


def _tell_open_window(home: Path | None) -> None:
    """After ``parley --import``: a Parley open on that data folder lists the new chats."""
    from parley.core.paths import DataDirError, data_dir
    from parley.gui.startup.single_instance import tell_imported

    try:
        told = tell_imported(data_dir(home))
    except (DataDirError, OSError) as exc:
        log.info("could not tell an open Parley about the import: %s", exc)
        return
    if told:
        print("The Parley window open on this data folder lists the new chats now.")


def _list_imported(window: MainWindow) -> None:
    from parley.gui.dialogs.import_dialog import list_imported  # not before the first paint

    list_imported(window)
    if window.setup_panel is not None:  # the set-up page offers the chats to read first
        window.tasks.spawn(window.pages.offer_reading(), name="setup-chats")


def _current(window: MainWindow) -> MainWindow:
    """The window in use: ``window``, or the one that took its place after a recovery."""
    from parley.gui.main_window import MainWindow  # imported by run already

    while isinstance(window.successor, MainWindow):
        window = window.successor
    return window


def _closing(window: MainWindow) -> bool:
    """The window is shutting down (a second SIGTERM then ends Parley at once)."""
    return window.quitting.closing or window.quitting.closed


def _bring_to_front(window: MainWindow) -> None:
    """Show the window of this Parley when a second launch asks for it."""
    if window.isMinimized():
        window.showNormal()
    window.show()
    window.raise_()
    window.activateWindow()



def main(argv: Sequence[str] | None = None) -> int:
    """The ``parley`` command: parse options, then run the app.

    Args:
        argv: the arguments after the program name (default ``sys.argv[1:]``).

    Returns:
        The process exit status: 0 on a normal close, 2 when Parley cannot start
        (no display to show a window on: :func:`display_problem` on stderr; the data
        folder cannot be created: the reason is on stderr and, when a window can
        be shown, in a message box), ``--database`` is not a PostgreSQL address
        (InvalidDatabaseUrl's words on stderr), ``--migrate-only`` failed or ``--import``
        refused its file.

    Raises:
        SystemExit: 2 for an unknown option (argparse prints the usage), 0 after
            ``--help``.
    """
    args, qt_argv = parse_args(sys.argv[1:] if argv is None else argv)
    if args.version:
        print(f"Parley {version()}")
        return 0
    if args.self_test:
        from parley.gui.startup.self_test import run_self_test

        return run_self_test()
    home: Path | None = None
    if args.home:
        home = Path(args.home).expanduser().resolve()
        os.environ["PARLEY_HOME"] = str(home)  # the core reads it as well
    if args.database:
        from parley.core.store.backends import database_url
        from parley.core.store.errors import InvalidDatabaseUrl

        try:  # a mistyped address is refused here, never taken as a file to create
            database_url(args.database)
        except InvalidDatabaseUrl as exc:
            print(exc.message, file=sys.stderr, flush=True)
            return 2
        os.environ["PARLEY_DATABASE_URL"] = args.database  # read where the store opens
    if args.migrate_only or args.copy_to or args.import_file:
        from parley.core.cli.output import quiet_when_reader_leaves

        quiet_when_reader_leaves()  # `parley --import F | head -1`: no traceback, same status
    if args.migrate_only:  # creates nothing: not even the data folder
        from parley.core.cli.migrate import migrate_only

        return migrate_only(home)
    if args.copy_to:
        from parley.core.cli.copy_to import copy_only

        return copy_only(args.copy_to, home, args.database)
    if args.import_file:
        from parley.core.cli.import_file import import_only

        return import_only(args.import_file, home, database=args.database,
                           on_new=lambda: _tell_open_window(home))
    problem = display_problem()  # Qt would abort (SIGABRT) with a misleading xcb message
    if problem is not None:
        print(problem, file=sys.stderr, flush=True)
        return EXIT_CANNOT_START
    from parley.core.paths import DataDirError, data_dir

    try:
        data_dir(home)
    except DataDirError as err:
        return report_startup_error(err, qt_argv)
    return run(home, qt_argv)


if __name__ == "__main__":
    sys.exit(main())

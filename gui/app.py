"""Start Parley: command line, logging, crash handler, QApplication + qasync loop.

``main()`` is the ``parley`` gui-script. Start-up is ordered for speed (budget:
first painted window ≤ 1.0 s even with a 1 GB sessions.db, shared/DESIGN.md):
only Qt and the window's own widgets are imported before the window is shown;
the store, the providers and their SDKs are imported and opened after the first
paint, off the GUI thread (see ``MainWindow.start``).

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

import argparse
import builtins
import logging
import logging.handlers
import os
import sys
import threading
import time
import traceback
from collections.abc import Sequence
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import asyncio

    from parley.core.errors import ParleyError

log = logging.getLogger("parley")

#: Python's own ``__import__``, taken before PySide6 is imported (see
#: :func:`drop_pyside_import_hook`).
_PLAIN_IMPORT = builtins.__import__

LOG_FILE = "parley.log"
#: Where the crash dialog says the log is when no log file could be written.
NO_LOG_FILE = ("standard error (the terminal Parley was started from): the data folder's "
               "logs folder could not be written")
#: The exit status when Parley cannot start (e.g. its data folder cannot be created).
EXIT_CANNOT_START = 2


def version() -> str:
    """Return Parley's version ("0.1.0"), from ``parley.core.appinfo`` (also right in a bundle)."""
    from parley.core.appinfo import VERSION

    return VERSION


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

_EPILOG = """\
Qt's own options (for example -style Fusion, -platform xcb) go after '--':
  parley --home ~/parley-test -- -style Fusion

environment:
  PARLEY_HOME          where Parley keeps its data (--home wins)
  PARLEY_DATABASE_URL  keep the chats in this PostgreSQL database (--database wins)
  PARLEY_THEME         light or dark, instead of the desktop's colour scheme
  OPENAI_BASE_URL      another server than OpenAI's makes the built-in OpenAI
                       provider an OpenAI-compatible server (llama.cpp, Ollama …)
  PARLEY_OPENAI_URLS   more API roots that are OpenAI's own (a gateway in front
                       of OpenAI), space-separated
  ANTHROPIC_API_KEY, OPENAI_API_KEY, ANTHROPIC_BASE_URL: as the SDKs read them
"""


def build_parser() -> argparse.ArgumentParser:
    """The ``parley`` command line: one ``add_argument`` per option Parley accepts.

    An option that works without a window (``--version``, ``--self-test``,
    ``--migrate-only``, ``--import``, ``--copy-to``) is handled in :func:`main`
    before the display check.

    Returns:
        The parser; ``--help`` prints what it lists, an unknown option is an error
        (usage on stderr, exit status 2).
    """
    parser = argparse.ArgumentParser(
        prog="parley",
        description="Parley: a desktop chat app for large language models.",
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        allow_abbrev=False,
    )
    parser.add_argument("--home", metavar="DIR",
                        help="keep Parley's data in DIR (same as PARLEY_HOME)")
    parser.add_argument("--database", metavar="URL",
                        help="keep the chats in the PostgreSQL database at URL "
                             "(postgresql://user@host:5432/parley; same as PARLEY_DATABASE_URL) "
                             "instead of sessions.db")
    parser.add_argument("--copy-to", metavar="TARGET",
                        help="copy every chat (from sessions.db, or from --database) to TARGET: "
                             "an empty PostgreSQL database (postgresql://…) or a new sessions.db "
                             "file; verified, the original unchanged; print a summary and exit "
                             "(2: nothing copied, with the reason)")
    parser.add_argument("--version", action="store_true", help="print the version and exit")
    parser.add_argument("--self-test", action="store_true",
                        help="check this installation offscreen in a temporary folder and exit "
                             "(0 = all good)")
    parser.add_argument("--migrate-only", action="store_true",
                        help="upgrade an older sessions.db to the current format without "
                             "opening a window, print what was migrated and exit")
    parser.add_argument("--import", dest="import_file", metavar="FILE",
                        help="import FILE (a ChatGPT, Claude.ai or Open WebUI export, a Parley "
                             "export, Anthropic or OpenAI messages) without opening a window, "
                             "print a summary and exit (2: refused, with the reason)")
    return parser


def parse_args(argv: Sequence[str]) -> tuple[argparse.Namespace, list[str]]:
    """Parse Parley's options; what follows ``--`` is left for Qt.

    Args:
        argv: the arguments after the program name.

    Returns:
        (options, Qt's arguments: those after the first ``--``).

    Raises:
        SystemExit: 2 after printing the usage and the reason for an unknown option
            or a missing value; 0 after ``--help``.
    """
    args = list(argv)
    qt_argv: list[str] = []
    if "--" in args:
        cut = args.index("--")
        args, qt_argv = args[:cut], args[cut + 1:]
    return build_parser().parse_args(args), qt_argv


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
        from parley.gui.startup.log_file import PrivateLogFile, private_log_dir

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


FAULT_LOG = "native-crashes.log"
_fault_file: Any = None


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


class StartupProbe:
    """Prints timing lines for the start-up benchmark (see module docstring)."""

    TICK_MS = 5

    def __init__(self, mode: str) -> None:
        self.mode = mode
        self.seen: set[str] = set()
        self.window: Any = None
        self.stall_max = 0.0
        self._last_tick = 0.0
        self._timer: Any = None

    def watch(self, window: Any) -> None:
        """Mark ``typed`` when ``window``'s message box first holds text; wait for it to be
        idle once ready (see the module docstring)."""
        self.window = window
        composer = window.composer
        composer.textChanged.connect(lambda: composer.text() and self.mark("typed"))

    def mark(self, event: str) -> None:
        """Print ``parley-probe <event> <epoch seconds>`` once per event."""
        if event in self.seen:
            return
        self.seen.add(event)
        print(f"parley-probe {event} {time.time():.6f}", flush=True)
        if event == "first-paint" and self.window is not None:
            self._start_stall_meter()
        if event == "ready":
            self._when_idle()

    def _start_stall_meter(self) -> None:
        from PySide6.QtCore import Qt, QTimer

        self._timer = QTimer()
        self._timer.setTimerType(Qt.TimerType.PreciseTimer)
        self._timer.setInterval(self.TICK_MS)
        self._timer.timeout.connect(self._tick)
        self._last_tick = time.monotonic()
        self._timer.start()

    def _tick(self) -> None:
        now = time.monotonic()
        self.stall_max = max(self.stall_max, now - self._last_tick - self.TICK_MS / 1000)
        self._last_tick = now

    def _when_idle(self) -> None:
        """Once the window has no task left: print the stall figure; close if asked."""
        from PySide6.QtCore import QTimer

        window = self.window
        if window is not None and window.tasks.pending:
            QTimer.singleShot(20, self._when_idle)
            return
        if self._timer is not None:
            self._timer.stop()
        print(f"parley-stat gui-stall-max {max(0.0, self.stall_max):.6f}", flush=True)
        if self.mode == "quit":
            from PySide6.QtWidgets import QApplication

            for top in QApplication.topLevelWidgets():
                top.close()


def drop_pyside_import_hook() -> bool:
    """Give Python back its own ``__import__`` once PySide6 is imported.

    PySide6 replaces ``builtins.__import__`` with a hook for its ``__feature__``
    switches (``from __feature__ import snake_case``), which Parley does not use:
    for every module imported afterwards it reads the module's source to see if
    it mentions PySide6. That made each later import slower — about 0.2 s of
    CPU on the ``anthropic`` SDK alone, 0.4–0.6 s of start-up in all (the chats
    listed, then the provider ready). Without the hook PySide6 treats every
    module as using no feature, which is what Parley's code expects.

    Returns:
        True when the hook was found and removed.
    """
    if builtins.__import__ is _PLAIN_IMPORT or "__feature__" not in sys.modules:
        return False
    builtins.__import__ = _PLAIN_IMPORT
    return True


def run(home: Path | None, qt_argv: list[str]) -> int:
    """Create the application and window, run the event loop until the window closes.

    Only Qt and the window's first-paint widgets come before the first paint;
    asyncio and qasync (~25 ms) are imported after it, in a worker thread, while
    Qt's own loop keeps taking keys (:func:`_loop_after_first_paint`).
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
    window.show()
    loop = _loop_after_first_paint(app, window)
    if loop is None:  # the window was closed before it had painted
        if instance is not None:
            instance.release()
        return 0
    crash.install(loop)
    window.start_after_first_paint()
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


def _loop_after_first_paint(app: Any, window: Any) -> Any:
    """Run Qt's event loop until ``window`` has painted and asyncio and qasync are
    imported (in a worker thread, begun at the first paint: the window takes keys
    meanwhile); then make qasync's loop on ``app`` and set it as asyncio's.

    Returns:
        The ``qasync.QEventLoop`` (not running yet), or None when the application
        was told to quit meanwhile (the window closed before it was ready).
    """
    from PySide6.QtCore import QEventLoop, QObject, QTimer, Signal

    from parley.core.gc_pause import pausing_gc
    from parley.gui.main_window import PAINT_FALLBACK_MS, when_painted

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
        print("The Parley window open on this data folder lists them now.")


def _list_imported(window: Any) -> None:
    from parley.gui.dialogs.import_dialog import list_imported  # not before the first paint

    list_imported(window)


def _current(window: Any) -> Any:
    """The window in use: ``window``, or the one that took its place after a recovery."""
    while getattr(window, "successor", None) is not None:
        window = window.successor
    return window


def _bring_to_front(window: Any) -> None:
    """Show the window of this Parley when a second launch asks for it."""
    if window.isMinimized():
        window.showNormal()
    window.show()
    window.raise_()
    window.activateWindow()


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
    if args.migrate_only:  # creates nothing: not even the data folder
        from parley.core.migrate_cli import migrate_only

        return migrate_only(home)
    if args.copy_to:
        from parley.core.transfer_cli import copy_only

        return copy_only(args.copy_to, home, args.database)
    if args.import_file:
        from parley.core.import_cli import import_only

        code = import_only(args.import_file, home)
        if code == 0:
            _tell_open_window(home)
        return code
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

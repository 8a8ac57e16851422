"""``parley --self-test``: prove that this installation (or packaged bundle) works.

The self-test starts Parley without a screen (Qt's ``offscreen`` platform), in a
temporary data folder that is deleted afterwards, and checks in order:

1. ``qt`` — a QApplication starts on the offscreen platform;
2. ``image formats`` — Qt can read PNG, JPEG, GIF, WebP and SVG (the plugins a
   bundle must carry) and renders Parley's SVG icon through the icon engine;
3. ``resources`` — the style sheet and the icons are where the GUI looks;
4. ``store`` — ``sessions.db`` is created, a session and a turn are written,
   read back, found by full-text search (SQLite FTS5), and read again after
   the file is closed and reopened;
5. ``providers`` — the provider process starts and builds Anthropic and OpenAI clients
   (no request is sent), and the keyring backends are registered;
6. ``window`` — the main window opens on that folder, paints, finishes its
   start-up (store opened, providers loaded, set-up shown as no provider is
   configured), lists the session, and shuts down cleanly.

Each check prints one line (``self-test: ok|FAIL <check> - <detail> (<ms> ms)``)
and the last line says ``passed`` or ``failed``. Nothing outside the temporary
folder is read or written: provider keys in the environment are ignored and
keys go to a file (``PARLEY_KEYRING=file``), never the system keyring.
Used by ``packaging/`` and ``tests/packaging`` to check a built bundle.
"""

from __future__ import annotations

import asyncio
import io
import os
import sys
import tempfile
import time
import traceback
from collections.abc import Callable, Coroutine
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import IO, Any

PROBE_TEXT = "Hello from Parley's self-test: ünïcødé ✓ and a searchable word zyxqwv"
SEARCH_WORD = "zyxqwv"
IMAGE_FORMATS = ("png", "jpeg", "gif", "webp", "svg")
WINDOW_TIMEOUT_S = 60.0


@dataclass
class SelfTest:
    """Runs named checks, prints one line per check, remembers failures.

    Args:
        out: where the lines go (default ``sys.stdout``).
    """

    out: IO[str] = field(default_factory=lambda: sys.stdout)
    failures: list[str] = field(default_factory=list)
    passed: int = 0

    def _line(self, status: str, name: str, detail: str, started: float) -> None:
        ms = (time.perf_counter() - started) * 1000
        print(f"self-test: {status:<4} {name} - {detail} ({ms:.0f} ms)", file=self.out, flush=True)

    def check(self, name: str, fn: Callable[[], str]) -> bool:
        """Run ``fn`` (which returns a detail line or raises); print and record the outcome."""
        started = time.perf_counter()
        try:
            detail = fn()
        except Exception as exc:  # noqa: BLE001 - every failure is reported, none is fatal
            self._fail(name, exc, started)
            return False
        self.passed += 1
        self._line("ok", name, detail, started)
        return True

    async def check_async(self, name: str, fn: Callable[[], Coroutine[Any, Any, str]]) -> bool:
        """:meth:`check` for a coroutine function."""
        started = time.perf_counter()
        try:
            detail = await fn()
        except Exception as exc:  # noqa: BLE001
            self._fail(name, exc, started)
            return False
        self.passed += 1
        self._line("ok", name, detail, started)
        return True

    def _fail(self, name: str, exc: BaseException, started: float) -> None:
        self.failures.append(name)
        self._line("FAIL", name, f"{type(exc).__name__}: {exc}", started)
        traceback.print_exception(exc, file=self.out)

    def finish(self, started: float) -> int:
        """Print the summary line; return the exit status (0 only if every check passed)."""
        total_s = time.perf_counter() - started
        if self.failures:
            print(f"self-test: failed ({len(self.failures)} of {self.passed + len(self.failures)}"
                  f" checks: {', '.join(self.failures)}) in {total_s:.1f} s",
                  file=self.out, flush=True)
            return 1
        print(f"self-test: passed ({self.passed} checks) in {total_s:.1f} s",
              file=self.out, flush=True)
        return 0


def run_self_test(out: IO[str] | None = None) -> int:
    """Run every check in a temporary data folder; see the module docstring.

    Sets ``QT_QPA_PLATFORM=offscreen``, ``PARLEY_HOME`` (the temporary folder)
    and ``PARLEY_KEYRING=file`` in this process's environment, so call it in a
    process of its own (``parley --self-test``), before any QApplication exists.

    Args:
        out: where the report goes (default ``sys.stdout``).

    Returns:
        The process exit status: 0 when every check passed, 1 otherwise (the
        report names the failed checks). Never raises for a failed check.
    """
    started = time.perf_counter()
    # A windowed Windows build has no sys.stdout: the exit status still tells.
    test = SelfTest(out or sys.stdout or io.StringIO())
    os.environ["QT_QPA_PLATFORM"] = "offscreen"
    os.environ["PARLEY_KEYRING"] = "file"
    with tempfile.TemporaryDirectory(prefix="parley-self-test-",
                                     ignore_cleanup_errors=True) as tmp:
        home = Path(tmp) / "home"
        os.environ["PARLEY_HOME"] = str(home)
        print(f"self-test: Parley {_version()} on {sys.platform}, "
              f"{'bundle' if getattr(sys, 'frozen', False) else 'python'} {sys.executable}; "
              f"temporary home {home}", file=test.out, flush=True)
        app = _start_qt(test)
        if app is not None:
            test.check("image formats", _check_image_formats)
            test.check("resources", _check_resources)
            test.check("attachments", _check_attachments)
            _run_async(app, _async_checks(test, home))
    return test.finish(started)


def _version() -> str:
    from parley.core import appinfo

    return appinfo.VERSION


def _start_qt(test: SelfTest) -> Any:
    app: Any = None

    def start() -> str:
        nonlocal app
        from PySide6 import __version__ as pyside_version
        from PySide6.QtWidgets import QApplication

        from parley.core import appinfo
        from parley.gui.look import appearance

        app = QApplication.instance() or QApplication([sys.argv[0]])
        app.setApplicationName(appinfo.NAME)
        app.setOrganizationName(appinfo.ORGANIZATION)
        app.setDesktopFileName(appinfo.APP_ID)
        app.setStyle("Fusion")  # as parley.gui.app.run does
        app.setWindowIcon(appearance.app_icon())
        appearance.apply(app)
        return f"PySide6 {pyside_version}, platform {app.platformName()}"

    test.check("qt", start)
    return app


def _check_image_formats() -> str:
    from PySide6.QtCore import QSize
    from PySide6.QtGui import QImageReader

    from parley.gui.look import appearance

    formats = {bytes(f.data()).decode() for f in QImageReader.supportedImageFormats()}
    missing = [f for f in IMAGE_FORMATS if f not in formats]
    if missing:
        raise RuntimeError(f"Qt cannot read {', '.join(missing)} (image format plugins missing)")
    image = appearance.app_icon().pixmap(QSize(64, 64)).toImage()
    if image.isNull() or image.pixelColor(32, 32).alpha() == 0:
        raise RuntimeError("the SVG app icon did not render (iconengines/svg plugin missing)")
    return f"reads {', '.join(IMAGE_FORMATS)}; app icon renders at 64 px"


def _check_attachments() -> str:
    import io

    from PIL import Image

    from parley.core.attachments.files import from_bytes

    buf = io.BytesIO()
    Image.new("RGB", (4, 3), (200, 40, 40)).save(buf, format="PNG")
    att = from_bytes(buf.getvalue(), "probe.png")
    if att.media_type != "image/png" or (att.width, att.height) != (4, 3):
        raise RuntimeError(f"a PNG was read as {att.media_type} {att.width}x{att.height}")
    return f"Pillow {Image.__version__} reads and checks images"


def _check_resources() -> str:
    from parley.core.tools import skills
    from parley.gui.look import appearance

    wanted = [appearance.RESOURCES / "styles" / "parley.qss",
              appearance.RESOURCES / "icons" / "parley.svg",
              skills.BUNDLED_DIR / "summaries.md"]
    missing = [str(p) for p in wanted if not p.is_file()]
    if missing:
        raise FileNotFoundError(f"missing: {', '.join(missing)}")
    scheme = appearance.current()
    sheet = appearance.style_sheet(scheme)
    if not sheet or any(f"@{name}" in sheet for name in asdict(scheme)):
        raise RuntimeError("the style sheet is empty or its @colour tokens were not replaced")
    return f"style sheet, icons and skills in {appearance.RESOURCES}"


def _run_async(app: Any, coro: Coroutine[Any, Any, None]) -> None:
    import qasync

    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)
    try:
        loop.run_until_complete(coro)
    finally:
        loop.close()
        asyncio.set_event_loop(None)


async def _async_checks(test: SelfTest, home: Path) -> None:
    session_id = ""

    async def store() -> str:
        nonlocal session_id
        session_id = await _check_store(home)
        return f"session {session_id[:8]} written, read, searched and reopened"

    if await test.check_async("store", store):
        await test.check_async("providers", _check_providers)
        await test.check_async("window", lambda: _check_window(home, session_id))


async def _check_store(home: Path) -> str:
    """Write a session and a turn, read them back (also after reopening); return the id."""
    from parley.core import paths
    from parley.core.content import TextBlock, Turn
    from parley.core.store.store import Store
    from parley.core.workspace import Workspace

    db = paths.db_path(home)
    async with Workspace(home, target=db) as workspace:  # never PARLEY_DATABASE_URL
        store = await workspace.open_store()
        session = await store.create_session(title="Self-test")
        turn = Turn(role="user", blocks=[TextBlock(PROBE_TEXT)])
        await store.append_turn(session.id, turn)
        back = await store.get_turns(session.id)
        if [(t.id, t.text()) for t in back] != [(turn.id, PROBE_TEXT)]:
            raise RuntimeError(f"read back {back!r}, expected the turn just written")
        hits = await store.search(SEARCH_WORD)
        if not any(h.session_id == session.id and h.turn_id == turn.id for h in hits):
            raise RuntimeError(f"full-text search for {SEARCH_WORD!r} found {hits!r}")
    with Store.open(db) as again:
        if [t.text() for t in again.get_turns(session.id)] != [PROBE_TEXT]:
            raise RuntimeError("the turn was not there after reopening sessions.db")
        if again.get_session(session.id).title != "Self-test":
            raise RuntimeError("the session title was not kept")
    return session.id


async def _check_providers() -> str:
    """Start the provider process (the bundle's ``--provider-worker``) and have it build an
    Anthropic and an OpenAI client (which imports both SDKs there); check keyring's
    backends are registered."""
    from importlib.metadata import entry_points, version

    from parley.core.providers.process.client import ProviderProcess, RemoteSender
    from parley.core.providers.process.protocol import SenderSpec

    url = "http://127.0.0.1:9"  # never contacted: building a client sends nothing
    process = ProviderProcess()
    try:
        for kind in ("anthropic", "openai"):
            sender = RemoteSender(SenderSpec(kind, f"self-test {kind}", url, "self-test"), process)
            await asyncio.wait_for(sender.open(), timeout=120)
            await sender.close()
    finally:
        process.close()
    backends = sorted(ep.name for ep in entry_points(group="keyring.backends"))
    if not backends:
        raise RuntimeError("no keyring backends registered (keyring metadata missing)")
    return (f"anthropic {version('anthropic')}, openai {version('openai')} clients built "
            f"in the provider process; keyring backends {', '.join(backends)}")


async def _check_window(home: Path, session_id: str) -> str:
    from PySide6.QtWidgets import QApplication

    from parley.gui.main_window import MainWindow

    bugs: list[BaseException] = []
    previous_hook = sys.excepthook
    sys.excepthook = lambda _t, exc, _tb: bugs.append(exc)  # TaskSet reports bugs here
    window = MainWindow(home=home, env={})
    problems: list[str] = []
    window.show_problem = lambda error: problems.append(error.message)  # type: ignore[method-assign]
    try:
        window.show()
        window.startup.start_after_first_paint()
        deadline = time.monotonic() + WINDOW_TIMEOUT_S
        while not window.ready and not bugs and not problems and time.monotonic() < deadline:
            await asyncio.sleep(0.02)
        if bugs:
            raise bugs[0]
        if problems:
            raise RuntimeError(f"the window reported: {problems[0]}")
        if not window.ready:
            raise TimeoutError(f"the window did not finish starting in {WINDOW_TIMEOUT_S:g} s")
        listed = window.sidebar.model.session_ids()
        if session_id not in listed:
            raise RuntimeError(f"the sidebar lists {listed}, not the saved session")
        shot = window.grab()
        if shot.isNull() or shot.width() < 100:
            raise RuntimeError("the window did not paint")
        size = f"{shot.width()}x{shot.height()}"
    finally:
        await window.shutdown()
        window.close()
        QApplication.processEvents()
        sys.excepthook = previous_hook
    return f"opened, painted {size}, listed the session, shut down"

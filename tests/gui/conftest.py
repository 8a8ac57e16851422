"""GUI test set-up: a qasync loop riding on pytest-qt, and a real Parley window.

GUI tests are plain (sync) test functions: pytest-asyncio would run async
tests on its own loop, not on Qt's. They drive the qasync loop by spinning
Qt's event loop with ``qtbot.waitUntil`` (see :func:`until` / :func:`run`).
"""

from __future__ import annotations

import asyncio
import gc
import threading
from collections.abc import Callable, Coroutine, Iterator
from pathlib import Path
from typing import Any

import pytest
import qasync
import shiboken6
from PySide6.QtWidgets import QApplication, QWidget

from parley.core.providers.hub import ProviderHub
from parley.gui import dialogs
from parley.gui.look import appearance
from tests.gui.transcript_reading import error_text, text_of_last


@pytest.fixture
def loop(qapp: QApplication) -> Iterator[asyncio.AbstractEventLoop]:
    """A qasync event loop on pytest-qt's QApplication, running while Qt spins.

    Teardown does not call ``loop.stop()``: qasync's stop() calls
    ``QApplication.exit()``, which leaves the shared QApplication unable to
    fire timers for every later test. The loop is marked stopped instead.

    The loop's timer object is destroyed here, on the GUI thread, with its
    pending timers killed: left to the garbage collector it can be freed on
    another thread (the fake server's, the store's), where Qt cannot
    unregister its timers, and a later test crashes when one fires.
    """
    ev_loop = qasync.QEventLoop(qapp, already_running=True)
    asyncio.set_event_loop(ev_loop)
    yield ev_loop
    pending = [t for t in asyncio.all_tasks(ev_loop) if not t.done()]
    for task in pending:
        task.cancel()
    ev_loop._QEventLoop__is_running = False  # type: ignore[attr-defined]  # see docstring
    asyncio.events._set_running_loop(None)
    ev_loop.close()
    asyncio.set_event_loop(None)
    timer = ev_loop._timer  # type: ignore[attr-defined]
    for timer_id in list(timer._SimpleTimer__callbacks):
        timer.killTimer(timer_id)
    shiboken6.delete(timer)
    gc.collect()  # free the loop's reference cycles here, on the GUI thread
    dialogs.answers.clear()


Until = Callable[..., None]


@pytest.fixture
def until(qtbot: Any, loop: asyncio.AbstractEventLoop) -> Until:
    """``until(predicate, timeout=5.0)``: spin Qt (and so asyncio) until it holds."""

    def wait(predicate: Callable[[], object], timeout: float = 5.0) -> None:
        qtbot.waitUntil(lambda: bool(predicate()), timeout=int(timeout * 1000))

    return wait


@pytest.fixture
def run(qtbot: Any, loop: asyncio.AbstractEventLoop) -> Callable[..., Any]:
    """``run(coro, timeout=5.0)``: run a coroutine on the qasync loop, return its result."""

    def go(coro: Coroutine[Any, Any, Any], timeout: float = 5.0) -> Any:
        task = asyncio.ensure_future(coro)
        qtbot.waitUntil(task.done, timeout=int(timeout * 1000))
        return task.result()

    return go


@pytest.fixture
def home(_isolated_home: Path) -> Path:
    """This test's Parley home directory (also in PARLEY_HOME)."""
    return _isolated_home


class WindowDriver:
    """Opens real Parley windows on this test's home and drives them like a person.

    Every window is shut down properly at the end (runs stopped, store closed).
    """

    def __init__(self, qtbot: Any, until: Until, run: Callable[..., Any], home: Path,
                 fake: Any) -> None:
        self.qtbot, self.until, self.run, self.home, self.fake = qtbot, until, run, home, fake
        self.windows: list[Any] = []

    def open(self, env: dict[str, str] | None = None) -> Any:
        """Show a new window on the home directory and wait until it is ready."""
        from parley.gui.main_window import MainWindow

        window = MainWindow(home=self.home, env=env or {})
        # Not qtbot.addWidget: pytest-qt would close and delete it before the
        # driver's own teardown could shut it down (runs stopped, store closed).
        self.windows.append(window)
        window.show()
        window.startup.start_after_first_paint()
        self.until(lambda: window.ready and window.tasks.pending == 0, timeout=40)
        return window

    def set_up_anthropic(self, window: Any | None = None, *, openai: bool = False) -> None:
        """Fill the first-run panel for the fake server's Anthropic API (``openai``: its
        OpenAI API, as OpenAI at a custom address) and start."""
        from PySide6.QtCore import Qt

        w = window or self.windows[-1]
        panel = w.setup_panel
        left = Qt.MouseButton.LeftButton
        self.qtbot.mouseClick(panel.kind_buttons[1 if openai else 0], left)
        panel.custom_url.setChecked(True)
        url = self.fake.openai_own_url if openai else self.fake.anthropic_base_url
        self.qtbot.keyClicks(panel.url_edit, url)
        self.qtbot.keyClicks(panel.key_edit, "sk-test-openai-key" if openai else "sk-ant-test-key")
        self.qtbot.mouseClick(panel.test_button, left)
        # The test imports the provider's SDK first: seconds on a loaded machine.
        self.until(lambda: panel.model_combo.count() > 0, timeout=30)
        self.qtbot.mouseClick(panel.start_button, left)
        self.until(lambda: w.stack.currentWidget() is w.chat_page and w.tasks.pending == 0,
                   timeout=10)

    def set_up(self) -> Any:
        """A new window taken through first-run set-up by clicking through the panel
        (its writes, e.g. the backup at quit they cause, are part of the test)."""
        window = self.open()
        self.set_up_anthropic(window)
        return window

    def configured(self, env: dict[str, str] | None = None, *, openai: bool = False) -> Any:
        """A window past first-run set-up, opened the way a second start finds it.

        The fake server's Anthropic API (``openai``: its OpenAI API, as OpenAI at a
        custom address) is saved first where the window keeps its settings (this
        home, or the database ``env``'s ``PARLEY_DATABASE_URL`` names) as "Start
        chatting" saves it: the provider, its key in the key file, its first model as
        the default. So the window opens on the chat without the set-up panel; the
        set-up tests click through the panel (:meth:`set_up_anthropic`, :meth:`set_up`).
        """
        # The connection test imports the provider's SDK first: 18-26 s on this 2-core machine
        # at load 10 (20 s timed out the first window test of every process there).
        self.run(self.save_provider(env or {}, openai=openai), timeout=60)
        window = self.open(env)
        assert window.setup_panel is None, "the saved provider was not found at start"
        return window

    async def save_provider(self, env: dict[str, str], *, openai: bool = False) -> None:
        """Save the fake server's API as first-run set-up does
        (``WindowPages._finish_setup``): the same connection test for the models, then
        the same provider, key and default model (the first model offered); nothing
        when a provider is set up already."""
        from parley.core.workspace import Workspace
        from tests.gui.hubs import HUB_ONLY

        async with Workspace(self.home, environ=env, options=HUB_ONLY) as ws:  # as the window
            await ws.open_store()
            await ws.open_providers()
            hub = ws.hub
            if hub.default_model_ref() is None:
                kind = "openai" if openai else "anthropic"
                url = self.fake.openai_own_url if openai else self.fake.anthropic_base_url
                key = "sk-test-openai-key" if openai else "sk-ant-test-key"
                models = await hub.test_connection(kind, url, key)
                await hub.add_provider(kind, base_url=url, api_key=key,
                                       default_model=models[0].id)

    def send(self, text: str, window: Any | None = None, *, wait: bool = False) -> None:
        """Type ``text`` into the composer and press Enter (``wait``: until answered)."""
        from PySide6.QtCore import Qt

        w = window or self.windows[-1]
        w.composer.setFocus()
        self.qtbot.keyClicks(w.composer, text)
        self.qtbot.keyClick(w.composer, Qt.Key.Key_Return)
        if wait:
            self.until(lambda: w.tasks.pending == 0 and bool(w.chat.turns)
                       and w.chat.turns[-1].role == "assistant", timeout=10)
            self.settle(w)

    def settle(self, window: Any | None = None) -> None:
        """Wait until the window has no work in flight (no run, no pending task)."""
        w = window or self.windows[-1]
        self.until(lambda: w.tasks.pending == 0 and not w.composer_bar.busy, timeout=10)

    def transcript_text(self, window: Any | None = None) -> str:
        """The text the transcript shows for the last reply."""
        w = window or self.windows[-1]
        return str(text_of_last(w.transcript))

    def last_text(self, window: Any | None = None) -> str:
        """The text of the open chat's last turn as the window holds it ('' if none)."""
        w = window or self.windows[-1]
        return w.chat.turns[-1].text() if w.chat is not None and w.chat.turns else ""

    def error_text(self, window: Any | None = None) -> str:
        """The inline error shown under the last message ('' when none)."""
        w = window or self.windows[-1]
        return str(error_text(w.transcript) or "")

    def close(self, window: Any) -> None:
        """Close a window the way the app does (shutdown, then close)."""
        self.run(window.shutdown(), timeout=10)
        for child in window.findChildren(QWidget):
            if child.isWindow() and child.isVisible():
                # A dialog left open (a problem box is modal to its window) would stay
                # shown until the deferred delete, blocking the pointer over the next
                # test's window.
                child.close()
        window.close()
        window.deleteLater()
        if window in self.windows:
            self.windows.remove(window)

    def close_all(self) -> None:
        for window in list(self.windows):
            self.close(window)


@pytest.fixture
def driver(qtbot: Any, until: Until, run: Callable[..., Any], home: Path,
           fake_provider: Any) -> Iterator[WindowDriver]:
    """A :class:`WindowDriver` on this test's home and the fake provider server."""
    _close_left_dialogs()
    d = WindowDriver(qtbot, until, run, home, fake_provider)
    yield d
    d.close_all()
    _close_left_dialogs()


def _close_left_dialogs() -> None:
    """Close the modal dialogs an earlier test's window left shown (a problem box opened
    by a late failure after its window shut down): Qt would keep them active over the
    next test's window, which then gets no pointer events."""
    for widget in QApplication.topLevelWidgets():
        if widget.isVisible() and widget.isModal():
            widget.close()


@pytest.fixture
def view(qtbot: Any) -> Any:
    """A bare transcript view, 760x560, shown (test files may define their own ``view``)."""
    from parley.gui.transcript import TranscriptView

    v = TranscriptView()
    qtbot.addWidget(v)
    v.resize(760, 560)
    v.show()
    qtbot.waitExposed(v)
    return v


@pytest.fixture
def restore_look(qapp: QApplication) -> Iterator[None]:
    """The theme, style sheet and font are the application's: put back exactly what was
    there for later tests (a style sheet left set changes other tests' widgets)."""
    font, palette, sheet = qapp.font(), qapp.palette(), qapp.styleSheet()
    scheme = appearance.current()
    yield
    appearance.set_preference("system")
    appearance._current = scheme  # noqa: SLF001 - the module's own record of what is applied
    appearance.icon.cache_clear()
    qapp.setStyleSheet(sheet)
    qapp.setPalette(palette)
    qapp.setFont(font)


@pytest.fixture(params=[appearance.LIGHT, appearance.DARK], ids=["light", "dark"])
def scheme(request, qapp, monkeypatch) -> Iterator[appearance.Scheme]:
    """The app's palette and style sheet, as ``parley.gui.app`` applies them; undone afterwards."""
    palette, sheet = qapp.palette(), qapp.styleSheet()
    monkeypatch.setattr(appearance, "_current", appearance.current())
    yield appearance.apply(qapp, request.param)
    qapp.setStyleSheet(sheet)
    qapp.setPalette(palette)


@pytest.fixture
def problems(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The texts of the problem dialogs the window shows (there should be none)."""
    shown: list[str] = []
    monkeypatch.setattr(dialogs, "show_problem", lambda parent, title, text: shown.append(text))
    return shown


@pytest.fixture
def gate(monkeypatch) -> Iterator[threading.Event]:
    """Holds every provider adapter's build (so its SDK is 'still loading') until set."""
    opened = threading.Event()
    real = ProviderHub._build

    def held(self: ProviderHub, config: Any) -> Any:
        opened.wait(timeout=60)
        return real(self, config)

    monkeypatch.setattr(ProviderHub, "_build", held)
    yield opened
    opened.set()  # never leave a worker thread waiting


@pytest.fixture
def store_gate(monkeypatch) -> Iterator[threading.Event]:
    """While cleared, holds the opening of the store (the chats are 'not open yet')."""
    import parley.gui.startup.opening

    opened = threading.Event()
    opened.set()
    real = parley.gui.startup.opening.import_store
    monkeypatch.setattr(parley.gui.startup.opening, "import_store",
                        lambda: (opened.wait(timeout=60), real()))
    yield opened
    opened.set()

"""SIGTERM and Ctrl+C (SIGINT) close Parley as File → Quit does; a second one while closing
ends it at once (``parley.gui.startup.quit_signals``). So does its X11 window destroyed by
another program (``parley.gui.startup.window_gone``)."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.processes import ROOT, app_env, parley_command

pytestmark = pytest.mark.timeout(120)


def _this_tree_env(probe: str | None) -> dict[str, str]:
    """The app's environment, running this tree's code (not the installed one) when the
    tree has its ``.namespace`` folder of ``parley.*`` links."""
    env = app_env(probe)
    namespace = ROOT / ".namespace"
    if namespace.is_dir():
        env["PYTHONPATH"] = os.pathsep.join(
            [str(namespace), str(ROOT), *filter(None, [env.get("PYTHONPATH")])])
    return env


def _children(pid: int) -> list[int]:
    """The processes whose parent is ``pid`` (Linux's /proc)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
            found.append(int(entry.name))
    return found


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def _until_ready(app: subprocess.Popen[str]) -> None:
    """Read the app's probe lines until it says it is ready (fails if it ends first)."""
    assert app.stdout is not None
    for line in app.stdout:
        if line.startswith("parley-probe ready"):
            return
    pytest.fail(f"never ready: {app.stderr.read() if app.stderr else ''}")


def _closed_cleanly(app: subprocess.Popen[str], err: str, home: Path, said: str) -> None:
    """The app ended with status 0, its log says ``said`` then "Parley closed", and it
    left no lock file."""
    assert app.returncode == 0, err
    log = (home / "logs" / "parley.log").read_text()
    assert said in log
    assert "Parley closed" in log
    assert not (home / "parley.lock").exists()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_closes_parley_as_quit_does(tmp_path, signum):
    home = tmp_path / "home"
    app = subprocess.Popen([*parley_command("--home", str(home))], env=_this_tree_env("1"),
                           text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT)
    try:
        _until_ready(app)
        deadline = time.monotonic() + 10  # the provider process starts after the first paint
        while not (providers := _children(app.pid)) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert providers, "no provider process was started"
        assert (home / "parley.lock").exists()
        app.send_signal(signum)
        _, err = app.communicate(timeout=60)
    finally:
        if app.poll() is None:
            app.kill()
            app.wait()
    _closed_cleanly(app, err, home, f"{signal.Signals(signum).name} received")
    assert (home / "window.ini").is_file()  # the window's place was saved
    deadline = time.monotonic() + 10
    while any(_alive(p) for p in providers) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not [p for p in providers if _alive(p)], "a provider process was left running"


_WATCHER = """
import sys
from PySide6.QtCore import QCoreApplication, QTimer
from parley.gui.startup import quit_signals
app = QCoreApplication([])
closing = sys.argv[1] == "closing"
watcher = quit_signals.install(lambda: (print("close", flush=True), app.quit()),
                               lambda: closing, app)
QTimer.singleShot(0, lambda: print("listening", flush=True))
app.exec()
"""


@pytest.mark.skipif(sys.platform == "win32", reason="no SIGTERM on Windows")
@pytest.mark.parametrize(("state", "returncode", "said"), [
    ("open", 0, "close"),  # the event loop woke while idle and asked the window to close
    ("closing", -signal.SIGTERM, ""),  # already shutting down: ended at once
])
def test_the_event_loop_wakes_for_a_signal_and_a_second_one_ends_at_once(state, returncode,
                                                                          said):
    watcher = subprocess.Popen([sys.executable, "-c", _WATCHER, state],
                               env=_this_tree_env(None), text=True, cwd=ROOT,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        assert watcher.stdout is not None
        assert watcher.stdout.readline().strip() == "listening"
        time.sleep(0.2)  # idle in Qt's loop: Python has no control until the pipe wakes it
        watcher.send_signal(signal.SIGTERM)
        out, err = watcher.communicate(timeout=30)
    finally:
        if watcher.poll() is None:
            watcher.kill()
            watcher.wait()
    assert watcher.returncode == returncode, err
    assert out.strip() == said


@contextlib.contextmanager
def _xvfb() -> Iterator[str]:
    """An Xvfb server on a display it picks itself; yields its DISPLAY."""
    read, write = os.pipe()
    server = subprocess.Popen(["Xvfb", "-displayfd", str(write), "-screen", "0", "1280x900x24",
                               "-nolisten", "tcp"], pass_fds=(write,),
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    os.close(write)
    try:
        with os.fdopen(read) as said:
            number = said.readline().strip()
        assert number, "Xvfb did not start"
        yield f":{number}"
    finally:
        server.terminate()
        server.wait(timeout=10)


@pytest.mark.skipif(not (shutil.which("Xvfb") and shutil.which("xdotool")),
                    reason="needs Xvfb and xdotool (Debian: xvfb xdotool)")
def test_the_window_destroyed_by_another_program_closes_parley(tmp_path):
    """``xdotool windowclose`` destroys the X window outright: Parley ran on with no window."""
    home = tmp_path / "home"
    with _xvfb() as display:
        env = _this_tree_env("1")
        env.update(QT_QPA_PLATFORM="xcb", DISPLAY=display)
        app = subprocess.Popen([*parley_command("--home", str(home))], env=env, text=True,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT)
        try:
            _until_ready(app)
            found = subprocess.run(["xdotool", "search", "--onlyvisible", "--pid", str(app.pid)],
                                   env=env, text=True, capture_output=True, timeout=30)
            windows = found.stdout.split()
            assert windows, found.stderr
            subprocess.run(["xdotool", "windowclose", windows[0]], env=env, check=True,
                           timeout=30)
            _, err = app.communicate(timeout=60)
        finally:
            if app.poll() is None:
                app.kill()
                app.wait()
    _closed_cleanly(app, err, home, "destroyed by another program")

"""The bootstrap: command line, logging to the data dir, the crash handler."""

from __future__ import annotations

import logging

import pytest
from PySide6.QtWidgets import QApplication, QMessageBox

from parley.gui.app import main
from parley.gui.startup import display
from parley.gui.startup.command_line import parse_args
from parley.gui.startup.crash import CrashHandler
from parley.gui.startup.log_file import setup_logging
from parley.gui.startup.probe import StartupProbe


def test_version_prints_and_exits(capsys):
    assert main(["--version"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("Parley ") and out.strip() != "Parley"


def test_home_option_and_qt_arguments_after_a_double_dash_pass_through(tmp_path):
    args, rest = parse_args(["--home", str(tmp_path), "--", "-style", "Fusion"])
    assert args.home == str(tmp_path) and not args.version
    assert rest == ["-style", "Fusion"]


@pytest.mark.parametrize("argv", [["--bogus"], ["-style", "Fusion"], ["--home"], ["--hom", "x"]])
def test_an_unknown_option_is_an_error_with_the_usage(argv, capsys):
    with pytest.raises(SystemExit) as exit_:
        main(argv)
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("usage: parley [-h] [--home DIR]") and "parley: error: " in err


def test_help_lists_what_parley_accepts(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["--help"])
    assert exit_.value.code == 0
    out = capsys.readouterr().out
    for option in ("--home DIR", "--version", "--self-test", "--migrate-only", "--import FILE",
                   "go after '--'", "PARLEY_HOME", "OPENAI_BASE_URL"):
        assert option in out


def test_help_names_every_variable_the_readme_lists(capsys):
    """Trial 18: ``--help`` left out PARLEY_KEYRING, which the README's table lists."""
    import re
    from pathlib import Path

    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    table = readme[readme.index("| variable | what it does |"):]
    table = table[:table.index("\n\n")]
    listed = set(re.findall(r"`([A-Z][A-Z0-9_]+)`", table))
    assert {"PARLEY_HOME", "PARLEY_KEYRING", "ANTHROPIC_API_KEY"} <= listed
    with pytest.raises(SystemExit):
        main(["--help"])
    out = capsys.readouterr().out
    assert sorted(v for v in listed if v not in out) == []


def test_without_a_display_parley_says_so_in_one_sentence_and_exits_2(tmp_path):
    import os
    import subprocess
    import sys

    if sys.platform in ("darwin", "win32"):
        pytest.skip("a display is always there")
    env = {k: v for k, v in os.environ.items()
           if k not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")}
    home = tmp_path / "home"
    done = subprocess.run([sys.executable, "-m", "parley.gui.app", "--home", str(home)],
                          capture_output=True, text=True, timeout=60, env=env)
    assert done.returncode == 2  # was -6 (SIGABRT) after Qt's "xcb-cursor0 is needed"
    assert done.stderr == display.NO_DISPLAY + "\n" and done.stdout == ""
    assert "DISPLAY" in done.stderr and "xcb" not in done.stderr
    assert not home.exists()  # nothing was created


def test_a_display_where_no_x_server_answers_is_said_too(tmp_path):
    import os
    import socket
    import subprocess
    import sys

    if sys.platform != "linux":
        pytest.skip("X11 sockets")
    free = next(n for n in range(59, 99) if display.x_server_answers(f":{n}") is False)
    env = {k: v for k, v in os.environ.items() if k not in ("WAYLAND_DISPLAY", "QT_QPA_PLATFORM")}
    env["DISPLAY"] = f":{free}.0"
    done = subprocess.run([sys.executable, "-m", "parley.gui.app", "--home", str(tmp_path / "h")],
                          capture_output=True, text=True, timeout=60, env=env)
    assert done.returncode == 2  # not SIGABRT
    assert done.stderr == display.NO_X_SERVER.format(display=f":{free}.0") + "\n"
    assert not (tmp_path / "h").exists()

    assert display.x_server_answers("remote-host:0") is None  # not checked
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as server:
        server.bind("\0/tmp/.X11-unix/X" + str(free))  # where an X server listens on Linux
        server.listen(1)
        assert display.x_server_answers(f":{free}") is True


@pytest.fixture
def restore_logging():
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    yield
    for h in root.handlers[:]:
        if h not in handlers:
            root.removeHandler(h)
            h.close()
    root.setLevel(level)


def test_crash_handler_logs_and_shows_one_dialog(qtbot, tmp_path, restore_logging):
    log_path = setup_logging(tmp_path / "logs")
    handler = CrashHandler(log_path)
    try:
        raise ValueError("boom in a slot")
    except ValueError as exc:
        handler(type(exc), exc, exc.__traceback__)
        handler(type(exc), exc, exc.__traceback__)  # a second report: still one dialog

    def dialogs():
        return [w for w in QApplication.topLevelWidgets()
                if isinstance(w, QMessageBox) and w.isVisible()
                and w.windowTitle() == "Parley hit a bug"]

    qtbot.waitUntil(lambda: len(dialogs()) == 1, timeout=2000)
    box = dialogs()[0]
    assert "ValueError: boom in a slot" in box.informativeText()
    assert str(log_path) in box.informativeText()
    assert "Traceback" in box.detailedText()
    for h in logging.getLogger().handlers:
        h.flush()
    text = log_path.read_text()
    assert "boom in a slot" in text and text.count("unexpected error") == 2
    assert handler.count == 2
    box.close()


def test_asyncio_errors_reach_the_crash_handler(qtbot, tmp_path, restore_logging):
    handler = CrashHandler(setup_logging(tmp_path))
    handler.loop_handler(None, {"message": "x", "exception": RuntimeError("lost task")})
    assert handler.count == 1
    handler.loop_handler(None, {"message": "only a message"})
    assert handler.count == 1
    for w in QApplication.topLevelWidgets():
        if isinstance(w, QMessageBox):
            w.close()


def test_probe_prints_each_event_once(capsys):
    probe = StartupProbe("print")
    probe.mark("first-paint")
    probe.mark("first-paint")
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 1 and lines[0].startswith("parley-probe first-paint ")


def test_a_native_crash_leaves_its_stack_in_the_log_folder(tmp_path):
    import subprocess
    import sys

    code = (
        "import sys, faulthandler; from pathlib import Path; "
        "from parley.gui.startup.log_file import setup_logging; "
        f"setup_logging(Path({str(tmp_path)!r})); faulthandler._sigsegv()"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode != 0
    trace = (tmp_path / "native-crashes.log").read_text()
    assert "Fatal Python error" in trace and "Segmentation fault" in trace


def test_logging_falls_back_to_stderr_when_logs_cannot_be_made(tmp_path, capsys,
                                                               restore_logging):
    (tmp_path / "logs").write_text("a file in the way")
    before = list(logging.getLogger().handlers)
    assert setup_logging(tmp_path / "logs") is None
    added = [h for h in logging.getLogger().handlers if h not in before]
    assert len(added) == 1 and not isinstance(added[0], logging.FileHandler)
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1, err  # one warning line, naming the folder
    assert "WARNING" in err[0] and str(tmp_path / "logs") in err[0]
    assert "standard error" in err[0]
    logging.getLogger("parley.test").info("still logged")  # INFO too: stderr is all there is
    assert "still logged" in capsys.readouterr().err
    assert (tmp_path / "logs").read_text() == "a file in the way"


def test_crash_dialog_without_a_log_file_points_at_stderr(qtbot):
    handler = CrashHandler(None)
    handler(RuntimeError, RuntimeError("no log file"), None)

    def box():
        found = [w for w in QApplication.topLevelWidgets()
                 if isinstance(w, QMessageBox) and w.isVisible()
                 and w.windowTitle() == "Parley hit a bug"]
        return found[0] if found else None

    qtbot.waitUntil(lambda: box() is not None, timeout=2000)
    text = box().informativeText()
    assert "standard error" in text and "None" not in text
    box().close()


def _close_startup_box_later(seen: list[tuple[str, str]]) -> None:
    from PySide6.QtCore import QTimer

    def look() -> None:
        for w in QApplication.topLevelWidgets():
            if isinstance(w, QMessageBox) and w.isVisible():
                seen.append((w.windowTitle(), w.text()))
                w.done(0)
                return
        QTimer.singleShot(20, look)

    QTimer.singleShot(20, look)


def test_startup_error_is_shown_in_a_box(qtbot, tmp_path, monkeypatch):
    from parley.core.paths import DataDirError

    monkeypatch.delenv("PARLEY_PROBE", raising=False)
    seen: list[tuple[str, str]] = []
    _close_startup_box_later(seen)
    display.show_startup_error(DataDirError(tmp_path / "x", "it is a file, not a folder"))
    assert len(seen) == 1
    title, text = seen[0]
    assert title == "Parley cannot start"
    assert str(tmp_path / "x") in text and "Nothing was changed" in text and "--home" in text


def test_main_on_a_file_as_home_says_why_and_exits_2(qtbot, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("PARLEY_PROBE", "quit")  # the box closes itself once shown
    afile = tmp_path / "afile"
    afile.write_text("not a folder")
    assert main(["--home", str(afile / "home")]) == 2
    out, err = capsys.readouterr()
    assert f"Parley cannot keep its data in {afile / 'home'}" in err
    assert "a file is in the way" in err and "Nothing was changed" in err
    assert "Traceback" not in err
    assert "parley-probe startup-error" in out
    assert afile.read_text() == "not a folder"


def test_can_show_window_needs_a_display_on_linux(monkeypatch):
    import sys

    if sys.platform in ("darwin", "win32"):
        pytest.skip("a display is always there")
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    monkeypatch.setenv("QT_QPA_PLATFORM", "offscreen")
    assert display.can_show_window()
    monkeypatch.setenv("QT_QPA_PLATFORM", "xcb")
    assert not display.can_show_window()
    monkeypatch.delenv("QT_QPA_PLATFORM")
    assert not display.can_show_window()
    monkeypatch.setenv("DISPLAY", ":0")
    assert display.can_show_window()


def test_pyside_import_hook_is_dropped_and_qt_still_works():
    import subprocess
    import sys

    code = (
        "import builtins, sys; import parley.gui.startup.import_hook as a; "
        "from PySide6.QtWidgets import QApplication, "
        "QLabel; hooked = builtins.__import__ is not a._PLAIN_IMPORT; "
        "dropped = a.drop_pyside_import_hook(); import json, PySide6.QtSvg; "
        "app = QApplication([]); label = QLabel('x'); label.setText('y'); "
        "print(hooked, dropped, builtins.__import__ is a._PLAIN_IMPORT, label.text())"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=60, env={"QT_QPA_PLATFORM": "offscreen", "PATH": "/usr/bin:/bin"})
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["True", "True", "True", "y"]

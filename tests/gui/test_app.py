"""The bootstrap: command line, logging to the data dir, the crash handler."""

from __future__ import annotations

import logging

import pytest
from PySide6.QtWidgets import QApplication, QMessageBox

from gui import app as app_module
from gui.app import CrashHandler, main, parse_args, setup_logging


def test_version_prints_and_exits(capsys):
    assert main(["--version"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("Parley ") and out.strip() != "Parley"


def test_home_option_and_qt_arguments_pass_through(tmp_path):
    args, rest = parse_args(["--home", str(tmp_path), "-style", "Fusion"])
    assert args.home == str(tmp_path) and not args.version
    assert rest == ["-style", "Fusion"]


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
    probe = app_module.StartupProbe("print")
    probe.mark("first-paint")
    probe.mark("first-paint")
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 1 and lines[0].startswith("parley-probe first-paint ")


def test_a_native_crash_leaves_its_stack_in_the_log_folder(tmp_path):
    import subprocess
    import sys

    code = (
        "import sys, faulthandler; from pathlib import Path; from gui.app import setup_logging; "
        f"setup_logging(Path({str(tmp_path)!r})); faulthandler._sigsegv()"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode != 0
    trace = (tmp_path / "native-crashes.log").read_text()
    assert "Fatal Python error" in trace and "Segmentation fault" in trace

"""Parley's log file: private modes, and a full disk told once (not a traceback per line)."""

from __future__ import annotations

import logging
import os
import stat
from pathlib import Path

import pytest

from parley.gui.startup.log_file import PrivateLogFile, private_log_dir
from tests.disk import fill


def _mode(path: Path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def test_the_log_folder_and_files_are_private_also_after_rotation(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    logs.mkdir(mode=0o755)
    os.chmod(logs, 0o755)
    (logs / "parley.log").write_text("older run\n")
    os.chmod(logs / "parley.log", 0o644)
    private_log_dir(logs)
    handler = PrivateLogFile(logs / "parley.log", 200, 2)
    logger = logging.getLogger("test.private.log")
    logger.addHandler(handler)
    try:
        for i in range(20):
            logger.warning("line %d %s", i, "x" * 40)
    finally:
        logger.removeHandler(handler)
        handler.close()
    assert _mode(logs) == 0o700
    files = sorted(logs.iterdir())
    assert len(files) == 3  # rotated
    assert all(_mode(f) == 0o600 for f in files)


def test_a_full_disk_is_told_once_on_stderr(
    small_disk: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    logs = small_disk / "logs"
    private_log_dir(logs)
    handler = PrivateLogFile(logs / "parley.log", 2_000_000, 3)
    logger = logging.getLogger("test.full.log")
    logger.addHandler(handler)
    logger.propagate = False
    filler = fill(small_disk)
    try:
        for i in range(78):
            logger.warning("line %d %s", i, "y" * 300)
        err = capsys.readouterr().err
        assert "Logging error" not in err and "Traceback" not in err
        assert err.count("Parley cannot write its log") == 1
        assert "No space left on device" in err
        filler.unlink()  # room again: written again, and a later failure told again
        logger.warning("after space was freed")
        handler.flush()
        assert "after space was freed" in (logs / "parley.log").read_text()
        assert not handler.failed
    finally:
        logger.removeHandler(handler)
        handler.close()

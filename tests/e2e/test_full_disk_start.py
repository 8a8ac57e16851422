"""Parley started on a data folder whose disk is full: it says the disk is full (exit 2),
not that another Parley is running."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.disk import fill
from tests.e2e.processes import ROOT, app_env, parley_command

pytestmark = pytest.mark.timeout(120)


def test_a_full_disk_is_named_and_exits_2(small_disk: Path) -> None:
    home = small_disk / "home"
    home.mkdir()
    fill(small_disk)
    done = subprocess.run(parley_command("--home", str(home)), env=app_env(), text=True,
                          capture_output=True, timeout=90, cwd=ROOT)
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert f"Parley cannot keep its data in {home}: the disk it is on is full" in done.stderr
    assert "Free some space on that disk" in done.stderr
    assert "already running" not in done.stdout + done.stderr
    assert "parley-probe startup-error" in done.stdout  # the message box was shown
    assert "Traceback" not in done.stderr and "Logging error" not in done.stderr

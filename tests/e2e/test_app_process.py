"""Parley as a process: start it on a home directory, see it paint and close cleanly."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.timeout(120)


def _run(home: Path, *args: str, probe: str | None = "quit") -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.update(QT_QPA_PLATFORM="offscreen", PARLEY_KEYRING="file")
    env.pop("PARLEY_HOME", None)
    if probe:
        env["PARLEY_PROBE"] = probe
    return subprocess.run([sys.executable, "-m", "parley.gui.app", *args], env=env, text=True,
                          capture_output=True, timeout=90,
                          cwd=Path(__file__).resolve().parents[2])


def test_version_flag():
    done = _run(Path("."), "--version", probe=None)
    assert done.returncode == 0
    assert done.stdout.startswith("Parley ")


@pytest.mark.slow  # two cold starts of the app: ~4-12 s
def test_starts_paints_and_closes_on_its_home(tmp_path):
    home = tmp_path / "my parley"
    done = _run(home, "--home", str(home))
    assert done.returncode == 0, done.stderr
    events = [line.split()[1] for line in done.stdout.splitlines()
              if line.startswith("parley-probe ")]
    assert events == ["first-paint", "sessions-listed", "ready"]
    assert (home / "sessions.db").is_file()
    log = (home / "logs" / "parley.log").read_text()
    assert "starting" in log and "closed" in log
    # Second start on the same home: same file, no error.
    again = _run(home, "--home", str(home))
    assert again.returncode == 0, again.stderr


@pytest.mark.slow  # two app processes: ~5-12 s
def test_second_launch_on_the_same_home_hands_over_to_the_first(tmp_path):
    home = tmp_path / "home"
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.update(QT_QPA_PLATFORM="offscreen", PARLEY_KEYRING="file", PARLEY_PROBE="1")
    env.pop("PARLEY_HOME", None)
    first = subprocess.Popen([sys.executable, "-m", "parley.gui.app", "--home", str(home)], env=env,
                             text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             cwd=Path(__file__).resolve().parents[2])
    try:
        assert first.stdout is not None
        for line in first.stdout:  # wait until the first one has painted
            if line.startswith("parley-probe first-paint"):
                break
        second = _run(home, "--home", str(home), probe=None)
        assert second.returncode == 0, second.stderr
        assert "already running" in second.stdout
        assert first.poll() is None  # the first one is still running
        other = _run(tmp_path / "other", "--home", str(tmp_path / "other"), probe="quit")
        assert other.returncode == 0 and "already running" not in other.stdout
    finally:
        first.terminate()
        first.wait(timeout=30)

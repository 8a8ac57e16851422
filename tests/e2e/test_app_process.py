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
    return subprocess.run([sys.executable, "-m", "gui.app", *args], env=env, text=True,
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

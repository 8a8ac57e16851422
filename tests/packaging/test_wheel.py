"""``pip install`` of the wheel gives a working app, away from the source tree (issue 24).

The wheel is built from this checkout, installed with its dependencies into a fresh
virtual environment outside the repository, and ``parley --self-test`` runs from another
folder: it would fail if the style sheet, icons or skills were not inside the package, or if
any module still imported a top-level ``core``/``gui`` (which the wheel does not install).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tests.packaging.support import ROOT

CHECKS = ("qt", "image formats", "resources", "attachments", "store", "providers", "window")


@pytest.mark.slow  # ~1 min: builds the wheel, installs it and its dependencies, starts the app
def test_wheel_installs_a_working_app(tmp_path: Path, _isolated_home: Path) -> None:
    # Built from a copy: setuptools writes build/ and parley.egg-info/ beside the sources.
    source = tmp_path / "source"
    shutil.copytree(ROOT, source, symlinks=True, ignore=shutil.ignore_patterns(
        ".git", ".venv", "build", "dist", "*.egg-info", "__pycache__", ".hypothesis",
        ".mypy_cache", ".ruff_cache", ".pytest_cache", "*.db*"))
    dist = tmp_path / "dist"
    subprocess.run([sys.executable, "-m", "pip", "wheel", str(source), "--no-deps", "-q",
                    "-w", str(dist)], check=True, capture_output=True, timeout=300)
    (wheel,) = dist.glob("parley-*.whl")
    with zipfile.ZipFile(wheel) as z:
        names = z.namelist()
    top = {n.split("/")[0] for n in names}
    assert {t for t in top if not t.endswith(".dist-info")} == {"parley"}  # no core/, gui/
    assert "parley/resources/styles/parley.qss" in names
    assert "parley/resources/skills/summaries.md" in names
    assert not any("screenshots" in n for n in names)

    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "-q", str(wheel)],
                   check=True, capture_output=True, timeout=600)

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "QT_QPA_PLATFORM": "offscreen",
           "PARLEY_HOME": os.environ["PARLEY_HOME"], "PARLEY_KEYRING": "file"}
    result = subprocess.run([str(venv / "bin" / "parley"), "--self-test"], cwd=elsewhere,
                            env=env, capture_output=True, text=True, timeout=180)
    assert result.returncode == 0, result.stdout + result.stderr
    for check in CHECKS:
        assert re.search(rf"^self-test: ok   {check} - ", result.stdout, re.MULTILINE), check
    installed = venv / "lib" / f"python{sys.version_info.major}.{sys.version_info.minor}"
    assert f"in {installed / 'site-packages' / 'parley' / 'resources'}" in result.stdout
    assert not (installed / "site-packages" / "core").exists()
    assert not (installed / "site-packages" / "gui").exists()

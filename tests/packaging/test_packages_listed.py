"""The distribution installs every package of core/, gui/ and resources/, under ``parley`` only.

pyproject.toml lists the packages by hand (setuptools cannot find packages under a
``package-dir`` prefix), so a new folder with an ``__init__.py`` that is not listed would be
left out of the wheel while the editable install still imports it. This test catches that,
and that nothing is installed as a top-level ``core`` or ``gui``.
"""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

from tests.packaging.support import ROOT

FOLDERS = {"parley.core": "core", "parley.gui": "gui", "parley.resources": "resources"}


def _config() -> dict:
    with open(ROOT / "pyproject.toml", "rb") as f:
        return tomllib.load(f)["tool"]["setuptools"]


def test_every_package_folder_is_listed() -> None:
    found = {"parley.resources"}
    for prefix, folder in FOLDERS.items():
        for init in (ROOT / folder).rglob("__init__.py"):
            rel = init.parent.relative_to(ROOT / folder)
            found.add(".".join([prefix, *rel.parts]))
    listed = set(_config()["packages"])
    assert found - listed == set(), "add these to [tool.setuptools] packages in pyproject.toml"
    assert listed - found == set(), "listed packages without a folder"


def test_only_the_parley_name_is_claimed(tmp_path: Path) -> None:
    config = _config()
    assert config["package-dir"] == FOLDERS
    assert all(p.split(".")[0] == "parley" for p in config["packages"])
    # From another folder (pytest puts the repository on sys.path): the installed names.
    code = ("import importlib.util as u; "
            "print([n for n in ('parley.gui.app', 'parley.core.settings', 'parley.resources', "
            "'core', 'gui', 'resources') if u.find_spec(n) is not None])")
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True,
                         text=True, timeout=60, env={"PATH": "/usr/bin:/bin"})
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "['parley.gui.app', 'parley.core.settings', 'parley.resources']"

"""Build the one-folder app with packaging/build.py and check what came out.

One build (about 2-3 minutes on 2 cores) is shared by the tests of this module.
The bundle is run in a bare environment (no venv on PATH, no PYTHONPATH), so a
module or file missing from it makes the self-test fail.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.packaging.support import ROOT, load

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="builds the Linux bundle"),
    pytest.mark.skipif(importlib.util.find_spec("PyInstaller") is None,
                       reason="PyInstaller is not installed (pip install -e '.[package]')"),
]

#: The bundle measured 150 MiB (PySide6-Essentials 6.12, Python 3.11, stripped).
#: The limit catches a pruning rule that stopped working (unpruned: ~218 MiB).
SIZE_LIMIT_MIB = 175
BUILD_TIMEOUT_S = 900


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """Run packaging/build.py --self-test once; return its parley-build: fields and output."""
    tmp = tmp_path_factory.mktemp("bundle")
    env = dict(os.environ, PYINSTALLER_CONFIG_DIR=str(tmp / "cache"))  # no shared bincache
    result = subprocess.run(
        [sys.executable, str(ROOT / "packaging" / "build.py"), "--self-test",
         "--distpath", str(tmp / "dist"), "--workpath", str(tmp / "work")],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=BUILD_TIMEOUT_S,
    )
    summary = re.search(r"^parley-build: (.*)$", result.stdout, re.MULTILINE)
    assert summary, f"no summary line\nstdout:\n{result.stdout}\nstderr:\n{result.stderr[-4000:]}"
    fields = dict(part.split("=", 1) for part in summary.group(1).split())
    fields.update(returncode=str(result.returncode), stdout=result.stdout,
                  stderr=result.stderr)
    print(f"\nbundle: {int(fields['bytes']) / 2**20:.0f} MiB, built in {fields['seconds']} s")
    return fields


@pytest.mark.timeout(BUILD_TIMEOUT_S + 120)
def test_bundle_self_test_passes_without_the_venv(built: dict[str, str]) -> None:
    assert built["returncode"] == "0", built["stdout"][-4000:] + built["stderr"][-4000:]
    assert built["self_test"] == "0"
    out = built["stdout"]
    assert "bundle " + built["executable"] in out  # sys.frozen: it ran the bundle, not Python
    for check in ("qt", "image formats", "resources", "store", "providers", "window"):
        assert re.search(rf"^self-test: ok   {check} - ", out, re.MULTILINE), check
    assert "self-test: passed (7 checks)" in out


@pytest.mark.timeout(BUILD_TIMEOUT_S + 120)
def test_bundle_size_and_contents(built: dict[str, str]) -> None:
    bundle = Path(built["bundle"])
    assert int(built["bytes"]) <= SIZE_LIMIT_MIB * 2**20
    internal = bundle / "_internal"
    qt = internal / "PySide6" / "Qt"
    plugins = {p.relative_to(qt / "plugins").as_posix() for p in (qt / "plugins").rglob("*.so")}
    for needed in ("platforms/libqoffscreen.so", "platforms/libqxcb.so",
                   "platforms/libqwayland.so", "imageformats/libqsvg.so",
                   "imageformats/libqjpeg.so", "imageformats/libqwebp.so",
                   "imageformats/libqgif.so", "iconengines/libqsvgicon.so",
                   "wayland-shell-integration/libxdg-shell.so"):
        assert needed in plugins
    for dropped in ("platformthemes/libqgtk3.so", "platforms/libqvnc.so",
                    "platforms/libqeglfs.so", "imageformats/libqtiff.so"):
        assert dropped not in plugins
    assert not (qt / "translations").exists()
    libs = {p.name for p in internal.rglob("libQt6*.so*")}
    assert "libQt6Qml.so.6" not in libs  # (QtNetwork is kept: single instance)
    assert not list(internal.rglob("libgtk-3.so*")) and not list(internal.rglob("libcairo.so*"))
    assert list(internal.glob("PIL/_imaging*")), "Pillow (attachments) is bundled"
    for module in ("QtQml", "QtQuick", "QtDBus"):
        assert not list((internal / "PySide6").glob(f"{module}.*"))
    for tool in ("mypy", "hypothesis", "pytest", "_pytest"):
        assert not (internal / tool).exists()
    # the optional PostgreSQL driver is not bundled (bundle_filter.EXCLUDED_MODULES)
    assert not list(internal.glob("psycopg*")), sorted(p.name for p in internal.glob("psycopg*"))
    assert (internal / "parley" / "resources" / "icons" / "parley.svg").is_file()
    assert not (internal / "parley" / "resources" / "screenshots").exists()


@pytest.mark.timeout(BUILD_TIMEOUT_S + 120)
def test_self_test_fails_on_a_broken_bundle(built: dict[str, str], tmp_path: Path) -> None:
    broken = tmp_path / "Parley"
    shutil.copytree(built["bundle"], broken, symlinks=True)
    (broken / "_internal" / "parley" / "resources" / "styles" / "parley.qss").unlink()
    result = load("build").run_bundle_self_test(broken / "parley", tmp_path / "home")
    assert result.returncode == 1, result.stdout
    assert re.search(r"^self-test: FAIL resources - ", result.stdout, re.MULTILINE)
    assert "self-test: failed (1 of 7 checks: resources)" in result.stdout


@pytest.mark.timeout(BUILD_TIMEOUT_S + 120)
def test_bundle_installs_its_menu_entry(built: dict[str, str], tmp_path: Path) -> None:
    script = Path(built["bundle"]) / "install-desktop-entry.sh"
    data = tmp_path / "data"
    env = {"HOME": str(tmp_path), "PATH": "/usr/bin:/bin", "XDG_DATA_HOME": str(data)}
    subprocess.run(["sh", str(script)], env=env, check=True, capture_output=True)
    entry = (data / "applications" / "org.parley.Parley.desktop").read_text()
    assert f"\nExec={built['executable']}\n" in entry
    assert (data / "icons" / "hicolor" / "256x256" / "apps" / "org.parley.Parley.png").is_file()
    assert (data / "icons" / "hicolor" / "scalable" / "apps" / "org.parley.Parley.svg").is_file()

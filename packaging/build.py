"""Build the double-clickable Parley for this platform, measure it, and check it.

Usage (from the repository root, with ``pip install -e '.[package]'`` done)::

    .venv/bin/python packaging/build.py [--distpath DIR] [--workpath DIR] [--self-test]

Runs PyInstaller on ``packaging/parley.spec`` and prints the build time and the
bundle's size. With ``--self-test`` it then runs the bundled executable with
``--self-test`` in a bare environment (only ``HOME``, ``PATH=/usr/bin:/bin``,
``LANG`` and ``QT_QPA_PLATFORM=offscreen``: no virtual environment, no
``PYTHONPATH``), so it proves the bundle is self-contained. The last line is
machine-readable (one line; ``self_test`` is the exit status or ``skipped``)::

    parley-build: bundle=<dir> executable=<file> seconds=<s> bytes=<n> self_test=<rc>

Exit status: 0 when the build (and the self-test, if asked) succeeded, else 1.
Defaults: ``--distpath packaging/dist``, ``--workpath packaging/build``
(both git-ignored); the bundle is ``<distpath>/Parley/`` (and ``Parley.app`` on macOS).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SPEC = ROOT / "packaging" / "parley.spec"
BUNDLE_NAME = "Parley"
EXECUTABLE = "parley.exe" if sys.platform == "win32" else "parley"
SELF_TEST_TIMEOUT_S = 180


def build(distpath: Path, workpath: Path) -> float:
    """Run PyInstaller on the spec; return the wall-clock build time in seconds.

    Raises:
        subprocess.CalledProcessError: PyInstaller failed (its output is on stderr).
    """
    started = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "PyInstaller", "--noconfirm", "--log-level", "WARN",
         "--distpath", str(distpath), "--workpath", str(workpath), str(SPEC)],
        cwd=ROOT, check=True,
    )
    return time.perf_counter() - started


def bundle_size(path: Path) -> int:
    """Return the bytes used on disk by every file under ``path`` (like ``du -s``).

    Counts allocated blocks where the platform reports them (POSIX), else file sizes.
    """
    total = 0
    for file in path.rglob("*"):
        if file.is_symlink() or not file.is_file():
            continue
        st = file.stat()
        blocks = getattr(st, "st_blocks", None)
        total += blocks * 512 if blocks is not None else st.st_size
    return total


def bare_environment(home: Path) -> dict[str, str]:
    """Return a minimal environment (no venv, no PYTHONPATH) for running the bundle.

    Args:
        home: the value of ``HOME`` (and ``USERPROFILE`` on Windows).
    """
    env = {"HOME": str(home), "LANG": "C.UTF-8", "QT_QPA_PLATFORM": "offscreen"}
    if sys.platform == "win32":
        env.update(USERPROFILE=str(home), SYSTEMROOT=os.environ.get("SYSTEMROOT", r"C:\Windows"),
                   PATH=os.environ.get("SYSTEMROOT", r"C:\Windows") + r"\System32")
    else:
        env["PATH"] = "/usr/bin:/bin"
    return env


def run_bundle_self_test(executable: Path, home: Path) -> subprocess.CompletedProcess[str]:
    """Run ``<executable> --self-test`` in :func:`bare_environment`; output is captured.

    Raises:
        subprocess.TimeoutExpired: it ran longer than SELF_TEST_TIMEOUT_S seconds.
    """
    home.mkdir(parents=True, exist_ok=True)
    return subprocess.run([str(executable), "--self-test"], env=bare_environment(home),
                          cwd=home, capture_output=True, text=True, timeout=SELF_TEST_TIMEOUT_S)


def main(argv: list[str] | None = None) -> int:
    """The command line described in the module docstring; returns the exit status."""
    parser = argparse.ArgumentParser(description="Build Parley's one-folder app.")
    parser.add_argument("--distpath", type=Path, default=ROOT / "packaging" / "dist")
    parser.add_argument("--workpath", type=Path, default=ROOT / "packaging" / "build")
    parser.add_argument("--self-test", action="store_true",
                        help="run the built app's --self-test in a bare environment")
    args = parser.parse_args(argv)
    distpath, workpath = args.distpath.resolve(), args.workpath.resolve()

    try:
        seconds = build(distpath, workpath)
    except subprocess.CalledProcessError as exc:
        print(f"parley-build: PyInstaller failed with status {exc.returncode}", file=sys.stderr)
        return 1
    bundle = distpath / BUNDLE_NAME
    executable = bundle / EXECUTABLE
    size = bundle_size(bundle)
    print(f"Built {bundle} in {seconds:.0f} s: {size / 2**20:.0f} MiB on disk")

    status = "skipped"
    if args.self_test:
        result = run_bundle_self_test(executable, workpath / "self-test-home")
        sys.stdout.write(result.stdout)
        sys.stderr.write(result.stderr)
        status = str(result.returncode)
    print(f"parley-build: bundle={bundle} executable={executable} seconds={seconds:.1f} "
          f"bytes={size} self_test={status}", flush=True)
    return 0 if status in ("skipped", "0") else 1


if __name__ == "__main__":
    sys.exit(main())

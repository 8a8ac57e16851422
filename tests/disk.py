"""A real small filesystem for the tests of a full disk (the ``small_disk`` fixture of
``tests/conftest.py``): mounted with ``mount``, filled with :func:`fill`."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
from pathlib import Path


def mount(*args: str) -> bool:
    """Run ``mount`` with ``args``; False where that cannot be done (not root, no mount)."""
    if os.geteuid() != 0 or shutil.which("mount") is None:
        return False
    return subprocess.run(["mount", *args], capture_output=True).returncode == 0


def umount(where: Path) -> None:
    """Unmount ``where`` (lazily when it is busy)."""
    if subprocess.run(["umount", str(where)], capture_output=True).returncode != 0:
        subprocess.run(["umount", "-l", str(where)], capture_output=True)


def fill(folder: Path) -> Path:
    """Fill the filesystem holding ``folder``; returns the filler file."""
    filler = folder / "filler.bin"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        for size in (65536, 512, 1):
            with contextlib.suppress(OSError):
                while True:
                    os.write(fd, b"\0" * size)
    finally:
        os.close(fd)
    return filler

"""Parley's bundled files: style sheet, icons, skills, the Linux desktop entry.

Installed as the package ``parley.resources`` (the folder ``resources/`` of the
repository), so they are found beside this module wherever Parley is installed: an
editable install, a wheel, or the PyInstaller bundle (which sets ``__file__`` of its
modules inside ``_internal/`` and collects the files there). The folder is this
module's own: :mod:`importlib.resources` would give the same path for a package in a
folder, at ~5-9 ms of imports (zipfile, tempfile's readers) before the first paint.
"""

from __future__ import annotations

from pathlib import Path


def folder() -> Path:
    """The folder holding the bundled files (``styles/``, ``icons/``, ``skills/``).

    Returns:
        An absolute path on disk: the repository's ``resources/`` (editable install), the
        installed package's folder (wheel), or ``_internal/parley/resources`` (bundle).

    Raises:
        RuntimeError: the package is installed in a form without real folders (a zip file),
            which Parley does not support: Qt reads the icons and the style sheet from disk.
    """
    root = Path(__file__).resolve().parent
    if not root.is_dir():
        raise RuntimeError(f"Parley's resources are not in a folder on disk ({root}); "
                           "install Parley from a wheel or its source folder, not a zip file.")
    return root

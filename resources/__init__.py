"""Parley's bundled files: style sheet, icons, skills, the Linux desktop entry.

Installed as the package ``parley.resources`` (the folder ``resources/`` of the
repository), so they are found through :mod:`importlib.resources` wherever Parley
is installed: an editable install, a wheel, or the PyInstaller bundle.
"""

from __future__ import annotations

from importlib.resources import files
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
    root = files(__name__)
    if not isinstance(root, Path):
        raise RuntimeError(f"Parley's resources are not in a folder on disk ({root!r}); "
                           "install Parley from a wheel or its source folder, not a zip file.")
    return root

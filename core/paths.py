"""Where Parley keeps its data.

The data folder is, in order: an explicit ``home`` argument, the environment
variable ``PARLEY_HOME``, or the platform's user data folder
(``platformdirs.user_data_dir("Parley", appauthor=False)``: e.g.
``~/.local/share/Parley`` on Linux, ``~/Library/Application Support/Parley``
on macOS, ``%LOCALAPPDATA%\\Parley`` on Windows).
"""

from __future__ import annotations

import os
from pathlib import Path

import platformdirs

from core.errors import ParleyError

APP_NAME = "Parley"
HOME_ENV = "PARLEY_HOME"
DB_NAME = "sessions.db"


def data_dir(home: str | Path | None = None) -> Path:
    """Return Parley's data folder, creating it (and its parents) if missing.

    Args:
        home: use this folder instead of ``PARLEY_HOME`` or the platform default.

    Returns:
        An absolute path to an existing folder (``~`` expanded).

    Raises:
        DataDirError: the path is a file, or the folder cannot be created (e.g.
            no permission); the message names the path.
    """
    if home is None:
        home = os.environ.get(HOME_ENV) or platformdirs.user_data_dir(APP_NAME, appauthor=False)
    path = Path(home).expanduser().absolute()
    if path.exists() and not path.is_dir():
        raise DataDirError(path, "it is a file, not a folder")
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise DataDirError(path, exc.strerror or str(exc)) from exc
    return path


class DataDirError(ParleyError, OSError):
    """Parley's data folder cannot be used (``--home`` / ``PARLEY_HOME`` / the default)."""

    def __init__(self, path: Path, why: str) -> None:
        super().__init__(
            f"Parley cannot keep its data in {path}: {why}. Choose a folder with --home DIR "
            "(or PARLEY_HOME). Nothing was changed."
        )
        self.path = path


def db_path(home: str | Path | None = None) -> Path:
    """Return the path of ``sessions.db`` in the data folder (the file may not exist yet)."""
    return data_dir(home) / DB_NAME


def log_dir(home: str | Path | None = None) -> Path:
    """Return the folder for log files (``<data folder>/logs``), creating it if missing."""
    path = data_dir(home) / "logs"
    path.mkdir(exist_ok=True)
    return path


def open_dir(home: str | Path | None = None) -> Path:
    """Return the folder where attached documents are written to open them in another
    app (``<data folder>/opened``), creating it if missing."""
    path = data_dir(home) / "opened"
    path.mkdir(exist_ok=True)
    return path

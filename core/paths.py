"""Where Parley keeps its data.

The data folder is, in order: an explicit ``home`` argument, the environment
variable ``PARLEY_HOME``, or the platform's user data folder
(``platformdirs.user_data_dir("Parley", appauthor=False)``: e.g.
``~/.local/share/Parley`` on Linux, ``~/Library/Application Support/Parley``
on macOS, ``%LOCALAPPDATA%\\Parley`` on Windows).
"""

from __future__ import annotations

import errno
import os
import tempfile
from pathlib import Path

import platformdirs

from parley.core import private
from parley.core.errors import ParleyError

APP_NAME = "Parley"
HOME_ENV = "PARLEY_HOME"
DB_NAME = "sessions.db"
LOGS_NAME = "logs"
#: The window's size, place and panes on this machine (``parley.gui.window.place``): read
#: before the first paint, without opening the store.
PLACE_NAME = "window.ini"
#: Environment variable naming the database to use instead of sessions.db.
DATABASE_URL_ENV = "PARLEY_DATABASE_URL"

_ADVICE = ("Choose another folder with --home DIR (or PARLEY_HOME), or fix the permissions "
           "that stop Parley writing there.")
_ADVICE_FILE = "Choose another folder with --home DIR (or PARLEY_HOME), or move the file away."


class DataDirError(ParleyError, OSError):
    """Parley's data folder cannot be used (``--home`` / ``PARLEY_HOME`` / the default).

    Attributes:
        path: the data folder.
        why: what is wrong with it, e.g. "it is a file, not a folder".
    """

    def __init__(self, path: Path, why: str, advice: str = _ADVICE) -> None:
        super().__init__(f"Parley cannot keep its data in {path}: {why}. Nothing was changed. "
                         f"{advice}")
        self.path = path
        self.why = why


def find_data_dir(home: str | Path | None = None) -> Path:
    """Return where Parley's data folder is, without creating or checking anything.

    Args:
        home: use this folder instead of ``PARLEY_HOME`` or the platform default.

    Returns:
        An absolute path (``~`` expanded); it may not exist, or may not be a folder.
    """
    if home is None:
        home = os.environ.get(HOME_ENV) or platformdirs.user_data_dir(APP_NAME, appauthor=False)
    return Path(home).expanduser().absolute()


def data_dir(home: str | Path | None = None) -> Path:
    """Return Parley's data folder, creating it (and its parents) if missing.

    Args:
        home: use this folder instead of ``PARLEY_HOME`` or the platform default.

    Returns:
        An absolute path to an existing folder (``~`` expanded), mode ``0700``
        (made so if it was not: ``parley.core.private``). The folder may still be
        read-only: opening sessions.db then says so
        (``parley.core.store.errors.DatabaseReadOnly``).

    Raises:
        DataDirError: the path is a file, or the folder cannot be created (a
            file in the way, no permission, a read-only disk); the message
            names the path and says what to do. Nothing was created.
    """
    path = find_data_dir(home)
    try:
        is_file = path.exists() and not path.is_dir()
        if not is_file:
            path.mkdir(mode=private.DIR_MODE, parents=True, exist_ok=True)
    except OSError as exc:  # also a parent Parley may not look into
        raise DataDirError(path, cannot_create_reason(exc), _advice_for(exc)) from exc
    if is_file:
        raise DataDirError(path, "it is a file, not a folder", _ADVICE_FILE)
    private.narrow(path, private.DIR_MODE)  # others may not list or read the chats
    return path


def cannot_create_reason(exc: OSError) -> str:
    """Say in words why a folder could not be created (from ``exc.errno``)."""
    if exc.errno == errno.EROFS:
        return "the disk it is on is read-only"
    if exc.errno in (errno.EACCES, errno.EPERM):
        return "you do not have permission to create or write it"
    if exc.errno in (errno.ENOTDIR, errno.EEXIST):
        return "a file is in the way (part of the path is a file, not a folder)"
    if exc.errno == errno.ENOSPC:
        return "the disk is full"
    return (exc.strerror or str(exc)).rstrip(".")


def _advice_for(exc: OSError) -> str:
    return _ADVICE_FILE if exc.errno in (errno.ENOTDIR, errno.EEXIST) else _ADVICE


def is_writable(folder: Path) -> bool:
    """Whether files can be made in ``folder`` (tried with a nameless temporary file).

    A real attempt rather than ``os.access``: it also sees ACLs, read-only
    mounts and network shares. On Linux the probe file never gets a name;
    elsewhere it is deleted at once.

    Returns:
        False when ``folder`` is missing, not a folder, or not writable.
    """
    try:
        with tempfile.TemporaryFile(dir=folder):
            return True
    except OSError:
        return False


def db_path(home: str | Path | None = None) -> Path:
    """Return the path of ``sessions.db`` in the data folder (the file may not exist yet).

    Raises:
        DataDirError: as :func:`data_dir` (the folder is created if missing).
    """
    return data_dir(home) / DB_NAME


def log_dir(home: str | Path | None = None) -> Path:
    """Return the folder for log files (``<data folder>/logs``), creating it if missing.

    Raises:
        DataDirError: as :func:`data_dir`.
        OSError: ``logs`` cannot be created (a file of that name, a read-only folder).
    """
    path = data_dir(home) / LOGS_NAME
    path.mkdir(exist_ok=True)
    return path


def open_dir(home: str | Path | None = None) -> Path:
    """Return the folder where attached documents are written to open them in another
    app (``<data folder>/opened``), creating it if missing."""
    path = data_dir(home) / "opened"
    path.mkdir(exist_ok=True)
    return path

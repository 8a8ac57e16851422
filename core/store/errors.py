"""Errors of the session store, and the one place where SQLite errors are mapped to them.

Following qutebrowser's ``misc/sql.py``: an SQLite error a person can act on
(disk full, read-only file, corrupt file, file busy) becomes a typed
:class:`StoreError` with a message saying what happened, what was kept and what
to do. Any other SQLite error is a bug and propagates unchanged to the crash
handler (see :func:`translate`).
"""

from __future__ import annotations

import glob
import sqlite3
from pathlib import Path

from parley.core.errors import ParleyError

# Primary SQLite result codes (https://www.sqlite.org/rescode.html).
SQLITE_PERM = 3
SQLITE_BUSY = 5
SQLITE_LOCKED = 6
SQLITE_READONLY = 8
SQLITE_IOERR = 10
SQLITE_CORRUPT = 11
SQLITE_FULL = 13
SQLITE_CANTOPEN = 14
SQLITE_NOTADB = 26

_KEPT = "Nothing already saved was lost."


class StoreError(ParleyError):
    """Something went wrong with sessions.db that the user can act on."""


class SessionNotFound(StoreError):
    def __init__(self, session_id: str) -> None:
        super().__init__(f"The session {session_id!r} does not exist (it may have been deleted).")
        self.session_id = session_id


class SpaceNotFound(StoreError):
    def __init__(self, space_id: str) -> None:
        super().__init__(f"The space {space_id!r} does not exist (it may have been deleted).")
        self.space_id = space_id


class TurnNotFound(StoreError):
    def __init__(self, turn_id: str) -> None:
        super().__init__(f"The message {turn_id!r} does not exist (it may have been deleted).")
        self.turn_id = turn_id


class TurnNotInSession(StoreError):
    def __init__(self, turn_id: str, session_id: str) -> None:
        super().__init__(
            f"The message {turn_id!r} is not part of the session {session_id!r}; "
            "nothing was changed."
        )
        self.turn_id = turn_id
        self.session_id = session_id


class TurnInOtherSession(StoreError):
    """A turn id given to :meth:`Store.upsert_turn` already belongs to another session."""

    def __init__(self, turn_id: str, session_id: str) -> None:
        super().__init__(
            f"The message {turn_id!r} already belongs to another session than {session_id!r}; "
            "nothing was changed."
        )
        self.turn_id = turn_id
        self.session_id = session_id


class DuplicateTurn(StoreError):
    def __init__(self, turn_id: str) -> None:
        super().__init__(f"A message with id {turn_id!r} is already saved; nothing was changed.")
        self.turn_id = turn_id


class EmptyName(StoreError):
    def __init__(self, what: str) -> None:
        super().__init__(f"A {what} needs a name that is not empty; nothing was changed.")


class CannotDeleteDefaultSpace(StoreError):
    def __init__(self) -> None:
        super().__init__(
            "The default space cannot be deleted: sessions without a space live there. "
            "You can rename it instead."
        )


class InvalidSpaceOrder(StoreError):
    def __init__(self) -> None:
        super().__init__(
            "The new order of spaces must list every space exactly once; nothing was changed."
        )


class InvalidSearchQuery(StoreError):
    def __init__(self, query: str, why: str) -> None:
        super().__init__(f"Cannot search for {query!r}: {why}")
        self.query = query


class NotAParleyFile(StoreError):
    def __init__(self, path: Path, why: str) -> None:
        super().__init__(
            f"{path} is not a Parley sessions file ({why}). Parley did not change it. "
            "Move it away and Parley will start a new one, or start Parley with --home "
            "pointing at another folder."
        )
        self.path = path


class NewerFormat(StoreError):
    def __init__(self, path: Path, found: int, supported: int) -> None:
        super().__init__(
            f"{path} was written by a newer Parley (file format v{found}); this version "
            f"reads up to v{supported}. Parley did not change the file. "
            "Update Parley to open it."
        )
        self.path = path
        self.found = found
        self.supported = supported


class UpgradeUnavailable(StoreError):
    def __init__(self, path: Path, found: int) -> None:
        super().__init__(
            f"{path} is in the older v{found} format and this build of Parley cannot upgrade "
            "it. Parley did not change the file. Use a Parley release that includes the upgrade."
        )
        self.path = path
        self.found = found


class DatabaseCorrupt(StoreError):
    """sessions.db is damaged.

    Args:
        path: the file.
        found_while_open: it was found damaged while Parley had it open (and had
            written to it before noticing), not on opening it.
    """

    def __init__(self, path: Path, *, found_while_open: bool = False) -> None:
        path = Path(path)
        baks = sorted((p.name for p in path.parent.glob("backups/sessions-*.db")), reverse=True)
        baks = [f"backups/{b}" for b in baks] or sorted(
            p.name for p in path.parent.glob(glob.escape(path.name) + "*.bak"))
        restore = (
            f"Restore it from a backup (such as {baks[0]} beside it)"
            if baks else "Restore it from a backup if you have one"
        )
        what = (
            "was found damaged while Parley was using it; Parley stopped saving to it then"
            if found_while_open else "is damaged and cannot be read. Parley did not change it"
        )
        super().__init__(
            f"{path} {what}. {restore}, or move it away and Parley will start a new one."
        )
        self.path = path


class DatabaseReadOnly(StoreError):
    def __init__(self, path: Path) -> None:
        super().__init__(
            f"Parley cannot write to {path}: the file or its folder is read-only. "
            f"{_KEPT} Make the file and its folder writable, then try again."
        )
        self.path = path


class DiskFull(StoreError):
    def __init__(self, path: Path) -> None:
        super().__init__(
            f"Parley could not save: the disk holding {path} is full. "
            f"{_KEPT} Free some space and try again."
        )
        self.path = path


class DatabaseBusy(StoreError):
    def __init__(self, path: Path) -> None:
        super().__init__(
            f"{path} is in use by another program (perhaps another Parley window) and stayed "
            f"locked. {_KEPT} Close the other program, then try again."
        )
        self.path = path


class DiskError(StoreError):
    def __init__(self, path: Path) -> None:
        super().__init__(
            f"The disk reported an error while Parley used {path}. {_KEPT} "
            "Check the disk (or network share), then try again."
        )
        self.path = path


class CannotOpen(StoreError):
    def __init__(self, path: Path, why: str = "") -> None:
        detail = f" ({why})" if why else ""
        super().__init__(
            f"Parley cannot open {path}{detail}. Check that the folder exists and that you "
            "may read and write it."
        )
        self.path = path


def sqlite_error_of(exc: BaseException) -> sqlite3.Error | None:
    """Return the ``sqlite3`` error behind ``exc`` (itself, or SQLAlchemy's ``.orig``)."""
    if isinstance(exc, sqlite3.Error):
        return exc
    orig = getattr(exc, "orig", None)
    return orig if isinstance(orig, sqlite3.Error) else None


def primary_code(exc: BaseException) -> int | None:
    """Return the primary SQLite result code (0–255) behind ``exc``, or None."""
    err = sqlite_error_of(exc)
    if err is None:
        return None
    code = getattr(err, "sqlite_errorcode", None)
    if code is None:  # errors raised by the sqlite3 module itself carry no code
        return None
    return int(code) & 0xFF


def translate(exc: BaseException, path: Path) -> StoreError | None:
    """Map an SQLite error to the user-facing error it stands for.

    Args:
        exc: an exception raised by ``sqlite3`` or by SQLAlchemy wrapping it.
        path: the database file, named in the message.

    Returns:
        The :class:`StoreError` to raise (``raise err from exc``), or None when
        ``exc`` is not a condition a user can act on (a bug: re-raise it as is).
    """
    code = primary_code(exc)
    if code == SQLITE_FULL:
        return DiskFull(path)
    if code in (SQLITE_READONLY, SQLITE_PERM):
        return DatabaseReadOnly(path)
    if code in (SQLITE_CORRUPT, SQLITE_NOTADB):
        return DatabaseCorrupt(path)
    if code in (SQLITE_BUSY, SQLITE_LOCKED):
        return DatabaseBusy(path)
    if code == SQLITE_IOERR:
        return DiskError(path)
    if code == SQLITE_CANTOPEN:
        return CannotOpen(path)
    return None

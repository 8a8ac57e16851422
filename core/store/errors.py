"""Every error of the session store, and the one place where SQLite errors are mapped to them.

As qutebrowser does with its SQL errors: an SQLite error a person can act on
(disk full, read-only file, corrupt file, file busy) becomes a typed
:class:`StoreError` with a message saying what happened, what was kept and what
to do. Any other SQLite error is a bug and propagates unchanged to the crash
handler (see :func:`translate`). The errors of the other store modules (backups,
salvage, faults, the v3 upgrade…) are here too, each group under the module that raises it.
"""

from __future__ import annotations

import glob
import sqlite3
from pathlib import Path

from parley.core.errors import ParleyError
from parley.core.paths import cannot_create_reason

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


class DocumentNotFound(StoreError):
    """No space document has this id (removed meanwhile, e.g. by another Parley)."""

    def __init__(self, document_id: str) -> None:
        super().__init__("That document is no longer in the space (it was removed). "
                         "Nothing was changed.")
        self.document_id = document_id


class QueuedMessageNotFound(StoreError):
    def __init__(self, message_id: str) -> None:
        super().__init__("That queued message is no longer waiting: it was sent or taken back.")
        self.message_id = message_id


class EmptyName(StoreError):
    def __init__(self, what: str) -> None:
        super().__init__(f"A {what} needs a name that is not empty; nothing was changed.")


class SpaceNameTaken(StoreError):
    def __init__(self, name: str) -> None:
        super().__init__(f"There is already a space named “{name}”: choose another name. "
                         "Nothing was changed.")
        self.name = name


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


#: What every "not a chats file" message ends with: the file is left as it is.
_LEFT_AS_IT_IS = ("Parley did not change it. Move it away and Parley will start a new one, "
                  "or start Parley with --home pointing at another folder.")


class NotAParleyFile(StoreError):
    def __init__(self, path: Path, why: str) -> None:
        self._told(path, f"{path} is not a Parley sessions file ({why}). {_LEFT_AS_IT_IS}")

    def _told(self, path: Path, message: str) -> None:
        """Say ``message`` about ``path`` (kept as :attr:`path`), for each kind below."""
        StoreError.__init__(self, message)
        self.path = Path(path)


class NotSQLiteFile(NotAParleyFile):
    """The chats file does not start as an SQLite database does (a text file, random
    bytes, a file of another kind saved under its name — or a chats file whose first
    bytes were written over): it is not a chats file, nothing in it can be read as one.

    Args:
        path: the file (left as it is).
    """

    def __init__(self, path: Path) -> None:
        self._told(path, f"{path} is not a chats file: it does not start as an SQLite "
                         f"database does. {_LEFT_AS_IT_IS}")


class OtherSQLiteFile(NotAParleyFile):
    """The chats file is a sound SQLite database of another program (no Parley tables):
    not damaged, and nothing in it is the person's chats (trial 20: it was called damaged
    at start, and Salvage offered).

    Args:
        path: the file (left as it is).
        why: what it holds instead ("it holds another program's data").
    """

    def __init__(self, path: Path, why: str) -> None:
        self._told(path, f"{path} is not a Parley sessions file: it is an SQLite database, "
                         f"but {why}. {_LEFT_AS_IT_IS}")


class ChatsFileEmptied(NotAParleyFile):
    """The chats file is empty (0 bytes) though Parley closed it last with chats in it: it
    was emptied since (trial 20: called damaged, and Salvage offered, which had nothing to
    read).

    Args:
        path: the file (left as it is).
    """

    def __init__(self, path: Path) -> None:
        self._told(path, f"{path} is empty (0 bytes): it was emptied after Parley last closed "
                         "it, so the chats it held are no longer in it. Parley did not change "
                         "it. Restore a backup if you have one, or move it away and Parley "
                         "will start a new one.")


class ChatsFileIsFolder(NotAParleyFile):
    """Where the chats file should be there is a folder of that name, or a link to a folder.

    Args:
        path: the folder, or the link (never changed, never deleted).
        link: where the link points, when ``path`` is a link (trial 20: it was called a
            folder, and where it points was not said).
    """

    def __init__(self, path: Path, link: Path | None = None) -> None:
        path = Path(path)
        if link is None:
            StoreError.__init__(
                self,
                f"Parley keeps its chats in the file {path}, but that is a folder. Parley did "
                "not change the folder or anything in it, and will not delete it. Move or "
                "rename the folder; Parley then starts a new chats file in its place, or offers "
                "its backups of your chats if it has any. Or start Parley with --home pointing "
                "at another folder.",
            )
        else:
            StoreError.__init__(
                self,
                f"Parley keeps its chats in the file {path}, but that is a link to the folder "
                f"{link}. Parley did not change the link, the folder or anything in it, and "
                "will not delete them. Remove or rename the link (the folder stays as it is); "
                "Parley then starts a new chats file in its place, or offers its backups of "
                "your chats if it has any. Or start Parley with --home pointing at another "
                "folder.",
            )
        self.path = path
        self.link = link


class SourceWithoutTree(StoreError):
    """A Parley database to merge was written before chats kept their branches in a tree
    (``turn_links``, ``parley.core.store.schema``) and was not converted."""

    def __init__(self) -> None:
        super().__init__(
            "This Parley database was written by an older Parley that kept edits and "
            "regenerations as separate chats, and it has not been converted. Nothing was "
            "imported and the file was not changed. Open it once in this Parley (start "
            "Parley with --home pointing at its folder) to convert it, then import it again."
        )


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

    def __init__(self, path: Path, *, found_while_open: bool = False,
                 kept: Path | None = None, why: str = "") -> None:
        path = Path(path)
        baks = sorted((p.name for p in path.parent.glob("backups/sessions-*.db")), reverse=True)
        baks = [f"backups/{b}" for b in baks] or sorted(
            p.name for p in path.parent.glob(glob.escape(path.name) + "*.bak"))
        restore = (
            f"Restore it from a backup (such as {baks[0]} beside it)"
            if baks else "Restore it from a backup if you have one"
        )
        what = (
            "was found damaged while Parley was using it"
            + (f" ({why})" if why else "") + "; Parley stopped saving to it then"
            if found_while_open else "is damaged and cannot be read. Parley did not change it"
        )
        super().__init__(
            f"{path} {what}.{_kept_words(kept)} {restore}, or move it away and Parley will "
            "start a new one."
        )
        self.path = path
        self.kept = kept
        self.why = why


def _kept_words(kept: Path | None) -> str:
    """" What was left of it was copied to <folder> …" (or nothing). Said when the damage
    is found, before every copy is made: which were made is said by the folder's
    what-happened.txt and the recovery page (trial 20: a copy named here was never made)."""
    if kept is None:
        return ""
    return (f" What was left of it was copied to {kept.name} beside it (never deleted); "
            "restoring or salvaging reads that too.")


class DatabaseReplacedInPlace(DatabaseCorrupt):
    """Another database was written over sessions.db in place while Parley had it open
    (``parley.core.store.sqlite.overwrite``): it is not the person's chats."""

    def __init__(self, path: Path, *, kept: Path | None = None) -> None:
        path = Path(path)
        StoreError.__init__(  # not DatabaseCorrupt's words: nothing of it is "damaged"
            self,
            f"{path.name} was replaced by another database while Parley was running (another "
            "program wrote a whole other database file over it). Parley stopped saving to it "
            "and did not mix that database with your chats."
            f"{_kept_words(kept)} Restore a backup or salvage to get your chats back (that "
            "other database is kept aside, not merged); to open the other database instead, "
            "start Parley with --home pointing at a folder holding it.",
        )
        self.path, self.kept, self.why = path, kept, "replaced by another database"


class DatabaseReadOnly(StoreError):
    """sessions.db cannot be written.

    Args:
        path: the file.
        why: which of them refuses writes, in words ("the file … may not be written
            (permissions r--r--r--)"); empty when not known (SQLite said so on a write).
        fix: what to do, in words ("make it writable: chmod u+w …").
    """

    def __init__(self, path: Path, why: str = "", fix: str = "") -> None:
        super().__init__(
            f"Parley cannot write to {path}: "
            + (why if why else "the file or its folder is read-only") + f". {_KEPT} "
            + (fix[:1].upper() + fix[1:] if fix else "Make the file and its folder writable")
            + ", then try again."
        )
        self.path = path
        self.why = why
        self.fix = fix


class OpenedReadOnly(DatabaseReadOnly):
    """A write refused because sessions.db was opened read-only: it could not be written
    when Parley started (``Store.open(read_only_ok=True)``)."""

    def __init__(self, path: Path, why: str = "", fix: str = "") -> None:
        StoreError.__init__(
            self,
            "Not saved: Parley opened your chats read-only because "
            + (why or f"{path} or its folder is read-only") + ". You can read and copy "
            "them, but nothing new can be saved until you "
            + (fix or "make the file and its folder writable") + " and restart Parley.",
        )
        self.path, self.why, self.fix = path, why, fix


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


# -- Attached files (core/store/attachments.py). -----------------------------------------------

class AttachmentNotFound(StoreError):
    """No stored file has this id (it was never saved, or its last turn was deleted)."""

    def __init__(self, sha256: str) -> None:
        super().__init__(
            f"The attached file {sha256[:12]}… is not in Parley's data (it may belong to a "
            "deleted session). Nothing else was changed; attach the file again if you need it."
        )
        self.sha256 = sha256


# -- Automatic backups (core/store/sqlite/backups.py): a backup could not be made. -----------------

class BackupError(StoreError):
    """An automatic backup could not be made (the message says why; nothing was lost)."""


class NotEnoughSpace(BackupError):
    def __init__(self, folder: Path, needed: int, free: int) -> None:
        super().__init__(
            f"Parley skipped an automatic backup: {folder} has {free / 1e6:.0f} MB free and a "
            f"backup needs about {needed / 1e6:.0f} MB. Your chats are safe in sessions.db; "
            "free some disk space (or delete old backups there) and Parley backs up again."
        )
        self.folder = folder


class SourceDamaged(BackupError):
    """The copy failed its check: sessions.db itself is damaged (the copy was deleted)."""

    def __init__(self, db: Path) -> None:
        super().__init__(
            f"An automatic backup of {db} failed its check: sessions.db is damaged. The "
            "damaged copy was not kept, and the earlier backups are as they were."
        )
        self.path = db


class CannotBackUp(BackupError):
    def __init__(self, folder: Path, why: str) -> None:
        super().__init__(
            f"Parley could not make an automatic backup in {folder} ({why}). Your chats are "
            "safe in sessions.db; Parley tries again later."
        )
        self.folder = folder


# -- A file found damaged while Parley runs (core/store/sqlite/damage.py). -------------------------

class DamagedWhileOpen(StoreError):
    """A write refused because the file was found damaged earlier in this run."""

    def __init__(self, path: Path, *, replaced: bool = False) -> None:
        if replaced:
            super().__init__(
                f"{path} was replaced by another database while Parley was running. Parley "
                "stopped saving to it and did not mix it with your chats; the chats you see "
                "can still be read and copied. Quit Parley and start it again: it will offer "
                "to restore a backup with what was saved since (kept beside the file), "
                "keeping the other database aside.")
            self.path = path
            return
        super().__init__(
            f"{path} is damaged: part of it can no longer be read. Parley stopped saving to "
            "it so as not to damage it further; everything saved before is as it was, and "
            "the chats you see can still be read and copied. Quit Parley and start it "
            "again: it will check the file and offer to restore a backup or start a new "
            "file, keeping the damaged one aside."
        )
        self.path = path


# -- sessions.db deleted, moved or replaced while open (core/store/sqlite/faults.py). --------------

#: The menu command the messages below point to (gui/commands/actions.py, ``app.save_copy``).
SAVE_COPY_COMMAND = "File ▸ Save a copy now…"


class DatabaseMissing(StoreError):
    """The file Parley opened is no longer at its path (deleted, or moved away)."""

    def __init__(self, path: Path) -> None:
        super().__init__(
            f"{path} was deleted or moved while Parley was running. Parley stopped saving, so "
            "nothing is written to a file you can no longer see. Nothing already saved was "
            "lost: Parley can still read it and will save a copy beside the old name when it "
            f"closes (or choose {SAVE_COPY_COMMAND}). To keep going, put the file back and try "
            "again."
        )
        self.path = path


class DatabaseReplaced(StoreError):
    """Another file now has the path of the file Parley opened."""

    def __init__(self, path: Path) -> None:
        super().__init__(
            f"{path} was replaced by another file while Parley was running (restored from a "
            "backup, or synced from another computer?). Parley stopped saving to it so the new "
            "file is not damaged. Nothing already saved was lost: Parley will save what it "
            f"holds as a copy beside it when it closes (or choose {SAVE_COPY_COMMAND}). "
            "Restart Parley to use the new file."
        )
        self.path = path


class RescueFailed(StoreError):
    """A copy of what Parley holds could not be written (the folder cannot be made, disk full…).

    Attributes:
        dest: the copy that could not be written.
        reason: why, in words ("the disk is full").
    """

    def __init__(self, dest: Path, reason: str) -> None:
        super().__init__(
            f"Parley could not save a copy of your chats as {dest}: {reason}. Nothing is lost "
            "yet: Parley still holds everything while it stays open. Choose another place for "
            "the copy (a folder you can write to, on a disk with free space)."
        )
        self.dest = dest
        self.reason = reason

    @classmethod
    def of(cls, dest: Path, exc: BaseException) -> RescueFailed:
        """The typed error for ``exc`` (OSError, sqlite3.Error) met writing ``dest``."""
        if isinstance(exc, FileExistsError) and exc.filename in (str(dest), None):
            reason = "a file with that name already exists (choose another name)"
        elif isinstance(exc, OSError):
            reason = cannot_create_reason(exc)
        else:
            reason = str(exc).rstrip(".") or type(exc).__name__
        return cls(dest, reason)


# -- The store's lifecycle (core/store/lifecycle.py). ------------------------------------------

class StoreClosed(StoreError):
    def __init__(self) -> None:
        super().__init__("The session store was closed; reopen Parley's data to continue.")


# -- Salvage of a damaged file (core/store/sqlite/salvage.py). -------------------------------------

class SalvageError(StoreError):
    """Salvaging failed; the damaged file and the backups are as they were."""


class SalvageCancelled(SalvageError):
    """The salvage was stopped before it finished; nothing was changed."""

    def __init__(self) -> None:
        super().__init__("Salvaging was stopped. The damaged file is kept as it was; "
                         "you can salvage it again or choose another way.")


# -- The v3 upgrade (core/store/upgrade/). -----------------------------------------------------

class MigrationBackupFailed(StoreError):
    """The copy taken before upgrading could not be made; the file was not touched."""

    def __init__(self, path: Path, backup: Path, why: str) -> None:
        super().__init__(
            f"Parley needs to upgrade {path} to a new format and first makes a copy of it, "
            f"but the copy to {backup} failed ({why}). Nothing was changed: your sessions "
            "are as they were. Free some disk space (the copy needs about the size of the "
            "file) or make the folder writable, then start Parley again."
        )
        self.path = path
        self.backup = backup
        self.why = why


class MigrationFailed(StoreError):
    """The upgrade stopped; the file was left as it was (v3) and the backup is kept."""

    def __init__(self, path: Path, backup: Path, why: str) -> None:
        super().__init__(
            f"Parley could not upgrade {path} to its new format ({why}). The file was left "
            f"as it was, in the old format, and nothing was lost; a copy made before the "
            f"upgrade is at {backup}. Start Parley again to retry; if it keeps failing, "
            "keep both files and report the problem."
        )
        self.path = path
        self.backup = backup
        self.why = why


class UpgradeInProgress(StoreError):
    """Another process (a second Parley, ``--migrate-only``) is upgrading the same file."""

    def __init__(self, path: Path) -> None:
        super().__init__(
            f"Another Parley is upgrading {path} to the new format right now. This one "
            "changed nothing; wait until the other has finished, then start Parley again."
        )
        self.path = path


# -- The PostgreSQL store (core/store/postgres/errors.py maps the server's errors to these). -------

_PG_KEPT = "Nothing already saved was lost, and what you typed is kept."


class ServerUnreachable(StoreError):
    """The PostgreSQL server cannot be reached (down, wrong address, network away)."""

    def __init__(self, where: str, why: str = "") -> None:
        detail = f" ({why})" if why else ""
        super().__init__(
            f"Parley cannot reach the PostgreSQL server of {where}{detail}. {_PG_KEPT} "
            "Check that the server is running and that this computer can reach it, then "
            "try again."
        )
        self.where = where


class ServerNotAnswering(ServerUnreachable):
    """The PostgreSQL server took a call but has not answered for a while (a network
    partition, a frozen server): calls made meanwhile are refused at once, not queued
    behind it (``parley.core.store.answering``)."""

    def __init__(self, where: str, waited_s: float) -> None:
        StoreError.__init__(
            self,
            f"The PostgreSQL server of {where} has not answered for {waited_s:.0f} s. "
            f"{_PG_KEPT} Parley keeps trying and goes on as soon as it answers; check the "
            "network or the server if it does not."
        )
        self.where = where
        self.waited_s = waited_s


class AuthenticationFailed(StoreError):
    """The server refused the user name or password."""

    def __init__(self, where: str) -> None:
        super().__init__(
            f"The PostgreSQL server refused to let Parley in as {where}: wrong user name or "
            "password. Nothing was changed. Check the database address and password "
            "(Settings → Storage, or --database / PARLEY_DATABASE_URL), then try again."
        )
        self.where = where

class ServerDiskFull(StoreError):
    """The server could not write: its disk is full."""

    def __init__(self, where: str) -> None:
        super().__init__(
            f"Parley could not save: the disk of the PostgreSQL server of {where} is full. "
            f"{_PG_KEPT} Ask whoever runs the server to free some space, then try again."
        )
        self.where = where

class DatabaseNotFound(StoreError):
    """The server has no database of the name given."""

    def __init__(self, where: str) -> None:
        super().__init__(
            f"The PostgreSQL server has no database {where}. Nothing was changed. Create it "
            "(for example with createdb), or check the name in the database address."
        )
        self.where = where

class ServerReadOnly(StoreError):
    """The database may only be read (a standby server, or no write permission)."""

    def __init__(self, where: str) -> None:
        super().__init__(
            f"Parley cannot write to the PostgreSQL database {where}: the server allows "
            f"only reading there (a standby, or missing permissions). {_PG_KEPT} Connect to the "
            "primary server, or ask for write permission, then try again."
        )
        self.where = where

class NotAParleyDatabase(StoreError):
    """The database holds tables of another program (or of a newer Parley)."""

    def __init__(self, where: str, why: str) -> None:
        super().__init__(
            f"The PostgreSQL database {where} is not a Parley database ({why}). Parley did "
            "not change it. Give Parley a database of its own (an empty one is set up on "
            "first use)."
        )
        self.where = where


# -- The PostgreSQL store's address and driver (core/store/postgres/store.py). ---------------------


class InvalidDatabaseUrl(StoreError):
    """A database address that is not a PostgreSQL one (words for the command line).

    Attributes:
        url: the address as given, its password hidden.
        why: what is wrong with it, e.g. "it has no scheme, not postgresql://…"; a window
            (Settings → Storage) words its own sentence around it.
    """

    def __init__(self, url: str, why: str) -> None:
        self.url, self.why = url, why
        super().__init__(
            f"{url!r} is not a PostgreSQL database address: {why}. Nothing was opened "
            "and nothing was created. Parley accepts an address like "
            "postgresql://user@host:5432/parley (or postgres://…); to keep the chats in a "
            "file, give no database address (--home chooses the data folder)."
        )


class SecretNotKept(StoreError):
    def __init__(self, url: str, name: str) -> None:
        super().__init__(
            f"The database address {url!r} was not saved: Parley keeps a database's "
            f"password in the keyring, but not “{name}”, and does not write it into the "
            "saved address. Where the chats are was not changed. Leave it out of the "
            "address and give it to the PostgreSQL client itself (PGSSLPASSWORD, or "
            "~/.pgpass for a password)."
        )


class DriverMissing(StoreError):
    def __init__(self) -> None:
        super().__init__(
            "This Parley was installed without PostgreSQL support (the psycopg package). "
            "Nothing was opened. Install it with: pip install 'parley[postgresql]', or start "
            "Parley without a database address to use your sessions.db file."
        )


# -- Copying the chats to another store (core/store/transfer.py). ----------------------------------


class DestinationNotEmpty(StoreError):
    def __init__(self, where: str, chats: int) -> None:
        super().__init__(
            f"{where} already holds {chats} chat{'s' if chats != 1 else ''}; Parley copies "
            "only into an empty place, so two histories never mix. Nothing was copied. Choose "
            "a new file or an empty database."
        )


class CopyMismatch(StoreError):
    def __init__(self, what: str) -> None:
        super().__init__(
            f"The copy did not match the original ({what}), so it was undone: the destination "
            "is as it was and the original was not changed. Try again; if it happens again, "
            "keep using the original."
        )

"""What kind of file sessions.db is, and the steps that bring it to the current format.

Open-time detection (:func:`inspect_file`) reads the file without writing to
it and sorts it into one of :class:`FileKind`:

* ``NEW``: missing, 0 bytes, or an SQLite file with no tables → create v4;
* ``CURRENT``: ``user_version`` 4 with Parley's tables → open as is, write nothing;
* ``V3``: ``user_version`` 3, or 0 with the v3 tables (``sessions.fork_idx``,
  ``turns.idx``) → :func:`upgrade_v3` (``parley.core.store.upgrade.v3.upgrade_file``, which
  backs the file up first);
* newer ``user_version`` → :class:`NewerFormat`; SQLite without Parley's tables →
  :class:`NotAParleyFile`; not starting as SQLite does (a text file, random bytes) →
  :class:`NotSQLiteFile`; a folder → :class:`ChatsFileIsFolder` (both kinds of
  ``NotAParleyFile``); unreadable → :class:`DatabaseCorrupt`.

Future format changes (v4 → v5 …) are small named functions registered with
:func:`step`, in the style of simonw/llm's migrations; :func:`migrate`
runs the ones a file lacks, in order, inside the caller's transaction, and
bumps ``user_version`` after each. Adding one means bumping
``schema.SCHEMA_VERSION`` and testing it from a file of the previous version.

*Additions* (:func:`addition`) are the other kind of step: new tables (and
their indexes and triggers) added to the current format while it has not
been released, that older files of the same version lack. They do not bump
``user_version``: a file lacking one classifies as ``OLDER_V4`` and
:func:`migrate` creates what is missing; a file that has them all is opened
without a write. The attachment store (``attachments``, ``turn_attachments``
and their triggers) is the first; the conversation tree (``turn_links``,
``turn_path``, filled from the turns, version sessions folded into their chats
after a backup: ``parley.core.store.upgrade.tree``) the second, the queue of messages
written while a reply streamed (``queued_messages``) the third, their files
(``queued_files`` and its triggers) the fourth, the space documents
(``space_documents``, ``space_document_pages``, ``space_document_fts``) the fifth,
the summary-turn index the sixth, the forking parents of each chat (``turn_forks``
and its triggers: ``parley.core.store.fork_index``) the seventh, the count of each
chat's path rows (``turn_path_counts`` and its triggers:
``parley.core.store.path_count``) the eighth. Once a format
has been released, a change that an older Parley could not read must be a
versioned step instead (an older build then refuses the file as newer rather
than misreading it).
"""

from __future__ import annotations

import contextlib
import importlib
import os
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast
from urllib.parse import quote

from sqlalchemy.engine import Connection

from parley.core.store import fork_index, path_count
from parley.core.store.errors import (
    SQLITE_CANTOPEN,
    SQLITE_PERM,
    SQLITE_READONLY,
    ChatsFileIsFolder,
    DatabaseCorrupt,
    DatabaseReadOnly,
    NotSQLiteFile,
    StoreError,
    UpgradeUnavailable,
    primary_code,
    translate,
)
from parley.core.store.schema import (
    ATTACHMENT_OBJECTS,
    COMPACTION_INDEX_OBJECTS,
    QUEUE_OBJECTS,
    QUEUED_FILE_OBJECTS,
    SCHEMA_VERSION,
    SPACE_DOCUMENT_OBJECTS,
    TREE_OBJECTS,
    V4_TABLES,
    create_attachment_schema,
    create_compaction_index,
    create_queue_schema,
    create_queued_files_schema,
    create_space_document_schema,
)
from parley.core.store.sqlite import held

if TYPE_CHECKING:  # imported lazily at run time (_add_tree)
    from parley.core.store.upgrade.tree import TreeConversion

SQLITE_MAGIC = b"SQLite format 3\x00"
Progress = Callable[[int, int], None]


class FileKind(Enum):
    NEW = "new"
    CURRENT = "current"
    OLDER_V4 = "older-v4"  # a v4+ file an added step must bring up to date
    V3 = "v3"
    NEWER = "newer"
    NOT_PARLEY = "not-parley"


@dataclass(frozen=True, slots=True)
class FileInfo:
    """What :func:`inspect_file` found.

    Attributes:
        kind: the verdict.
        user_version: ``PRAGMA user_version`` (0 for a missing file).
        why: for NOT_PARLEY, a short reason shown to the user.
    """

    kind: FileKind
    user_version: int = 0
    why: str = ""


@dataclass(frozen=True, slots=True)
class Step:
    """One named migration step producing format ``version``."""

    version: int
    name: str
    fn: Callable[[Connection], None]


STEPS: list[Step] = []


def step(version: int, name: str) -> Callable[[Callable[[Connection], None]], Callable[..., Any]]:
    """Register ``fn(con)`` as the step that brings a file to format ``version``."""

    def register(fn: Callable[[Connection], None]) -> Callable[[Connection], None]:
        STEPS.append(Step(version, name, fn))
        STEPS.sort(key=lambda s: s.version)
        return fn

    return register


@dataclass(frozen=True, slots=True)
class Addition:
    """Schema objects added to the current format without a version bump.

    Attributes:
        name: shown in the list :func:`migrate` returns.
        objects: the names (``sqlite_master.name``) it creates; a file lacking
            any of them needs it.
        fn: creates what is missing, idempotently, in the caller's transaction;
            returns what it did when there is more to tell than its name (the
            tree's :class:`~parley.core.store.upgrade.tree.TreeConversion`), else None.
    """

    name: str
    objects: frozenset[str]
    fn: Callable[[Connection], object]


def _add_tree(con: Connection) -> TreeConversion:
    """The conversation tree (``parley.core.store.upgrade.tree``, imported lazily: only
    files written before it need it): a backup, then the version sessions folded."""
    from parley.core.store.upgrade.tree import add_to_file

    return add_to_file(con)


ADDITIONS: list[Addition] = [
    Addition(
        "v4: attachment store (attachments, turn_attachments, triggers)",
        ATTACHMENT_OBJECTS,
        create_attachment_schema,
    ),
    Addition(
        "v4: conversation tree (turn_links, turn_path; version sessions folded into their chats)",
        TREE_OBJECTS,
        _add_tree,
    ),
    Addition("v4: queued messages (queued_messages)", QUEUE_OBJECTS, create_queue_schema),
    Addition("v4: files of queued messages (queued_files, triggers)", QUEUED_FILE_OBJECTS,
             create_queued_files_schema),
    Addition(
        "v4: space documents (space_documents, space_document_pages, their search index)",
        SPACE_DOCUMENT_OBJECTS,
        create_space_document_schema,
    ),
    Addition("v4: compactions found by their summary turn (compactions_by_summary)",
             COMPACTION_INDEX_OBJECTS, create_compaction_index),
    # After the tree's addition: it reads turn_links (filled once by one GROUP BY).
    Addition("v4: forking parents of each chat (turn_forks, triggers)", fork_index.OBJECTS,
             fork_index.create),
    # After the tree's addition: it reads turn_path (filled once by one GROUP BY).
    Addition("v4: rows of each chat's path (turn_path_counts, triggers)", path_count.OBJECTS,
             path_count.create),
]


def missing_additions(names: set[str], additions: list[Addition] | None = None) -> list[Addition]:
    """Return the additions whose objects are not all among ``names`` (schema object names)."""
    return [a for a in (ADDITIONS if additions is None else additions) if not a.objects <= names]


@dataclass(frozen=True, slots=True)
class Migrated:
    """What :func:`migrate` ran.

    Attributes:
        names: the steps and additions run, in order (empty: the file was up to date).
        tree: what the conversation tree's addition did, when it ran.
    """

    names: list[str]
    tree: TreeConversion | None = None


@dataclass(frozen=True, slots=True)
class UpToDateReport:
    """What opening an older v4 file wrote to it (``Store.migration_report``).

    Attributes:
        added: the names of the steps and additions run (:attr:`Migrated.names`).
        backup_path: the copy taken before the conversation tree was added
            (``<db>.parley-pre-tree.bak`` …), or None when nothing needed one.
        folded: version sessions folded into their chats as branches.
        chats: the chats they were folded into.
        seconds: wall time of the whole write, backup and commit included.
    """

    added: list[str]
    backup_path: Path | None
    folded: int
    chats: int
    seconds: float


def migrate(
    con: Connection,
    current: int,
    *,
    steps: list[Step] | None = None,
    target: int | None = None,
) -> Migrated:
    """Run, in order, every step with ``current < version <= target``.

    Args:
        con: a Connection inside the caller's write transaction.
        current: the file's ``user_version``.
        steps: the registry (default :data:`STEPS`).
        target: the version to reach (default: ``SCHEMA_VERSION``).

    With the default registry, the :data:`ADDITIONS` the file lacks are then
    made too (after the versioned steps, so they see the current format).

    Returns:
        The names of the steps and additions run (empty when the file is up to
        date), and what the tree's addition did when it ran.
    """
    target = SCHEMA_VERSION if target is None else target
    done: list[str] = []
    tree: TreeConversion | None = None
    for s in steps if steps is not None else STEPS:
        if current < s.version <= target:
            s.fn(con)
            con.exec_driver_sql(f"PRAGMA user_version = {int(s.version)}")
            done.append(s.name)
    if steps is None:
        names = {r[0] for r in con.exec_driver_sql("SELECT name FROM sqlite_master")}
        for a in missing_additions(names):
            result = a.fn(con)
            if a.fn is _add_tree:
                tree = cast("TreeConversion", result)
            done.append(a.name)
    return Migrated(done, tree)


def _columns(con: sqlite3.Connection, table: str) -> set[str]:
    return {r[1] for r in con.execute(f"PRAGMA table_info({table})")}


def _classify(con: sqlite3.Connection) -> FileInfo:
    version = int(con.execute("PRAGMA user_version").fetchone()[0])
    tables = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    if version > SCHEMA_VERSION:
        return FileInfo(FileKind.NEWER, version)
    if version >= 4:
        if tables >= V4_TABLES:
            names = {r[0] for r in con.execute("SELECT name FROM sqlite_master")}
            current = version == SCHEMA_VERSION and not missing_additions(names)
            return FileInfo(FileKind.CURRENT if current else FileKind.OLDER_V4, version)
        return FileInfo(FileKind.NOT_PARLEY, version, "it has no Parley tables")
    is_v3 = (
        {"sessions", "turns"} <= tables
        and "fork_idx" in _columns(con, "sessions")
        and "idx" in _columns(con, "turns")
    )
    if is_v3 and version in (0, 3):
        return FileInfo(FileKind.V3, 3)
    if version == 0 and not tables:
        return FileInfo(FileKind.NEW, 0)
    return FileInfo(FileKind.NOT_PARLEY, version, "it holds another program's data")


def not_chats(path: Path) -> ChatsFileIsFolder | NotSQLiteFile | None:
    """What ``path`` is when it cannot be a chats file at all, told by its kind and its
    first 16 bytes only (nothing in a folder is looked at; nothing is written).

    Args:
        path: where sessions.db should be.

    Returns:
        :class:`ChatsFileIsFolder` when it is a folder; :class:`NotSQLiteFile` when it
        does not start as an SQLite file does (an empty file with no ``-wal`` is a new
        file, not this); None otherwise (missing, or an SQLite file, sound or not).

    Raises:
        OSError: it cannot be read.
    """
    if path.is_dir():
        link = path.parent / os.readlink(path) if path.is_symlink() else None
        return ChatsFileIsFolder(path, link=link)
    if not path.exists():
        return None
    head = held.read(path, len(SQLITE_MAGIC))  # another Store here may have it open
    wal = path.with_name(path.name + "-wal")
    if not head and not (wal.exists() and wal.stat().st_size > 0):
        return None
    return NotSQLiteFile(path) if head != SQLITE_MAGIC else None


def inspect_file(path: Path) -> FileInfo:
    """Tell what kind of file ``path`` is, without writing to it.

    Raises:
        ChatsFileIsFolder: it is a folder (not looked into).
        NotSQLiteFile: it does not start as an SQLite file does (header check).
        DatabaseCorrupt: an SQLite header but the schema cannot be read.
        DatabaseReadOnly: the file cannot be opened for writing.
        CannotOpen: it cannot be read.
    """
    if not path.exists():
        return FileInfo(FileKind.NEW)
    refused = not_chats(path)
    if refused is not None:
        raise refused
    if not held.read(path, len(SQLITE_MAGIC)):  # empty, and no -wal (not_chats)
        return FileInfo(FileKind.NEW)
    # Read-only first: closing a read-write connection would checkpoint a v3 file's
    # -wal into it before its backup is taken (the backup comes first and holds the
    # -wal's content too), and write to a newer file that must stay untouched (a newer
    # format is refused, the file as it was).
    # Any failure is asked again read-write, whose answer is the one reported (a hot
    # rollback journal, for one, can only be rolled back by a writer).
    with contextlib.suppress(StoreError, sqlite3.Error):
        return _inspect_with(_readonly_uri(path), path)
    return _inspect_with(f"file:{quote(str(path))}?mode=rw", path)


def _readonly_uri(path: Path) -> str:
    from parley.core.store.upgrade.backup import readonly_uri

    return readonly_uri(path)


def _inspect_with(uri: str, path: Path) -> FileInfo:
    try:
        con = sqlite3.connect(uri, uri=True)
    except sqlite3.Error as exc:
        raise _open_error(exc, path) or DatabaseReadOnly(path) from exc
    try:
        return _classify(con)
    except sqlite3.DatabaseError as exc:
        err = _open_error(exc, path)
        if err is None:
            raise
        raise err from exc
    finally:
        con.close()


def _open_error(exc: sqlite3.Error, path: Path) -> StoreError | None:
    """The user-facing error for a failure to read ``path`` while classifying it."""
    code = primary_code(exc)
    if code in (SQLITE_CANTOPEN, SQLITE_READONLY, SQLITE_PERM) and not (
        os.access(path, os.W_OK) and os.access(path.parent, os.W_OK)
    ):
        return DatabaseReadOnly(path)  # e.g. a read-only filesystem: WAL files cannot be made
    if code is None:
        return DatabaseCorrupt(path)
    return translate(exc, path)


def upgrade_v3(path: Path, progress: Progress | None) -> Any:
    """Upgrade a v3 file in place with ``parley.core.store.upgrade.v3.upgrade_file`` (imported
    lazily).

    Returns:
        Its ``MigrationReport``.

    Raises:
        UpgradeUnavailable: this build has no v3 upgrade.
        StoreError: whatever the upgrade raises (it leaves the file as it was).
    """
    try:  # lazy: only old files need it
        v3 = importlib.import_module("parley.core.store.upgrade.v3")
    except ModuleNotFoundError as exc:
        if exc.name != "parley.core.store.upgrade.v3":
            raise
        raise UpgradeUnavailable(path, 3) from exc
    upgrade = getattr(v3, "upgrade_file", None)
    if upgrade is None:
        raise UpgradeUnavailable(path, 3)
    return upgrade(path, progress)


__all__ = [
    "ADDITIONS",
    "Addition",
    "FileInfo",
    "FileKind",
    "Migrated",
    "STEPS",
    "Step",
    "UpToDateReport",
    "inspect_file",
    "not_chats",
    "migrate",
    "missing_additions",
    "step",
    "upgrade_v3",
]

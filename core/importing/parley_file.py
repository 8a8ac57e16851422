"""Import a Parley database file (a sessions.db, a backup, a rescue copy): merged by ids.

``parley --import FILE`` and File ▸ Import come here when the file is an SQLite
database (:func:`is_database`: its first 16 bytes are SQLite's header), and the
window does when it brings back a rescue copy found at start
(``parley.core.recovery.rescued``). The file itself is never written: it is first
copied (SQLite's online backup API, from a read-only connection, so what its
``-wal`` holds comes too) into a private scratch folder, that copy is opened as a
store (``Store.open``: an older Parley's format is upgraded there, a file that is
not Parley's is refused with ``NotAParleyFile``) and merged into the open store
(``Store.merge_from``, ``parley.core.store.merge``): chats, messages, attached files
and compactions by id, so importing the same file twice adds nothing the second
time, and nothing already stored is overwritten (a reply cut off by the end of
Parley excepted: its complete copy replaces it).
"""

from __future__ import annotations

import asyncio
import shutil
import sqlite3
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import quote

from parley.core import private
from parley.core.store.errors import NotAParleyFile

if TYPE_CHECKING:
    from parley.core.store.async_store import AsyncStore
    from parley.core.store.merge import MergeReport
    from parley.core.store.store import Store

#: The first bytes of every SQLite 3 database file (sqlite.org/fileformat.html, 1.3).
SQLITE_HEADER = b"SQLite format 3\x00"


def is_database(head: bytes) -> bool:
    """True when ``head`` (a file's first bytes, at least 16) starts an SQLite database."""
    return head[:16] == SQLITE_HEADER


def report_text(report: MergeReport) -> str:
    """What a merge added, for people: ``"2 chats and 14 messages added, 1 cut-off reply
    completed, 1 attached file; 40 messages were here already."`` or, when nothing was
    new, ``"Nothing new: every chat and message of this Parley database is here
    already."``."""
    def n(count: int, word: str) -> str:
        return f"{count:,} {word}{'' if count == 1 else 's'}"

    parts = [n(k, w) for k, w in ((len(report.chat_ids), "chat"), (report.messages, "message"))
             if k]
    out = " and ".join(parts) + " added" if parts else ""
    more = []
    if report.completed:
        more.append("1 cut-off reply completed" if report.completed == 1
                    else f"{report.completed:,} cut-off replies completed")
    for count, word in ((report.files, "attached file"), (report.compactions, "compaction"),
                        (report.spaces, "space"), (report.drafts, "unsent message")):
        if count:
            more.append(n(count, word))
    text = ", ".join(p for p in [out, *more] if p)
    if not text:
        text = "Nothing new: every chat and message of this Parley database is here already"
    elif report.present:
        text += f"; {n(report.present, 'message')} {'was' if report.present == 1 else 'were'} " \
                "here already"
    text += "."
    if report.branched:
        text += (f" {n(report.branched, 'message')} went into another branch of "
                 f"{'its chat' if report.branched == 1 else 'their chats'}: the chat went on "
                 "differently here (‹ › under the message where they part shows them).")
    if report.left_out:
        text += (f" {n(report.left_out, 'message')} {'was' if report.left_out == 1 else 'were'} "
                 "left out: the message before it was deleted here.")
    return text[0].upper() + text[1:]


async def import_database(store: AsyncStore, path: Path, *,
                          dry_run: bool = False) -> MergeReport:
    """Merge the Parley database at ``path`` into ``store`` (module docstring).

    Args:
        store: the open destination (SQLite or PostgreSQL).
        path: the Parley database file; only read.
        dry_run: only say what would be added (``Store.merge_from``); nothing changes.

    Returns:
        What was added (``MergeReport``; ``changed`` False when it all was here).

    Raises:
        NotAParleyFile: the file is an SQLite database but not Parley's, or damaged.
        NewerFormat: it was written by a newer Parley.
        StoreError: the destination's errors (disk full, locked…); nothing was written.
        OSError: the file or the scratch folder cannot be read or written.
    """
    scratch = await asyncio.to_thread(tempfile.mkdtemp, prefix="parley-import-")
    try:
        source = await asyncio.to_thread(_open_copy, path, Path(scratch))
        try:
            return await store.merge_from(source, dry_run=dry_run)
        finally:
            await asyncio.to_thread(source.close)
    finally:
        await asyncio.to_thread(shutil.rmtree, scratch, True)


def _open_copy(path: Path, scratch: Path) -> Store:
    """Copy ``path`` into ``scratch`` (made private) and open the copy as a store."""
    from parley.core.store.store import Store  # SQLAlchemy: not imported at start-up

    private.private_dir(scratch)
    copy = scratch / "sessions.db"
    _copy(path, copy)
    return Store.open(copy)


def _copy(path: Path, dest: Path) -> None:
    """A consistent copy of the database at ``path`` (read-only; its WAL included)."""
    try:
        src = sqlite3.connect(f"file:{quote(str(path.resolve()))}?mode=ro", uri=True)
    except sqlite3.Error as exc:
        raise NotAParleyFile(path, f"it cannot be read: {exc}") from exc
    try:
        dst = sqlite3.connect(dest)
        try:
            src.backup(dst)
        except sqlite3.DatabaseError as exc:
            raise NotAParleyFile(path, f"it cannot be read: {exc}") from exc
        finally:
            dst.close()
    finally:
        src.close()
    private.narrow(dest, private.FILE_MODE)

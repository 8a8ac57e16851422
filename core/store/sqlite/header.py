"""Is sessions.db still a whole SQLite file? Its size and 100-byte header, read raw.

``PRAGMA quick_check`` cannot tell an emptied file from a new one: SQLite takes
a 0-byte file for an empty database, and a file cut short reads as zeros past
its end, so ``truncate -s 0`` (or a file cut to half) can pass it while the
chats are gone. The header says what the file should be (SQLite's documented
file format, https://www.sqlite.org/fileformat2.html#the_database_header):

* bytes 0-15: the magic string ``"SQLite format 3\\0"``;
* bytes 16-17: the page size (a power of two from 512 to 32768, or 1 for 65536);
* bytes 28-31: the database size in pages, valid when bytes 92-95 (version-valid-for)
  equal bytes 24-27 (the change counter).

A file that Parley has written is never empty (setting WAL mode writes page 1),
so :func:`problem` names what is wrong with one: empty, not an SQLite header,
an impossible page size, or shorter than its header says. Reading it costs one
``stat`` and one 100-byte read. :func:`wal_page_one` reads the newest committed
page 1 from the ``-wal``: after a checkpoint the file's header is that one. A file
shorter than its header says whose missing pages are all in the ``-wal`` is another
process's checkpoint under way, not damage (:func:`wal_pages`).
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path

from parley.core.store.sqlite import held

MAGIC = b"SQLite format 3\x00"
HEADER_SIZE = 100


def file_id(head: bytes | None) -> int:
    """The "application ID" of a header (bytes 68-71, big-endian, signed): Parley puts a
    random one in each sessions.db it makes (``parley.core.store.sqlite.overwrite.new_file_id``),
    so a header with another, non-zero one is another database. 0 when unreadable."""
    if not head or len(head) < 72:
        return 0
    return int.from_bytes(head[68:72], "big", signed=True)


def page_size(header: bytes) -> int | None:
    """The page size the header gives (bytes), or None when it is not a valid one."""
    raw = int.from_bytes(header[16:18], "big")
    size = 65536 if raw == 1 else raw
    if size < 512 or size > 65536 or size & (size - 1):
        return None
    return size


def problem(path: Path) -> str | None:
    """What is wrong with ``path`` as an SQLite file, judged by its size and header.

    Args:
        path: the database file (read, never written).

    Returns:
        None when the header is sound and the file is as long as it says; else
        the words for the person ("it is empty", "it was cut short: 17 of 34
        pages are left", …). A file that cannot be read at all is reported as
        such; a missing file is None (``parley.core.store.sqlite.faults`` reports that).
    """
    for wait_s in _SETTLE_S:
        try:
            size = os.path.getsize(path)
            header = held.read(path, HEADER_SIZE)  # never drops SQLite's locks (held)
        except FileNotFoundError:
            return None
        except OSError as exc:
            return f"it cannot be read ({exc.strerror or exc})"
        if not _looks_short(size, header) or _wal_holds_the_rest(path, size, header):
            return _verdict(size, header, checkpointing=True)
        # Another process's checkpoint writes page 1 (the new page count) before the
        # pages past the old end: the file reads short for a moment. Cut short only if
        # it stays so.
        time.sleep(wait_s)
    return _verdict(size, header)


#: Waits (seconds) before reading a file that looks cut short again: 0.75 s in all.
_SETTLE_S = (0.05, 0.1, 0.2, 0.4, 0.0)


def _looks_short(size: int, header: bytes) -> bool:
    pages = page_size(header) if len(header) >= HEADER_SIZE else None
    if not pages or not header.startswith(MAGIC):
        return False
    counted = int.from_bytes(header[28:32], "big")
    return header[92:96] == header[24:28] and bool(counted) and size < counted * pages


def _wal_holds_the_rest(path: Path, size: int, header: bytes) -> bool:
    """True when every page past the end of a short-looking file is in the ``-wal``'s
    committed frames: a checkpoint is copying them (it copies pages in ascending order,
    page 1 with the new page count first), and SQLite reads them from the WAL until it
    has. A file cut short by another program lacks pages the WAL does not hold."""
    pages = page_size(header)
    if not pages:
        return False
    counted = int.from_bytes(header[28:32], "big")
    missing = range(size // pages + 1, counted + 1)
    held = wal_pages(path)
    return bool(held) and all(page in held for page in missing)


def _verdict(size: int, header: bytes, checkpointing: bool = False) -> str | None:
    """The words for what :func:`problem` found in a file of ``size`` bytes and ``header``
    (``checkpointing``: its missing pages are in the WAL, so it is not cut short)."""
    if size == 0:
        return "it is empty: another program cut it to 0 bytes"
    if len(header) < HEADER_SIZE or not header.startswith(MAGIC):
        return "it no longer starts with an SQLite header: another program wrote over it"
    pages = page_size(header)
    if pages is None:
        return "its header gives an impossible page size: another program wrote over it"
    counted = int.from_bytes(header[28:32], "big")
    valid = header[92:96] == header[24:28]
    if valid and counted and size < counted * pages and not checkpointing:
        return (f"it was cut short: {size // pages} of its {counted} pages are left "
                "(another program shortened it)")
    if size % pages:
        return "its size is not a whole number of pages: another program cut or wrote it"
    return None


#: The WAL's 32-byte header and each frame's 24-byte header (SQLite's file format,
#: https://www.sqlite.org/fileformat2.html#wal_file_format).
WAL_HEADER = 32
FRAME_HEADER = 24
_WAL_MAGIC = (0x377F0682, 0x377F0683)


def wal_page_ones(db: Path) -> tuple[bool, set[bytes]]:
    """Whether ``db``'s ``-wal`` holds committed frames, and the first 100 bytes of page 1
    as of each of its commits (read as :func:`wal_page_one` reads them). A checkpoint
    copies the frames up to the oldest snapshot a reader still holds, so the file's page
    1 may be any of these, not only the newest, while another connection reads.
    """
    committed, found, pending = False, set(), None
    for number, commit, head in _frames(db):
        if number == 1:
            pending = head
        if commit:
            committed = True
            if pending is not None:
                found.add(pending)
    return committed, found


def wal_page_one(db: Path) -> tuple[bool, bytes | None]:
    """Whether ``db``'s ``-wal`` holds committed frames, and the first 100 bytes of page 1
    as of its last commit.

    Frames are read while their salts match the WAL header's (frames of an older
    generation, left after the WAL started over, have other salts); only frames up to
    the last commit frame (one whose "database size after commit" is not zero)
    count. Checksums are not recomputed: a torn last frame is not a commit frame.
    Reads one 24-byte header per frame (the WAL is bounded by the autocheckpoint).

    Returns:
        ``(any committed frame, page 1's header or None)``; ``(False, None)`` when the
        WAL is missing, empty or not a WAL (a checkpoint may have emptied or removed it).
    """
    committed, found, pending = False, None, None
    for number, commit, head in _frames(db):
        if number == 1:
            pending = head
        if commit:  # a commit: what came before holds
            committed, found = True, pending if pending is not None else found
    return committed, found


def wal_pages(db: Path) -> frozenset[int]:
    """The page numbers in ``db``'s ``-wal`` frames up to its last commit, read as
    :func:`wal_page_one` reads them; empty when the WAL is missing, empty or not a WAL."""
    committed: frozenset[int] = frozenset()
    held: set[int] = set()
    for number, commit, _ in _frames(db):
        held.add(number)
        if commit:
            committed = frozenset(held)
    return committed


def _frames(db: Path) -> Iterator[tuple[int, bool, bytes | None]]:
    """``(page number, is a commit frame, page 1's first 100 bytes or None)`` for each
    frame of ``db``'s ``-wal`` whose salts match its header's; nothing when it cannot
    be read."""
    try:
        with open(f"{db}-wal", "rb") as fh:
            head = fh.read(WAL_HEADER)
            if len(head) < WAL_HEADER or int.from_bytes(head[:4], "big") not in _WAL_MAGIC:
                return
            size = int.from_bytes(head[8:12], "big")
            salts = head[16:24]
            offset = WAL_HEADER
            while True:
                fh.seek(offset)
                frame = fh.read(FRAME_HEADER)
                if len(frame) < FRAME_HEADER or frame[8:16] != salts:
                    return
                number = int.from_bytes(frame[:4], "big")
                page_one = fh.read(HEADER_SIZE) if number == 1 else None
                yield number, bool(int.from_bytes(frame[4:8], "big")), page_one
                offset += FRAME_HEADER + size
    except OSError:
        return

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
``stat`` and one 100-byte read.
"""

from __future__ import annotations

import os
from pathlib import Path

MAGIC = b"SQLite format 3\x00"
HEADER_SIZE = 100


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
    try:
        size = os.path.getsize(path)
        with open(path, "rb") as fh:
            header = fh.read(HEADER_SIZE)
    except FileNotFoundError:
        return None
    except OSError as exc:
        return f"it cannot be read ({exc.strerror or exc})"
    if size == 0:
        return "it is empty: another program cut it to 0 bytes"
    if len(header) < HEADER_SIZE or not header.startswith(MAGIC):
        return "it no longer starts with an SQLite header: another program wrote over it"
    pages = page_size(header)
    if pages is None:
        return "its header gives an impossible page size: another program wrote over it"
    counted = int.from_bytes(header[28:32], "big")
    valid = header[92:96] == header[24:28]
    if valid and counted and size < counted * pages:
        return (f"it was cut short: {size // pages} of its {counted} pages are left "
                "(another program shortened it)")
    if size % pages:
        return "its size is not a whole number of pages: another program cut or wrote it"
    return None

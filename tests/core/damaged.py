"""Test helper: make a sessions.db whose full-text index is damaged (chats still read)."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

PAGE = 4096


def damage_search_index(path: Path) -> None:
    """Overwrite the leaf pages of the full-text index of ``path`` with garbage.

    Opening the file and reading chats still work; a search meets the damage
    (SQLITE_CORRUPT), as with a disk error in the middle of a real file (its
    modification time is kept, as a disk error keeps it).
    """
    con = sqlite3.connect(path)
    pages = [r[0] for r in con.execute(
        "SELECT pageno FROM dbstat WHERE name = 'search_fts_data' AND pagetype = 'leaf'"
    )]
    con.close()
    assert len(pages) > 3, "too small an index to damage"
    data = bytearray(path.read_bytes())
    for n in pages:
        data[(n - 1) * PAGE : n * PAGE] = b"\x5a" * PAGE
    st = os.stat(path)
    path.write_bytes(bytes(data))
    # As a failing disk does it: the file's times say nothing was written (so only a
    # read that meets the damage finds it; parley.core.store.sqlite.overwrite sees no outside
    # write).
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))


def pages_of(path: Path, table: str, pagetype: str = "leaf") -> list[int]:
    """The page numbers (1-based) of ``table``'s b-tree pages of ``pagetype`` in ``path``."""
    con = sqlite3.connect(path)
    try:
        return [r[0] for r in con.execute(
            "SELECT pageno FROM dbstat WHERE name = ? AND pagetype = ? ORDER BY pageno",
            (table, pagetype))]
    finally:
        con.close()


def overwrite_pages(path: Path, pages: list[int], fill: bytes = b"\x5a") -> None:
    """Write garbage over ``pages`` of ``path`` in place, through a file handle of its own
    (like ``dd conv=notrunc``): the file keeps its inode and its size."""
    with open(path, "r+b") as fh:
        for n in pages:
            fh.seek((n - 1) * PAGE)
            fh.write(fill * PAGE)
        fh.flush()
        os.fsync(fh.fileno())

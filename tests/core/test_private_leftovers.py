"""Files Parley leaves beside sessions.db are private: made 0600, and narrowed at start.

SQLite only: files beside sessions.db.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from parley.core.recovery.damaged_file import set_aside
from parley.core.store import Store
from parley.core.store.sqlite.damage import mark, marker_path


def _mode(path: Path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


def test_leftovers_of_an_older_parley_are_narrowed_when_the_store_opens(tmp_path: Path) -> None:
    db = tmp_path / "sessions.db"
    Store.open(db).close()
    loose = [tmp_path / n for n in ("sessions.db.corrupt-20260101-101010",
                                    "sessions.db.corrupt-20260101-101010-wal",
                                    "sessions.db.corrupt-20260101-101010-shm",
                                    "sessions.db.rescued-20260101-101010", "parley.lock")]
    for p in loose:
        p.write_bytes(b"x")
        os.chmod(p, 0o644)
    other = tmp_path / "notes.txt"  # not Parley's: left alone
    other.write_text("mine")
    os.chmod(other, 0o644)
    Store.open(db).close()
    assert {p.name: _mode(p) for p in loose} == {p.name: 0o600 for p in loose}
    assert _mode(other) == 0o644


def test_the_marker_and_a_file_kept_aside_are_made_private(tmp_path: Path) -> None:
    db = tmp_path / "sessions.db"
    Store.open(db).close()
    for p in (db, Path(f"{db}-wal"), Path(f"{db}-shm")):
        p.touch()
        os.chmod(p, 0o644)
    old = os.umask(0o022)
    try:
        mark(db, "damaged")
    finally:
        os.umask(old)
    assert _mode(marker_path(db)) == 0o600
    aside = set_aside(db)
    assert aside is not None
    for p in (aside, Path(f"{aside}-wal"), Path(f"{aside}-shm")):
        assert _mode(p) == 0o600, p

"""Rescue copies recorded and found again (parley.core.recovery.rescued), on real files."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from parley.core.recovery import rescued
from parley.core.store import Store
from tests.disk import fill


def _db(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with Store.open(path) as store:
        store.create_session(title="a chat")
    return path


def test_recorded_and_beside_copies_are_found_until_handled(tmp_path: Path) -> None:
    db = _db(tmp_path / "data" / "sessions.db")
    copy = tmp_path / "other disk" / "rescue.db"
    copy.parent.mkdir()
    shutil.copy(db, copy)
    beside = db.with_name("sessions.db.rescued-20261201-101010")
    shutil.copy(db, beside)
    db.with_name("sessions.db.rescued-20261201-101010-wal").write_bytes(b"")
    link = db.with_name("sessions.db.rescued-20261201-111111")
    link.symlink_to(copy)  # not a regular file: not offered
    not_sqlite = tmp_path / "notes.txt"
    not_sqlite.write_text("hello")

    assert rescued.record(db, copy, "unsaved") == db.parent / rescued.RECORD_NAME
    assert rescued.record(db, not_sqlite, "unsaved") is not None
    assert oct((db.parent / rescued.RECORD_NAME).stat().st_mode & 0o777) == "0o600"
    found = {c.path: c.why for c in rescued.found(db)}
    assert found == {copy.resolve(): "unsaved", beside.resolve(): "moved"}

    rescued.handled(db, copy)
    assert [c.path for c in rescued.found(db)] == [beside.resolve()]
    shutil.copy(db, copy)  # a newer copy saved under the same name: offered again
    os.utime(copy, ns=(1, 10**18))
    assert copy.resolve() in [c.path for c in rescued.found(db)]


def test_a_full_data_folder_records_in_the_home_folder(
    small_disk: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    db = _db(small_disk / "sessions.db")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    (tmp_path / "home").mkdir()
    copy = tmp_path / "rescue.db"
    shutil.copy(db, copy)
    fill(small_disk)  # the disk holding sessions.db is full (a real 4 MB tmpfs)
    where = rescued.record(db, copy, "unsaved")
    assert where == tmp_path / "home" / rescued.FALLBACK_NAME
    assert not (small_disk / rescued.RECORD_NAME).exists()
    assert [c.path for c in rescued.found(db)] == [copy.resolve()]

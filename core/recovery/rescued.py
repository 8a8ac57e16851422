"""Rescue copies of the chats saved elsewhere, found again at the next start.

A rescue copy is a complete sessions.db saved when sessions.db itself could not
take what Parley held: on quitting with replies not saved yet (the disk full, the
file locked: the person picks a place, often another disk;
``parley.gui.database.save_status``), or when sessions.db was deleted or replaced
while open (``<name>.rescued-<time>`` beside it: ``parley.core.store.sqlite.faults``,
``parley.gui.database.rescue``). Each is recorded (:func:`record`) in
``rescued.json`` in the data folder — or, when that cannot be written (its disk is
full), in ``~/.parley-rescued.json`` in the user's home folder — so
the next start can offer to bring its chats back (:func:`found`;
``parley.core.importing.parley_file`` merges them by ids) or, when sessions.db is
missing, point to it.

Copies ``<name>.rescued-*`` beside sessions.db are found without a record. A copy
the person brought back or set aside is marked :func:`handled` (by its path, size
and time, so a newer copy under the same name is offered again). Only regular files
that start like an SQLite database are offered.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import stat
import time
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

from parley.core import private

log = logging.getLogger(__name__)

RECORD_NAME = "rescued.json"
#: Where the record goes when the data folder cannot be written (its disk is full).
FALLBACK_NAME = ".parley-rescued.json"
Why = Literal["unsaved", "moved"]
_HEADER = b"SQLite format 3\x00"
_KEPT = 50  # records and handled marks kept (the newest)


@dataclass(frozen=True, slots=True)
class RescuedCopy:
    """A rescue copy on disk.

    Attributes:
        path: the file (a complete sessions.db).
        made_at: when it was written (local time, from the file).
        why: ``unsaved`` (replies not saved when Parley quit) or ``moved``
            (sessions.db was deleted or replaced while open).
    """

    path: Path
    made_at: datetime
    why: Why


def _records(db: Path) -> list[Path]:
    return [db.parent / RECORD_NAME, Path.home() / FALLBACK_NAME]


def _load(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _save(path: Path, data: dict[str, Any]) -> None:
    """Write ``data`` whole or not at all (a new file renamed over the old; ``0600``)."""
    tmp = path.with_name(f"{path.name}.new")
    try:
        private.write_private_text(tmp, json.dumps(data, indent=1))
        os.replace(tmp, path)
    except OSError:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise


def record(db: Path, copy: Path, why: Why) -> Path | None:
    """Note that a rescue copy of ``db``'s chats was saved at ``copy``.

    Args:
        db: sessions.db (its folder holds the record).
        copy: the rescue copy.
        why: see :class:`RescuedCopy`.

    Returns:
        The record file written (the data folder's, else the home folder's), or
        None when neither could be written (logged; the copy is still where it is).
    """
    entry = {"path": str(Path(copy).resolve()), "why": why, "at": int(time.time() * 1000),
             "db": str(Path(db).resolve())}
    for where in _records(db):
        data = _load(where)
        copies = [c for c in data.get("copies", []) if isinstance(c, dict)
                  and c.get("path") != entry["path"]]
        data["copies"] = [*copies, entry][-_KEPT:]
        try:
            _save(where, data)
        except OSError as exc:
            log.warning("the rescue copy %s could not be recorded in %s: %s", copy, where, exc)
            continue
        return where
    return None


def _key(path: Path, st: os.stat_result) -> str:
    return f"{path}|{st.st_size}|{st.st_mtime_ns}"


def _usable(path: Path) -> os.stat_result | None:
    """The file's stat when it is a regular file starting like an SQLite database."""
    try:
        st = path.lstat()
        if not stat.S_ISREG(st.st_mode):
            return None
        with path.open("rb") as f:
            return st if f.read(16) == _HEADER else None
    except OSError:
        return None


def found(db: Path) -> list[RescuedCopy]:
    """The rescue copies of ``db``'s chats not brought back or set aside yet, newest first.

    Args:
        db: sessions.db (it may be missing).

    Returns:
        Recorded copies still on disk (of this sessions.db) and ``<name>.rescued-*``
        files beside it; nothing is opened but their first 16 bytes.
    """
    db = Path(db)
    handled_keys: set[str] = set()
    candidates: dict[Path, Why] = {}
    for where in _records(db):
        data = _load(where)
        handled_keys.update(h for h in data.get("handled", []) if isinstance(h, str))
        for c in data.get("copies", []):
            if isinstance(c, dict) and isinstance(c.get("path"), str) and \
                    c.get("db") in (None, str(db.resolve())):
                candidates[Path(c["path"])] = "moved" if c.get("why") == "moved" else "unsaved"
    with contextlib.suppress(OSError):
        for entry in os.scandir(db.parent):
            if entry.name.startswith(f"{db.name}.rescued-") and not entry.name.endswith(
                    ("-wal", "-shm", "-journal")):
                candidates.setdefault(Path(entry.path).resolve(), "moved")
    out: list[RescuedCopy] = []
    for path, why in candidates.items():
        st = _usable(path)
        if st is not None and _key(path, st) not in handled_keys:
            out.append(RescuedCopy(path, datetime.fromtimestamp(st.st_mtime), why))
    return sorted(out, key=lambda c: c.made_at, reverse=True)


def handled(db: Path, copy: Path) -> None:
    """Do not offer ``copy`` again (brought back, or the person said so); the file stays.

    Best effort: when no record can be written, it is offered again next time.
    """
    st = _usable(Path(copy))
    if st is None:
        return
    key = _key(Path(copy).resolve(), st)
    for where in _records(db):
        data = _load(where)
        if not data and where != _records(db)[0]:
            continue  # no fallback record: nothing there to mark
        data["handled"] = [*[h for h in data.get("handled", []) if h != key], key][-_KEPT:]
        with contextlib.suppress(OSError):
            _save(where, data)

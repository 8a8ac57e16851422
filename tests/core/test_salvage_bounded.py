"""Salvage by rowid ranges (no working ``.recover``) stays bounded, can be stopped, and a
salvage cut off — stopped, failed or its process killed — leaves the damaged file in place.

SQLite only: the salvage of a damaged file.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from parley.core.content import TextBlock, Turn
from parley.core.recovery import damaged_file
from parley.core.store import Store
from parley.core.store.errors import DatabaseCorrupt
from parley.core.store.sqlite import salvage as S
from parley.core.store.sqlite.damage import mark, marker_path
from tests.core.damaged import overwrite_pages, pages_of

ROOT = Path(__file__).resolve().parents[2]


def _fill(db: Path, chats: int = 3, turns: int = 40, size: int = 500) -> None:
    with Store.open(db) as store:
        store.set_setting("theme", "dark")
        store.set_state("ui.last", {"x": 1})
        for c in range(chats):
            sid = store.create_session(title=f"chat {c}").id
            for i in range(turns):
                role = "user" if i % 2 == 0 else "assistant"
                store.append_turn(sid, Turn(role, [TextBlock(f"{c}/{i} " + "z" * size)]))


def _turns(db: Path) -> int:
    with Store.open(db) as store:
        return sum(len(store.get_turns(s.id))
                   for s in store.list_sessions(include_archived=True, limit=1000))


def _salvage_in_thread(damaged: Path, dest: Path, limit_s: float) -> S.SalvageReport:
    """Run the rowid-range salvage; a search that does not end is stopped and fails."""
    stop = threading.Event()
    result: list[object] = []

    def work() -> None:
        try:
            scratch = dest.with_name(dest.name + ".rows")
            S.read_rows(damaged, scratch, stop=stop)
            result.append(scratch)
        except BaseException as exc:  # noqa: BLE001 - handed to the test
            result.append(exc)

    worker = threading.Thread(target=work)
    worker.start()
    worker.join(limit_s)
    if worker.is_alive():
        stop.set()
        worker.join()
        raise AssertionError(f"the salvage search did not end within {limit_s} s")
    if isinstance(result[0], BaseException):
        raise result[0]
    return S.salvage(damaged, dest)


def test_first_pages_of_small_tables_damaged_the_salvage_ends_and_keeps_the_chats(
    tmp_path: Path,
) -> None:
    # The tester's case: dd over pages 4-7 — the only (first) page of settings and app_state.
    db = tmp_path / "sessions.db"
    _fill(db)
    damaged = pages_of(db, "settings") + pages_of(db, "app_state")
    assert damaged and max(damaged) < min(pages_of(db, "turns"))
    overwrite_pages(db, damaged)
    report = _salvage_in_thread(db, tmp_path / "new.db", limit_s=60)
    assert report.turns == 120 and report.chats == 3  # every chat and turn is back


def test_the_last_page_of_a_table_damaged_the_rest_is_salvaged(tmp_path: Path) -> None:
    # max(rowid) fails: the upper end is bounded by the file's size, not 2**63.
    db = tmp_path / "sessions.db"
    _fill(db, chats=2, turns=120)
    overwrite_pages(db, pages_of(db, "turns")[-1:])
    report = _salvage_in_thread(db, tmp_path / "new.db", limit_s=60)
    assert 200 < report.turns < 240


def test_a_table_whose_failing_ranges_take_too_long_gives_them_up(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    db = tmp_path / "sessions.db"
    _fill(db, chats=2, turns=120)
    overwrite_pages(db, pages_of(db, "turns")[-1:])
    monkeypatch.setattr(S, "FAIL_BUDGET_S", 0.0)  # the first failure ends the search
    monkeypatch.setattr(S, "WINDOW", 16)  # the ranges before the damage are read whole
    report = _salvage_in_thread(db, tmp_path / "new.db", limit_s=60)
    assert 150 < report.turns < 240  # what was read before is kept


def test_a_stopped_salvage_changes_nothing(tmp_path: Path) -> None:
    db = tmp_path / "sessions.db"
    _fill(db)
    overwrite_pages(db, pages_of(db, "settings"))
    mark(db, "damaged")
    before = db.read_bytes()
    stop = threading.Event()
    stop.set()
    with pytest.raises(S.SalvageCancelled) as info:
        damaged_file.salvage_into(db, None, stop=stop)
    assert "stopped" in info.value.message
    assert db.read_bytes() == before
    assert marker_path(db).exists()
    assert not [p for p in tmp_path.iterdir() if "recover" in p.name or "corrupt" in p.name]


def test_a_salvage_keeps_the_damaged_file_aside_and_drops_the_marker(tmp_path: Path) -> None:
    db = tmp_path / "sessions.db"
    _fill(db)
    overwrite_pages(db, pages_of(db, "settings"))
    mark(db, "damaged")
    before = db.read_bytes()
    aside, report = damaged_file.salvage_into(db, None)
    assert aside is not None and aside.read_bytes() == before
    assert report.turns == 120 and _turns(db) == 120
    assert not marker_path(db).exists()
    assert not [p for p in tmp_path.iterdir() if "recovering" in p.name]
    assert oct(aside.stat().st_mode & 0o777) == oct(0o600)


KILLED = """
import sys
from pathlib import Path
from parley.core.recovery import damaged_file
print("go", flush=True)
damaged_file.salvage_into(Path(sys.argv[1]), None)
print("done", flush=True)
"""


@pytest.mark.parametrize("delay_s", [0.0, 0.15, 0.4, 0.8])
def test_a_salvage_killed_midway_leaves_the_damaged_file_for_the_next_start(
    tmp_path: Path, delay_s: float,
) -> None:
    db = tmp_path / "sessions.db"
    _fill(db, chats=6, turns=200, size=900)
    overwrite_pages(db, pages_of(db, "settings") + pages_of(db, "app_state"))
    mark(db, "found damaged while open")
    before = db.read_bytes()
    proc = subprocess.Popen([sys.executable, "-c", KILLED, str(db)], cwd=ROOT,
                            stdout=subprocess.PIPE, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert proc.stdout is not None
    assert proc.stdout.readline().strip() == b"go"
    time.sleep(delay_s)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    finished = b"done" in proc.stdout.read()
    assert db.exists()  # never a moment without the chats' file
    if finished:  # the salvage won the race: the new file is complete
        assert _turns(db) == 1200
        return
    assert db.read_bytes() == before  # the damaged file, as it was
    with pytest.raises(DatabaseCorrupt):  # the next start: the recovery page again
        Store.open(db)
    aside, report = damaged_file.salvage_into(db, None)  # and salvaging again works
    assert report.turns == 1200 and aside is not None


def test_an_older_salvage_cut_off_after_moving_the_file_aside_is_offered_again(
    tmp_path: Path,
) -> None:
    # What an older Parley left: the damaged file kept aside, the marker, no sessions.db.
    db = tmp_path / "sessions.db"
    _fill(db)
    overwrite_pages(db, pages_of(db, "settings"))
    mark(db, "damaged")
    before = db.read_bytes()
    aside = damaged_file.set_aside(db)
    assert aside is not None
    (tmp_path / "sessions.db.recovered.partial").write_bytes(b"")
    with pytest.raises(DatabaseCorrupt):
        Store.open(db)  # not a new, empty file
    assert db.read_bytes() == before and not aside.exists()


def test_start_fresh_and_restore_never_leave_no_file(tmp_path: Path) -> None:
    from parley.core.store.sqlite import backups as B

    db = tmp_path / "sessions.db"
    _fill(db)
    backup = B.make_backup(db).path
    overwrite_pages(db, pages_of(db, "settings"))
    aside = damaged_file.restore_backup(db, backup)
    assert aside is not None and _turns(db) == 120
    aside2 = damaged_file.start_fresh(db)
    assert aside2 is not None and _turns(db) == 0
    assert not [p for p in tmp_path.iterdir() if "recovering" in p.name]

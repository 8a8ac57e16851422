"""Upgrading generated v3 files: the rules of parley.core.store.upgrade.v3, point by point.

The v3 file is read with plain sqlite3 before (tests.v3gen.read_v3 / the
generator's own record) and the result through the v4 Store API after; every
session, turn and block is compared, against expectations written separately
from the migration's converter (tests.v3gen.expected_blocks).

SQLite only: the v3 upgrade works on files only.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from parley.core.content import CompactSummaryBlock, TextBlock, Usage
from parley.core.store import schema
from parley.core.store.errors import MigrationBackupFailed, MigrationFailed, NewerFormat
from parley.core.store.schema import DEFAULT_SPACE_ID
from parley.core.store.store import Store
from parley.core.store.upgrade import steps as v3_steps
from parley.core.store.upgrade.v3 import rollback_instructions, upgrade_file
from tests.v3gen import (
    BIG_MARKER,
    RTL_AR,
    RTL_HE,
    WAL_MARKER,
    GeneratedV3,
    check_everything,
    generate,
    read_v3,
)

ROOT = Path(__file__).resolve().parents[2]
BAK = ".parley-pre-v4.bak"


def digest(path: Path) -> dict[str, str | None]:
    """Hashes of a database's files (main, -wal, -journal): 'not one byte changed'."""
    out: dict[str, str | None] = {}
    for suffix in ("", "-wal", "-journal"):
        p = Path(f"{path}{suffix}")
        out[suffix] = hashlib.sha256(p.read_bytes()).hexdigest() if p.exists() else None
    return out


def parley_files(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if not p.name.endswith("-shm"))


def search_ids(store: Store, query: str) -> set[tuple[str, str | None]]:
    return {(h.session_id, h.turn_id) for h in store.search(query, limit=200)}


# --- fixtures ------------------------------------------------------------------------


def fresh(tmp: Path, **kw: Any) -> GeneratedV3:
    tmp.mkdir(parents=True, exist_ok=True)
    return generate(tmp / "sessions.db", seed=kw.pop("seed", 11), **kw)


@pytest.fixture(scope="module")
def migrated(tmp_path_factory: pytest.TempPathFactory):
    """A v3 file with every quirk (WAL content pending), upgraded once, opened as v4."""
    gen = fresh(tmp_path_factory.mktemp("v3"))
    assert gen.expected is not None and gen.wal_only
    main_only = gen.path.with_name("main-only.db")
    shutil.copyfile(gen.path, main_only)  # what a plain file copy would have kept
    calls: list[tuple[int, int]] = []
    report = upgrade_file(gen.path, progress=lambda d, t: calls.append((d, t)))
    store = Store.open(gen.path)
    yield SimpleNamespace(gen=gen, snap=gen.expected, report=report, store=store,
                          calls=calls, main_only=main_only)
    store.close()


# --- 1. backup -------------------------------------------------------------------------


def test_backup_is_a_v3_copy_with_the_wal_only_rows(migrated) -> None:
    gen, report = migrated.gen, migrated.report
    assert report.backup_path == gen.path.with_name("sessions.db" + BAK)
    lacking = read_v3(migrated.main_only)  # the quirk is real: the main file alone lacks them
    assert gen.wal_only_sessions.isdisjoint(lacking.sessions)
    backup = read_v3(report.backup_path)
    assert backup == migrated.snap  # every row, WAL-only ones included
    assert {(s, t.idx) for s in gen.wal_only_sessions for t in backup.turns[s]} <= gen.wal_only
    con = sqlite3.connect(report.backup_path)
    assert con.execute("PRAGMA user_version").fetchone()[0] == 3
    assert con.execute("PRAGMA journal_mode").fetchone()[0] == "delete"  # one file
    con.close()


def test_existing_backup_is_never_overwritten(tmp_path: Path) -> None:
    gen = fresh(tmp_path / "data")
    old = gen.path.with_name("sessions.db" + BAK)
    old.write_bytes(b"an older backup the user keeps")
    report = upgrade_file(gen.path)
    assert old.read_bytes() == b"an older backup the user keeps"
    assert report.backup_path == gen.path.with_name("sessions.db.parley-pre-v4.1.bak")
    assert read_v3(report.backup_path) == gen.expected


def test_backup_failure_disk_full_leaves_file_untouched(tmp_path: Path) -> None:
    """The copy hits a file-size limit (as on a full disk): nothing changes (point 1)."""
    gen = fresh(tmp_path / "data")
    before = digest(gen.path)
    script = textwrap.dedent(f"""
        import resource, signal, sys
        sys.path.insert(0, {str(ROOT)!r})
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # write() fails with EFBIG instead
        resource.setrlimit(resource.RLIMIT_FSIZE, (200_000, 200_000))
        from parley.core.store.upgrade.v3 import upgrade_file
        from parley.core.store.errors import MigrationBackupFailed
        try:
            upgrade_file({str(gen.path)!r})
        except MigrationBackupFailed as exc:
            print("FAILED:", exc)
    """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         timeout=60)
    assert "FAILED:" in out.stdout, out.stderr
    assert "Nothing was changed" in out.stdout and str(gen.path) in out.stdout
    assert digest(gen.path) == before
    assert parley_files(tmp_path / "data") == ["sessions.db", "sessions.db-wal"]
    assert read_v3(gen.path) == gen.expected


def test_too_little_free_space_is_refused_before_copying(tmp_path: Path, monkeypatch) -> None:
    """The free space is checked first; the message gives both sizes and what they are."""
    import shutil as shutil_module

    from parley.core.store.upgrade import backup as v3_backup

    gen = fresh(tmp_path / "data")
    before = digest(gen.path)
    usage = shutil_module.disk_usage(tmp_path)
    monkeypatch.setattr(v3_backup.shutil, "disk_usage",
                        lambda _p: usage._replace(free=3 * 2**20))
    with pytest.raises(MigrationBackupFailed) as err:
        upgrade_file(gen.path)
    assert "the disk has 3 MB free; the copy needs about" in err.value.message
    assert "the file's size and 16 MB to spare" in err.value.message
    assert digest(gen.path) == before
    assert not [n for n in parley_files(tmp_path / "data") if BAK in n]


def test_backup_failure_unwritable_partial_leaves_file_untouched(tmp_path: Path) -> None:
    gen = fresh(tmp_path / "data", journal_mode="delete")
    blocker = gen.path.with_name("sessions.db" + BAK + ".partial")
    blocker.mkdir()  # the copy cannot be written there
    before = digest(gen.path)
    with pytest.raises(MigrationBackupFailed) as err:
        upgrade_file(gen.path)
    assert "Nothing was changed" in err.value.message
    assert digest(gen.path) == before
    assert not any(p.name.endswith(".bak") for p in gen.path.parent.iterdir())


def test_copy_lost_before_it_is_named_rolls_the_upgrade_back(tmp_path: Path) -> None:
    """The copy is flushed and named while the upgrade runs: losing it stops the commit."""
    gen = fresh(tmp_path / "data")
    partial = gen.path.with_name("sessions.db" + BAK + ".partial")
    seen: list[bool] = []

    def progress(done: int, total: int) -> None:
        if done and not seen:  # the turns are being converted: the copy is made, unnamed
            seen.append(partial.exists())
            partial.unlink()  # e.g. removed by a cleaning tool

    with pytest.raises(MigrationBackupFailed) as err:
        upgrade_file(gen.path, progress=progress)
    assert seen == [True]
    assert "Nothing was changed" in err.value.message
    assert read_v3(gen.path) == gen.expected  # the WAL rows may have been checkpointed
    assert not [n for n in parley_files(tmp_path / "data") if BAK in n]
    report = upgrade_file(gen.path)  # the next start backs up again and upgrades
    assert report.backup_path == gen.path.with_name("sessions.db" + BAK)
    assert read_v3(report.backup_path) == gen.expected
    with Store.open(gen.path) as store:
        check_everything(store, gen.expected)


def test_a_second_upgrade_of_the_same_file_waits_its_turn(tmp_path: Path) -> None:
    """Two upgrades at once (--migrate-only beside the app): the second changes nothing —
    it left the first's backup copy half-deleted before — and says why."""
    from filelock import FileLock

    from parley.core.store.errors import UpgradeInProgress
    from parley.core.store.upgrade.v3 import UPGRADE_LOCK_SUFFIX

    gen = fresh(tmp_path / "data")
    before = digest(gen.path)
    partial = gen.path.with_name("sessions.db" + BAK + ".partial")
    partial.write_bytes(b"the first upgrade's copy, being written")
    with FileLock(f"{gen.path}{UPGRADE_LOCK_SUFFIX}"):  # the first upgrade
        with pytest.raises(UpgradeInProgress) as err:
            upgrade_file(gen.path)
        assert "Another Parley is upgrading" in err.value.message
        assert partial.read_bytes() == b"the first upgrade's copy, being written"
        assert digest(gen.path) == before
    partial.unlink()
    report = upgrade_file(gen.path)  # once it is done (here: gone), the next one upgrades
    assert report.backup_path == gen.path.with_name("sessions.db" + BAK)
    assert not gen.path.with_name("sessions.db" + UPGRADE_LOCK_SUFFIX).exists()
    with Store.open(gen.path) as store:
        check_everything(store, gen.expected)


# --- 2. nothing lost; 3. spaces; 4. forks; 5. damaged; 6. summaries ----------------


def test_report_counts(migrated) -> None:
    snap, report = migrated.snap, migrated.report
    assert report.sessions == len(snap.sessions)
    assert report.turns == snap.turn_count()
    assert report.recovered_turns == 6
    assert report.spaces == len({s.space for s in snap.sessions.values() if s.space})
    assert report.seconds > 0


def test_every_session_turn_block_meta_and_setting_kept(migrated) -> None:
    check_everything(migrated.store, migrated.snap)


def test_wal_only_rows_migrated(migrated) -> None:
    store, gen = migrated.store, migrated.gen
    for sid, idx in gen.wal_only:
        v3 = next(t for t in migrated.snap.turns[sid] if t.idx == idx)
        assert any(t.created_at == v3.created_at for t in store.get_turns(sid))
    assert store.get_state("session.last") == gen.named["wal_only"]


def test_spaces_are_rows_by_exact_name(migrated) -> None:
    store, named = migrated.store, migrated.gen.named
    spaces = store.list_spaces()
    names = [s.name for s in spaces]
    assert len(names) == len(set(names)) and {"Work", "work", "🦜 Birds", "עבודה"} <= set(names)
    assert [s.id for s in spaces if s.is_default] == [DEFAULT_SPACE_ID]
    upper = store.get_session(named["work_upper"]).space_id
    lower = store.get_session(named["work_lower"]).space_id
    assert upper != lower
    for quirk in ("untitled_null", "untitled_empty", "damaged"):  # NULL and '' space
        assert store.get_session(named[quirk]).space_id == DEFAULT_SPACE_ID
    assert {s.id for s in store.list_sessions(space_id=upper, limit=100)} >= {
        named["work_upper"], named["rich"], named["compacted"], named["empty"]}


def test_forks_link_parent_and_turn(migrated) -> None:
    store, named, snap = migrated.store, migrated.gen.named, migrated.snap
    fork = store.get_session(named["fork"])
    parent_turns = store.get_turns(named["parent"])
    assert fork.parent_session_id == named["parent"]
    assert fork.forked_from_turn_id == parent_turns[3].id  # fork_idx 3
    fof = store.get_session(named["fork_of_fork"])
    assert fof.parent_session_id == named["fork"]
    assert fof.forked_from_turn_id == store.get_turns(named["fork"])[5].id
    assert [s.id for s in store.list_forks(named["parent"])] == [named["fork"]]
    orphan = store.get_session(named["orphan_fork"])
    assert orphan.parent_session_id == migrated.gen.deleted_parent_id
    assert orphan.parent_exists is False and orphan.parent_session_id is not None
    assert orphan.meta["v3_fork_idx"] == 2
    assert orphan.turn_count == len(snap.turns[named["orphan_fork"]]) == 5
    gap = store.get_session(named["gap_fork"])  # parent's turn at idx 3 was deleted
    gap_parent = store.get_turns(named["gap_parent"])
    assert gap.forked_from_turn_id == gap_parent[2].id and gap.meta["v3_fork_idx"] == 3


def test_each_session_is_one_path_in_the_tree(migrated) -> None:
    """The one-step upgrade fills turn_links and turn_path (issue 32): every turn below
    the one before it in its session, every turn on the path; forks stay forks."""
    store, named, snap = migrated.store, migrated.gen.named, migrated.snap
    con = sqlite3.connect(store.path)
    try:
        turns = con.execute("SELECT id, session_id FROM turns ORDER BY session_id, seq").fetchall()
        links = dict(con.execute("SELECT turn_id, parent_id FROM turn_links"))
        path = con.execute("SELECT turn_id, session_id FROM turn_path "
                           "ORDER BY session_id, pos").fetchall()
    finally:
        con.close()
    assert path == turns and len(links) == len(turns) > 0
    for (tid, sid), before in zip(turns, [None, *turns[:-1]], strict=True):
        assert links[tid] == (before[0] if before and before[1] == sid else None)
    for name in ("fork", "fork_of_fork", "orphan_fork"):
        tree = store.get_tree(named[name])
        assert [t.turn.id for t in tree if t.on_path] == [t.turn.id for t in tree]
        assert len(tree) == len(snap.turns[named[name]])
        assert store.branches(named[name]).points == {}


def test_damaged_turns_kept_verbatim(migrated) -> None:
    store, snap = migrated.store, migrated.snap
    sid = migrated.gen.named["damaged"]
    turns = store.get_turns(sid)
    recovered = [(t.idx, t.content) for t in snap.turns[sid]][1:7]
    for v4, (_idx, content) in zip(turns[1:7], recovered, strict=True):
        assert v4.blocks == [TextBlock(content, recovered=True)]
    assert turns[0].blocks == [TextBlock("fine before")]
    assert turns[7].blocks == [TextBlock("fine after")]


def test_v3_compact_summary_stays_a_legacy_summary(migrated) -> None:
    store = migrated.store
    sid = migrated.gen.named["compacted"]
    first, *rest = store.get_turns(sid)
    assert first.role == "user"
    assert first.blocks == [CompactSummaryBlock("Earlier we planned the trip to Lisbon.", 14,
                                                legacy=True)]
    history = store.history(sid)  # what the model sees: the summary, then the kept turns
    assert history[0].blocks == first.blocks and len(history) == 1 + len(rest)


def test_unknown_meta_settings_and_state_kept(migrated) -> None:
    store, named = migrated.store, migrated.gen.named
    rich = store.get_session(named["rich"])
    assert rich.meta == {"color": "teal", "x-future": {"nested": [1, 2, {"k": None}]}}
    assert (rich.pinned, rich.archived, rich.title_source) == (True, False, "user")
    assert rich.usage == Usage(1200, 340, 9000, 1100, 0.0123)
    assert store.get_session(named["bad_meta"]).meta == {"v3_meta": "{not json"}
    assert store.get_setting("default_model") == "anthropic:claude-sonnet-4-5"
    assert store.get_setting("compaction.keep_turns") == 4
    assert store.get_setting("chat.auto_title") is True
    assert store.get_setting("experimental.compact_before_cache_expiry") is False
    assert store.get_setting("autoCompact.minTokens") == 2000
    assert store.get_setting("theme") == "dark"
    assert store.get_setting("x-experimental") == {"flag": [1, "two"]}
    assert store.get_state("windowGeometry") == {"w": 1200, "h": 800}


def test_settings_land_on_declared_v4_keys(migrated) -> None:
    """Every known v3 setting maps to a key parley.core.settings declares, with a valid value."""
    from parley.core import settings as declared

    for v3_key, v4_key in [*v3_steps.SETTINGS_KEYS.items(), *v3_steps.AUTO_COMPACT_KEYS.items()]:
        declared.spec(v4_key)  # raises UnknownSetting for a key v4 does not know
        value = migrated.store.get_setting(v4_key)
        assert declared.validate(v4_key, value) == value, (v3_key, v4_key)


def test_progress_reports_turns(migrated) -> None:
    con = sqlite3.connect(migrated.report.backup_path)
    total = con.execute("SELECT count(*) FROM turns").fetchone()[0]  # deleted sessions' too
    con.close()
    calls = migrated.calls
    assert total == migrated.snap.turn_count() + 2
    assert calls and all(t == total for _, t in calls)
    dones = [d for d, _ in calls]
    assert dones == sorted(dones) and dones[-1] == total


# --- 9. search -------------------------------------------------------------------------


def test_search_finds_migrated_text_at_once(migrated) -> None:
    store, named = migrated.store, migrated.gen.named
    hits = search_ids(store, WAL_MARKER)
    assert {(named["wal_only"], None)} < hits  # title and turns that were only in -wal
    assert {s for s, _ in search_ids(store, BIG_MARKER)} == {named["big"]}
    for word, quirk in ((RTL_HE.split()[0], "rtl"), (RTL_AR.split()[0], "rtl"),
                        ("Lisbon", "compacted"), ("permission", "rich"),
                        ("report.pdf", "rich"), ("mid", "damaged")):
        assert named[quirk] in {s for s, _ in search_ids(store, word)}, word
    assert named["rtl"] in {s for s, t in search_ids(store, RTL_AR.split()[0]) if t is None}


def test_search_index_stays_consistent_after_edits(tmp_path: Path) -> None:
    gen = fresh(tmp_path / "data")
    upgrade_file(gen.path)
    with Store.open(gen.path) as store:
        store.delete_session(gen.named["big"])
        turns = store.get_turns(gen.named["wal_only"])
        store.delete_turns_after(gen.named["wal_only"], turns[0].id)
        store.rename_session(gen.named["rtl"], "renamed quokkatitle")
        assert not search_ids(store, BIG_MARKER)
        assert search_ids(store, "quokkatitle") == {(gen.named["rtl"], None)}
    con = sqlite3.connect(gen.path)
    con.execute("INSERT INTO search_fts (search_fts) VALUES ('integrity-check')")
    assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    assert con.execute("PRAGMA foreign_key_check").fetchall() == []
    con.close()


def test_search_index_is_the_one_the_triggers_build(tmp_path: Path) -> None:
    """The index built beside the upgrade equals a rebuild through the schema's own SQL."""
    gen = fresh(tmp_path / "data", sessions=12, turns_per_session=15)
    upgrade_file(gen.path)
    rebuilt = gen.path.with_name("rebuilt.db")
    shutil.copyfile(gen.path, rebuilt)
    con = sqlite3.connect(rebuilt, isolation_level=None)
    con.execute("BEGIN")
    schema.rebuild_search_index(con)
    con.execute("COMMIT")
    con.close()
    queries = ["walonlyplatypus", "b3t4", "Lisbon", "שלום", "permission", "ls", "b1*"]
    dumps = []
    for path in (gen.path, rebuilt):
        c = sqlite3.connect(path)
        dumps.append((
            c.execute("SELECT block FROM search_fts_data WHERE id = 1").fetchone(),  # totals
            c.execute("SELECT id, sz FROM search_fts_docsize ORDER BY id").fetchall(),
            [c.execute("SELECT rowid, rank FROM search_fts WHERE search_fts MATCH ? "
                       "ORDER BY rank", (q,)).fetchall() for q in queries],
        ))
        c.close()
    assert dumps[0] == dumps[1]
    assert all(dumps[0][2][:5])  # each query found something


# --- 7. v4 untouched; 8. newer refused ------------------------------------------------


def test_running_again_on_v4_changes_not_one_byte(tmp_path: Path) -> None:
    gen = fresh(tmp_path / "data")
    upgrade_file(gen.path)
    Store.open(gen.path).close()
    before, files = digest(gen.path), parley_files(tmp_path / "data")
    report = upgrade_file(gen.path)
    assert (report.sessions, report.turns, report.backup_path) == (0, 0, None)
    assert digest(gen.path) == before and parley_files(tmp_path / "data") == files


@pytest.mark.parametrize("version", [5, 99])
def test_newer_file_refused_untouched(tmp_path: Path, version: int) -> None:
    (tmp_path / "data").mkdir()
    path = tmp_path / "data" / "sessions.db"
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE future (x)")
    con.execute(f"PRAGMA user_version = {version}")
    con.close()
    before = digest(path)
    for opener in (upgrade_file, Store.open):
        with pytest.raises(NewerFormat) as err:
            opener(path)
        assert f"v{version}" in err.value.message and "v4" in err.value.message
    assert digest(path) == before and parley_files(tmp_path / "data") == ["sessions.db"]


def test_failed_migration_leaves_v3_and_names_backup(tmp_path: Path, monkeypatch) -> None:
    gen = fresh(tmp_path / "data")

    def boom(m: v3_steps.Migration) -> None:
        raise sqlite3.OperationalError("simulated failure")

    steps = list(v3_steps.STEPS)
    monkeypatch.setattr(v3_steps, "STEPS", steps[:-2] + [v3_steps.Step("boom", boom)])
    with pytest.raises(MigrationFailed) as err:
        upgrade_file(gen.path)
    backup = gen.path.with_name("sessions.db" + BAK)
    assert str(backup) in err.value.message and "left as it was" in err.value.message
    assert read_v3(gen.path) == gen.expected
    assert parley_files(tmp_path / "data") == ["sessions.db", "sessions.db" + BAK]
    monkeypatch.setattr(v3_steps, "STEPS", steps)
    report = upgrade_file(gen.path)  # the next start succeeds, keeping the first backup
    assert report.backup_path == gen.path.with_name("sessions.db.parley-pre-v4.1.bak")
    with Store.open(gen.path) as store:
        check_everything(store, gen.expected)


# --- variants: first v3 builds, user_version 0, through Store.open ----------------------


@pytest.mark.parametrize(("journal_mode", "user_version"), [("delete", 3), ("wal", 0)])
def test_other_v3_files(tmp_path: Path, journal_mode: str, user_version: int) -> None:
    gen = fresh(tmp_path / "data", journal_mode=journal_mode, user_version=user_version, seed=5)
    with Store.open(gen.path) as store:
        assert store.migration_report is not None
        assert store.migration_report.turns == gen.expected.turn_count()
        check_everything(store, gen.expected)
    assert read_v3(gen.path.with_name("sessions.db" + BAK)) == gen.expected


# --- 10. rollback ------------------------------------------------------------------


def test_rollback_instructions_restore_the_v3_file(tmp_path: Path) -> None:
    gen = fresh(tmp_path / "data")
    report = upgrade_file(gen.path)
    with Store.open(gen.path) as store:
        store.create_session(title="made after the upgrade")
        text = rollback_instructions(gen.path, report.backup_path)
        # following the steps, as a person would, with Parley still running until step 1
    assert str(report.backup_path) in text and f"{gen.path}-wal" in text
    for suffix in ("-wal", "-shm"):
        Path(f"{gen.path}{suffix}").unlink(missing_ok=True)
    shutil.copyfile(report.backup_path, gen.path)
    assert read_v3(gen.path) == gen.expected
    con = sqlite3.connect(gen.path)
    assert con.execute("PRAGMA user_version").fetchone()[0] == 3
    con.close()


def test_not_a_parley_file_untouched(tmp_path: Path) -> None:
    (tmp_path / "data").mkdir()
    path = tmp_path / "data" / "sessions.db"
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE other (x)")
    con.close()
    before = digest(path)
    with pytest.raises(Exception) as err:
        upgrade_file(path)
    assert "not a Parley sessions file" in str(err.value)
    assert digest(path) == before and os.listdir(path.parent) == ["sessions.db"]

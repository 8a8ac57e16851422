"""A sessions.db written before the conversation tree converts on first open (issue 32).

The file is ``tests/fixtures/versions_e73c920.db``, written by commit e73c920's own
store API (``tests/fixtures/make_versions_fixture.py``): edits and regenerations
as version sessions. Opened by today's code, every alternative the old code
showed is reachable with the same n/m and the same choice shown
(``tests/core/tree_conversion_check.py``), no version session remains, no
message or attachment is lost or doubled, and a kill during the conversion
leaves a file that opens.
"""

from __future__ import annotations

import shutil
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from parley.core.store.store import Store
from parley.core.store.upgrade.migrations import FileKind, inspect_file
from parley.core.store.upgrade.tree_family import is_version, parse_meta
from tests.core.tree_conversion_check import DB, RECORD, check_store, words_in

ROOT = Path(__file__).resolve().parents[2]


def copy_fixture(tmp_path: Path) -> Path:
    path = tmp_path / "sessions.db"
    shutil.copy(DB, path)
    return path


def rows(path: Path, sql: str) -> list[tuple]:
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


def word_owners(path: Path) -> dict[str, list[str]]:
    """Each message word (w<n>) -> the turns holding it."""
    owners: dict[str, list[str]] = {}
    for tid, blocks in rows(path, "SELECT id, blocks FROM turns"):
        for w in set(words_in(blocks)):
            owners.setdefault(w, []).append(tid)
    return owners


@pytest.fixture
def converted(tmp_path):
    path = copy_fixture(tmp_path)
    store = Store.open(path)
    yield store
    store.close()


def test_every_alternative_shown_before_is_reachable_with_its_n_of_m(converted):
    check_store(converted)


def test_no_version_session_remains_and_forks_of_versions_are_under_their_chat(converted):
    ids = RECORD["ids"]
    path = converted.path
    stored = {r[0] for r in rows(path, "SELECT id FROM sessions")}
    for _sid, parent, title, meta in rows(
            path, "SELECT id, parent_session_id, title, meta FROM sessions"):
        assert not (parent in stored and is_version(title, parse_meta(meta), parent)), title
        assert parse_meta(meta).get("fork_kind") != "version", title
    fork = converted.get_session(ids["trip_fork"])
    assert fork.parent_session_id == ids["trip"]
    # Made from the version's copy of a turn the chat has: from the chat's own turn.
    assert fork.forked_from_turn_id in {t.turn.id for t in converted.get_tree(ids["trip"])}
    orphan = converted.get_session(ids["orphan"])  # its chat was deleted: a chat now
    assert orphan.parent_session_id is None
    assert converted.get_session(ids["recipes_fork"]).parent_session_id == ids["recipes"]


def test_every_message_and_attachment_is_kept_once(converted, tmp_path):
    before = word_owners(DB)
    after = word_owners(converted.path)
    assert set(after) == set(before)
    assert all(len(t) >= 1 for t in after.values())
    # A word is in several turns only as a fork's copy (forks stay forks).
    forks = {RECORD["ids"]["trip_fork"], RECORD["ids"]["recipes_fork"]}
    owner = dict(rows(converted.path, "SELECT id, session_id FROM turns"))
    for w, tids in after.items():
        chats = [owner[t] for t in tids if owner[t] not in forks]
        assert len(chats) <= 1, w  # the fork's own messages are in the fork alone
        hits = [h for h in converted.search(w) if h.turn_id is not None]
        assert len(hits) == 1, (w, hits)
    assert rows(converted.path, "SELECT count(*) FROM attachments") == \
        rows(DB, "SELECT count(*) FROM attachments")
    assert rows(converted.path, "SELECT count(*) FROM attachments a WHERE NOT EXISTS "
                "(SELECT 1 FROM turn_attachments u WHERE u.sha256 = a.sha256)") == [(0,)]
    shas = {r[0] for r in rows(converted.path, "SELECT sha256 FROM attachments")}
    for sha in shas:  # the bytes are there
        assert converted.attachment_data(sha)


def test_compactions_and_summaries_point_at_turns_of_their_chat(converted):
    comp = rows(converted.path, "SELECT c.session_id, s.session_id, f.session_id, l.session_id "
                "FROM compactions c JOIN turns s ON s.id = c.summary_turn_id "
                "JOIN turns f ON f.id = c.first_turn_id JOIN turns l ON l.id = c.last_turn_id")
    assert len(comp) == len(rows(converted.path, "SELECT id FROM compactions")) >= 1
    for row in comp:
        assert len(set(row)) == 1
    long_chat = RECORD["ids"]["long"]
    ids = {t.turn.id for t in converted.get_tree(long_chat)}
    for t in converted.get_tree(long_chat):
        for b in t.turn.blocks:
            for key in ("first_turn_id", "last_turn_id"):
                ref = getattr(b, key, None)
                assert ref is None or ref in ids


def test_app_state_naming_a_version_names_its_chat(converted):
    ids = RECORD["ids"]
    assert converted.get_state("session.last@fixture-host") == ids["trip"]
    assert converted.get_state("draft:" + ids["trip"]) == "draft in a version"
    assert converted.get_state("unseen:" + ids["trip"]) == {"count": 1}
    gone = [ids[k] for k in ("trip_edit", "trip_edit_old_answer", "trip_old_answer")]
    for key, value in rows(converted.path, "SELECT key, value FROM app_state"):
        assert not any(g in key or g in value for g in gone), key


def test_the_chat_keeps_its_versions_usage_and_the_shown_versions_model(tmp_path):
    ids = RECORD["ids"]
    path = copy_fixture(tmp_path)
    con = sqlite3.connect(path)
    with con:
        con.execute("UPDATE sessions SET input_tokens = 100, output_tokens = 7, "
                    "cost_usd = 0.25 WHERE id IN (?, ?)", (ids["trip_edit"], ids["trip"]))
        con.execute("UPDATE sessions SET model = 'other:model', updated_at = updated_at + 5 "
                    "WHERE id = ?", (ids["trip_old_answer"],))  # the version shown
    family = [ids[k] for k in ("trip", "trip_edit", "trip_old_answer", "trip_edit_old_answer")]
    latest = con.execute("SELECT max(updated_at) FROM sessions WHERE id IN (?, ?, ?, ?)",
                         family).fetchone()[0]
    con.close()
    store = Store.open(path)
    try:
        chat = store.get_session(ids["trip"])
        assert (chat.usage.input_tokens, chat.usage.output_tokens) == (200, 14)
        assert chat.usage.cost_usd == pytest.approx(0.5)
        assert chat.model == "other:model"
        assert chat.updated_at == latest
    finally:
        store.close()


def test_a_regeneration_that_failed_shows_the_prompt_as_the_path_s_end(tmp_path):
    """The chat ended at the prompt (its new answer failed) while a version holds the
    old answer: the old code listed the ending as the last version there; the tree's
    path ends at the prompt, whose answer is the other alternative."""
    from parley.core.store.textindex import register_functions

    ids = RECORD["ids"]
    path = copy_fixture(tmp_path)
    con = sqlite3.connect(path)
    register_functions(con)
    with con:
        con.execute("DELETE FROM turns WHERE session_id = ? AND seq = "
                    "(SELECT max(seq) FROM turns WHERE session_id = ?)", (ids["trip"], ids["trip"]))
        con.execute("UPDATE sessions SET meta = json_set(meta, '$.shown_version', ?) "
                    "WHERE id = ?", (ids["trip"], ids["trip"]))
    con.close()
    store = Store.open(path)
    try:
        turns = [t.turn for t in store.get_tree(ids["trip"]) if t.on_path]
        assert turns[-1].role == "user" and "Add museums" in turns[-1].text()
        point = store.branches(ids["trip"]).points[turns[-1].id]
        assert (point.index, point.total) == (2, 2)
        answer = point.turn_ids[0]
        assert "Museum list w6" in store.get_turn(answer).text()
        store.show_branch(ids["trip"], answer)
        assert [t.turn.id for t in store.get_tree(ids["trip"]) if t.on_path][-1] == answer
        store.show_branch(ids["trip"], turns[-1].id, exact=True)
        assert [t.turn.id for t in store.get_tree(ids["trip"]) if t.on_path] == \
            [t.id for t in turns]
    finally:
        store.close()


def test_a_backup_first_and_a_converted_file_opens_without_a_write(tmp_path):
    path = copy_fixture(tmp_path)
    original = path.read_bytes()
    Store.open(path).close()
    backup = tmp_path / "sessions.db.parley-pre-tree.bak"
    assert backup.read_bytes() == original or rows(backup, "SELECT count(*) FROM sessions") \
        == rows(DB, "SELECT count(*) FROM sessions")
    assert "turn_links" not in {r[0] for r in rows(backup, "SELECT name FROM sqlite_master")}
    assert inspect_file(path).kind is FileKind.CURRENT
    stamp = path.stat().st_mtime_ns, path.stat().st_size
    Store.open(path).close()
    assert (path.stat().st_mtime_ns, path.stat().st_size) == stamp
    assert sorted(p.name for p in tmp_path.iterdir() if ".bak" in p.name) == [backup.name]


def test_no_room_for_the_backup_converts_nothing(tmp_path, monkeypatch):
    import shutil as shutil_module

    from parley.core.store.errors import MigrationBackupFailed
    from parley.core.store.upgrade import backup

    path = copy_fixture(tmp_path)
    usage = shutil_module.disk_usage(tmp_path)
    monkeypatch.setattr(backup.shutil, "disk_usage", lambda _p: usage._replace(free=2**20))
    with pytest.raises(MigrationBackupFailed) as err:
        Store.open(path)
    assert "Nothing was changed" in err.value.message
    assert "turn_links" not in {r[0] for r in rows(path, "SELECT name FROM sqlite_master")}
    assert rows(path, "SELECT id, session_id, seq FROM turns ORDER BY id") == \
        rows(DB, "SELECT id, session_id, seq FROM turns ORDER BY id")
    assert not [p for p in tmp_path.iterdir() if ".bak" in p.name]


CHILD = textwrap.dedent("""
    import os, signal, sys
    sys.path.insert(0, {root!r})
    from parley.core.store.store import Store
    from parley.core.store.upgrade import tree, tree_fold, tree_state

    where = sys.argv[2]

    def dying(fn):
        def run(*args, **kw):
            out = fn(*args, **kw)
            os.kill(os.getpid(), signal.SIGKILL)
            return out
        return run

    if where == "fill":
        tree.fill = dying(tree.fill)
    elif where == "fold":
        tree_fold.fold = dying(tree_fold.fold)
    elif where == "state":
        tree.repoint_state = dying(tree.repoint_state)
    Store.open(sys.argv[1])
    print("not killed", flush=True)
""").format(root=str(ROOT))


@pytest.mark.parametrize("where", ["fill", "fold", "state"])
def test_a_kill_during_the_conversion_leaves_the_file_as_it_was(tmp_path, where):
    path = copy_fixture(tmp_path)
    run = subprocess.run([sys.executable, "-c", CHILD, str(path), where],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == -9, run.stdout + run.stderr
    assert "turn_links" not in {r[0] for r in rows(path, "SELECT name FROM sqlite_master")}
    assert rows(path, "SELECT count(*) FROM turns") == rows(DB, "SELECT count(*) FROM turns")
    assert rows(path, "PRAGMA integrity_check") == [("ok",)]
    store = Store.open(path)  # converted now, from the file as it was
    try:
        check_store(store)
    finally:
        store.close()


def test_the_pre_tree_backup_is_offered_when_the_file_is_damaged_and_restores(tmp_path):
    from parley.core.recovery import damaged_file
    from parley.core.store.errors import DatabaseCorrupt
    from parley.core.store.sqlite.backups import list_backups
    from parley.core.store.upgrade.migrations import UpToDateReport

    path = copy_fixture(tmp_path)
    with Store.open(path) as store:
        report = store.migration_report
        chats = len(store.list_sessions(limit=10_000, include_archived=True))
    backup = tmp_path / "sessions.db.parley-pre-tree.bak"
    assert isinstance(report, UpToDateReport) and report.backup_path == backup
    data = bytearray(path.read_bytes())
    data[100:4096] = b"\xa5" * (4096 - 100)  # the first page's schema: unreadable
    path.write_bytes(bytes(data))

    with pytest.raises(DatabaseCorrupt) as err:
        Store.open(path)
    assert backup.name in err.value.message  # the words name it
    assert damaged_file.backups(path) == [backup]  # the damaged-file page and restore
    (listed,) = list_backups(path)  # the recovery and missing-file pages
    assert (listed.path, listed.automatic) == (backup, False)
    assert listed.chats == rows(DB, "SELECT count(*) FROM sessions")[0][0]

    assert damaged_file.latest_backup(path) == backup
    damaged_file.restore_backup(path, backup)
    with Store.open(path) as store:  # converted again, after a backup of its own
        again = store.migration_report
        assert len(store.list_sessions(limit=10_000, include_archived=True)) == chats
    assert isinstance(again, UpToDateReport)
    assert again.backup_path == tmp_path / "sessions.db.parley-pre-tree.1.bak"
    assert (again.folded, again.chats) == (report.folded, report.chats)
    assert backup.exists()

"""Merging another Parley database by ids (parley.core.store.merge) carries each chat's
tree: its branches, the path it shows and its branch points; into a sessions.db and into
PostgreSQL (``db`` below), from a real sessions.db file."""

from __future__ import annotations

from pathlib import Path

import pytest

from parley.core.store.errors import SourceWithoutTree
from parley.core.store.store import Store
from tests.core import tree_rows
from tests.core.rawdb import raw_rows
from tests.core.tree_conversion_check import DB
from tests.core.tree_rows import branched, say


@pytest.fixture
def db(any_db: Store) -> Store:
    return any_db


def texts(db: Store, sid: str) -> list[str]:
    """The path shown, as texts."""
    by_id = {t.turn.id: t.turn.text() for t in db.get_tree(sid)}
    return [by_id[t] for t in tree_rows.path(db, sid)]


def points(db: Store, sid: str) -> dict[str, tuple[int, int, tuple[str, ...]]]:
    return {k: (p.index, p.total, p.turn_ids) for k, p in db.branches(sid).points.items()}


def test_a_chat_with_branches_merges_with_its_tree_and_the_path_it_showed(db, tmp_path):
    with Store.open(tmp_path / "other.db") as src:
        sid = branched(src)
        want = (tree_rows.links(src, sid), tree_rows.path(src, sid), points(src, sid))
        report = db.merge_from(src)
    assert report.chat_ids == (sid,) and report.messages == 7 and report.left_out == 0
    assert (tree_rows.links(db, sid), tree_rows.path(db, sid), points(db, sid)) == want
    assert texts(db, sid) == ["How long to proof sourdough?", "Overnight in the fridge.",
                              "Which fridge shelf?"]
    assert [p[:2] for p in points(db, sid).values()] == [(2, 2), (2, 3)]
    assert len(db.search("fridge shelf")) == 1


def test_a_copy_that_went_on_extends_the_path_here(db, tmp_path):
    sid = db.create_session(title="Trip").id
    say(db, sid, "user", "Lisbon or Porto?")
    answer = say(db, sid, "assistant", "Lisbon.")
    copy = tmp_path / "copy.db"
    with Store.open(copy) as src:  # a rescue copy of the same chat, which went on
        src.merge_from(db)
        say(src, sid, "user", "Three days?")
        say(src, sid, "assistant", "Yes.")
        report = db.merge_from(src)
    assert (report.messages, report.present) == (2, 2)
    assert texts(db, sid) == ["Lisbon or Porto?", "Lisbon.", "Three days?", "Yes."]
    assert tree_rows.parents(db, sid)[tree_rows.path(db, sid)[2]] == answer.id
    # The new leaf carries the newest stamp: the path shown ends there.
    stamps = {t: s for t, _p, s in tree_rows.links(db, sid)}
    leaf = tree_rows.path(db, sid)[-1]
    assert stamps[leaf] == max(stamps.values())


def test_a_copy_that_branched_adds_a_branch_and_keeps_the_path_shown_here(db, tmp_path):
    sid = db.create_session(title="Trip").id
    question = say(db, sid, "user", "Lisbon or Porto?")
    say(db, sid, "assistant", "Lisbon.")
    with Store.open(tmp_path / "copy.db") as src:
        src.merge_from(db)
        answer = src.get_tree(sid)[1].turn
        src.branch_before(sid, answer.id)  # regenerated there
        say(src, sid, "assistant", "Porto.")
        db.merge_from(src)
    say(db, sid, "user", "Why?")  # here the chat went on: it keeps its path
    assert texts(db, sid) == ["Lisbon or Porto?", "Lisbon.", "Why?"]
    (point,) = db.branches(sid).points.values()
    assert (point.index, point.total) == (1, 2)
    other = point.target(+1)
    assert other is not None
    db.show_branch(sid, other[0], exact=other[1])
    assert texts(db, sid) == ["Lisbon or Porto?", "Porto."]
    assert tree_rows.parents(db, sid)[other[0]] == question.id


def test_a_database_without_the_tree_is_refused_and_nothing_is_merged(db, tmp_path: Path):
    with Store.open(tmp_path / "old.db") as src:
        sid = src.create_session(title="Old").id
        say(src, sid, "user", "From before the tree")
        # What a file of an older Parley holds, not converted: no tree tables.
        raw_rows(src, "DROP TABLE turn_path")
        raw_rows(src, "DROP TABLE turn_links")
        with pytest.raises(SourceWithoutTree, match="Open it once in this Parley"):
            db.merge_from(src)
    assert db.list_sessions() == []


def test_a_database_of_an_older_parley_is_converted_in_a_copy_then_merged(tmp_path: Path):
    """A sessions.db written before the tree (edits and regenerations as version sessions,
    tests/fixtures/versions_e73c920.db): imported, it gives the chats and branches that
    opening it in this Parley gives; the file itself is not changed."""
    import hashlib
    import shutil
    import subprocess
    import sys

    old = tmp_path / "old" / "sessions.db"
    old.parent.mkdir()
    shutil.copy(DB, old)
    digest = hashlib.sha256(old.read_bytes()).hexdigest()
    home = tmp_path / "home"
    run = subprocess.run([sys.executable, "-m", "parley.gui.app", "--import", str(old),
                          "--home", str(home)], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert hashlib.sha256(old.read_bytes()).hexdigest() == digest
    assert not list(old.parent.glob("*.bak*"))  # converted in a copy, not beside it

    opened = tmp_path / "opened" / "sessions.db"
    opened.parent.mkdir()
    shutil.copy(old, opened)
    with Store.open(opened) as want, Store.open(home / "sessions.db") as got:
        chats = want.list_sessions(include_archived=True, limit=1000)
        assert {r[0] for r in raw_rows(got, "SELECT id FROM sessions")} == {
            s.id for s in chats}  # every session stored, listed or not: no version came
        assert any(want.branches(s.id).points for s in chats)
        for s in chats:
            assert (tree_rows.links(got, s.id), tree_rows.path(got, s.id),
                    got.branches(s.id)) == (tree_rows.links(want, s.id),
                                            tree_rows.path(want, s.id), want.branches(s.id))


def test_messages_whose_parent_is_not_in_their_chat_are_left_out(db, tmp_path):
    sid = db.create_session(title="Trip").id
    say(db, sid, "user", "Lisbon or Porto?")
    say(db, sid, "assistant", "Lisbon.")
    with Store.open(tmp_path / "copy.db") as src:
        src.merge_from(db)
        three = say(src, sid, "user", "Three days?")
        say(src, sid, "assistant", "Yes.")
        # A copy whose link names a message no chat here holds (another program's write).
        raw_rows(src, "UPDATE turn_links SET parent_id = 'gone' WHERE turn_id = ?", (three.id,))
        report = db.merge_from(src)
    assert (report.messages, report.left_out, report.present) == (0, 2, 2)
    assert texts(db, sid) == ["Lisbon or Porto?", "Lisbon."]
    assert len(db.get_tree(sid)) == 2

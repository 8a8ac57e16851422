"""The salvage of a damaged sessions.db (parley.core.store.sqlite.salvage) carries each
chat's tree and makes it whole where the damage took part of it: real files, garbage
written over real pages."""

from __future__ import annotations

from pathlib import Path

from parley.core.recovery.damaged_file import set_aside
from parley.core.store import Store
from parley.core.store.sqlite import salvage as S
from tests.core import tree_rows
from tests.core.damaged import overwrite_pages, pages_of
from tests.core.rawdb import raw_rows
from tests.core.tree_rows import branched, say


def _by_seq(db: Store, sid: str) -> list[str]:
    return [t.turn.id for t in db.get_tree(sid)]


def _text(db: Store, sid: str) -> dict[str, str]:
    return {t.turn.id: t.turn.text() for t in db.get_tree(sid)}


def _tree(db: Store, sid: str) -> tuple[object, ...]:
    return tree_rows.links(db, sid), tree_rows.path(db, sid), db.branches(sid)


def _salvage(db: Path, pages: list[int], backup: Path | None = None) -> None:
    overwrite_pages(db, pages)
    aside = set_aside(db)
    assert aside is not None
    S.salvage(aside, db, backup)


def _is_whole(db: Store, sid: str) -> None:
    """Every turn has a parent earlier by seq (or none); the path is a chain from a first
    message."""
    order = {t: i for i, t in enumerate(_by_seq(db, sid))}
    parents = tree_rows.parents(db, sid)
    assert set(parents) == set(order)
    assert all(p is None or order[p] < order[t] for t, p in parents.items())
    path = tree_rows.path(db, sid)
    assert path and parents[path[0]] is None
    assert all(parents[b] == a for a, b in zip(path, path[1:], strict=False))


def test_a_chat_whose_row_was_lost_comes_back_with_its_branches(tmp_path: Path) -> None:
    db = tmp_path / "sessions.db"
    with Store.open(db) as store:
        sid = branched(store)
        before = _tree(store, sid)
    _salvage(db, pages_of(db, "sessions"))
    with Store.open(db) as store:
        assert store.get_session(sid).title == S.RECOVERED_TITLE
        assert _tree(store, sid) == before  # the same links, path shown and branch points


def test_turns_whose_links_were_lost_hang_below_the_turn_before_them(tmp_path: Path) -> None:
    db = tmp_path / "sessions.db"
    with Store.open(db) as store:
        sid = branched(store)
        for i in range(120):
            say(store, sid, "user" if i % 2 == 0 else "assistant", f"more {i}")
        parents_before = tree_rows.parents(store, sid)
    _salvage(db, pages_of(db, "turn_links")[:1])  # the first links written: the branches'

    with Store.open(db) as store:
        order = _by_seq(store, sid)
        assert len(order) == 7 + 120  # every turn is back
        parents = tree_rows.parents(store, sid)
        before_by_seq = dict(zip(order, [None, *order], strict=False))
        assert all(parents[t] in (parents_before[t], before_by_seq[t]) for t in order)
        text = _text(store, sid)
        doubles = next(t for t in order if text[t] == "Until it doubles.")
        assert text[parents[doubles]] == "Which fridge shelf?"  # by seq: its link was lost
        _is_whole(store, sid)
        assert tree_rows.path(store, sid)[-1] == order[-1]  # shown up to where it was
        say(store, sid, "user", "writable again")


def test_a_chat_whose_path_was_lost_shows_the_way_to_its_newest_turn(tmp_path: Path) -> None:
    db = tmp_path / "sessions.db"
    with Store.open(db) as store:
        sid = branched(store)
        plain = store.create_session(title="Plain").id
        for i in range(6):
            say(store, plain, "user" if i % 2 == 0 else "assistant", f"plain {i}")
        links = tree_rows.links(store, sid)
    # The table and its index on turn ids (which holds every column of it too).
    _salvage(db, pages_of(db, "turn_path") + pages_of(db, "turn_path_by_turn"))

    with Store.open(db) as store:
        assert [(t, p) for t, p, _s in tree_rows.links(store, sid)] == [
            (t, p) for t, p, _s in links]  # the tree itself is intact
        text = _text(store, sid)
        assert [text[t] for t in tree_rows.path(store, sid)] == [
            "How long to proof sourdough?", "Until it doubles."]
        assert tree_rows.path(store, plain) == _by_seq(store, plain)  # its turns by seq
        for chat in (sid, plain):
            _is_whole(store, chat)
        (point,) = [p for p in store.branches(sid).points.values() if p.total == 3]
        assert point.index == 3


def test_a_file_from_before_the_tree_is_salvaged_into_chats_with_branches(
        tmp_path: Path) -> None:
    """What is read of a file written before the tree (edits and regenerations as
    version sessions, tests/fixtures/versions_e73c920.db) is converted as opening it
    converts it: the same chats, branches, paths and branch points."""
    import shutil

    from tests.core.tree_conversion_check import DB

    old, opened = tmp_path / "old.db", tmp_path / "opened" / "sessions.db"
    shutil.copy(DB, old)
    opened.parent.mkdir()
    shutil.copy(DB, opened)
    overwrite_pages(old, pages_of(old, "app_state"))  # damage that loses no chat
    db = tmp_path / "sessions.db"

    report = S.salvage(old, db)

    with Store.open(opened) as want, Store.open(db) as got:
        chats = want.list_sessions(include_archived=True, limit=1000)
        assert sorted(r[0] for r in raw_rows(got, "SELECT id FROM sessions")) \
            == sorted(s.id for s in chats)  # every session stored, listed or not
        assert report.chats == len(chats)
        assert any(want.branches(s.id).points for s in chats)
        for s in chats:
            assert _tree(got, s.id) == _tree(want, s.id)


def test_a_backup_from_before_the_tree_brings_back_no_version_as_a_chat(
        tmp_path: Path) -> None:
    """A file damaged after it was converted, with a backup from before (version
    sessions): the backup is converted in a copy before its rows fill in, so what it
    adds are the same chats and branches, not the old versions as chats."""
    import shutil

    from tests.core.tree_conversion_check import DB

    backup = tmp_path / "backups" / "sessions-old.db"
    backup.parent.mkdir()
    shutil.copy(DB, backup)
    db = tmp_path / "sessions.db"
    shutil.copy(DB, db)
    with Store.open(db) as store:  # converted on open; then the person went on
        chats = store.list_sessions(include_archived=True, limit=1000)
        sid = next(s.id for s in chats if store.branches(s.id).points)
        say(store, sid, "user", "written after the conversion")
        want = {s.id: _tree(store, s.id) for s in chats if s.id != sid}
    backed = backup.read_bytes()
    _salvage(db, pages_of(db, "app_state"), backup)  # sets the file aside, then salvages

    with Store.open(db) as got:
        assert sorted(r[0] for r in raw_rows(got, "SELECT id FROM sessions")) \
            == sorted(s.id for s in chats)  # every session stored, listed or not
        assert {k: _tree(got, k) for k in want} == want
        assert _text(got, sid)[tree_rows.path(got, sid)[-1]] == "written after the conversion"
    assert backup.read_bytes() == backed  # only read
    assert not [p for p in tmp_path.iterdir() if ".partial" in p.name]

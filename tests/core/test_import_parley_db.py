"""``parley --import FILE`` with a Parley database (a backup, a rescue copy, a sessions.db):
merged by ids (parley.core.importing.parley_file, parley.core.store.merge). Real files,
the real command line; the second import adds nothing; nothing stored is overwritten."""

from __future__ import annotations

import shutil
import sqlite3
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

from parley.core.content import CompactSummaryBlock, ImageBlock, TextBlock, Turn, Usage
from parley.core.store.store import Store
from tests.v3gen import PNG_1PX

COUNTED = ("spaces", "sessions", "turns", "attachments", "compactions", "turn_attachments")


def _run(file: Path, home: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "parley.gui.app", "--import", str(file),
                           "--home", str(home)], capture_output=True, text=True, timeout=120)


def _rows(db: Path) -> dict[str, int]:
    con = sqlite3.connect(db)
    try:
        return {t: con.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in COUNTED}
    finally:
        con.close()


def _texts(store: Store, sid: str) -> list[tuple[str, str, bool]]:
    """The path the chat shows: (id, text, aborted) of each turn."""
    return [(t.turn.id, t.turn.text(), t.turn.aborted) for t in store.get_tree(sid)
            if t.on_path]


def _histories(tmp_path: Path) -> tuple[Path, Path, dict[str, str]]:
    """A copy (``rescued.db``) and a home whose sessions.db has less of the same chats,
    plus its own; returns (copy, home, ids)."""
    home = tmp_path / "home"
    home.mkdir()
    db, copy = home / "sessions.db", tmp_path / "rescued.db"
    ids: dict[str, str] = {}
    with Store.open(db) as store:
        a = store.create_session(title="chat A").id
        store.append_turn(a, Turn("user", [TextBlock("question one"),
                                           ImageBlock("image/png", PNG_1PX)]))
        store.append_turn(a, Turn("assistant", [TextBlock("answer one")]))
        store.append_turn(a, Turn("user", [TextBlock("question two")]))
        whole = Turn("assistant", [TextBlock("the whole second answer")])
        # Journalled while it streamed: sessions.db holds a cut-off prefix of it.
        store.upsert_turn(a, replace(whole, blocks=[TextBlock("the whole")], aborted=True,
                                     cut_off=True))
        ids["a"], ids["whole"] = a, whole.id
    shutil.copy(db, copy)
    with Store.open(copy) as rescued:  # what the rescue copy holds beyond sessions.db
        used = Usage(input_tokens=10, output_tokens=7)
        rescued.finish_turn(a, replace(whole, usage=used), used)  # as the run saves it
        rescued.append_turn(a, Turn("user", [TextBlock("question three")]))
        b = rescued.create_session(title="chat B").id
        rescued.append_turn(b, Turn("user", [TextBlock("only in the copy")]))
        turns = rescued.get_turns(b)
        rescued.append_turn(b, Turn("assistant", [TextBlock("its answer")]))
        rescued.record_compaction(b, Turn("user", [CompactSummaryBlock("So far.")]),
                                  first_turn_id=turns[0].id, last_turn_id=turns[0].id,
                                  replaced_count=1)
        rescued.set_state(f"draft:{b}", "unsent words")
        ids["b"] = b
    with Store.open(db) as store:  # what sessions.db got since: stays as it is
        c = store.create_session(title="chat C, only here").id
        store.append_turn(c, Turn("user", [TextBlock("mine")]))
        store.rename_session(a, "chat A renamed here")
        ids["c"] = c
    return copy, home, ids


def test_importing_a_parley_database_twice_merges_it_once(tmp_path: Path) -> None:
    copy, home, ids = _histories(tmp_path)
    db = home / "sessions.db"
    before_copy = copy.read_bytes()

    first = _run(copy, home)
    assert first.returncode == 0, first.stderr
    assert first.stdout == (
        "Imported rescued.db: 1 chat and 4 messages added, 1 cut-off reply completed, "
        "1 compaction, 1 unsent message; 3 messages were here already.\n")
    with Store.open(db) as store:
        a = _texts(store, ids["a"])
        assert [(t, ab) for _i, t, ab in a] == [
            ("question one", False), ("answer one", False), ("question two", False),
            ("the whole second answer", False), ("question three", False)]
        assert a[3][0] == ids["whole"]
        assert store.get_session(ids["a"]).title == "chat A renamed here"  # not overwritten
        assert store.get_session(ids["a"]).usage.output_tokens == 7  # counted once
        assert [t for _i, t, _a in _texts(store, ids["b"])][:2] == [
            "only in the copy", "its answer"]
        assert len(store.list_compactions(ids["b"])) == 1
        assert [t for _i, t, _a in _texts(store, ids["c"])] == ["mine"]
        assert store.get_state(f"draft:{ids['b']}") == "unsent words"
        image = store.get_turns(ids["a"])[0].blocks[1]
        assert isinstance(image, ImageBlock) and image.data == PNG_1PX
        assert [h.session_id for h in store.search("whole second answer")] == [ids["a"]]
    rows = _rows(db)

    again = _run(copy, home)
    assert again.returncode == 0, again.stderr
    assert again.stdout == ("rescued.db: Nothing new: every chat and message of this Parley "
                            "database is here already.\n")
    assert _rows(db) == rows  # nothing duplicated
    with Store.open(db) as store:
        assert store.get_session(ids["a"]).usage.output_tokens == 7
    assert copy.read_bytes() == before_copy  # the imported file is only read


def test_a_message_whose_place_is_taken_goes_into_another_branch_and_is_said(
        tmp_path: Path) -> None:
    copy, home, ids = _histories(tmp_path)
    with Store.open(home / "sessions.db") as store:  # chat A went on differently here
        mine = store.append_turn(ids["a"], Turn("user", [TextBlock("another third question")]))
    result = _run(copy, home)
    assert result.returncode == 0, result.stderr
    assert ("1 message went into another branch of its chat: the chat went on differently "
            "here") in result.stdout
    assert "left out" not in result.stdout
    with Store.open(home / "sessions.db") as store:  # it shows what it showed here
        assert [t for _i, t, _a in _texts(store, ids["a"])][-2:] == [
            "the whole second answer", "another third question"]
        (point,) = store.branches(ids["a"]).points.values()
        assert (point.turn_id, point.index, point.total) == (mine.id, 1, 2)
        store.show_branch(ids["a"], point.turn_ids[1])
        assert [t for _i, t, _a in _texts(store, ids["a"])][-2:] == [
            "the whole second answer", "question three"]  # the copy's, kept


def test_an_sqlite_file_that_is_not_parleys_is_refused(tmp_path: Path) -> None:
    other = tmp_path / "other.db"
    con = sqlite3.connect(other)
    con.execute("CREATE TABLE notes (t TEXT)")
    con.commit()
    con.close()
    result = _run(other, tmp_path / "home")
    assert result.returncode == 2
    assert "is not a Parley sessions file" in result.stderr and "Traceback" not in result.stderr

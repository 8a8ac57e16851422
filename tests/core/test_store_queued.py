"""Messages queued while a reply streams, through the Store API, on both backends.

They are saved when queued (a crash or a quit keeps them), kept in order per chat,
edited in place, taken back or sent (their row deleted), and go with their chat.
"""

from __future__ import annotations

import sqlite3

import pytest

from parley.core.content import TextBlock, Turn
from parley.core.store import Store
from parley.core.store import schema as S
from parley.core.store.backends import open_store
from parley.core.store.errors import DuplicateTurn, QueuedMessageNotFound, SessionNotFound
from parley.core.store.upgrade.migrations import FileKind, inspect_file
from tests.core.rawdb import raw_rows


@pytest.fixture
def db(any_db: Store) -> Store:
    """This module's tests run on a sessions.db file and on PostgreSQL (tests/core/conftest.py)."""
    return any_db


def texts(db: Store, sid: str) -> list[str]:
    return [m.text for m in db.queued_messages(sid)]


def test_messages_are_kept_in_the_order_queued_per_chat(db):
    one, two = db.create_session(title="one"), db.create_session(title="two")
    for text in ("first", "second", "third"):
        db.queue_message(one.id, text)
    db.queue_message(two.id, "elsewhere")
    assert texts(db, one.id) == ["first", "second", "third"]
    assert texts(db, two.id) == ["elsewhere"]
    assert db.queued_sessions() == {one.id: 3, two.id: 1}
    positions = [m.position for m in db.queued_messages(one.id)]
    assert positions == sorted(positions) and len(set(positions)) == 3


def test_an_edit_keeps_the_place_and_a_take_removes_the_row(db):
    sid = db.create_session().id
    a, b, c = (db.queue_message(sid, t) for t in ("a", "b", "c"))
    edited = db.edit_queued(b.id, "b, better")
    assert (edited.id, edited.position, edited.text) == (b.id, b.position, "b, better")
    assert texts(db, sid) == ["a", "b, better", "c"]
    assert db.take_queued(a.id) == a
    assert db.take_queued(a.id) is None  # already sent or taken back: nothing twice
    assert texts(db, sid) == ["b, better", "c"]
    # A message queued after some were taken goes after the rest, not into a gap.
    db.take_queued(c.id)
    db.queue_message(sid, "d")
    assert texts(db, sid) == ["b, better", "d"]
    with pytest.raises(QueuedMessageNotFound):
        db.edit_queued(c.id, "too late")


def test_blank_text_and_a_missing_chat_are_refused(db):
    sid = db.create_session().id
    with pytest.raises(ValueError):
        db.queue_message(sid, "  \n ")
    with pytest.raises(SessionNotFound):
        db.queue_message("no-such-chat", "hello")
    assert db.queued_sessions() == {}


def test_a_deleted_chat_takes_its_queue_with_it(db):
    gone, kept = db.create_session().id, db.create_session().id
    db.queue_message(gone, "never sent")
    db.queue_message(kept, "still here")
    db.delete_session(gone)
    assert db.queued_sessions() == {kept: 1}
    assert raw_rows(db, "SELECT text FROM queued_messages") == [("still here",)]


def test_the_queue_survives_closing_the_file(tmp_path):
    path = tmp_path / "sessions.db"
    with Store.open(path) as db:
        sid = db.create_session().id
        db.queue_message(sid, "one")
        db.queue_message(sid, "two")
    with Store.open(path) as db:
        assert texts(db, sid) == ["one", "two"]


def test_a_v4_file_made_before_the_queue_gets_it_without_a_version_bump(tmp_path):
    path = tmp_path / "sessions.db"
    with Store.open(path) as db:
        sid = db.create_session(title="old").id
    con = sqlite3.connect(path)
    con.execute("DROP TABLE queued_messages")  # its index goes with it
    con.commit()
    con.close()
    assert inspect_file(path).kind is FileKind.OLDER_V4
    with Store.open(path) as db:
        db.queue_message(sid, "queued in an upgraded file")
        assert texts(db, sid) == ["queued in an upgraded file"]
    info = inspect_file(path)
    assert (info.kind, info.user_version) == (FileKind.CURRENT, 4)
    con = sqlite3.connect(path)
    names = {r[0] for r in con.execute("SELECT name FROM sqlite_master")}
    con.close()
    assert names >= S.QUEUE_OBJECTS


def test_a_postgresql_database_made_before_the_queue_gets_it(postgres_url):
    with open_store(postgres_url) as db:
        sid = db.create_session().id
        # Made before the queue: neither the messages nor their files (queued_files).
        db._w(lambda c: c.exec_driver_sql("DROP TABLE queued_files, queued_messages"))
    with open_store(postgres_url) as db:
        db.queue_message(sid, "kept")
        assert texts(db, sid) == ["kept"]


def test_a_message_whose_turn_was_saved_counts_as_sent_even_if_its_row_stayed(db):
    """Sent as the user turn of its own id: a crash between that turn's save and the
    row's deletion must not send it again at the next start (trial finding Q1)."""
    sid = db.create_session().id
    sent, waiting = db.queue_message(sid, "R2"), db.queue_message(sid, "later")
    db.append_turn(sid, Turn("user", [TextBlock("R2")], id=sent.id))  # then the crash
    assert texts(db, sid) == ["later"]
    assert db.queued_sessions() == {sid: 1}
    with pytest.raises(DuplicateTurn):  # the turns' unique id refuses a second copy
        db.append_turn(sid, Turn("user", [TextBlock("R2")], id=sent.id))
    assert db.take_queued(sent.id) == sent  # the row still goes when asked
    assert texts(db, sid) == [waiting.text]

"""Files attached to queued messages, through the Store API, on both backends.

Their bytes are stored in ``attachments`` (by sha256) when the message is queued and
referenced from it in order; they survive closing the store, are sent with the
message (a turn then holds them), and taking the message back deletes bytes nothing
else uses — never bytes a turn or another queued message still uses.
"""

from __future__ import annotations

import base64
import sqlite3

import pytest

from parley.core.content import ImageBlock, TextBlock, Turn
from parley.core.store import Store
from parley.core.store import schema as S
from parley.core.store.attachments import sha256_hex
from parley.core.store.queued import NewFile, QueuedFile
from parley.core.store.upgrade.migrations import FileKind, inspect_file
from tests.core.images import png
from tests.core.rawdb import raw_rows


@pytest.fixture
def db(any_db: Store) -> Store:
    """This module's tests run on a sessions.db file and on PostgreSQL (tests/core/conftest.py)."""
    return any_db


PNG = png(size=(8, 6))
PDF = b"%PDF-1.4 a small document"


def stored(db: Store) -> set[str]:
    return {r[0] for r in raw_rows(db, "SELECT sha256 FROM attachments")}


def test_a_queued_message_keeps_its_files_in_order_by_sha256(db):
    sid = db.create_session().id
    files = [NewFile("photo.png", "image/png", PNG), NewFile("paper.pdf", "application/pdf", PDF)]
    message = db.queue_message(sid, "look at these", files)
    want = (QueuedFile("photo.png", "image/png", sha256_hex(PNG)),
            QueuedFile("paper.pdf", "application/pdf", sha256_hex(PDF)))
    assert message.files == want
    assert db.queued_messages(sid)[0].files == want
    assert db.queued_file(sha256_hex(PNG)) == PNG
    assert stored(db) == {sha256_hex(PNG), sha256_hex(PDF)}
    only_files = db.queue_message(sid, "", [NewFile("photo.png", "image/png", PNG)])
    assert only_files.text == "" and len(only_files.files) == 1
    with pytest.raises(ValueError):  # neither words nor files
        db.queue_message(sid, " ", [])


def test_taking_it_back_deletes_only_bytes_nothing_else_uses(db):
    sid = db.create_session().id
    shared = db.queue_message(sid, "one", [NewFile("photo.png", "image/png", PNG),
                                             NewFile("paper.pdf", "application/pdf", PDF)])
    other = db.queue_message(sid, "two", [NewFile("again.png", "image/png", PNG)])
    db.take_queued(shared.id)
    assert stored(db) == {sha256_hex(PNG)}  # the PDF went; the other message keeps the PNG
    assert db.queued_messages(sid)[0].files[0].sha256 == sha256_hex(PNG)
    # A turn using the same bytes keeps them when the last queued message lets go.
    block = ImageBlock("image/png", base64.b64encode(PNG).decode("ascii"))
    db.append_turn(sid, Turn("user", [block, TextBlock("sent before")]))
    db.take_queued(other.id)
    assert stored(db) == {sha256_hex(PNG)}
    assert raw_rows(db, "SELECT count(*) FROM queued_files") == [(0,)]


def test_a_turn_deleted_does_not_take_bytes_a_queued_message_holds(db):
    sid = db.create_session().id
    block = ImageBlock("image/png", base64.b64encode(PNG).decode("ascii"))
    turn = db.append_turn(sid, Turn("user", [block, TextBlock("the first")]))
    db.queue_message(sid, "the same picture", [NewFile("photo.png", "image/png", PNG)])
    db.delete_turns(sid, [turn.id])
    assert db.queued_file(sha256_hex(PNG)) == PNG
    other = db.create_session().id
    db.queue_message(other, "kept", [NewFile("paper.pdf", "application/pdf", PDF)])
    db.delete_session(sid)  # its queue goes, and the bytes only it held
    assert stored(db) == {sha256_hex(PDF)}


def test_an_edit_replaces_the_files_and_keeps_the_ones_still_there(db):
    sid = db.create_session().id
    message = db.queue_message(sid, "v1", [NewFile("photo.png", "image/png", PNG),
                                            NewFile("paper.pdf", "application/pdf", PDF)])
    edited = db.edit_queued(message.id, "v2", [NewFile("photo.png", "image/png", PNG)])
    assert (edited.text, [f.name for f in edited.files]) == ("v2", ["photo.png"])
    assert stored(db) == {sha256_hex(PNG)}
    assert db.edit_queued(message.id, "v3").files == edited.files  # text only: files kept


def test_files_survive_closing_the_file_and_an_older_file_gets_the_table(tmp_path):
    path = tmp_path / "sessions.db"
    with Store.open(path) as db:
        sid = db.create_session().id
    con = sqlite3.connect(path)
    for name in ("attachments_keep_queued", "queued_files_release"):
        con.execute(f"DROP TRIGGER {name}")
    con.execute("DROP TABLE queued_files")
    con.commit()
    con.close()
    assert inspect_file(path).kind is FileKind.OLDER_V4
    with Store.open(path) as db:
        db.queue_message(sid, "with a file", [NewFile("photo.png", "image/png", PNG)])
    with Store.open(path) as db:
        assert db.queued_messages(sid)[0].files[0].name == "photo.png"
        assert db.queued_file(sha256_hex(PNG)) == PNG
    con = sqlite3.connect(path)
    names = {r[0] for r in con.execute("SELECT name FROM sqlite_master")}
    con.close()
    assert names >= S.QUEUED_FILE_OBJECTS

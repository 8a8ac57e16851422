"""Attachments in the store: stored once, referenced from turns, freed with their last turn;
and what the providers receive (real SDKs against the fake provider server).

Every test runs on a sessions.db file and on a PostgreSQL database
(tests/core/conftest.py), but the one on v4 files made before attachments existed.
"""

from __future__ import annotations

import base64
import hashlib
import io
import sqlite3

import pytest
from PIL import Image

from parley.core.attachments.files import from_bytes
from parley.core.attachments.limits import MediaRefused, explain_refusal
from parley.core.chat.run import ChatRunner, RunFailed
from parley.core.content import DocumentBlock, ImageBlock, TextBlock, ToolResultBlock, Turn
from parley.core.store import Store
from parley.core.store import schema as S
from parley.core.store.async_store import AsyncStore
from parley.core.store.backends import open_store
from parley.core.store.errors import AttachmentNotFound
from parley.core.store.upgrade.migrations import FileKind, inspect_file
from tests.core.compaction_support import SONNET, SUMMARY, open_env
from tests.core.hubs import fake_hub
from tests.core.images import b64, png
from tests.core.rawdb import raw_rows as any_raw_rows
from tests.fakes.validation import validate_anthropic, validate_openai


@pytest.fixture
def db(any_db: Store) -> Store:
    """This module's tests run on a sessions.db file and on PostgreSQL (tests/core/conftest.py)."""
    return any_db


def pdf() -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", (8, 8), "white").save(buf, "PDF")
    return buf.getvalue()


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def with_image(text: str, data: bytes) -> Turn:
    return Turn("user", [TextBlock(text), ImageBlock("image/png", b64(data), name="picture.png")])


def raw_rows_path(path, sql: str) -> list[tuple]:
    con = sqlite3.connect(path)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


def raw_rows(db: Store, sql: str) -> list[tuple]:
    return any_raw_rows(db, sql)


# --- stored once, referenced, hydrated ---------------------------------------------------


def test_the_same_file_attached_twice_is_stored_once(db):
    data = png()
    a, b = db.create_session(), db.create_session()
    db.append_turn(a.id, with_image("first", data))
    db.append_turn(a.id, with_image("again", data))
    db.append_turn(b.id, with_image("elsewhere", data))
    assert db.attachment_usage() == (1, len(data))
    # The turns hold a reference, not the bytes.
    for (blocks,) in raw_rows(db, "SELECT blocks FROM turns"):
        assert b64(data) not in blocks and f'"attachment":"{sha(data)}"' in blocks
    assert raw_rows(db, "SELECT count(*) FROM turn_attachments") == [(3,)]
    info = db.attachment_infos([sha(data), "f" * 64])
    assert list(info) == [sha(data)]
    assert (info[sha(data)].media_type, info[sha(data)].size_bytes) == ("image/png", len(data))


def test_turns_come_back_with_their_bytes_or_as_references(db):
    data, doc = png(), pdf()
    s = db.create_session()
    turn = Turn("user", [TextBlock("see"), ImageBlock("image/png", b64(data)),
                         DocumentBlock("application/pdf", b64(doc), "spec.pdf")])  # fmt: skip
    db.append_turn(s.id, turn)

    [full] = db.get_turns(s.id)
    image, document = full.blocks[1], full.blocks[2]
    assert isinstance(image, ImageBlock) and image.data == b64(data)
    assert image.attachment_id == sha(data)
    assert isinstance(document, DocumentBlock) and document.data == b64(doc)
    assert (document.name, document.attachment_id) == ("spec.pdf", sha(doc))
    assert db.get_turn(turn.id) == full and db.history(s.id) == [full]

    [light] = db.get_turns(s.id, hydrate=False)
    assert light.blocks[1] == ImageBlock("image/png", None, None, sha(data))
    assert light.blocks[2] == DocumentBlock("application/pdf", "", "spec.pdf", sha(doc))
    assert db.hydrate([light]) == [full]
    assert db.attachment_data(sha(data)) == data
    text_only = Turn("user", [TextBlock("no files")])
    assert db.hydrate([text_only])[0] is text_only


def test_restart_brings_the_files_back(any_target):
    data = png()
    with open_store(any_target) as db:
        s = db.create_session()
        db.append_turn(s.id, with_image("a picture", data))
    with open_store(any_target) as db:
        [turn] = db.get_turns(s.id, hydrate=False)
        ref = turn.blocks[1]
        assert isinstance(ref, ImageBlock) and ref.data is None
        assert ref.name == "picture.png"  # the file name it was attached as
        assert db.attachment_data(ref.attachment_id or "") == data  # the thumbnail's bytes


def test_the_last_session_using_a_file_frees_it(db):
    data, other = png(), png((1, 2, 3))
    a, b = db.create_session(), db.create_session()
    db.append_turn(a.id, with_image("in a", data))
    db.append_turn(b.id, with_image("in b", data))
    db.append_turn(b.id, with_image("only in b", other))
    assert db.attachment_usage()[0] == 2
    db.delete_session(a.id)
    assert db.attachment_usage() == (2, len(data) + len(other))
    db.delete_session(b.id)
    assert db.attachment_usage() == (0, 0)
    assert raw_rows(db, "SELECT count(*) FROM turn_attachments") == [(0,)]
    with pytest.raises(AttachmentNotFound):
        db.attachment_data(sha(data))


def test_forks_share_files_and_keep_them_when_the_parent_goes(db):
    data = png()
    parent = db.create_session(title="p")
    t = db.append_turn(parent.id, with_image("look", data))
    fork = db.fork(parent.id, t.id)
    assert db.attachment_usage()[0] == 1
    db.delete_session(parent.id)
    assert db.get_turns(fork.id)[0].blocks[1].data == b64(data)
    db.delete_session(fork.id)
    assert db.attachment_usage() == (0, 0)


def test_deleting_or_rewriting_turns_frees_what_they_alone_used(db):
    first, second = png(), png((9, 9, 9))
    s = db.create_session()
    keep = db.append_turn(s.id, Turn("user", [TextBlock("text")]))
    db.append_turn(s.id, with_image("a", first))
    assert db.delete_turns_after(s.id, keep.id) == 1
    assert db.attachment_usage() == (0, 0)

    turn = with_image("b", first)
    db.append_turn(s.id, turn)
    replaced = [TextBlock("b"), ImageBlock("image/png", b64(second))]
    db.upsert_turn(s.id, turn.with_blocks(replaced))
    assert db.attachment_infos([sha(first), sha(second)]).keys() == {sha(second)}
    # The same blocks again (a journal write): nothing is released in between.
    db.upsert_turn(s.id, db.get_turn(turn.id))
    assert db.attachment_usage() == (1, len(second))


def test_a_reference_to_a_file_that_is_not_stored_is_refused(db):
    s = db.create_session()
    with pytest.raises(AttachmentNotFound):
        db.append_turn(s.id, Turn("user", [ImageBlock("image/png", attachment_id="0" * 64)]))
    assert db.count_turns(s.id) == 0


def test_files_in_tool_results_and_undecodable_data_stay_inline(db):
    s = db.create_session()
    part = ImageBlock("image/png", b64(png()))
    turn = Turn("user", [ToolResultBlock("t1", (part,)), ImageBlock("image/png", "not base64!")])
    db.append_turn(s.id, turn)
    assert db.get_turns(s.id) == [turn]
    assert db.attachment_usage() == (0, 0)


# --- older v4 files get the attachment store -----------------------------------------------


def test_a_v4_file_made_before_attachments_gets_them_without_a_version_bump(tmp_path):
    path = tmp_path / "sessions.db"
    with Store.open(path) as db:
        s = db.create_session(title="old")
        db.append_turn(s.id, Turn("user", [TextBlock("kept")]))
    con = sqlite3.connect(path)
    for name in ("turns_attachments_insert", "turns_attachments_update",
                 "turns_attachments_delete", "attachments_release"):  # fmt: skip
        con.execute(f"DROP TRIGGER {name}")
    con.execute("DROP TABLE turn_attachments")
    con.execute("DROP TABLE attachments")
    con.commit()
    con.close()
    assert inspect_file(path).kind is FileKind.OLDER_V4

    with Store.open(path) as db:
        assert db.get_turns(s.id)[0].text() == "kept"
        db.append_turn(s.id, with_image("new", png()))
        assert db.attachment_usage()[0] == 1
    info = inspect_file(path)
    assert (info.kind, info.user_version) == (FileKind.CURRENT, 4)
    names = {r[0] for r in raw_rows_path(path, "SELECT name FROM sqlite_master")}
    assert names >= S.ATTACHMENT_OBJECTS


# --- what the providers receive ------------------------------------------------------------


@pytest.fixture
async def env(tmp_path, fake_provider, any_target):
    db = await AsyncStore.open(any_target)
    hub = await fake_hub(db, tmp_path, fake_provider,
                         compatible={"name": "Local", "default_model": "llama3"})
    runner = ChatRunner(db, hub, journal_interval_s=0.02, emit_interval_s=0.0)
    session = await db.create_session()
    yield db, runner, session.id
    await hub.aclose()
    await db.close()


def attachment_blocks(image: bytes, doc: bytes) -> list:
    return [
        TextBlock("What is in these?"),
        from_bytes(image, "chart.png").to_block(),
        from_bytes(doc, "spec.pdf").to_block(),
    ]


async def test_anthropic_receives_image_and_document_blocks(env, fake_provider):
    db, runner, sid = env
    image, doc = png(), pdf()
    fake_provider.script("A chart and a spec.").script("Still there.")
    model = "anthropic:claude-sonnet-4-6"
    assert await runner.send(sid, attachment_blocks(image, doc), model_ref=model)
    await runner.send(sid, [TextBlock("And now?")], model_ref=model)  # from the store

    for req in fake_provider.model_requests:
        body = req.body
        assert validate_anthropic(body) is None
        content = body["messages"][0]["content"]
        assert content[1] == {
            "type": "image",
            "source": {"type": "base64", "media_type": "image/png", "data": b64(image)},
        }
        assert content[2]["type"] == "document" and content[2]["title"] == "spec.pdf"
        assert content[2]["source"]["media_type"] == "application/pdf"
        assert base64.b64decode(content[2]["source"]["data"]) == doc
    assert await db.attachment_usage() == (2, len(image) + len(doc))


async def test_openai_receives_image_url_and_file_parts(env, fake_provider):
    db, runner, sid = env
    image, doc = png(), pdf()
    fake_provider.script("ok").script("ok again")
    assert await runner.send(sid, attachment_blocks(image, doc), model_ref="openai:gpt-5")
    await runner.send(sid, [TextBlock("More?")], model_ref="openai:gpt-5")

    for req in fake_provider.model_requests:
        body = req.body
        assert validate_openai(body) is None
        [first] = [m for m in body["messages"] if m["role"] == "user"][:1]
        parts = first["content"]
        assert parts[1] == {
            "type": "image_url",
            "image_url": {"url": f"data:image/png;base64,{b64(image)}"},
        }
        assert parts[2]["type"] == "file" and parts[2]["file"]["filename"] == "spec.pdf"
        assert parts[2]["file"]["file_data"] == f"data:application/pdf;base64,{b64(doc)}"


async def test_a_server_refusing_images_gets_an_error_naming_the_model(env, fake_provider):
    db, runner, sid = env
    fake_provider.fail("bad_request", message="image input is not supported - hint: mmproj")
    events: list = []
    blocks = [TextBlock("Describe"), from_bytes(png(), "x.png").to_block()]
    assert await runner.send(sid, blocks, model_ref="local:llama3", on_event=events.append) is None
    [failed] = [e for e in events if isinstance(e, RunFailed)]
    turns = await db.get_turns(sid)
    err = explain_refusal(failed.error, model_ref="local:llama3", turns=turns)
    assert isinstance(err, MediaRefused)
    assert "The model 'local:llama3' does not take images" in str(err)
    assert turns[0].role == "user" and isinstance(turns[0].blocks[1], ImageBlock)  # kept


async def test_compaction_adds_files_back_without_storing_them_again(
    tmp_path, fake_provider, any_target
):
    image, doc = png(), pdf()
    async with open_env(tmp_path, fake_provider, at=any_target) as env:
        await env.store.append_turn(env.sid, Turn("user", attachment_blocks(image, doc)))
        # Enough turns that the fake's summary (it names the files too) makes the chat
        # smaller with the files added back.
        await env.seed(6)
        fake_provider.script(SUMMARY)
        result = await env.runner.compact(env.sid, keep_turns=4, model_ref=SONNET)
        assert result.restored_files == ("image (image/png)", "spec.pdf")
        summary = await env.store.get_turn(result.summary_turn_id, hydrate=False)
        files = [b for b in summary.blocks if isinstance(b, ImageBlock | DocumentBlock)]
        refs = [b.attachment_id for b in files]
        assert refs == [sha(image), sha(doc)]
        assert await env.store.attachment_usage() == (2, len(image) + len(doc))
        fake_provider.script("ok")
        await env.send("next", model=SONNET)  # the files go out after the summary
        content = fake_provider.model_requests[-1].body["messages"][0]["content"]
        sent = [c["source"]["data"] for c in content if c["type"] in ("image", "document")]
        assert sent == [b64(image), b64(doc)]

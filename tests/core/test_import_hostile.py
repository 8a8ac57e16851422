"""A hostile ChatGPT export reads nothing outside itself (issue 31, item 1).

The export's folder (or a zip unpacked by ``unzip``, which makes symbolic links of
entries marked as links) holds links to a "secret" file standing in for
``/proc/self/environ`` or ``~/.ssh/id_rsa``, a link to a folder outside, a hard link, a
fake key named ``.png``, a text named ``.pdf``, a file over the size cap, and JSON
whose asset ids are ``..`` and absolute paths. The import goes through, takes the
export's own good image, names every file it did not read and why, and the
secret's bytes are nowhere in sessions.db or its WAL.
"""

from __future__ import annotations

import base64
import io
import json
import os
import shutil
import stat
import subprocess
import zipfile
from pathlib import Path

import pytest
from PIL import Image

from parley.core.content import DocumentBlock, ImageBlock, TextBlock, Turn
from parley.core.convert import NotAConversation
from parley.core.importing import export_folder, export_zip
from parley.core.importing.export_folder import MAX_EXPORT_FILE_BYTES, ExportFolder
from parley.core.importing.files import import_path
from parley.core.store.async_store import AsyncStore
from tests.histories import PNG_BYTES, ChatGPTConversation, image_part, webui_message

SECRET = b"ANTHROPIC_API_KEY=sk-ant-HOSTILE-7f3a9c PGPASSWORD=hunter2-HOSTILE\n"
FAKE_KEY = (b"-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA-HOSTILE-KEY\n"
            b"-----END OPENSSH PRIVATE KEY-----\n")
FAKE_PDF = b"root:x:0:0:root:/root:/bin/bash\nHOSTILE-PASSWD-LINE\n"


def good_png() -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", (8, 6), (20, 120, 200)).save(buf, "PNG")
    return buf.getvalue()


def hostile_conversation() -> dict:
    """One conversation naming every asset the hostile exports hold (and a few paths)."""
    c = ChatGPTConversation("Hostile", "conv-hostile")
    attachments = [
        {"id": "file-Env6", "name": "notes.txt", "mimeType": "text/plain"},
        {"id": "file-Fake2", "name": "report.pdf", "mimeType": "application/pdf"},
        {"id": "file-Big3", "name": "big.txt", "mimeType": "text/plain"},
        {"id": "file-Hard4", "name": "hard.txt", "mimeType": "text/plain"},
        {"id": "../outside/secret.txt", "name": "secret.txt", "mimeType": "text/plain"},
        {"id": "/etc/passwd", "name": "passwd.txt", "mimeType": "text/plain"},
        {"id": "file-Note8", "name": "note.md", "mimeType": "text/markdown"},
    ]
    c.add(c.root, "user", {"content_type": "multimodal_text", "parts": [
        image_part("file-Good1"), image_part("file-Link1"), image_part("file-Key5"),
        image_part("file-Deep1"), image_part("../../outside/secret.txt"),
        "Look at these."]}, metadata={"attachments": attachments})
    c.text("assistant", "I see them.", model="gpt-4o")
    return c.to_json()


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A folder beside the export holding the secret (and a folder of 'images')."""
    folder = tmp_path / "outside"
    (folder / "pictures").mkdir(parents=True)
    (folder / "secret.txt").write_bytes(SECRET)
    (folder / "pictures" / "file-Deep1-tram.png").write_bytes(SECRET)
    return folder


def hostile_folder(export: Path, outside: Path) -> Path:
    export.mkdir(parents=True, exist_ok=True)
    (export / "conversations.json").write_text(json.dumps([hostile_conversation()]))
    (export / "file-Good1-tram.png").write_bytes(good_png())
    (export / "file-Link1-notes.png").symlink_to(outside / "secret.txt")
    (export / "file-Env6-notes.txt").symlink_to(outside / "secret.txt")
    (export / "file-Key5-id_rsa.png").write_bytes(FAKE_KEY)
    (export / "file-Fake2-report.pdf").write_bytes(FAKE_PDF)
    with open(export / "file-Big3-big.txt", "wb") as fh:  # sparse: nothing is written
        fh.truncate(MAX_EXPORT_FILE_BYTES + 10 * 1024 * 1024)
    os.link(outside / "secret.txt", export / "file-Hard4-hard.txt")
    (export / "dalle-generations").symlink_to(outside / "pictures", target_is_directory=True)
    (export / "file-Note8-note.md").write_text("# My own notes\n")
    return export / "conversations.json"


def stored_bytes(folder: Path) -> bytes:
    """Every byte of sessions.db and its companions, as they are on disk."""
    return b"".join(p.read_bytes() for p in sorted(folder.glob("sessions.db*")))


def assert_nowhere(secret: bytes, raw: bytes, turns: list[Turn]) -> None:
    """``secret`` is not in the database's bytes, raw or as base64, nor in any block."""
    assert secret not in raw
    assert base64.b64encode(secret) not in raw
    assert base64.b64encode(secret)[:40] not in raw
    for turn in turns:
        for block in turn.blocks:
            data = getattr(block, "data", None) or ""
            assert secret not in base64.b64decode(data)
            assert secret.decode() not in getattr(block, "text", "")


async def import_and_collect(store: AsyncStore, path: Path):
    summary = await import_path(store, path)
    (chat,) = summary.session_ids
    turns = await store.hydrate(await store.get_turns(chat))
    return summary, turns


def refused_names(lines: list[str]) -> list[str]:
    return [name for name in ("file-Link1-notes.png", "file-Env6-notes.txt",
                              "file-Key5-id_rsa.png", "file-Fake2-report.pdf",
                              "file-Big3-big.txt", "file-Hard4-hard.txt")
            if any(line.startswith(f"{name}: ") for line in lines)]


async def test_a_hostile_export_folder_reads_nothing_outside_it(store, tmp_path, outside):
    # Something saved before the import: a refusal must not touch it.
    before = await store.create_session(title="Saved before")
    await store.append_turn(before.id, Turn("user", [TextBlock("keep me")]))
    path = hostile_folder(tmp_path / "export", outside)

    summary, turns = await import_and_collect(store, path)

    # The export's own image and notes came in, decided by their bytes.
    user = turns[0]
    (image,) = [b for b in user.blocks if isinstance(b, ImageBlock)]
    assert image.media_type == "image/png" and base64.b64decode(image.data) == good_png()
    (doc,) = [b for b in user.blocks if isinstance(b, DocumentBlock)]
    assert (doc.name, doc.media_type) == ("note.md", "text/plain")
    assert base64.b64decode(doc.data) == b"# My own notes\n"
    # Everything else is a note in the message, and named in the summary with why.
    text = user.text()
    for asset in ("file-Link1", "file-Key5", "file-Deep1", "../../outside/secret.txt"):
        assert f"[image not included: {asset}]" in text
    for name in ("notes.txt", "report.pdf", "big.txt", "hard.txt", "secret.txt", "passwd.txt"):
        assert f"[file not included: {name}]" in text
    # The summary's line counts them; its details list every one, under two headings.
    said = summary.text()
    assert "refused)" in said and "6 refused" in said and "file-Link1" not in said
    details = dict(summary.details())
    assert list(details) == ["Not in the export", "Refused, with the reason"]
    assert refused_names(details["Refused, with the reason"]) == [
        "file-Link1-notes.png", "file-Env6-notes.txt", "file-Key5-id_rsa.png",
        "file-Fake2-report.pdf", "file-Big3-big.txt", "file-Hard4-hard.txt"]  # all six
    assert "image: file-Deep1" in details["Not in the export"]
    reasons = dict(summary.refused_files)
    assert reasons["file-Link1-notes.png"].startswith("it is a link to another file")
    assert reasons["file-Env6-notes.txt"].startswith("it is a link to another file")
    assert reasons["file-Key5-id_rsa.png"] == ("its name says it is an image, but its bytes "
                                               "are text")
    assert reasons["file-Fake2-report.pdf"] == "its name says it is a PDF, but its bytes are text"
    assert reasons["file-Big3-big.txt"] == "it is 74.0 MB; Parley imports files of up to 64.0 MB"
    assert reasons["file-Hard4-hard.txt"].startswith("it is also linked elsewhere")
    # The link to a folder outside was not entered: its file is simply not in the export.
    assert ("image", "file-Deep1") in summary.missing_files

    raw = stored_bytes(tmp_path)
    with pytest.raises(AssertionError):  # the scan sees what was imported: the export's notes
        assert_nowhere(b"# My own notes\n", raw, turns)
    for secret in (SECRET, FAKE_KEY, FAKE_PDF):
        assert_nowhere(secret, raw, turns)
    assert [t.text() for t in await store.get_turns(before.id)] == ["keep me"]
    assert (outside / "secret.txt").read_bytes() == SECRET  # read by nobody, changed by nobody


async def test_the_export_says_what_a_file_is_and_its_bytes_must_agree(store, tmp_path):
    # Named neutrally on disk, but the export declares a PDF: its bytes (a PNG) disagree.
    c = ChatGPTConversation("Claims", "conv-claims")
    c.add(c.root, "user", {"content_type": "multimodal_text", "parts": [
        image_part("file-Text1"), "Read the contract."]},
        metadata={"attachments": [
            {"id": "file-Pic2", "name": "contract", "mimeType": "application/pdf"}]})
    c.text("assistant", "Done.", model="gpt-4o")
    export = tmp_path / "export"
    export.mkdir()
    (export / "conversations.json").write_text(json.dumps([c.to_json()]))
    (export / "file-Text1-photo").write_bytes(b"just some words, not a picture\n")
    (export / "file-Pic2-contract").write_bytes(PNG_BYTES)

    summary, turns = await import_and_collect(store, export / "conversations.json")

    assert dict(summary.refused_files) == {
        "file-Text1-photo": "the export says it is an image, but its bytes are text",
        "file-Pic2-contract": "the export says it is a PDF, but its bytes are a PNG image"}
    assert not [b for b in turns[0].blocks if not isinstance(b, TextBlock)]


async def test_files_past_the_total_cap_are_named_not_read(store, tmp_path, monkeypatch):
    monkeypatch.setattr(export_folder, "MAX_EXPORT_FILES_BYTES", len(good_png()) * 3 // 2)
    c = ChatGPTConversation("Two", "conv-two")
    c.add(c.root, "user", {"content_type": "multimodal_text", "parts": [
        image_part("file-One1"), image_part("file-Two2"), image_part("file-One1"), "Two"]})
    export = tmp_path / "export"
    export.mkdir()
    (export / "conversations.json").write_text(json.dumps([c.to_json()]))
    (export / "file-One1-a.png").write_bytes(good_png())
    (export / "file-Two2-b.png").write_bytes(good_png())

    summary, turns = await import_and_collect(store, export / "conversations.json")

    assert len([b for b in turns[0].blocks if isinstance(b, ImageBlock)]) == 2  # One1 twice
    (reason,) = dict(summary.refused_files).values()
    assert reason.startswith("the export's files read before it reach")
    assert "[image not included: file-Two2]" in turns[0].text()


def test_a_file_swapped_for_a_link_after_the_listing_is_not_followed(tmp_path, outside):
    export = tmp_path / "export"
    export.mkdir()
    (export / "file-Swap1-a.png").write_bytes(PNG_BYTES)
    finder = ExportFolder(export)
    finder.by_id = finder._list()  # listed while it was a regular file
    (export / "file-Swap1-a.png").unlink()
    (export / "file-Swap1-a.png").symlink_to(outside / "secret.txt")

    found = finder("file-Swap1", "image")

    assert found is not None and not hasattr(found, "data")
    assert found.why.startswith("it is a link to another file")  # type: ignore[union-attr]


# --- a hostile zip, unpacked by unzip --------------------------------------------------


def link_entry(name: str, target: str) -> zipfile.ZipInfo:
    """A zip entry marked as a symbolic link (Unix mode in the high half of external_attr),
    as ``zip --symlinks`` writes it; ``unzip`` makes a link of it."""
    info = zipfile.ZipInfo(name)
    info.create_system = 3  # Unix
    info.external_attr = (stat.S_IFLNK | 0o777) << 16
    return info


def hostile_zip(path: Path, outside: Path) -> Path:
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("conversations.json", json.dumps([hostile_conversation()]))
        z.writestr("file-Good1-tram.png", good_png())
        z.writestr(link_entry("file-Env6-notes.txt", str(outside / "secret.txt")),
                   str(outside / "secret.txt"))
        z.writestr(link_entry("file-Link1-notes.png", "../outside/secret.txt"),
                   "../outside/secret.txt")
        z.writestr(link_entry("dalle-generations", str(outside / "pictures")),
                   str(outside / "pictures"))
        z.writestr("../file-Key5-id_rsa.png", FAKE_KEY)  # "../": unzip keeps it inside
        z.writestr("user-x/../../file-Fake2-report.pdf", FAKE_PDF)  # lands in user-x/
    return path


@pytest.mark.skipif(shutil.which("unzip") is None, reason="needs Info-ZIP's unzip")
async def test_a_hostile_zip_unpacked_by_unzip_reads_nothing_outside_it(store, tmp_path,
                                                                        outside):
    archive = hostile_zip(tmp_path / "chatgpt-export.zip", outside)
    export = tmp_path / "export"
    export.mkdir()
    # unzip warns about the "../" names (exit 1) and makes the links, as a person's would.
    done = subprocess.run(["unzip", "-q", "-o", str(archive), "-d", str(export)],
                          capture_output=True, check=False)
    assert done.returncode in (0, 1), done.stderr
    assert (export / "file-Env6-notes.txt").is_symlink()
    assert (export / "file-Env6-notes.txt").read_bytes() == SECRET  # the trap is armed

    summary, turns = await import_and_collect(store, export / "conversations.json")

    reasons = dict(summary.refused_files)
    assert reasons["file-Env6-notes.txt"].startswith("it is a link to another file")
    assert reasons["file-Link1-notes.png"].startswith("it is a link to another file")
    assert reasons["file-Key5-id_rsa.png"].endswith("but its bytes are text")
    assert reasons["user-x/file-Fake2-report.pdf"].endswith("but its bytes are text")
    assert (export / "dalle-generations").is_symlink()
    assert ("image", "file-Deep1") in summary.missing_files  # behind the link: not entered
    (image,) = [b for b in turns[0].blocks if isinstance(b, ImageBlock)]
    assert base64.b64decode(image.data) == good_png()
    for secret in (SECRET, FAKE_KEY, FAKE_PDF):
        assert_nowhere(secret, stored_bytes(tmp_path), turns)


async def test_the_hostile_zip_imported_as_it_is_reads_nothing_outside_it(store, tmp_path,
                                                                          outside):
    archive = hostile_zip(tmp_path / "chatgpt-export.zip", outside)
    with zipfile.ZipFile(archive, "a") as z:
        z.writestr("/etc/file-Note8-note.md", SECRET)  # an absolute name
        z.writestr("file-Big3-big.txt", bytes(MAX_EXPORT_FILE_BYTES + 1024),
                   zipfile.ZIP_DEFLATED)  # 64 MB of zeros: 64 KB zipped
    assert archive.stat().st_size < 1024 * 1024

    summary, turns = await import_and_collect(store, archive)

    reasons = dict(summary.refused_files)
    assert reasons["file-Env6-notes.txt"].startswith("it is a link to another file")
    assert reasons["file-Link1-notes.png"].startswith("it is a link to another file")
    assert reasons["../file-Key5-id_rsa.png"] == "its name leads out of the export (“..”)"
    assert ("file", "report.pdf") in summary.missing_files  # user-x/../../: too deep to look
    assert reasons["/etc/file-Note8-note.md"] == (
        "its name is an absolute path, outside the export")
    assert reasons["file-Big3-big.txt"] == ("it is 64.0 MB; Parley imports files of up "
                                            "to 64.0 MB")
    (image,) = [b for b in turns[0].blocks if isinstance(b, ImageBlock)]
    assert base64.b64decode(image.data) == good_png()  # the export's own image came in
    assert ("image", "file-Deep1") in summary.missing_files  # behind the link entry
    for secret in (SECRET, FAKE_KEY, FAKE_PDF):
        assert_nowhere(secret, stored_bytes(tmp_path), turns)
    assert not (tmp_path / "file-Key5-id_rsa.png").exists()  # nothing was unpacked anywhere


async def test_a_zip_of_too_many_entries_is_refused_before_its_directory_is_read(
        store, tmp_path, monkeypatch):
    monkeypatch.setattr(export_zip, "MAX_ZIP_ENTRIES", 3)
    path = tmp_path / "many.zip"
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("conversations.json", json.dumps([hostile_conversation()]))
        for i in range(3):
            z.writestr(f"file-Many{i}-a.png", PNG_BYTES)
    with pytest.raises(NotAConversation, match="a ZIP archive of 4 files, more than the 3"):
        await import_path(store, path)
    assert await store.list_sessions(include_archived=True) == []


async def test_a_damaged_zip_is_refused_in_words(store, tmp_path):
    path = tmp_path / "cut.zip"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("conversations.json", json.dumps([hostile_conversation()]) * 50)
    path.write_bytes(path.read_bytes()[:200])  # cut: no directory left
    with pytest.raises(NotAConversation, match="damaged ZIP archive"):
        await import_path(store, path)


# --- files carried inside the imported file ----------------------------------------------


def jpeg_bytes() -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", (8, 6), (200, 30, 30)).save(buf, "JPEG")
    return buf.getvalue()


def data_url(media_type: str, data: bytes) -> str:
    return f"data:{media_type};base64,{base64.b64encode(data).decode()}"


async def test_inline_images_of_a_history_are_what_their_bytes_say(store, tmp_path):
    ts = 1_714_550_000
    files = [{"type": "image", "url": data_url("image/png", FAKE_KEY), "name": "key.png"},
             {"type": "image", "url": data_url("image/png", jpeg_bytes()), "name": "red.png"}]
    messages = [
        webui_message("u1", None, "user", "Two pictures.", ts, files=files),
        webui_message("a1", "u1", "assistant", "I see one.", ts + 5, model="llama3.1:8b")]
    messages[0]["childrenIds"] = ["a1"]
    chat = {"id": "webui-inline", "title": "Inline",
            "chat": {"title": "Inline", "history": {"messages": {m["id"]: m for m in messages},
                                                    "currentId": "a1"}},
            "updated_at": ts + 5, "created_at": ts}
    path = tmp_path / "chat-export.json"
    path.write_text(json.dumps([chat]))

    summary, turns = await import_and_collect(store, path)

    (image,) = [b for b in turns[0].blocks if isinstance(b, ImageBlock)]
    assert image.media_type == "image/jpeg" and base64.b64decode(image.data) == jpeg_bytes()
    assert "[image not included: key.png]" in turns[0].text()
    assert summary.refused_files == [
        ("key.png", "the export says it is an image, but its bytes are text")]
    assert "1 file left out (1 refused)" in summary.text()
    assert summary.details() == [("Refused, with the reason", [
        "key.png: the export says it is an image, but its bytes are text"])]
    assert_nowhere(FAKE_KEY, stored_bytes(tmp_path), turns)


async def test_files_of_one_imported_conversation_are_what_their_bytes_say(store, tmp_path):
    def b64(data: bytes) -> str:
        return base64.b64encode(data).decode()

    conversation = [
        {"role": "user", "content": [
            {"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                         "data": b64(FAKE_KEY)}},
            {"type": "document", "source": {"type": "base64", "media_type": "application/pdf",
                                            "data": b64(FAKE_PDF)}},
            {"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                         "data": b64(good_png())}},
            {"type": "text", "text": "What are these?"}]},
        {"role": "assistant", "content": [{"type": "text", "text": "A picture."}]},
    ]
    path = tmp_path / "messages.json"
    path.write_text(json.dumps(conversation))

    summary = await import_path(store, path)

    assert summary.single is not None
    turns = await store.hydrate(await store.get_turns(summary.session_ids[0]))
    (image,) = [b for b in turns[0].blocks if isinstance(b, ImageBlock)]
    assert base64.b64decode(image.data) == good_png()
    assert not [b for b in turns[0].blocks if isinstance(b, DocumentBlock)]
    text = turns[0].text()
    assert "not imported: it claims to be an image, but its bytes are text" in text
    assert "not imported: it claims to be a PDF, but its bytes are text" in text
    assert ("2 attached file(s) were not what they claimed to be (their bytes are another "
            "kind); each was replaced by a placeholder.") in summary.single.lost
    for secret in (FAKE_KEY, FAKE_PDF):
        assert_nowhere(secret, stored_bytes(tmp_path), turns)


async def test_a_zipped_conversations_json_over_the_cap_is_refused_unread(store, tmp_path,
                                                                         monkeypatch):
    from parley.core.importing import files
    from parley.core.importing.conversation import ImportTooLarge

    monkeypatch.setattr(files, "MAX_HISTORY_BYTES", 4096)
    path = tmp_path / "bomb.zip"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("conversations.json", "[" + " " * 100_000 + "]")  # 100 KB: ~200 B zipped
    with pytest.raises(ImportTooLarge):
        await import_path(store, path)
    assert await store.list_sessions(include_archived=True) == []

"""Attaching files in the composer: drop, paste, Ctrl+O, the tray, sending.

Real windows on a real sessions.db, the real SDKs against the fake provider
server: what the server receives is what the person attached.
"""

from __future__ import annotations

import base64
import io
import json
import os
from pathlib import Path
from typing import Any

import pytest
from PIL import Image
from PySide6.QtCore import QMimeData, Qt, QUrl
from PySide6.QtGui import QImage
from PySide6.QtWidgets import QApplication, QMessageBox

from parley.core.attachments.files import AttachmentTooLarge, text_file_block
from parley.core.content import TextBlock, Turn
from parley.gui import dialogs
from parley.gui.chat import attach as chat_attach
from tests.gui.answers import open_chat
from tests.gui.helpers import drop, png, ready

pytestmark = pytest.mark.timeout(60)

PDF = (b"%PDF-1.4\n1 0 obj << /Type /Catalog /Pages 2 0 R >> endobj\n"
       b"2 0 obj << /Type /Pages /Kids [3 0 R] /Count 1 >> endobj\n"
       b"3 0 obj << /Type /Page /Parent 2 0 R >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n")


# -- helpers ------------------------------------------------------------------------------
def b64(path: Path) -> str:
    return base64.b64encode(path.read_bytes()).decode("ascii")


def settled(driver: Any, w: Any, n: int, timeout: float = 5.0) -> None:
    """Wait until the open chat has ``n`` files read and nothing in flight.

    ``timeout`` (seconds) is longer where the wait holds CPU-bound image work (a
    downscale or JPEG re-encode), which on a loaded two-core machine can take seconds.
    """
    driver.until(lambda: len(ready(w)) == n and w.tasks.pending == 0
                 and len(w.chat.attachments.pending()) == n, timeout=timeout)


def open_window(driver: Any, fake: Any, api: str) -> Any:
    if api == "anthropic":
        return driver.configured()
    # OpenAI set up at the fake's address (OPENAI_BASE_URL away from api.openai.com would
    # make it an OpenAI-compatible server, which takes no PDF).
    w = driver.configured(openai=True)
    assert w.stack.currentWidget() is w.chat_page
    assert (w.chat.current_model() or "").startswith("openai:")
    return w


def user_contents(fake: Any) -> list[list[dict[str, Any]]]:
    """The last user message of each chat request (the title requests left out)."""
    out = []
    for request in fake.model_requests:
        content = [m for m in request.body["messages"] if m["role"] == "user"][-1]["content"]
        parts = content if isinstance(content, list) else [{"type": "text", "text": content}]
        if not parts[0].get("text", "").startswith("Write a title"):
            out.append(parts)
    return out


def last_user_content(fake: Any) -> list[dict[str, Any]]:
    return user_contents(fake)[-1]


def problems(w: Any) -> list[Any]:
    """Record the problems the window shows (directly, or from a background task)."""
    shown: list[Any] = []
    w.show_problem = w.tasks.on_user_error = shown.append
    return shown


# -- dropping and sending: both APIs -------------------------------------------------------
@pytest.mark.parametrize("api", ["anthropic", "openai"])
def test_dropped_files_reach_the_provider_as_blocks(driver, fake_provider, tmp_path, api):
    w = open_window(driver, fake_provider, api)
    image = png(tmp_path / "chart.png")
    notes = tmp_path / "notes.py"
    notes.write_text("print('hello')\n", encoding="utf-8")
    report = tmp_path / "report.pdf"
    report.write_bytes(PDF)

    assert drop(w.composer, [image, notes, report])
    settled(driver, w, 3)
    tray = w.composer_bar.tray
    assert tray.isVisible() and [i.kind for i in tray.items()] == ["image", "text", "document"]
    assert tray.items()[2].detail.startswith("PDF · 1 page")
    assert w.composer_bar.button.isEnabled()

    fake_provider.script("A chart, a script and a report.")
    driver.send("What are these?", wait=True)
    assert not tray.isVisible() and w.chat.attachments.pending() == []
    content = last_user_content(fake_provider)
    if api == "anthropic":
        assert content[0]["type"] == "image"
        assert content[0]["source"] == {"type": "base64", "media_type": "image/png",
                                        "data": b64(image)}
        assert content[1]["type"] == "text" and content[1]["text"].startswith(
            "File: notes.py\n```python\nprint('hello')\n```")
        assert content[2]["type"] == "document"
        assert content[2]["source"]["media_type"] == "application/pdf"
        assert content[2]["source"]["data"] == b64(report)
        assert content[3]["type"] == "text" and content[3]["text"] == "What are these?"
    else:
        assert content[0] == {"type": "image_url",
                              "image_url": {"url": f"data:image/png;base64,{b64(image)}"}}
        assert content[1]["type"] == "text" and content[1]["text"].startswith("File: notes.py")
        assert content[2]["type"] == "file"
        assert content[2]["file"]["file_data"].endswith(b64(report))
        assert content[3] == {"type": "text", "text": "What are these?"}
    assert driver.last_text() == "A chart, a script and a report."


def test_a_drop_on_the_transcript_attaches_too(driver, tmp_path):
    w = driver.configured()
    assert drop(w.transcript.list_view, [png(tmp_path / "a.png")])
    settled(driver, w, 1)
    assert w.composer_bar.tray.items()[0].name == "a.png"


# -- paste ---------------------------------------------------------------------------------
def test_pasted_image_is_attached_and_sent_alone(driver, fake_provider, qtbot):
    w = driver.configured()
    image = QImage(64, 48, QImage.Format.Format_RGB32)
    image.fill(Qt.GlobalColor.darkCyan)
    QApplication.clipboard().setImage(image)
    w.composer.setFocus()
    qtbot.keyClick(w.composer, Qt.Key.Key_V, Qt.KeyboardModifier.ControlModifier)
    settled(driver, w, 1)
    assert w.composer.text() == ""  # nothing typed: the image went to the tray
    item = w.composer_bar.tray.items()[0]
    assert item.name == "Pasted image.png" and "64×48" in item.detail

    fake_provider.script("A teal rectangle.")
    assert w.composer_bar.button.isEnabled()  # files alone can be sent
    qtbot.keyClick(w.composer, Qt.Key.Key_Return)
    driver.until(lambda: driver.last_text() == "A teal rectangle.", timeout=10)
    content = last_user_content(fake_provider)
    assert [b["type"] for b in content] == ["image"]
    sent = Image.open(io.BytesIO(base64.b64decode(content[0]["source"]["data"])))
    assert sent.format == "PNG" and sent.size == (64, 48)

    QApplication.clipboard().setText("just words")
    qtbot.keyClick(w.composer, Qt.Key.Key_V, Qt.KeyboardModifier.ControlModifier)
    assert w.composer.text() == "just words" and w.chat.attachments.pending() == []


def test_pasted_files_are_attached(driver, qtbot, tmp_path):
    w = driver.configured()
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(png(tmp_path / "copied.png")))])
    QApplication.clipboard().setMimeData(mime)
    w.composer.setFocus()
    qtbot.keyClick(w.composer, Qt.Key.Key_V, Qt.KeyboardModifier.ControlModifier)
    settled(driver, w, 1)
    assert w.composer_bar.tray.items()[0].name == "copied.png" and w.composer.text() == ""


# -- Ctrl+O --------------------------------------------------------------------------------
def test_ctrl_o_opens_the_dialog_and_attaches_the_chosen_files(driver, qtbot, tmp_path):
    w = driver.configured()
    notes = tmp_path / "notes.md"
    notes.write_text("# Notes\n", encoding="utf-8")
    dialogs.answers.append([png(tmp_path / "one.png"), notes])
    w.composer.setFocus()
    qtbot.keyClick(w.composer, Qt.Key.Key_O, Qt.KeyboardModifier.ControlModifier)
    settled(driver, w, 2)
    assert [i.name for i in w.composer_bar.tray.items()] == ["one.png", "notes.md"]


# -- restart, storage ----------------------------------------------------------------------
def test_after_a_restart_the_sent_image_shows_again(driver, fake_provider, tmp_path):
    w = driver.configured()
    image = png(tmp_path / "photo.png", (120, 90))
    assert drop(w.composer, [image])
    settled(driver, w, 1)
    fake_provider.script("Nice photo.")
    driver.send("Look", wait=True)
    sid = w.session_id
    driver.close(w)

    again = driver.open()
    driver.until(lambda: again.session_id == sid and len(again.chat.turns) == 2)
    first = again.chat.turns[0]
    assert [b.type for b in first.blocks] == ["image", "text"]
    assert first.blocks[0].data == b64(image)  # the bytes came back from the store
    pieces = again.transcript.list_view.layout_of(0).pieces
    assert sum("<img" in p.piece.doc.toHtml() for p in pieces) == 1
    assert again.composer_bar.tray.count() == 0


def test_the_same_file_sent_twice_is_stored_once(driver, fake_provider, tmp_path):
    w = driver.configured()
    image = png(tmp_path / "same.png", (50, 50))
    for n in range(2):
        assert drop(w.composer, [image])
        settled(driver, w, 1)
        fake_provider.script(f"seen {n}")
        driver.send(f"again {n}", wait=True)
    sent = [c[0]["source"]["data"] for c in user_contents(fake_provider)]
    assert sent == [b64(image)] * 2
    assert driver.run(w.store.attachment_usage()) == (1, image.stat().st_size)


def test_the_same_file_twice_in_one_message_is_attached_once(driver, tmp_path):
    w = driver.configured()
    image = png(tmp_path / "dup.png")
    drop(w.composer, [image])
    settled(driver, w, 1)
    drop(w.composer, [image])
    driver.until(lambda: w.tasks.pending == 0 and len(w.chat.attachments.pending()) == 1)
    assert "already attached" in w.statusBar().currentMessage()


# -- limits --------------------------------------------------------------------------------
def test_an_oversized_image_is_refused_when_downscaling_is_declined(driver, tmp_path,
                                                                    monkeypatch):
    w = driver.configured()
    asked: list[AttachmentTooLarge] = []
    monkeypatch.setattr(chat_attach, "ask_downscale",
                        lambda _parent, error: asked.append(error) or False)
    assert drop(w.composer, [png(tmp_path / "panorama.png", (9000, 100))])
    driver.until(lambda: asked and w.tasks.pending == 0)
    assert "panorama.png" in asked[0].message and "8000 px" in asked[0].message
    assert asked[0].can_downscale
    assert w.chat.attachments.pending() == [] and not w.composer_bar.tray.isVisible()
    assert "“panorama.png” was not attached" in w.statusBar().currentMessage()


def test_an_oversized_image_is_downscaled_when_accepted(driver, fake_provider, tmp_path):
    w = driver.configured()
    assert drop(w.composer, [png(tmp_path / "panorama.png", (9000, 100))])

    def question() -> QMessageBox | None:
        boxes = [b for b in w.findChildren(QMessageBox) if b.isVisible()]
        return boxes[0] if boxes else None

    driver.until(question)  # the real dialog, window-modal, the loop still running
    box = question()
    assert "“panorama.png” is too large" in box.text() and "8000 px" in box.text()
    downscale = next(b for b in box.buttons() if b.text() == "Make smaller")
    downscale.click()
    settled(driver, w, 1, timeout=20)
    att = ready(w)[0].attachment
    assert (att.width, att.height) == (8000, 89) and "downscaled" in att.note
    assert w.statusBar().currentMessage().startswith(
        "“panorama.png” was downscaled from 9000×100 to 8000×89 px to fit Anthropic's limits: ")
    assert "8000×89" in w.composer_bar.tray.items()[0].detail
    fake_provider.script("Wide.")
    driver.send("", wait=False)
    driver.until(lambda: driver.last_text() == "Wide.", timeout=10)
    sent = last_user_content(fake_provider)[0]["source"]["data"]
    assert Image.open(io.BytesIO(base64.b64decode(sent))).size == (8000, 89)


def faint_noise_png(path: Path, side: int = 1500) -> Path:
    """A PNG over Anthropic's 5 MB (as base64) whose pixels fit once re-encoded as JPEG."""
    raw = bytes(b & 15 for b in os.urandom(side * side * 3))
    Image.frombytes("RGB", (side, side), raw).save(path, "PNG", compress_level=1)
    return path


def test_a_refusal_and_the_make_smaller_question_come_one_at_a_time(driver, tmp_path):
    # Trial 16: big.bin and bigpic.png attached together opened the question on top of
    # the refusal, hiding its text; and bigpic.png was then "downscaled from 3000×3000 to
    # 3000×3000 px" and renamed .jpg without a word.
    w = driver.configured()
    binary = tmp_path / "big.bin"
    binary.write_bytes(bytes(range(256)) * 64)
    assert drop(w.composer, [binary, faint_noise_png(tmp_path / "bigpic.png")])

    def shown() -> list[QMessageBox]:
        return [b for b in w.findChildren(QMessageBox) if b.isVisible()]

    seen: list[list[str]] = []
    for _ in range(2):
        driver.until(lambda: len(shown()) == 1, timeout=20)
        driver.qtbot.wait(700)  # a second box would have come by now (250 ms batch)
        boxes = shown()
        seen.append([b.text() for b in boxes])
        assert len(boxes) == 1, seen
        box = boxes[0]
        button = next((b for b in box.buttons() if b.text() == "Make smaller"),
                      box.defaultButton())
        button.click()
        driver.until(lambda box=box: not box.isVisible())
    assert any("big.bin" in t[0] for t in seen) and any("bigpic.png" in t[0] for t in seen)
    settled(driver, w, 1, timeout=20)
    att = ready(w)[0].attachment
    assert (att.name, att.width, att.media_type) == ("bigpic.jpg", 1500, "image/jpeg")
    status = w.statusBar().currentMessage()
    assert status.startswith("“bigpic.png” was re-encoded as JPEG to fit Anthropic's limits: ")
    assert "downscaled" not in status and status.endswith("It is attached as “bigpic.jpg”.")


def test_unsupported_and_unreadable_files_are_refused_by_name(driver, tmp_path):
    w = driver.configured()
    shown = problems(w)
    archive = tmp_path / "archive.zip"
    archive.write_bytes(b"PK\x03\x04" + bytes(range(256)) * 4)
    blob = tmp_path / "blob.bin"
    blob.write_bytes(bytes(range(256)) * 8)
    assert drop(w.composer, [archive, blob, tmp_path])  # a folder too
    driver.until(lambda: len(shown) == 1 and w.tasks.pending == 0)  # one dialog for all
    assert w.chat.attachments.pending() == [] and w.composer_bar.tray.count() == 0
    assert sorted(type(e).__name__ for e in shown[0].problems) == \
        ["FileUnreadable", "UnsupportedFile", "UnsupportedFile"]
    messages = shown[0].message
    assert messages.startswith("3 files were not attached:")
    assert "“archive.zip”" in messages and "ZIP archive" in messages
    assert "“blob.bin”" in messages and "a binary file" in messages
    assert "it is a folder" in messages


def test_an_empty_file_is_refused_and_one_sent_before_says_empty(driver, tmp_path):
    # Trial 16: a 0-byte file was "Text · 1 line · 0 B" in the tray, "1 line · 1 B" once
    # sent, and went out as an empty code block. Refused now, as Claude and ChatGPT do.
    w = driver.configured()
    shown = problems(w)
    empty = tmp_path / "empty.txt"
    empty.write_bytes(b"")
    notes = tmp_path / "notes.txt"
    notes.write_text("todo\n", encoding="utf-8")
    assert drop(w.composer, [empty, notes])
    driver.until(lambda: len(shown) == 1 and w.tasks.pending == 0)
    assert shown[0].message.startswith("“empty.txt” can't be attached: it is empty (0 bytes)")
    assert [p.name for p in w.chat.attachments.pending()] == ["notes.txt"]

    # A chat that holds an empty file from before says so, not "1 line · 1 B".
    open_chat(driver, w, [Turn("user", [TextBlock("Here"), text_file_block("old.txt", "")]),
                          Turn("assistant", [TextBlock("Nothing in it.")])])
    text = w.transcript.list_view.layout_of(0, fresh=True).plain_text()
    assert "old.txt · empty" in text and "1 B" not in text and "line" not in text


# -- the tray ------------------------------------------------------------------------------
def test_remove_takes_a_file_out_with_the_mouse_or_the_keyboard(driver, qtbot, tmp_path):
    w = driver.configured()
    notes = tmp_path / "notes.txt"
    notes.write_text("todo\n", encoding="utf-8")
    drop(w.composer, [png(tmp_path / "a.png"), notes])
    settled(driver, w, 2)
    tray = w.composer_bar.tray
    first = tray.entries[0].remove_button
    assert first.accessibleName() == "Remove a.png" and first.focusPolicy() & Qt.TabFocus
    qtbot.mouseClick(first, Qt.MouseButton.LeftButton)
    assert [p.name for p in w.chat.attachments.pending()] == ["notes.txt"]
    assert [i.name for i in tray.items()] == ["notes.txt"]
    button = tray.entries[0].remove_button
    button.setFocus()
    qtbot.keyClick(button, Qt.Key.Key_Delete)
    assert w.chat.attachments.pending() == [] and not tray.isVisible()
    assert not w.composer_bar.button.isEnabled()  # no text, no file: nothing to send


def test_a_file_shows_as_being_read_until_it_is_ready(driver, tmp_path):
    w = driver.configured()
    w.chat.attachments.add_paths([png(tmp_path / "slow.png")])
    assert [(i.kind, i.detail) for i in w.composer_bar.tray.items()] == \
        [("reading", "Reading file…")]
    send = w.composer_bar.button
    assert not send.isEnabled() and "Reading" in send.toolTip()  # nothing to send yet
    settled(driver, w, 1)
    assert w.composer_bar.tray.items()[0].kind == "image"
    assert send.isEnabled() and send.toolTip() == "Send (Enter)"


def test_each_chat_keeps_its_own_pending_files(driver, fake_provider, tmp_path):
    w = driver.configured()
    fake_provider.script("ok")
    driver.send("first chat", wait=True)
    chat_a = w.session_id
    drop(w.composer, [png(tmp_path / "for-a.png")])
    settled(driver, w, 1)

    w.window_commands.new_session()
    driver.until(lambda: w.session_id is None and w.tasks.pending == 0)
    assert w.chat.attachments.pending() == [] and w.composer_bar.tray.count() == 0
    drop(w.composer, [png(tmp_path / "for-new.png")])
    settled(driver, w, 1)

    w.window_commands.open_session(chat_a)
    driver.until(lambda: w.session_id == chat_a and w.tasks.pending == 0)
    assert [i.name for i in w.composer_bar.tray.items()] == ["for-a.png"]
    w.window_commands.new_session()
    driver.until(lambda: w.session_id is None and w.tasks.pending == 0)
    assert [i.name for i in w.composer_bar.tray.items()] == ["for-new.png"]


def test_files_come_back_when_the_send_fails_before_the_run(driver, fake_provider, tmp_path,
                                                            monkeypatch):
    from parley.core.errors import ParleyError

    w = driver.configured()
    fake_provider.script("ok")
    driver.send("hello", wait=True)
    shown = problems(w)

    async def refuse(*_args, **_kwargs):
        raise ParleyError("The chat is busy.")

    monkeypatch.setattr(w.chat.runner, "send", refuse)
    drop(w.composer, [png(tmp_path / "keep.png")])
    settled(driver, w, 1)
    driver.send("with a file")
    driver.until(lambda: shown and w.tasks.pending == 0)
    assert [p.name for p in w.chat.attachments.pending()] == ["keep.png"]
    assert w.composer.text() == "with a file"
    assert json.dumps([b.type for b in w.chat.turns[-1].blocks]) == '["text"]'  # nothing new


def test_a_model_switch_checks_pending_files_again_before_sending(driver, fake_provider,
                                                                 tmp_path, qtbot):
    w = driver.open(env={"OPENAI_API_KEY": "test-openai-key",
                         "OPENAI_BASE_URL": fake_provider.openai_own_url,
                         "ANTHROPIC_API_KEY": "test-anthropic-key",
                         "ANTHROPIC_BASE_URL": fake_provider.anthropic_base_url})
    w.chat.models.choose_model("openai:gpt-5")
    assert drop(w.composer, [png(tmp_path / "wide.png", (9000, 100))])
    settled(driver, w, 1)  # OpenAI takes 9000 px
    w.chat.models.choose_model("anthropic:claude-sonnet-4-6")
    qtbot.keyClicks(w.composer, "see this")

    dialogs.answers.append(False)  # "Cancel": nothing is sent, everything stays
    qtbot.keyClick(w.composer, Qt.Key.Key_Return)
    driver.until(lambda: not dialogs.answers and w.tasks.pending == 0)
    assert fake_provider.model_requests == [] and w.composer.text() == "see this"
    assert "Remove “wide.png”" in w.statusBar().currentMessage()

    dialogs.answers.append(True)  # "Downscale": the tray holds the smaller image
    qtbot.keyClick(w.composer, Qt.Key.Key_Return)
    driver.until(lambda: not dialogs.answers and w.tasks.pending == 0)
    assert ready(w)[0].attachment.width == 8000 and fake_provider.model_requests == []
    fake_provider.script("Seen.")
    qtbot.keyClick(w.composer, Qt.Key.Key_Return)
    driver.until(lambda: driver.last_text() == "Seen.", timeout=10)
    assert [b["type"] for b in last_user_content(fake_provider)] == ["image", "text"]


def test_a_pdf_is_refused_for_a_server_that_reads_none(driver, fake_provider, tmp_path):
    w = driver.configured()
    config = driver.run(w.hub.add_provider(
        "openai_compatible", base_url=fake_provider.openai_base_url, api_key="test-key",
        default_model="llama3.2:3b"))
    w.chat.models.choose_model(f"{config.id}:llama3.2:3b")
    shown = problems(w)
    report = tmp_path / "report.pdf"
    report.write_bytes(PDF)
    assert drop(w.composer, [report])
    driver.until(lambda: shown and w.tasks.pending == 0)
    assert "“report.pdf” can't be sent to this OpenAI-compatible server" in shown[0].message
    assert w.chat.attachments.pending() == []


def test_editing_a_message_shows_its_files_to_keep_remove_or_add(driver, fake_provider,
                                                                 tmp_path):
    w = driver.configured()
    image = png(tmp_path / "first.png")
    notes = tmp_path / "notes.txt"
    notes.write_text("line one\nline two\n", encoding="utf-8")
    assert drop(w.composer, [image, notes])
    settled(driver, w, 2)
    fake_provider.script("Seen.")
    driver.send("Describe them", wait=True)
    original_sid = w.chat.session_id
    later = tmp_path / "later.txt"
    later.write_text("for the next message\n", encoding="utf-8")
    assert drop(w.composer, [later])  # pending for the next message
    settled(driver, w, 1)
    w.composer.clear()

    driver.qtbot.keyClick(w.composer, Qt.Key.Key_Up)  # edit the last message
    assert w.chat.editor.editing is not None
    assert w.composer.text() == "Describe them"  # the typed text only, not the file's
    settled(driver, w, 2)  # the message's own files, not the pending one
    assert [p.name for p in w.chat.attachments.pending()] == ["first.png", "notes.txt"]
    tray = w.composer_bar.tray
    notes_key = w.chat.attachments.pending()[1].key
    tray.remove_requested.emit(notes_key)  # its ✕
    second = png(tmp_path / "second.png", color="#3c7fc1")
    assert drop(w.composer, [second])
    settled(driver, w, 2)
    w.composer.set_text("Compare them")
    fake_provider.script("Compared.")
    driver.qtbot.keyClick(w.composer, Qt.Key.Key_Return)
    driver.until(lambda: driver.last_text() == "Compared."
                 and not w.composer_bar.busy and w.tasks.pending == 0, timeout=10)
    assert w.chat.session_id == original_sid  # the edit is a branch of the same chat

    content = last_user_content(fake_provider)
    assert [c["type"] for c in content] == ["image", "image", "text"]
    assert content[0]["source"]["data"] == b64(image)
    assert content[1]["source"]["data"] == b64(second)
    assert content[2]["text"] == "Compare them"
    tree = driver.run(w.store.get_tree(original_sid))
    assert tree[0].turn.text().endswith("Describe them")  # the original is unchanged
    assert not tree[0].on_path
    # The edit is a branch of the chat: ‹ on the message shows the original again; the
    # chat's pending file stays in the tray meanwhile (the chat is the same).
    driver.until(lambda: w.transcript.branch_of(w.chat.turns[0].id) == (2, 2))
    assert w.chat.opener.switch_branch(w.chat.turns[0].id, -1)
    driver.until(lambda: w.chat.turns[0].text().endswith("Describe them")
                 and w.tasks.pending == 0)
    assert [p.name for p in w.chat.attachments.pending()] == ["later.txt"]


def test_cancelling_an_edit_brings_back_the_pending_files(driver, fake_provider, tmp_path):
    w = driver.configured()
    image = png(tmp_path / "first.png")
    assert drop(w.composer, [image])
    settled(driver, w, 1)
    fake_provider.script("Seen.")
    driver.send("Look", wait=True)
    later = tmp_path / "later.txt"
    later.write_text("next\n", encoding="utf-8")
    assert drop(w.composer, [later])
    settled(driver, w, 1)
    w.composer.clear()
    driver.qtbot.keyClick(w.composer, Qt.Key.Key_Up)
    settled(driver, w, 1)
    assert [p.name for p in w.chat.attachments.pending()] == ["first.png"]
    driver.qtbot.keyClick(w.composer, Qt.Key.Key_Escape)  # cancel the edit
    assert w.chat.editor.editing is None and w.composer.text() == ""
    assert [p.name for p in w.chat.attachments.pending()] == ["later.txt"]

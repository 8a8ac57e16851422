"""File ▸ Import of chat histories on the real window: a progress dialog, a summary, the
chats listed (their branches inside them), Cancel imports nothing; Markdown opens
as a chat."""

from __future__ import annotations

import io
import json
import threading

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QPushButton

from parley.core.content import TextBlock, Turn
from parley.gui.dialogs import export_dialog
from parley.gui.dialogs.import_dialog import ImportProgress
from parley.gui.dialogs.import_summary import ImportSummaryDialog
from tests.gui.transcript_reading import error_text, notice_text
from tests.histories import (
    ChatGPTConversation,
    chatgpt_export,
    claude_export,
    image_part,
    lisbon_trip,
    write_chatgpt_folder,
)

pytestmark = pytest.mark.timeout(90)


@pytest.fixture(autouse=True)
def _no_scripted_files():
    yield
    export_dialog.answers.clear()


def _summary_box(w) -> ImportSummaryDialog | None:
    boxes = [b for b in w.findChildren(ImportSummaryDialog, "import-summary") if b.isVisible()]
    return boxes[0] if boxes else None


def _import_from_the_command_line(driver, tmp_path) -> None:
    """``parley --import`` of a Claude.ai export into the driver's home, as the command
    runs it (its own event loop: another thread than this test's)."""
    from parley.core.cli.import_file import import_only

    export = tmp_path / "conversations.json"
    export.write_text(json.dumps(claude_export()), encoding="utf-8")
    codes: list[int] = []
    worker = threading.Thread(
        target=lambda: codes.append(import_only(export, driver.home, out=io.StringIO())))
    worker.start()
    worker.join(60)
    assert codes == [0]


def _all(driver, w) -> list:
    return driver.run(w.store.list_sessions(limit=10_000, include_archived=True))


def test_a_chatgpt_history_imports_with_a_summary_and_lists_its_chats(driver, tmp_path):
    w = driver.configured()
    lisbon, _ = lisbon_trip()
    path = write_chatgpt_folder(tmp_path / "export", [lisbon.to_json(), *chatgpt_export(20)],
                                {"file-TramPhoto1-tram.png": "file-TramPhoto1"})
    export_dialog.answers.append(path)

    assert w.window_commands.import_conversation() is True
    driver.until(lambda: _summary_box(w) is not None, timeout=30)

    text = _summary_box(w).text()
    assert text.startswith("Imported conversations.json: 21 chats, 215 messages, 4 other branches "
                           "from a ChatGPT export; 2 files left out (2 not in the export).")
    box = _summary_box(w)
    assert box.details_button is not None
    assert box.show_details().sections() == {
        "Not in the export": ["image: file-NotInExport9", "image: file-DalleTram77"]}
    box.details_dialog.reject()
    listed = _all(driver, w)
    assert len(listed) == 21  # the other branches are inside their chats: no more sessions
    assert all(w.sidebar.model.has(s.id) for s in listed)
    assert w.import_progress is None  # the progress dialog is gone
    _summary_box(w).accept()

    # The same file again: nothing new, and the summary says so.
    export_dialog.answers.append(path)
    assert w.window_commands.import_conversation() is True
    driver.until(lambda: _summary_box(w) is not None, timeout=30)
    assert _summary_box(w).text() == ("conversations.json: Nothing new: the 21 conversations of "
                                      "this ChatGPT export were imported before.")
    assert _summary_box(w).details_button is None  # nothing to list
    assert len(_all(driver, w)) == 21


def test_cancel_in_the_progress_dialog_imports_nothing(driver, tmp_path, monkeypatch):
    w = driver.configured()
    path = tmp_path / "conversations.json"
    path.write_text(json.dumps(chatgpt_export(100, turns=6)), encoding="utf-8")
    export_dialog.answers.append(path)
    seen: list[int] = []
    clicked = threading.Event()
    shown = ImportProgress.progress

    def held(self, done: int, total: int) -> None:  # store thread: wait for the click
        shown(self, done, total)
        if done == 1:
            assert clicked.wait(20)

    monkeypatch.setattr(ImportProgress, "progress", held)

    assert w.window_commands.import_conversation() is True
    driver.until(lambda: getattr(w, "import_progress", None) is not None)
    dialog = w.import_progress.dialog

    def first_step(done: int, _total: int) -> None:
        seen.append(done)
        dialog.findChild(QPushButton).click()  # the dialog's Cancel button
        clicked.set()

    w.import_progress.advanced.connect(first_step)
    driver.until(lambda: "cancelled" in w.toast.message, timeout=30)

    assert seen == [1]  # one chat was written, then all was rolled back
    assert "Nothing was imported" in w.toast.message
    assert _all(driver, w) == []
    assert _summary_box(w) is None and w.import_progress is None


def test_a_markdown_export_imports_back_as_a_chat(driver, tmp_path):
    from parley.core.content import TextBlock, Turn

    w = driver.configured()
    s = driver.run(w.store.create_session(title="Tea"))
    for turn in (Turn("user", [TextBlock("Green or black?")]),
                 Turn("assistant", [TextBlock("Green, at 80 °C.")])):
        driver.run(w.store.append_turn(s.id, turn))
    driver.run(w.chat.load_sidebar())
    export_dialog.answers.append(("markdown", tmp_path / "tea"))
    w.window_commands.export_session(s.id)
    driver.until(lambda: (tmp_path / "tea.md").exists())

    export_dialog.answers.append(tmp_path / "tea.md")
    assert w.window_commands.import_conversation() is True
    driver.until(lambda: w.session_id not in (None, s.id) and "Imported" in w.toast.message)
    assert "Imported 2 messages from Parley's Markdown export." in w.toast.message
    assert "Left out" not in w.toast.message  # no "0 image(s) or file(s)…" note
    turns = driver.run(w.store.get_turns(w.session_id))
    assert [t.text() for t in turns] == ["Green or black?", "Green, at 80 °C."]
    assert driver.run(w.store.get_session(w.session_id)).title == "Tea"

    # The same export again adds nothing, and says so.
    export_dialog.answers.append(tmp_path / "tea.md")
    assert w.window_commands.import_conversation() is True
    driver.until(lambda: _summary_box(w) is not None, timeout=30)
    assert _summary_box(w).text() == ("tea.md: Nothing new: the conversation of this Markdown "
                                      "export was imported before.")
    assert [x.title for x in _all(driver, w)].count("Tea") == 2


def test_a_history_imports_into_the_default_space_whichever_space_is_open(driver, tmp_path):
    """With a chat of "Work" open, File ▸ Import put a whole ChatGPT export in Work and the
    summary did not say so (trial 16, shot-113); ``parley --import`` puts it in General.
    Now the history goes to General, as on the command line, and the summary says where;
    one conversation still opens as a new chat of the open space."""
    w = driver.configured()
    work = driver.run(w.store.create_space("Work"))
    s = driver.run(w.store.create_session(title="Budget", space_id=work.id))
    driver.run(w.store.append_turn(s.id, Turn("user", [TextBlock("Q3 numbers?")])))
    driver.run(w.chat.load_sidebar())
    w.chat.open_session(s.id)
    driver.until(lambda: w.session_id == s.id)
    general = driver.run(w.store.default_space())
    path = tmp_path / "conversations.json"
    path.write_text(json.dumps(chatgpt_export(6)), encoding="utf-8")
    export_dialog.answers.append(path)

    assert w.window_commands.import_conversation() is True
    driver.until(lambda: _summary_box(w) is not None, timeout=30)
    assert _summary_box(w).text().endswith(" The chats are in the space “General”.")
    imported = [x for x in _all(driver, w) if x.id != s.id]
    assert len(imported) == 6 and {x.space_id for x in imported} == {general.id}
    assert all(w.sidebar.model.space_of(x.id) == general.id for x in imported)
    _summary_box(w).accept()

    one = tmp_path / "one.json"
    one.write_text(json.dumps([{"role": "user", "content": "Plan the offsite"}]),
                   encoding="utf-8")
    export_dialog.answers.append(one)
    assert w.window_commands.import_conversation() is True
    driver.until(lambda: w.session_id not in (None, s.id) and "Imported" in w.toast.message)
    assert driver.run(w.store.get_session(w.session_id)).space_id == work.id


def test_an_import_from_the_command_line_shows_in_the_open_window(driver, tmp_path):
    """``parley --import FILE --home DIR`` while a window is open on DIR: the window lists
    the new chats (told over the one-Parley-per-folder socket), and the command says so."""
    import subprocess
    import sys

    from parley.core.paths import data_dir
    from parley.gui.app import _list_imported
    from parley.gui.startup.single_instance import SingleInstance

    w = driver.configured()
    instance = SingleInstance(data_dir(driver.home))
    instance.listen()  # as gui.app does for the window it opened
    instance.imported.connect(lambda: _list_imported(w))
    try:
        export = tmp_path / "conversations.json"
        export.write_text(json.dumps(claude_export()), encoding="utf-8")
        run = subprocess.Popen(
            [sys.executable, "-m", "parley.gui.app", "--import", str(export),
             "--home", str(driver.home)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            text=True)
        driver.until(lambda: run.poll() is not None, timeout=60)
        out, errors = run.communicate()
        assert run.returncode == 0, errors
        assert out.endswith("The Parley window open on this data folder lists the new chats "
                            "now.\n")
        titles = {"CSV totals", "Haiku"}
        driver.until(lambda: titles <= {s.title for s in w.chat.sessions.values()}, timeout=10)
        driver.until(lambda: all(w.sidebar.model.has(s.id) for s in w.chat.sessions.values()
                                 if s.title in titles), timeout=10)
    finally:
        instance.release()


def test_imported_chats_can_be_read_before_a_provider_is_set_up(driver, tmp_path):
    """A history imported into a new home (``parley --import … --home``): the first start
    shows the set-up page, which offers to read the chats first; the sidebar and the
    transcript work, and sending goes back to set-up with the message kept."""
    from PySide6.QtCore import Qt

    _import_from_the_command_line(driver, tmp_path)

    w = driver.open()
    panel = w.setup_panel
    assert panel is not None and w.stack.currentWidget() is panel
    driver.until(lambda: panel.read_button.isVisible())
    assert panel.read_button.text() == "Read your 2 chats first"

    driver.qtbot.mouseClick(panel.read_button, Qt.MouseButton.LeftButton)
    assert w.stack.currentWidget() is w.chat_page and w.sidebar.isVisible()
    haiku = next(s for s in _all(driver, w) if s.title == "Haiku")
    driver.until(lambda: w.sidebar.model.has(haiku.id))
    w.chat.open_session(haiku.id)
    driver.until(lambda: w.session_id == haiku.id and w.chat.turns)
    assert "Soft grey rain falls." in [t.text() for t in w.chat.turns]

    w.composer.setFocus()
    driver.qtbot.keyClicks(w.composer, "One more haiku?")
    driver.qtbot.keyClick(w.composer, Qt.Key.Key_Return)
    driver.until(lambda: w.stack.currentWidget() is panel)
    assert panel.waiting.isVisible() and "kept" in panel.waiting.text()
    assert w.composer.toPlainText() == "One more haiku?"
    assert [t.text() for t in driver.run(w.store.get_turns(haiku.id))][-1] == "Rain."


def test_the_set_up_page_offers_chats_imported_from_the_command_line_at_once(driver, tmp_path):
    """A fresh data folder shows the set-up page; ``parley --import`` of chats into it while
    the window is open said "…listed now" but the page offered nothing until a restart
    (trial 16, shot-93/94). Now "Read your 2 chats first" shows at once."""
    from parley.gui.app import _list_imported

    w = driver.open()
    panel = w.setup_panel
    assert panel is not None and w.stack.currentWidget() is panel
    driver.until(lambda: w.tasks.pending == 0)
    assert not panel.read_button.isVisible()  # nothing to read yet

    _import_from_the_command_line(driver, tmp_path)
    _list_imported(w)  # as the one-Parley-per-folder socket tells the window (gui.app)
    driver.until(lambda: panel.read_button.isVisible())
    assert panel.read_button.text() == "Read your 2 chats first"
    assert w.stack.currentWidget() is panel


def _open_chat(driver, w, sid: str) -> None:
    driver.run(w.chat.load_sidebar())
    w.chat.open_session(sid)
    driver.until(lambda: w.session_id == sid and bool(w.chat.turns) and w.tasks.pending == 0)


def test_an_imported_chat_ending_with_ones_message_says_so_without_an_error(
        driver, fake_provider, qtbot):
    """Never sent from Parley: no red "Not sent", a neutral note and Send asks for the
    answer. A message sent from Parley and left unanswered still says "Not sent"."""
    from PySide6.QtCore import Qt

    from parley.core.importing.files import import_data
    from parley.core.store.imports import IMPORT_KEY
    from parley.gui.chat.run import CALLED_OFF

    w = driver.configured()
    c = ChatGPTConversation("Sourdough", "conv-sourdough")
    c.add(c.root, "system", {"content_type": "text", "parts": [""]}, hidden=True)
    c.text("user", "How long do I proof sourdough?")
    c.text("assistant", "About 4 to 6 hours at room temperature.", model="gpt-4o")
    c.text("user", "And in the fridge?")
    summary = driver.run(import_data(w.store, json.dumps([c.to_json()])))
    sid = summary.session_ids[0]
    assert IMPORT_KEY in driver.run(w.store.get_session(sid)).meta
    _open_chat(driver, w, sid)
    driver.until(lambda: notice_text(w.transcript) is not None)
    assert error_text(w.transcript) is None
    assert "imported" in notice_text(w.transcript) and "Not sent" not in \
        notice_text(w.transcript)
    bar = w.transcript.error_bar
    assert bar.accessibleName() == "Note" and bar.retry_button.text() == "Send"
    fake_provider.script("Overnight, 12 to 16 hours.")
    qtbot.mouseClick(bar.retry_button, Qt.MouseButton.LeftButton)
    driver.until(lambda: driver.last_text(w) == "Overnight, 12 to 16 hours.", timeout=10)
    assert notice_text(w.transcript) is None and error_text(w.transcript) is None

    # One conversation file (Anthropic messages) ending with the user's message.
    from parley.core.importing.conversation import import_conversation

    one = driver.run(import_conversation(w.store, json.dumps({"messages": [
        {"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello."},
        {"role": "user", "content": "Rye or wheat?"}]})))
    _open_chat(driver, w, one.session.id)
    driver.until(lambda: notice_text(w.transcript) is not None)
    assert error_text(w.transcript) is None

    # A message of Parley's own, never answered (Parley closed while it waited).
    own = driver.run(w.store.create_session(title="Own", model=w.chat.current_model()))
    driver.run(w.store.append_turn(own.id, Turn("user", [TextBlock("Still there?")])))
    _open_chat(driver, w, own.id)
    driver.until(lambda: error_text(w.transcript) == CALLED_OFF)


def test_files_of_an_export_that_are_not_read_are_named_in_the_summary(driver, tmp_path, qtbot):
    # A link out of the export (unzip makes one from a zip's link entry) and a key named .png.
    secret = tmp_path / "environ"
    secret.write_bytes(b"ANTHROPIC_API_KEY=sk-ant-GUI-HOSTILE\n")
    c = ChatGPTConversation("Links", "conv-links")
    c.add(c.root, "user", {"content_type": "multimodal_text", "parts": [
        image_part("file-Key2"), "Look."]}, metadata={"attachments": [
            {"id": "file-Env1", "name": "notes.txt", "mimeType": "text/plain"}]})
    c.text("assistant", "Nothing to see.", model="gpt-4o")
    path = write_chatgpt_folder(tmp_path / "export", [c.to_json()], {})
    (path.parent / "file-Env1-notes.txt").symlink_to(secret)
    (path.parent / "file-Key2-photo.png").write_text("-----BEGIN OPENSSH PRIVATE KEY-----\n")
    w = driver.configured()
    export_dialog.answers.append(path)

    assert w.window_commands.import_conversation() is True
    driver.until(lambda: _summary_box(w) is not None, timeout=30)

    box = _summary_box(w)
    # One short line; every file left out is in Details…, under two headings.
    assert box.text() == ("Imported conversations.json: 1 chat, 2 messages from a ChatGPT "
                          "export; 2 files left out (2 refused).")
    driver.until(lambda: QApplication.activeWindow() is box)  # Alt+D: a shortcut
    qtbot.keyClick(box, Qt.Key.Key_D, Qt.KeyboardModifier.AltModifier)
    driver.until(lambda: box.details_dialog is not None and box.details_dialog.isVisible())
    details = box.details_dialog
    assert details.isModal() and box.isVisible()  # on top of the summary, which stays
    assert details.sections() == {
        "Refused, with the reason": [
            "file-Key2-photo.png: its name says it is an image, but its bytes are text",
            "file-Env1-notes.txt: it is a link to another file; Parley imports only the "
            "files the export itself holds"]}
    qtbot.keyClick(details, Qt.Key.Key_Escape)
    driver.until(lambda: not details.isVisible())
    box.accept()
    (chat,) = _all(driver, w)
    turns = driver.run(w.store.get_turns(chat.id))
    assert "sk-ant-GUI-HOSTILE" not in json.dumps([t.text() for t in turns])
    assert "[file not included: notes.txt]" in turns[0].text()
    assert "[image not included: file-Key2]" in turns[0].text()


def test_a_parley_database_imported_completes_the_open_chat(driver, tmp_path):
    import sqlite3
    from dataclasses import replace

    from parley.core.store.store import Store

    w = driver.configured()
    sid = driver.run(w.store.create_session(title="cut off here")).id
    driver.run(w.store.append_turn(sid, Turn("user", [TextBlock("a question")])))
    whole = Turn("assistant", [TextBlock("the whole answer, as the rescue copy holds it")])
    driver.run(w.store.upsert_turn(sid, replace(whole, blocks=[TextBlock("the whole")],
                                                aborted=True, cut_off=True)))
    copy = tmp_path / "rescued.db"
    src = sqlite3.connect(f"file:{w.store.path}?mode=ro", uri=True)
    dst = sqlite3.connect(copy)
    src.backup(dst)
    src.close()
    dst.close()
    with Store.open(copy) as rescued:
        rescued.upsert_turn(sid, whole)
    driver.run(w.chat.opener.open(sid))
    assert driver.last_text(w) == "the whole"

    export_dialog.answers.append(copy)
    assert w.window_commands.import_conversation() is True
    driver.until(lambda: _summary_box(w) is not None, timeout=30)
    assert _summary_box(w).text() == ("Imported rescued.db: 1 cut-off reply completed; "
                                      "1 message was here already.")
    driver.until(lambda: driver.last_text(w) == whole.text())
    turns = driver.run(w.store.get_turns(sid))
    assert [(t.text(), t.aborted) for t in turns] == [("a question", False),
                                                      (whole.text(), False)]

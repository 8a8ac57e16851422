"""The whole window against the fake provider server, driven as a person does.

First-run set-up, send, a streamed reply seen growing, Esc mid-stream, a
provider error then Retry, edit the last message, switch/delete chats, and a
restart on the same home directory that finds everything as it was.
"""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QAbstractButton,
    QAbstractItemView,
    QComboBox,
    QLineEdit,
    QPlainTextEdit,
    QWidget,
)

from parley.gui import dialogs
from tests.gui.helpers import selected_session_id

pytestmark = pytest.mark.timeout(60)


def test_first_run_setup_then_first_reply(driver, fake_provider):
    w = driver.open()
    assert w.stack.currentWidget() is w.setup_panel
    driver.set_up_anthropic()
    assert w.stack.currentWidget() is w.chat_page
    assert w.model_picker.text() != "No model"
    fake_provider.script("Hello! How can I help?")
    driver.send("Hi there")
    driver.until(lambda: driver.last_text() == "Hello! How can I help?")
    history = driver.run(w.store.history(w.session_id))
    assert [t.role for t in history] == ["user", "assistant"]
    assert history[0].text() == "Hi there" and not history[1].aborted
    assert w.sidebar.model.session_ids() == [w.session_id]
    driver.until(lambda: w.sidebar.model.index_of(w.session_id).data() == "Hi there")
    assert w.windowTitle() == "Hi there — Parley"
    assert w.context_meter.used > 0


def test_reply_streams_token_by_token(driver, fake_provider):
    w = driver.configured()
    reply = "word " * 80
    fake_provider.script(reply, token_delay_ms=15, chunk_size=5)
    driver.send("Tell me a story")
    seen: set[int] = set()

    def grown() -> bool:
        text = driver.transcript_text()
        if "word" in text:
            seen.add(len(text))
        # the whole reply shown (the finished message may add its Regenerate line below)
        return text.strip().startswith(reply.strip())

    driver.until(grown, timeout=15)
    assert len(seen) >= 4, seen  # shown in several steps, not all at once
    driver.until(lambda: not w.composer_bar.busy)


def test_escape_stops_and_keeps_the_partial_reply(driver, fake_provider, qtbot):
    w = driver.configured()
    fake_provider.script("word " * 400, token_delay_ms=5, chunk_size=5)
    driver.send("Tell me a long story")
    driver.until(lambda: "word word" in driver.transcript_text())
    assert w.composer_bar.busy
    qtbot.keyClick(w.composer, Qt.Key.Key_Escape)
    driver.until(lambda: not w.composer_bar.busy)
    last = driver.run(w.store.history(w.session_id))[-1]
    assert last.aborted and last.text().startswith("word word")
    assert len(last.text()) < len("word " * 400)
    assert w.chat.turns[-1].aborted


def test_provider_error_shows_inline_then_retry_answers(driver, fake_provider, qtbot):
    w = driver.configured()
    fake_provider.fail("auth")
    driver.send("Are you there?")
    driver.until(lambda: driver.error_text() != "")
    assert "rejected the API key" in driver.error_text()
    assert not w.composer_bar.busy
    fake_provider.script("Yes, now I am.")
    qtbot.keyClick(w.composer, Qt.Key.Key_R, Qt.KeyboardModifier.ControlModifier)  # Retry
    driver.until(lambda: driver.last_text() == "Yes, now I am.")
    assert driver.error_text() == ""
    history = driver.run(w.store.history(w.session_id))
    assert [t.text() for t in history] == ["Are you there?", "Yes, now I am."]


def test_up_edits_the_last_message_and_resends(driver, fake_provider, qtbot):
    w = driver.configured()
    fake_provider.script("Paris.")
    driver.send("Capital of Frence?", wait=True)
    assert driver.last_text() == "Paris."
    qtbot.keyClick(w.composer, Qt.Key.Key_Up)
    assert w.composer.text() == "Capital of Frence?" and w.composer_bar.banner.isVisible()
    w.composer.set_text("Capital of France?")
    fake_provider.script("Paris, of course.")
    qtbot.keyClick(w.composer, Qt.Key.Key_Return)
    driver.until(lambda: driver.last_text() == "Paris, of course.")
    history = driver.run(w.store.history(w.session_id))
    assert [t.text() for t in history] == ["Capital of France?", "Paris, of course."]
    sent = fake_provider.model_requests[-1].body["messages"]
    assert [m["role"] for m in sent] == ["user"]


def test_new_switch_and_delete_chats_from_the_keyboard(driver, fake_provider, qtbot):
    w = driver.configured()
    for n in range(3):
        qtbot.keyClick(w.composer, Qt.Key.Key_N, Qt.KeyboardModifier.ControlModifier)
        driver.until(lambda: w.session_id is None)
        fake_provider.script(f"reply {n}")
        driver.send(f"chat {n}", wait=True)
        assert driver.last_text() == f"reply {n}"
    ids = w.sidebar.model.session_ids()
    assert len(ids) == 3 and ids[0] == w.session_id  # newest first
    qtbot.keyClick(w.composer, Qt.Key.Key_Tab, Qt.KeyboardModifier.ControlModifier)
    driver.until(lambda: w.session_id == ids[1])
    assert w.chat.turns[0].text() == "chat 1"
    qtbot.keyClick(w.composer, Qt.Key.Key_3, Qt.KeyboardModifier.ControlModifier)
    driver.until(lambda: w.session_id == ids[2])
    qtbot.keyClick(w.composer, Qt.Key.Key_Backtab,
                   Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier)
    driver.until(lambda: w.session_id == ids[1])
    dialogs.answers.append(False)  # "Cancel" first: nothing happens
    w.qactions["session.delete"].trigger()
    assert w.sidebar.model.session_ids() == ids
    dialogs.answers.append(True)
    w.qactions["session.delete"].trigger()
    driver.until(lambda: w.sidebar.model.session_ids() == [ids[0], ids[2]])
    driver.until(lambda: w.session_id == ids[2])
    assert driver.run(w.store.list_sessions(limit=10)).__len__() == 2


def test_drafts_are_kept_per_chat(driver, fake_provider, qtbot):
    w = driver.configured()
    fake_provider.script("ok")
    driver.send("first chat", wait=True)
    first = w.session_id
    assert first is not None
    qtbot.keyClicks(w.composer, "half-written thought")
    qtbot.keyClick(w.composer, Qt.Key.Key_N, Qt.KeyboardModifier.ControlModifier)
    driver.until(lambda: w.session_id is None and w.composer.text() == "")
    qtbot.keyClicks(w.composer, "new chat draft")
    w.sidebar.tree.setCurrentIndex(w.sidebar.model.index_of(first))
    driver.until(lambda: w.session_id == first)
    assert w.composer.text() == "half-written thought"


def test_restart_finds_the_conversation_intact(driver, fake_provider, qtbot):
    w = driver.configured()
    fake_provider.script("Remembered.")
    driver.send("Remember this", wait=True)
    sid = w.session_id
    qtbot.keyClicks(w.composer, "unsent draft")
    w.resize(700, 520)  # inside the offscreen screen (800x600): restoreGeometry clamps
    driver.close(w)

    again = driver.open()
    driver.until(lambda: again.session_id == sid)
    assert again.stack.currentWidget() is again.chat_page  # no set-up the second time
    assert [t.text() for t in again.chat.turns] == ["Remember this", "Remembered."]
    assert again.composer.text() == "unsent draft"
    assert (again.width(), again.height()) == (700, 520)
    assert selected_session_id(again.sidebar) == sid


def test_every_control_has_an_accessible_name(driver):
    w = driver.configured()
    kinds = (QAbstractButton, QLineEdit, QComboBox, QPlainTextEdit, QAbstractItemView)
    for page in (w.chat_page, w.sidebar):
        for child in page.findChildren(QWidget):
            if isinstance(child, kinds) and child.isVisibleTo(w) and \
                    not isinstance(child.parent(), QComboBox | QAbstractItemView):
                assert child.accessibleName(), f"{type(child).__name__} {child.objectName()}"


def test_environment_key_skips_set_up(driver, fake_provider):
    w = driver.open(env={"ANTHROPIC_API_KEY": "sk-ant-from-env",
                         "ANTHROPIC_BASE_URL": fake_provider.anthropic_base_url})
    assert w.stack.currentWidget() is w.chat_page and w.setup_panel is None
    assert (w.chat.current_model() or "").startswith("anthropic:")
    fake_provider.script("Hi from env.")
    driver.send("hello", wait=True)
    assert driver.last_text() == "Hi from env."
    assert fake_provider.model_requests[-1].has_auth


def test_arrow_keys_in_the_sidebar_open_chats(driver, fake_provider, qtbot):
    w = driver.configured()
    for n in range(2):
        w.window_commands.new_session()
        driver.until(lambda: w.session_id is None)
        fake_provider.script("ok")
        driver.send(f"chat {n}", wait=True)
    newest, older = w.sidebar.model.session_ids()
    w.sidebar.tree.setFocus()
    qtbot.keyClick(w.sidebar.tree, Qt.Key.Key_Down)
    driver.until(lambda: w.session_id == older)
    qtbot.keyClick(w.sidebar.tree, Qt.Key.Key_Up)
    driver.until(lambda: w.session_id == newest)


def test_model_picker_sets_the_chats_model(driver, fake_provider):
    w = driver.configured()
    driver.until(lambda: len(w.model_picker.choices) > 1)
    fake_provider.script("first")
    driver.send("one", wait=True)
    other = next(c for c in w.model_picker.choices if c.ref != w.chat.current_model())
    picked = next(a for a in w.model_picker.menu().actions() if a.data() == other.ref)
    picked.trigger()
    assert w.model_picker.text() == other.label
    driver.until(lambda: w.tasks.pending == 0)
    fake_provider.script("second")
    driver.send("two", wait=True)
    assert fake_provider.model_requests[-1].body["model"] == other.ref.split(":", 1)[1]
    session = driver.run(w.store.get_session(w.session_id))
    assert session.model == other.ref


def test_sidebar_loads_more_chats_on_demand(driver, fake_provider, monkeypatch, qtbot):
    from parley.gui.chat import controller as chat_controller
    from parley.gui.sidebar.model import KIND

    monkeypatch.setattr(chat_controller, "PAGE", 2)
    w = driver.configured()
    for n in range(3):
        w.window_commands.new_session()
        driver.until(lambda: w.session_id is None)
        fake_provider.script("ok")
        driver.send(f"chat {n}", wait=True)
    driver.close(w)
    again = driver.open()
    model = again.sidebar.model
    assert len(model.session_ids()) == 2
    space = model.item(0)
    more = space.child(space.rowCount() - 1)
    assert more.data(KIND) == "more"
    rect = again.sidebar.tree.visualRect(more.index())
    qtbot.mouseClick(again.sidebar.tree.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    driver.until(lambda: len(model.session_ids()) == 3)
    assert model.item(0).child(model.item(0).rowCount() - 1).data(KIND) == "session"


def test_model_picker_names_a_model_the_provider_does_not_list(driver, fake_provider):
    """Until (or unless) the provider's model list arrives, the picker shows the catalog's
    name for a model it knows, not the bare model id."""
    w = driver.configured()
    driver.until(lambda: len(w.model_picker.choices) > 1)
    ref = w.chat.current_model()
    listed = w.model_picker.label_of(ref)
    driver.close(w)
    fake_provider.anthropic_models = []  # the listing now names no model
    again = driver.open()
    assert again.chat.current_model() == ref
    assert [c.ref for c in again.model_picker.choices] == [ref]  # its configured model
    assert again.model_picker.text() == listed != ref.split(":", 1)[1]
    assert again.model_picker.accessibleDescription() == f"Current model: {listed}"


def test_the_context_meter_counts_a_message_whose_reply_failed(driver, fake_provider):
    w = driver.configured()
    before = w.context_meter.used
    fake_provider.fail("auth")
    w.composer.set_text("lorem ipsum dolor " * 2_000)  # ~10k tokens, saved before the request
    driver.send("!")
    driver.until(lambda: driver.error_text() != "")
    driver.until(lambda: w.context_meter.used > before + 5_000)


def test_before_the_providers_load_the_header_names_the_model_and_its_window(driver):
    """The providers' SDKs load seconds after the chats appear; meanwhile the header
    shows the catalog's name and context window, not the bare id and a bare count."""
    from parley.gui.header.context_meter import measure

    w = driver.configured()
    ref = w.chat.current_model()
    assert ref == "anthropic:claude-sonnet-4-6"
    w.chat.attached = False  # as in the seconds before the providers load
    try:
        assert w.chat.models._catalog_name(ref) == "Claude Sonnet 4.6"
        assert w.chat.models._catalog_name("ollama:llama3.2:3b") is None  # not a built-in provider
        assert measure([], None, ref, None)[1] == 1_000_000
        w.model_picker.set_choices([])
        assert w.model_picker.text() == "Claude Sonnet 4.6"
    finally:
        w.chat.attached = True

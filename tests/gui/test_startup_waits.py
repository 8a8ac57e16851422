"""What is asked while Parley starts waits for it: Regenerate and a message with files
are done once the provider is ready, Esc takes a waiting message back, quitting while
one waits asks, and a first run says "Connecting to …" to nobody.

Same set-up as ``test_startup_typing``: the providers' loading is held back by the
``gate`` fixture, the opening of the store by ``store_gate``.
"""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt

from parley.gui import dialogs
from parley.gui.chat.waiting import CONNECTING
from parley.gui.startup.quit_waiting import QUIT, SAVED_STAYS, TITLE, UNSAVED_LOST
from tests.gui.disk_full import answer_question
from tests.gui.helpers import png, ready
from tests.gui.starting import fake_env, press, previous_chat, start, type_keys
from tests.gui.transcript_reading import error_text

pytestmark = pytest.mark.timeout(90)

CTRL, SHIFT = Qt.KeyboardModifier.ControlModifier, Qt.KeyboardModifier.ShiftModifier


def _chats_shown(driver, w) -> None:
    driver.until(lambda: w.chat is not None and not w.chat.adopting)


def _history(driver, w, sid: str) -> list[tuple[str, str]]:
    return [(t.role, t.text()) for t in driver.run(w.store.history(sid))]


def test_regenerate_while_loading_waits_for_the_provider_then_regenerates(
        driver, fake_provider, gate):
    earlier = previous_chat(driver, fake_provider, gate)
    w = start(driver)
    _chats_shown(driver, w)
    asked = len(fake_provider.model_requests)
    fake_provider.script("A second answer.")
    press(w, Qt.Key.Key_R, CTRL | SHIFT)  # Regenerate, before the provider is loaded
    driver.until(lambda: w.chat.runs.waiting(earlier))
    driver.until(lambda: w.statusBar().currentMessage() == CONNECTING.format(name="Anthropic"))
    assert "starting" not in w.statusBar().currentMessage()
    assert len(fake_provider.model_requests) == asked  # nothing asked yet
    gate.set()
    driver.until(lambda: w.ready and w.tasks.pending == 0 and not w.composer_bar.busy,
                 timeout=30)
    assert _history(driver, w, earlier) == [("user", "An earlier chat"),
                                            ("assistant", "A second answer.")]
    # The first answer is kept as a branch of the same chat (no fork, no other session).
    assert driver.run(w.store.list_forks(earlier)) == []
    tree = driver.run(w.store.get_tree(earlier))
    kept = [t for t in tree if not t.on_path and t.turn.role == "assistant"]
    assert [t.turn.text() for t in kept] == ["Earlier answer"]
    assert driver.run(w.store.branches(earlier)).points  # ‹ 2/2 › under the answer


def test_esc_before_the_chats_open_takes_the_queued_message_back(
        driver, fake_provider, gate, store_gate):
    earlier = previous_chat(driver, fake_provider, gate)
    store_gate.clear()
    w = start(driver)
    w.composer.clear()
    type_keys(w, "Oops, not yet")
    press(w, Qt.Key.Key_Return)
    assert w.composer.text() == "" and w.startup.queue.message == "Oops, not yet"
    type_keys(w, "and more")
    press(w, Qt.Key.Key_Escape)  # the chats are not open yet
    assert w.composer.text() == "Oops, not yet\n\nand more" and w.startup.queue.message is None
    store_gate.set()
    gate.set()
    driver.until(lambda: w.ready and w.tasks.pending == 0, timeout=30)
    assert w.session_id == earlier  # the chat's draft, then what came back and was typed
    assert w.composer.text() == "its draft\n\nOops, not yet\n\nand more"
    assert _history(driver, w, earlier) == [("user", "An earlier chat"),
                                            ("assistant", "Earlier answer")]


def test_esc_while_a_queued_message_waits_for_its_provider_takes_it_back(
        driver, fake_provider, gate, store_gate):
    earlier = previous_chat(driver, fake_provider, gate)
    store_gate.clear()
    w = start(driver)
    w.composer.clear()
    type_keys(w, "Sent before the chats opened")
    press(w, Qt.Key.Key_Return)
    store_gate.set()
    driver.until(lambda: w.chat is not None and w.chat.runs.waiting(earlier))  # saved, waiting
    assert _history(driver, w, earlier)[-1] == ("user", "Sent before the chats opened")
    asked = len(fake_provider.model_requests)
    press(w, Qt.Key.Key_Escape)
    # Back in the box, before the chat's draft (shown once the chats opened).
    driver.until(lambda: w.composer.text() == "Sent before the chats opened\n\nits draft")
    assert not w.chat.runs.waiting(earlier) and not w.composer_bar.busy
    assert [t.text() for t in w.chat.turns] == ["An earlier chat", "Earlier answer"]
    assert _history(driver, w, earlier) == [("user", "An earlier chat"),
                                            ("assistant", "Earlier answer")]
    gate.set()
    driver.until(lambda: w.ready and w.tasks.pending == 0, timeout=30)
    assert len(fake_provider.model_requests) == asked  # never sent
    assert "Not sent" not in (error_text(w.transcript) or "")


def test_quitting_while_a_message_waits_asks_and_keeping_parley_open_sends_it(
        driver, fake_provider, gate):
    earlier = previous_chat(driver, fake_provider, gate)
    w = start(driver)
    _chats_shown(driver, w)
    w.composer.clear()
    type_keys(w, "Do not drop me")
    press(w, Qt.Key.Key_Return)
    driver.until(lambda: w.chat.runs.waiting(earlier))
    fake_provider.script("Sent after all.")
    w.qactions["app.quit"].trigger()
    text = answer_question(driver, w, "Keep Parley open", title=TITLE)
    assert "Your message is waiting to be sent" in text and SAVED_STAYS in text
    driver.until(lambda: w.isEnabled())
    assert w.isVisible() and w.chat.runs.waiting(earlier)
    gate.set()
    driver.until(lambda: w.ready and w.tasks.pending == 0 and not w.composer_bar.busy,
                 timeout=30)
    assert _history(driver, w, earlier)[-2:] == [("user", "Do not drop me"),
                                                 ("assistant", "Sent after all.")]


def test_quitting_before_the_chats_open_with_a_queued_message_asks(
        driver, fake_provider, gate, store_gate):
    previous_chat(driver, fake_provider, gate)
    store_gate.clear()
    w = start(driver)
    type_keys(w, " and then some")
    press(w, Qt.Key.Key_Return)
    w.close()  # the window's close button, before the chats are open
    text = answer_question(driver, w, "Keep Parley open", title=TITLE)
    assert UNSAVED_LOST in text
    driver.until(lambda: w.isEnabled())
    assert w.isVisible() and w.startup.queue.message is not None
    dialogs.answers.append(QUIT)
    w.close()
    driver.until(lambda: not w.isVisible())
    store_gate.set()
    gate.set()


def test_a_message_with_files_sent_while_loading_is_sent_once_the_provider_is_ready(
        driver, fake_provider, gate, tmp_path):
    w = start(driver, fake_env(fake_provider))  # a new chat: its session comes with the message
    _chats_shown(driver, w)
    w.chat.attachments.add_paths([png(tmp_path / "chart.png")])
    driver.until(lambda: len(ready(w)) == 1)
    type_keys(w, "What is in this chart?")
    fake_provider.script("A bar chart.")
    press(w, Qt.Key.Key_Return)  # the model's limits for files are not known yet
    driver.until(lambda: w.statusBar().currentMessage() == CONNECTING.format(name="Anthropic"))
    assert w.composer.text() == "What is in this chart?" and w.composer_bar.busy
    assert w.composer_bar.tray.count() == 1 and fake_provider.model_requests == []
    gate.set()
    driver.until(lambda: w.ready and w.tasks.pending == 0 and not w.composer_bar.busy,
                 timeout=30)
    assert w.composer.text() == "" and w.composer_bar.tray.count() == 0
    assert w.session_id is not None
    [user, reply] = driver.run(w.store.history(w.session_id))
    assert user.text() == "What is in this chart?" and len(user.blocks) == 2
    assert reply.text() == "A bar chart."


def test_a_first_run_says_connecting_to_nobody(driver, fake_provider):
    w = start(driver)  # a first run: no provider anywhere
    said: list[str] = []
    w.statusBar().messageChanged.connect(said.append)
    type_keys(w, "Hello before set-up")
    press(w, Qt.Key.Key_Return)
    driver.until(lambda: w.ready and w.setup_panel is not None
                 and w.setup_panel.waiting.isVisibleTo(w.setup_panel), timeout=30)
    driver.qtbot.wait(400)  # past the moment "Connecting to …" would be said
    assert not [m for m in said if m.startswith("Connecting")], said
    dialogs.answers.append(QUIT)  # the message still waits for the set-up: quit without it



def test_a_file_attached_while_loading_does_not_import_the_sdk_on_the_gui_thread(
        driver, fake_provider, gate, tmp_path):
    w = start(driver, fake_env(fake_provider))
    driver.until(lambda: w.chat is not None and w.chat.hub is not None
                 and w.chat.current_model() is not None)
    w.chat.attachments.add_paths([png(tmp_path / "early.png")])
    driver.until(lambda: len(ready(w)) == 1)
    # Its limits are checked when it is sent; the adapter (and SDK) was not built here.
    assert not w.chat.hub.is_prepared(w.chat.current_model())

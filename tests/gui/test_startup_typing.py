"""Typing while Parley starts: keys go to the message box from the first paint, a
message sent before the providers are loaded is saved at once and sent once they
are, and nothing the person did meanwhile is undone when loading finishes.

Keys are sent to the window (its ``QWindow``), as the window system sends them,
so they land wherever the focus is. The providers' loading is held back by
gating ``ProviderHub._build`` (the ``gate`` fixture of ``tests/gui/conftest.py``: the real
adapter and SDK are built once the gate opens), so "before the providers are loaded" is a
state the test controls.
"""

from __future__ import annotations

from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QMenu

from parley.gui.chat.waiting import CONNECTING
from tests.gui.starting import fake_env, press, previous_chat, start, type_keys
from tests.gui.transcript_reading import error_text

pytestmark = pytest.mark.timeout(90)


def open_menus() -> list[QMenu]:
    return [m for m in QApplication.topLevelWidgets() if isinstance(m, QMenu) and m.isVisible()]


def test_keys_typed_from_the_first_paint_land_in_the_message_box_intact(driver, fake_provider,
                                                                        gate):
    w = start(driver, fake_env(fake_provider))
    assert w.focusWidget() is w.composer and w.composer.isEnabled()
    type_keys(w, "Hello, wor")  # before the store is even open
    assert w.chat is None or w.chat.adopting
    driver.until(lambda: w.chat is not None and not w.chat.adopting)  # chats shown
    type_keys(w, "ld! ")  # while the providers load
    assert not w.ready
    gate.set()
    driver.until(lambda: w.ready and w.tasks.pending == 0, timeout=30)
    type_keys(w, "ok")
    assert w.composer.text() == "Hello, world! ok"
    assert w.focusWidget() is w.composer


def test_a_space_while_loading_opens_nothing(driver, fake_provider, gate):
    w = start(driver, fake_env(fake_provider))
    for _ in range(3):
        type_keys(w, " ")
        QApplication.processEvents()
        assert not open_menus()
    driver.until(lambda: w.chat is not None and not w.chat.adopting)
    type_keys(w, " ")
    gate.set()
    driver.until(lambda: w.ready and w.tasks.pending == 0, timeout=30)
    assert not open_menus()
    assert w.composer.text() == "    "
    assert w.focusWidget() is w.composer


def test_enter_before_the_providers_are_loaded_saves_then_sends_once_they_are(
        driver, fake_provider, gate):
    fake_provider.script("Hi! Sent after loading.")
    w = start(driver, fake_env(fake_provider))
    type_keys(w, "Are you there?")
    press(w, Qt.Key.Key_Return)  # the chats are not even open yet
    assert w.composer.text() == ""  # taken, not refused

    # Saved as the chat's user turn while the provider is still loading; nothing sent.
    driver.until(lambda: w.chat is not None and w.session_id is not None
                 and [t.text() for t in w.chat.turns] == ["Are you there?"])
    history = driver.run(w.store.history(w.session_id))
    assert [(t.role, t.text()) for t in history] == [("user", "Are you there?")]
    assert fake_provider.model_requests == []
    assert w.chat.runs.waiting(w.session_id) and w.composer_bar.busy
    driver.until(lambda: w.statusBar().currentMessage() == CONNECTING.format(name="Anthropic"))
    press(w, Qt.Key.Key_Return)  # nothing typed: nothing more is sent

    gate.set()
    driver.until(lambda: w.ready and w.tasks.pending == 0 and not w.composer_bar.busy,
                 timeout=30)
    driver.until(lambda: driver.last_text() == "Hi! Sent after loading.")
    asked = [r for r in fake_provider.model_requests
             if r.body["messages"][-1]["content"][-1].get("text") == "Are you there?"]
    assert len(asked) == 1 and len(asked[0].body["messages"]) == 1  # sent exactly once
    history = driver.run(w.store.history(w.session_id))
    assert [(t.role, t.text()) for t in history] == [
        ("user", "Are you there?"), ("assistant", "Hi! Sent after loading.")]
    assert w.statusBar().currentMessage() == ""


def test_a_second_message_waits_in_the_composer_while_the_first_is_queued(
        driver, fake_provider, gate):
    w = start(driver, fake_env(fake_provider))
    driver.until(lambda: w.chat is not None and not w.chat.adopting)
    type_keys(w, "first")
    press(w, Qt.Key.Key_Return)
    driver.until(lambda: w.chat.runs.waiting(w.session_id))
    type_keys(w, "second")
    press(w, Qt.Key.Key_Return)
    assert w.composer.text() == "second"  # kept, and said why
    assert "still waiting" in w.statusBar().currentMessage()
    gate.set()
    driver.until(lambda: w.ready and w.tasks.pending == 0 and not w.composer_bar.busy,
                 timeout=30)
    history = driver.run(w.store.history(w.session_id))
    assert [t.role for t in history] == ["user", "assistant"]
    assert history[0].text() == "first" and w.composer.text() == "second"


def test_ctrl_n_and_typing_while_starting_survive_the_end_of_loading(driver, fake_provider,
                                                                     gate):
    earlier = previous_chat(driver, fake_provider, gate)
    w = start(driver)
    press(w, Qt.Key.Key_N, Qt.KeyboardModifier.ControlModifier)  # before the chats open
    type_keys(w, "a new question")
    gate.set()
    driver.until(lambda: w.ready and w.tasks.pending == 0, timeout=30)
    assert w.session_id is None  # the new chat, not the last one reopened
    assert w.composer.text() == "a new question"
    assert w.sidebar.model.session_ids() == [earlier]
    assert w.windowTitle() == "New chat — Parley"
    # The earlier chat kept its own draft.
    w.chat.open_session(earlier)
    driver.until(lambda: w.session_id == earlier and w.tasks.pending == 0)
    assert w.composer.text() == "its draft"


def test_typing_before_the_last_chat_shows_joins_its_draft(driver, fake_provider, gate):
    earlier = previous_chat(driver, fake_provider, gate)
    w = start(driver)
    type_keys(w, "more")
    driver.until(lambda: w.chat is not None and not w.chat.adopting)
    gate.set()
    driver.until(lambda: w.ready and w.tasks.pending == 0, timeout=30)
    assert w.session_id == earlier  # the last chat, reopened
    assert w.composer.text() == "its draft\n\nmore"  # neither the draft nor the keys lost


def test_a_chat_opened_or_a_search_begun_while_loading_stays(driver, fake_provider, gate):
    earlier = previous_chat(driver, fake_provider, gate)
    gate.set()
    w = driver.open()  # a second chat, so one can be switched to
    driver.run(w.chat.opener.show_new_chat())
    fake_provider.script("Second answer")
    driver.send("A second chat", wait=True)
    second = w.session_id
    driver.close(w)
    gate.clear()

    w = start(driver)
    driver.until(lambda: w.chat is not None and w.session_id == second)  # the last one
    w.chat.open_session(earlier)  # a click in the sidebar, while the providers load
    driver.until(lambda: w.session_id == earlier)
    assert w.window_commands.open_search()
    type_keys(w, "earlier")  # typed into the search box (it has the focus)
    gate.set()
    driver.until(lambda: w.ready and w.tasks.pending == 0, timeout=30)
    assert w.session_id == earlier
    assert w.search_popup is not None and w.search_popup.isVisible()
    popup = w.search_popup
    assert popup.edit.text() == "earlier"
    assert w.focusWidget() is popup.edit
    driver.until(lambda: popup.search.settled)


def test_enter_while_the_first_chat_is_being_read_goes_to_that_chat(driver, fake_provider,
                                                                   monkeypatch):
    import asyncio

    from parley.gui.chat.controller import ChatController

    shown = asyncio.Event()
    real = ChatController.show_first

    async def held(self: ChatController, **kw: Any) -> None:
        await shown.wait()
        await real(self, **kw)

    monkeypatch.setattr(ChatController, "show_first", held)
    fake_provider.script("Answered.")
    w = start(driver, fake_env(fake_provider))
    driver.until(lambda: w.transcript is not None and w.chat is not None)  # chats listed
    type_keys(w, "Quick one")
    press(w, Qt.Key.Key_Return)  # the chat it belongs to is not shown yet
    assert w.composer.text() == "" and w.startup.queue.message == "Quick one"
    shown.set()
    driver.until(lambda: w.ready and w.tasks.pending == 0 and not w.composer_bar.busy,
                 timeout=30)
    history = driver.run(w.store.history(w.session_id))
    assert [(t.role, t.text()) for t in history] == [("user", "Quick one"),
                                                     ("assistant", "Answered.")]


def test_a_long_last_chat_is_read_whole_once_while_starting(driver, fake_provider, gate,
                                                            monkeypatch):
    from parley.core.store.async_store import AsyncStore
    from tests.gui.chats import long_chat

    gate.set()
    w = driver.open(fake_env(fake_provider))
    sid, _turns = long_chat(driver, w, 260)  # more than a chat opens with
    w.chat.open_session(sid)
    driver.until(lambda: w.session_id == sid and w.tasks.pending == 0)
    driver.close(w)
    gate.clear()

    whole: list[str] = []
    window: list[Any] = []  # the window once made

    def counted(name: str) -> Any:
        real = getattr(AsyncStore, name)

        async def counting(self: AsyncStore, session_id: str, *args: Any, **kw: Any) -> Any:
            if not args and not kw and not (window and window[0].ready):
                whole.append(session_id)  # every turn the chat sends, while starting
            return await real(self, session_id, *args, **kw)

        return counting

    # The whole history, or what a request is built from (every turn here: no summary).
    for name in ("get_turns", "context_turns"):
        monkeypatch.setattr(AsyncStore, name, counted(name))
    w = start(driver, fake_env(fake_provider))
    window.append(w)
    driver.until(lambda: w.chat is not None and w.session_id == sid and w.chat.older > 0)
    gate.set()
    driver.until(lambda: w.ready and w.tasks.pending == 0, timeout=30)
    assert whole == [sid]  # the meter counts them all: read once, not once per step
    assert w.context_meter.used > 0


def _roles_texts(driver, w, sid: str) -> list[tuple[str, str]]:
    return [(t.role, t.text()) for t in driver.run(w.store.history(sid))]


def test_enter_then_ctrl_n_while_loading_sends_each_message_to_its_own_chat(
        driver, fake_provider, gate, store_gate):
    earlier = previous_chat(driver, fake_provider, gate)
    store_gate.clear()
    w = start(driver)
    type_keys(w, "queued one sigma")
    press(w, Qt.Key.Key_Return)  # for the chat start-up opens: the last one
    press(w, Qt.Key.Key_N, Qt.KeyboardModifier.ControlModifier)
    type_keys(w, "queued two tau")
    press(w, Qt.Key.Key_Return)  # for the new chat: taken too, not ignored
    assert w.composer.text() == "" and w.chat is None
    store_gate.set()
    gate.set()
    driver.until(lambda: w.ready and w.tasks.pending == 0 and not w.chat.runs.active,
                 timeout=30)
    ids = w.sidebar.model.session_ids()
    assert earlier in ids and len(ids) == 2
    new = next(i for i in ids if i != earlier)
    assert w.session_id == new  # the new chat stays in view
    driver.until(lambda: len(_roles_texts(driver, w, earlier)) == 4
                 and len(_roles_texts(driver, w, new)) == 2, timeout=15)
    assert _roles_texts(driver, w, earlier)[2] == ("user", "queued one sigma")
    assert _roles_texts(driver, w, new)[0] == ("user", "queued two tau")
    assert [r for r, _t in _roles_texts(driver, w, new)] == ["user", "assistant"]
    assert w.composer.text() == ""


def test_a_draft_typed_while_loading_stays_with_its_chat_after_ctrl_n(
        driver, fake_provider, gate, store_gate):
    earlier = previous_chat(driver, fake_provider, gate)
    store_gate.clear()
    w = start(driver)
    type_keys(w, "draft in chat three")
    press(w, Qt.Key.Key_N, Qt.KeyboardModifier.ControlModifier)
    type_keys(w, "fresh chat gamma")
    assert w.chat is None
    store_gate.set()
    gate.set()
    driver.until(lambda: w.ready and w.tasks.pending == 0, timeout=30)
    assert w.session_id is None and w.composer.text() == "fresh chat gamma"
    press(w, Qt.Key.Key_Return)
    driver.until(lambda: w.session_id is not None and w.tasks.pending == 0
                 and not w.chat.runs.active, timeout=15)
    assert _roles_texts(driver, w, w.session_id)[0] == ("user", "fresh chat gamma")
    w.chat.open_session(earlier)
    driver.until(lambda: w.session_id == earlier and w.tasks.pending == 0)
    assert w.composer.text() == "its draft\n\ndraft in chat three"


def test_ctrl_f_while_loading_opens_the_search_and_takes_the_words(driver, fake_provider,
                                                                   gate, store_gate):
    previous_chat(driver, fake_provider, gate)
    store_gate.clear()
    w = start(driver)
    press(w, Qt.Key.Key_F, Qt.KeyboardModifier.ControlModifier)  # before the chats open
    type_keys(w, "earlier")
    popup = w.search_popup
    assert popup is not None and popup.isVisible() and popup.edit.text() == "earlier"
    assert w.store is None
    store_gate.set()
    gate.set()
    driver.until(lambda: w.ready and w.tasks.pending == 0, timeout=30)
    driver.until(lambda: popup.search.settled and popup.hits)
    assert w.composer.text() == "its draft"  # the words went to the search, not the box
    assert w.focusWidget() is popup.edit


def _two_chats(driver, fake_provider, gate) -> tuple[str, str]:
    """Two chats without drafts, the second one open when Parley closed."""
    gate.set()
    w = driver.configured()
    driver.send("The first chat", wait=True)
    first = w.session_id
    driver.run(w.chat.opener.show_new_chat())
    driver.send("The second chat", wait=True)
    second = w.session_id
    driver.close(w)
    gate.clear()
    return str(first), str(second)


def test_ctrl_tab_while_loading_opens_the_next_chat_once_shown(driver, fake_provider, gate,
                                                               store_gate):
    first, second = _two_chats(driver, fake_provider, gate)
    store_gate.clear()
    w = start(driver)
    press(w, Qt.Key.Key_Tab, Qt.KeyboardModifier.ControlModifier)
    assert w.chat is None  # before the chats are open
    store_gate.set()
    driver.until(lambda: w.session_id == first)  # once shown, without the providers
    gate.set()
    driver.until(lambda: w.ready and w.tasks.pending == 0, timeout=30)
    assert w.sidebar.model.session_ids() == [second, first]
    assert w.session_id == first  # the one after the last chat, not the last chat


def test_up_while_loading_edits_the_last_message_once_shown(driver, fake_provider, gate,
                                                            store_gate):
    _first, second = _two_chats(driver, fake_provider, gate)
    store_gate.clear()
    w = start(driver)
    press(w, Qt.Key.Key_Up)  # empty box: edit the last message
    assert w.chat is None
    store_gate.set()
    driver.until(lambda: w.chat is not None and w.session_id == second
                 and w.chat.editor.editing is not None)  # as soon as the chat shows
    assert w.composer.text() == "The second chat"
    gate.set()
    driver.until(lambda: w.ready and w.tasks.pending == 0, timeout=30)
    assert w.chat.editor.editing is not None and w.composer.text() == "The second chat"


def test_a_palette_opened_while_loading_lists_the_chats_once_they_open(driver, fake_provider,
                                                                      gate, store_gate):
    earlier = previous_chat(driver, fake_provider, gate)
    store_gate.clear()
    w = start(driver)
    press(w, Qt.Key.Key_K, Qt.KeyboardModifier.ControlModifier)  # before the chats open
    palette = w.command_palette
    assert palette.isVisible()
    type_keys(w, "earlier")
    assert palette.input.text() == "earlier" and w.store is None
    store_gate.set()
    driver.until(lambda: w.chat is not None and not w.chat.adopting)
    gate.set()
    driver.until(lambda: w.ready and w.tasks.pending == 0, timeout=30)
    driver.until(lambda: any(e.kind == "message" for e in palette.entries()))
    assert earlier in w.sidebar.model.session_ids()
    assert not palette.note.isVisible()


def test_quitting_with_a_queued_message_leaves_it_not_sent_with_retry(driver, fake_provider,
                                                                      gate):
    earlier = previous_chat(driver, fake_provider, gate)
    w = start(driver)
    driver.until(lambda: w.chat is not None and not w.chat.adopting)
    w.composer.clear()
    type_keys(w, "Sent just before quitting")
    press(w, Qt.Key.Key_Return)
    driver.until(lambda: w.chat.runs.waiting(earlier))  # saved, waiting for its provider
    import asyncio

    from parley.gui import dialogs
    from parley.gui.startup.quit_waiting import QUIT

    dialogs.answers.append(QUIT)  # asked first (tests/gui/test_startup_waits.py): quit
    closing = asyncio.ensure_future(w.shutdown())  # quit before the provider loaded
    driver.until(lambda: not w.chat.runs.active)  # the waiting send is called off at once
    gate.set()  # (the SDK import itself goes on until it is done)
    driver.until(closing.done, timeout=10)
    assert closing.result() is True
    w.close()
    driver.windows.remove(w)

    fake_provider.script("Answered on Retry.")
    w = driver.open()
    assert w.session_id == earlier and w.chat.turns[-1].text() == "Sent just before quitting"
    assert error_text(w.transcript) and "Not sent" in error_text(w.transcript)
    assert w.transcript.error_bar.retry_button.isVisibleTo(w.transcript)
    w.transcript.error_bar.retry_button.click()
    driver.until(lambda: driver.last_text() == "Answered on Retry." and w.tasks.pending == 0)
    assert not error_text(w.transcript)


def test_a_message_sent_before_the_first_set_up_is_said_kept_and_sent_after_it(
        driver, fake_provider):
    from parley.gui.startup.setup_panel import WAITING_FOR_SETUP

    fake_provider.script("Set up and answered.")
    w = start(driver)  # a first run: no provider anywhere
    type_keys(w, "Hello before set-up")
    press(w, Qt.Key.Key_Return)
    driver.until(lambda: w.ready and w.setup_panel is not None and w.setup_panel.isVisible(),
                 timeout=30)  # (the message waits: a task stays pending)
    driver.until(lambda: w.setup_panel.waiting.isVisibleTo(w.setup_panel))
    assert w.setup_panel.waiting.text() == WAITING_FOR_SETUP
    assert "Connecting" not in w.statusBar().currentMessage()
    driver.set_up_anthropic(w)
    driver.until(lambda: driver.last_text() == "Set up and answered." and w.tasks.pending == 0,
                 timeout=30)
    history = driver.run(w.store.history(w.session_id))
    assert [(t.role, t.text()) for t in history] == [("user", "Hello before set-up"),
                                                     ("assistant", "Set up and answered.")]


def test_enter_before_the_window_is_whole_keeps_the_message_without_making_it_at_once(
        driver, fake_provider, gate):
    """Enter just after the first paint (issue 33): the message is kept for the chat shown
    first, and the rest of the window (sidebar, header tools, menus) is still made after
    the paint, not at once on the GUI thread; the message is saved once the chat shows."""
    from parley.gui.main_window import MainWindow

    w = MainWindow(home=driver.home, env=fake_env(fake_provider))
    driver.windows.append(w)
    w.show()
    driver.until(lambda: w.startup.painted)
    type_keys(w, "Early")
    press(w, Qt.Key.Key_Return)
    assert w.composer.text() == ""
    assert w.startup.queue.messages() == ["Early"]
    assert not w.startup.built
    w.startup.start_after_first_paint()
    driver.until(lambda: w.chat is not None and w.session_id is not None
                 and [t.text() for t in w.chat.turns] == ["Early"])
    assert w.startup.built
    gate.set()
    driver.until(lambda: w.ready and w.tasks.pending == 0, timeout=30)

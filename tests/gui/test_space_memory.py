"""A space's memory and tools switch in the space dialog, on the real window:
what the model wrote shows, the user's edit reaches new chats, an over-limit edit is
refused in words, and unticking tools sends no tools."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from shiboken6 import isValid

from parley.core.tools.memory import MemoryStore
from parley.gui.commands import actions

pytestmark = pytest.mark.timeout(60)


def _system_text(request) -> str:
    system = request.body.get("system") or ""
    return system if isinstance(system, str) else " ".join(b["text"] for b in system)


def _last_chat_request(fake_provider):
    """The last request that was not a chat-title request."""
    return next(r for r in reversed(fake_provider.model_requests)
                if not _system_text(r).startswith("You name chat conversations"))


def _open_editor(driver, w, space_id):
    w.chat.organizer.edit_space(space_id)
    dlg = w.chat.organizer.dialog
    driver.until(lambda: not dlg.memory_edit.isReadOnly() and dlg.tools_check.isEnabled())
    return dlg


def _new_chat(driver, w) -> None:
    w.window_commands.new_session()
    driver.until(lambda: w.session_id is None and not w.chat.turns, timeout=10)


def test_the_models_memory_write_shows_in_the_space_dialog(driver, fake_provider):
    w = driver.configured()
    fake_provider.script(tool_calls=[{"name": "set_context", "input": {
        "key": "memory", "mode": "append", "content": "The user's cat is called Miso."}}])
    fake_provider.script("Noted.")
    driver.send("Remember that my cat is called Miso.")
    driver.until(lambda: driver.last_text() == "Noted.", timeout=20)
    dlg = _open_editor(driver, w, w.chat.space_id)
    assert dlg.memory_edit.toPlainText() == "The user's cat is called Miso."
    assert dlg.memory_hint.text() == f"{dlg.memory_tokens()} / 1,100 tokens"
    assert dlg.tools_check.isChecked()  # on by default for Anthropic
    assert dlg.tools_check.text() == "Let the model use tools here (memory, skills, search)"


def test_the_users_edit_reaches_new_chats_and_refreshed_ones(driver, fake_provider, qtbot):
    w = driver.configured()
    fake_provider.script("Hello.")
    driver.send("Hi.", wait=True)
    chat = w.session_id
    dlg = _open_editor(driver, w, w.chat.space_id)
    assert dlg.memory_edit.toPlainText() == ""
    dlg.memory_edit.setPlainText("The user prefers metric units.")
    qtbot.mouseClick(dlg.ok_button, Qt.MouseButton.LeftButton)
    memories = MemoryStore(w.store)
    driver.until(lambda: driver.run(memories.get(w.chat.space_id)).text ==
                 "The user prefers metric units.")
    # The open chat keeps the prompt it started with until it is refreshed.
    fake_provider.script("Sure.")
    driver.send("And now?", wait=True)
    assert "metric" not in _system_text(_last_chat_request(fake_provider))
    refresh = actions.by_id("session.refresh_prompt")
    assert refresh.label == "Refresh memory, skills and tools" and not refresh.shortcuts
    actions.run(w, refresh)  # as the command palette does
    driver.settle()
    fake_provider.script("Kilometres.")
    driver.send("Distance units?", wait=True)
    assert w.session_id == chat
    assert "metric units" in _system_text(_last_chat_request(fake_provider))
    # A new chat in the space starts with the edited memory.
    _new_chat(driver, w)
    fake_provider.script("Metres.")
    driver.send("Height units?", wait=True)
    assert w.session_id != chat
    assert "The user prefers metric units." in _system_text(_last_chat_request(fake_provider))


def test_an_over_limit_memory_is_refused_in_words_and_the_dialog_stays(driver, qtbot):
    w = driver.configured()
    space_id = w.chat.space_id
    memories = MemoryStore(w.store)
    driver.run(memories.set(space_id, "Likes tea."))
    dlg = _open_editor(driver, w, space_id)
    long_text = "tea and biscuits " * 400
    dlg.memory_edit.setPlainText(long_text)
    assert "over the limit" in dlg.memory_hint.text()
    qtbot.mouseClick(dlg.ok_button, Qt.MouseButton.LeftButton)
    driver.settle()
    assert dlg.isVisible() and dlg.error_label.isVisible()
    assert "over its limit of 1,100 tokens" in dlg.error_label.text()
    assert "not changed" in dlg.error_label.text()
    assert dlg.memory_edit.toPlainText() == long_text  # nothing typed is lost
    assert driver.run(memories.get(space_id)).text == "Likes tea."
    dlg.memory_edit.setPlainText("Likes tea, no sugar.")
    qtbot.mouseClick(dlg.ok_button, Qt.MouseButton.LeftButton)
    driver.until(lambda: driver.run(memories.get(space_id)).text == "Likes tea, no sugar.")
    assert not isValid(dlg) or not dlg.isVisible()


def test_unticking_tools_sends_no_tools(driver, fake_provider, qtbot):
    w = driver.configured()
    fake_provider.script("With tools.")
    driver.send("One.", wait=True)
    assert _last_chat_request(fake_provider).body.get("tools")
    dlg = _open_editor(driver, w, w.chat.space_id)
    assert dlg.tools_check.isChecked()
    dlg.tools_check.setChecked(False)
    qtbot.mouseClick(dlg.ok_button, Qt.MouseButton.LeftButton)
    driver.until(lambda: driver.run(w.store.get_state(f"tools_enabled:{w.chat.space_id}"))
                 is False)
    _new_chat(driver, w)
    fake_provider.script("Without tools.")
    driver.send("Two.", wait=True)
    assert "tools" not in _last_chat_request(fake_provider).body


def test_a_new_space_takes_its_memory_and_tools_switch_from_the_dialog(driver, fake_provider,
                                                                       qtbot):
    w = driver.configured()
    w.window_commands.new_space()
    dlg = w.chat.organizer.dialog
    driver.until(lambda: not dlg.memory_edit.isReadOnly() and dlg.tools_check.isEnabled())
    assert dlg.memory_edit.toPlainText() == "" and dlg.tools_check.isChecked()
    assert dlg.memory_hint.text() == "0 / 1,100 tokens"
    qtbot.keyClicks(dlg.name_edit, "Garden")
    dlg.memory_edit.setPlainText("The user grows tomatoes.")
    qtbot.mouseClick(dlg.ok_button, Qt.MouseButton.LeftButton)
    driver.until(lambda: any(s.name == "Garden" for s in driver.run(w.store.list_spaces())))
    space = next(s for s in driver.run(w.store.list_spaces()) if s.name == "Garden")
    driver.until(lambda: w.session_id is None and w.chat.space_id == space.id)
    assert driver.run(MemoryStore(w.store).get(space.id)).text == "The user grows tomatoes."
    fake_provider.script("Water them.")
    driver.send("Any advice?", wait=True)
    assert "tomatoes" in _system_text(_last_chat_request(fake_provider))

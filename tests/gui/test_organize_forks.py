"""Forks on the real window: "Fork from here", edit-and-send, nesting in the sidebar,
a deleted parent keeps its forks, and the automatic title after the first exchange."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt

from parley.core.content import TextBlock, Turn
from parley.gui import dialogs
from parley.gui.sidebar.model import FORK_LABEL, FORK_POINT, PARENT_GONE
from tests.gui.helpers import forks_of, selected_session_id
from tests.gui.transcript_reading import error_text, notice_text

pytestmark = pytest.mark.timeout(60)


def _chat(driver, w, pairs, title="Trip planning"):
    """A saved chat with these (user, assistant) exchanges, opened; returns its turns."""
    session = driver.run(w.store.create_session(title=title, model=w.chat.current_model()))
    turns = []
    for question, answer in pairs:
        for role, text in (("user", question), ("assistant", answer)):
            turns.append(driver.run(w.store.append_turn(session.id, Turn(role, [TextBlock(text)]))))
    driver.run(w.chat.load_sidebar())
    w.chat.open_session(session.id)
    driver.until(lambda: w.session_id == session.id and len(w.chat.turns) == len(turns))
    return session, turns


def test_fork_from_here_nests_under_its_parent_and_opens(driver, qtbot):
    w = driver.configured()
    parent, turns = _chat(driver, w, [("Where to go in May?", "Lisbon."),
                                      ("And in June?", "Oslo.")])
    w.transcript.forkRequested.emit(turns[1].id)  # "Fork from here" on "Lisbon."
    driver.until(lambda: w.session_id not in (None, parent.id))
    fork = w.session_id
    assert [t.text() for t in w.chat.turns] == ["Where to go in May?", "Lisbon."]
    assert w.windowTitle() == "Trip planning (fork) — Parley"
    model = w.sidebar.model
    assert forks_of(model, parent.id) == [fork]
    assert model.index_of(fork).parent() == model.index_of(parent.id)
    driver.until(lambda: model.index_of(fork).data(FORK_POINT) == "from “Lisbon.”")
    assert selected_session_id(w.sidebar) == fork
    # The original is untouched.
    assert [t.text() for t in driver.run(w.store.get_turns(parent.id))] == \
        ["Where to go in May?", "Lisbon.", "And in June?", "Oslo."]
    # Collapsible from the keyboard: Left folds the parent, Right unfolds it; a fold
    # survives the parent's row moving (a new reply puts it on top).
    tree = w.sidebar.tree
    w.window_commands.focus_sidebar()
    tree.setCurrentIndex(model.index_of(parent.id))
    driver.until(lambda: w.session_id == parent.id)
    qtbot.keyClick(tree, Qt.Key.Key_Left)
    assert not tree.isExpanded(model.index_of(parent.id))
    w.chat.remember_session(driver.run(w.store.get_session(parent.id)))
    assert not tree.isExpanded(model.index_of(parent.id))
    qtbot.keyClick(tree, Qt.Key.Key_Right)
    assert tree.isExpanded(model.index_of(parent.id))


def test_forks_of_one_chat_at_messages_that_start_alike_read_apart(driver):
    """Trial 20c: two forks both read "from “You said: Messa…”" in the sidebar. The row
    drops the start their points share; the tooltip keeps the whole line."""
    w = driver.configured()
    said = ["You said: Message number 1 topic1 alpha", "You said: Message number 3 topic3 gamma"]
    parent, turns = _chat(driver, w, [("Message number 1 topic1 alpha", said[0]),
                                      ("Message number 3 topic3 gamma", said[1])])
    first = driver.run(w.store.fork(parent.id, turns[1].id))
    second = driver.run(w.store.fork(parent.id, turns[3].id))
    driver.run(w.chat.load_sidebar())
    model = w.sidebar.model
    driver.until(lambda: all(model.index_of(f.id).data(FORK_LABEL) for f in (first, second)))
    labels = [model.index_of(f.id).data(FORK_LABEL) for f in (first, second)]
    assert labels == ["from “…1 topic1 alpha”", "from “…3 topic3 gamma”"]
    for fork, text in zip((first, second), said, strict=True):
        assert model.index_of(fork.id).data(FORK_POINT) == f"from “{text}”"
        assert f"from “{text}”" in model.index_of(fork.id).data(Qt.ItemDataRole.ToolTipRole)
    # as drawn in a narrow row (about 20 characters): still apart
    metrics = w.sidebar.tree.fontMetrics()
    width = metrics.horizontalAdvance("from “You said: Messa…”")
    drawn = {metrics.elidedText(label, Qt.TextElideMode.ElideRight, width) for label in labels}
    assert len(drawn) == 2, drawn


def test_fork_at_the_focused_message(driver):
    w = driver.configured()
    parent, turns = _chat(driver, w, [("one", "two"), ("three", "four")])
    w.transcript.scroll_to_turn(turns[2].id)  # focus "three"
    assert w.window_commands.fork_at_focused_message() is True
    driver.until(lambda: w.session_id not in (None, parent.id))
    assert [t.text() for t in w.chat.turns] == ["one", "two", "three"]
    assert forks_of(w.sidebar.model, parent.id) == [w.session_id]


def test_a_fork_at_ones_own_message_offers_to_send_it_without_an_error(driver, fake_provider,
                                                                     qtbot):
    """Nothing was sent or failed: the fork says so in neutral words, and Send asks it."""
    w = driver.configured()
    parent, turns = _chat(driver, w, [("one", "two"), ("three", "four")])
    w.transcript.forkRequested.emit(turns[2].id)  # "Fork from here" on "three"
    driver.until(lambda: w.session_id not in (None, parent.id))
    driver.until(lambda: notice_text(w.transcript) is not None)
    assert error_text(w.transcript) is None
    assert "Not sent" not in notice_text(w.transcript)
    bar = w.transcript.error_bar
    assert bar.accessibleName() == "Note" and bar.retry_button.text() == "Send"
    fake_provider.script("Five.")
    qtbot.mouseClick(bar.retry_button, Qt.MouseButton.LeftButton)
    driver.until(lambda: [t.text() for t in w.chat.turns] == ["one", "two", "three", "Five."])
    assert notice_text(w.transcript) is None and error_text(w.transcript) is None


def test_edit_an_earlier_message_and_send_branches_and_keeps_the_original(driver, fake_provider,
                                                                           qtbot):
    w = driver.configured()
    parent, turns = _chat(driver, w, [("Capital of Frence?", "Paris."),
                                      ("And of Spain?", "Madrid.")])
    w.transcript.editRequested.emit(turns[0].id)  # "Edit message" on the first message
    assert w.composer.text() == "Capital of Frence?" and w.composer_bar.banner.isVisible()
    assert "new branch" in w.composer_bar.banner.text()
    w.composer.set_text("Capital of France?")
    fake_provider.script("Paris, of course.")
    qtbot.keyClick(w.composer, Qt.Key.Key_Return)
    driver.until(lambda: driver.last_text() == "Paris, of course.")
    driver.settle()
    assert w.session_id == parent.id  # the same chat, on the edit's branch
    history = driver.run(w.store.get_turns(parent.id))
    assert [t.text() for t in history] == ["Capital of France?", "Paris, of course."]
    sent = fake_provider.model_requests[-1].body["messages"]
    assert [m["role"] for m in sent] == ["user"]
    tree = driver.run(w.store.get_tree(parent.id))  # the original stays, off the path
    assert [(t.turn.text(), t.on_path) for t in tree] == [
        ("Capital of Frence?", False), ("Paris.", False), ("And of Spain?", False),
        ("Madrid.", False), ("Capital of France?", True), ("Paris, of course.", True)]
    # A branch of the chat, not a chat: the list shows the chat, ‹ 2/2 › the message.
    assert w.sidebar.model.session_ids() == [parent.id]
    assert selected_session_id(w.sidebar) == parent.id
    assert driver.run(w.store.get_session(parent.id)).title == "Trip planning"
    driver.until(lambda: w.transcript.branch_of(history[0].id) == (2, 2))


def test_up_then_esc_leaves_edit_mode_without_changes(driver, qtbot):
    w = driver.configured()
    parent, _turns = _chat(driver, w, [("hello", "hi")])
    qtbot.keyClick(w.composer, Qt.Key.Key_Up)
    assert w.composer.text() == "hello" and w.chat.editor.editing is not None
    qtbot.keyClick(w.composer, Qt.Key.Key_Escape)
    assert w.composer.text() == "" and w.chat.editor.editing is None
    assert w.session_id == parent.id and forks_of(w.sidebar.model, parent.id) == []


def test_deleting_a_parent_keeps_its_forks(driver, monkeypatch):
    w = driver.configured()
    parent, turns = _chat(driver, w, [("a", "b"), ("c", "d")])
    w.transcript.forkRequested.emit(turns[1].id)
    driver.until(lambda: w.session_id not in (None, parent.id))
    fork = w.session_id
    w.undo.window_ms = 100
    asked: list[str] = []
    monkeypatch.setattr(dialogs, "confirm", lambda _p, _t, text, **_k: asked.append(text) or True)
    w.chat.organizer.delete_session(parent.id)
    driver.until(lambda: not w.sidebar.model.has(parent.id))
    assert "Its fork is kept, as a chat of its own." in asked[0]  # the dialog says so
    model = w.sidebar.model
    assert model.has(fork) and model.index_of(fork).parent().data() == "General"
    driver.until(lambda: model.index_of(fork).data(PARENT_GONE) is True, timeout=5)
    assert [s.id for s in driver.run(w.store.list_sessions(include_archived=True))] == [fork]
    assert [t.text() for t in driver.run(w.store.get_turns(fork))] == ["a", "b"]


def test_moving_a_chat_moves_its_forks_nested_with_it(driver):
    """"Move chat to space…" on a chat with forks: its forks (and theirs) go with it,
    still nested; Undo brings them all back (trial 16, shot-44)."""
    w = driver.configured()
    work = driver.run(w.store.create_space("Work"))
    parent, turns = _chat(driver, w, [("a", "b"), ("c", "d")])
    fork = driver.run(w.store.fork(parent.id, turns[1].id))
    inner = driver.run(w.store.fork(fork.id, driver.run(w.store.get_turns(fork.id))[0].id))
    driver.run(w.chat.load_sidebar())
    model = w.sidebar.model
    assert model.index_of(inner.id).parent() == model.index_of(fork.id)
    w.chat.organizer.move_session(parent.id)
    menu = w.chat.organizer.space_menu
    menu.hide()
    next(a for a in menu.actions() if a.text() == "Work").trigger()
    driver.until(lambda: model.space_of(parent.id) == work.id)
    driver.until(lambda: model.space_of(inner.id) == work.id)
    assert model.index_of(fork.id).parent() == model.index_of(parent.id)
    assert model.index_of(inner.id).parent() == model.index_of(fork.id)
    assert {driver.run(w.store.get_session(i)).space_id
            for i in (parent.id, fork.id, inner.id)} == {work.id}
    assert "Moved “Trip planning” to Work" in w.toast.message
    driver.until(lambda: w.undo.pending)
    assert w.undo.undo()
    driver.until(lambda: model.space_of(inner.id) == w.chat.organizer.default_space_id)
    assert model.index_of(fork.id).parent() == model.index_of(parent.id)
    assert model.index_of(inner.id).parent() == model.index_of(fork.id)


def test_first_exchange_gets_a_generated_title_and_f2_wins(driver, fake_provider):
    w = driver.configured()
    fake_provider.script("Go to Sintra.")
    fake_provider.script("Lisbon day trips")  # the title model's answer
    driver.send("What day trips from Lisbon are worth it?", wait=True)
    sid = w.session_id
    driver.until(lambda: w.sidebar.model.index_of(sid).data() == "Lisbon day trips")
    assert w.windowTitle() == "Lisbon day trips — Parley"
    title_request = fake_provider.model_requests[-1].body
    assert "Lisbon" in str(title_request["messages"])
    assert w.window_commands.rename_session()  # F2: the title is edited in place, in the header
    w.chat_heading.editor.setText("My Lisbon notes")
    w.chat_heading.editor.returnPressed.emit()  # Enter
    driver.until(lambda: w.sidebar.model.index_of(sid).data() == "My Lisbon notes")
    session = driver.run(w.store.get_session(sid))
    assert (session.title, session.title_source) == ("My Lisbon notes", "user")
    # A later automatic title never overwrites the user's.
    assert driver.run(w.chat.titles.on_first_exchange(sid, w.chat.current_model())) is None
    assert driver.run(w.store.get_session(sid)).title == "My Lisbon notes"


def test_titles_off_use_the_first_line(driver, fake_provider, qtbot):
    from parley.core.settings import Settings

    w = driver.configured()
    driver.run(Settings.of(w.store).set("chat.auto_title", False))
    fake_provider.script("Sure.")
    w.composer.set_text("Plan a picnic\nwith details")
    qtbot.keyClick(w.composer, Qt.Key.Key_Return)
    driver.until(lambda: driver.last_text() == "Sure.")
    driver.settle()
    sid = w.session_id
    driver.until(lambda: w.sidebar.model.index_of(sid).data() == "Plan a picnic")
    assert len(fake_provider.model_requests) == 1  # no title request


def test_an_edit_emptied_and_sent_says_why_nothing_happened(driver, qtbot):
    from parley.gui.chat.run import EMPTY_EDIT

    w = driver.configured()
    parent, turns = _chat(driver, w, [("Capital of France?", "Paris.")])
    w.transcript.editRequested.emit(turns[0].id)
    assert w.composer.text() == "Capital of France?"
    w.composer.clear()
    qtbot.keyClick(w.composer, Qt.Key.Key_Return)
    assert w.statusBar().currentMessage() == EMPTY_EDIT
    assert w.chat.editor.editing is not None and w.composer_bar.banner.isVisible()
    assert w.session_id == parent.id and driver.run(w.store.list_forks(parent.id)) == []


def test_a_message_sent_after_a_regeneration_clears_its_hint(driver, fake_provider, qtbot):
    """"The previous answer is kept: ‹ ›…" is about that regeneration; an edit (or any
    message) sent next does not leave it in the status bar."""
    from parley.gui.chat.regenerate import ANSWER_KEPT_HINT

    w = driver.configured()
    fake_provider.script("The first answer.")
    driver.send("Name a colour", w, wait=True)
    fake_provider.script("The second answer.")
    w.transcript.regenerateRequested.emit("")
    driver.until(lambda: driver.last_text(w) == "The second answer." and w.tasks.pending == 0
                 and not w.composer_bar.busy, timeout=10)
    assert w.statusBar().currentMessage().startswith(ANSWER_KEPT_HINT)
    fake_provider.script("Teal it is.")
    w.transcript.editRequested.emit(w.chat.turns[0].id)
    w.composer.set_text("Name a blue colour")
    qtbot.keyClick(w.composer, Qt.Key.Key_Return)
    driver.until(lambda: driver.last_text(w) == "Teal it is." and w.tasks.pending == 0, timeout=10)
    assert not w.statusBar().currentMessage().startswith(ANSWER_KEPT_HINT)

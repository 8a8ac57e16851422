"""Pin, archive, move and delete chats on the real window, each with Undo; archived
chats hidden unless asked for; a delete made final after the undo window or at close."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QByteArray, QMimeData, QPointF, Qt
from PySide6.QtGui import QDropEvent
from PySide6.QtWidgets import QMenu

from parley.core.content import TextBlock, Turn
from parley.gui import dialogs
from parley.gui.sidebar.model import ARCHIVED, PINNED, SESSION_MIME
from tests.gui.helpers import selected_session_id

pytestmark = pytest.mark.timeout(60)


def _chats(driver, w, *titles, space_id=None):
    """Saved chats with one exchange each, newest last; the sidebar reloaded."""
    ids = []
    for title in titles:
        s = driver.run(w.store.create_session(title=title, space_id=space_id))
        for role in ("user", "assistant"):
            driver.run(w.store.append_turn(s.id, Turn(role, [TextBlock(f"{title} {role}")])))
        ids.append(s.id)
    driver.run(w.chat.load_sidebar())
    return ids


def _menu_action(menu: QMenu, label: str):
    for action in menu.actions():
        if action.text() == label:
            return action
        if action.menu() is not None:
            found = _menu_action(action.menu(), label)
            if found is not None:
                return found
    return None


def _row_menu(w, sid) -> QMenu:
    index = w.sidebar.model.index_of(sid)
    w.sidebar.tree.menu_requested.emit(index, w.sidebar.tree.mapToGlobal(
        w.sidebar.tree.visualRect(index).center()))
    menu = w.sidebar.last_menu
    menu.hide()
    return menu


def test_delete_hides_at_once_and_undo_restores(driver, qtbot):
    w = driver.configured()
    a, b = _chats(driver, w, "Alpha", "Beta")
    w.chat.open_session(b)
    driver.until(lambda: w.session_id == b)
    dialogs.answers.append(True)
    w.window_commands.delete_current_session()
    driver.until(lambda: not w.sidebar.model.has(b))
    driver.until(lambda: w.session_id == a and w.undo.pending)  # its neighbour opened
    assert w.toast.isVisible() and "Deleted “Beta”" in w.toast.message
    assert [s.id for s in driver.run(w.store.list_sessions())] == [a]  # hidden in the file too
    qtbot.mouseClick(w.toast.undo_button, Qt.MouseButton.LeftButton)
    driver.until(lambda: w.sidebar.model.has(b))
    assert w.sidebar.model.session_ids() == [b, a]
    assert {s.id for s in driver.run(w.store.list_sessions())} == {a, b}
    assert not w.toast.isVisible()
    driver.until(lambda: w.session_id == b)  # back in the chat that was open


def test_undoing_the_delete_of_a_chat_not_open_stays_where_you_are(driver, qtbot):
    w = driver.configured()
    a, b = _chats(driver, w, "Alpha", "Beta")
    w.chat.open_session(a)
    driver.until(lambda: w.session_id == a)
    dialogs.answers.append(True)
    w.chat.organizer.delete_session(b)  # from the sidebar's menu, say
    driver.until(lambda: not w.sidebar.model.has(b) and w.undo.pending)
    qtbot.mouseClick(w.toast.undo_button, Qt.MouseButton.LeftButton)
    driver.until(lambda: w.sidebar.model.has(b) and w.tasks.pending == 0)
    assert w.session_id == a


def test_delete_is_final_after_the_undo_window(driver):
    w = driver.configured()
    (a,) = _chats(driver, w, "Alpha")
    w.undo.window_ms = 150
    dialogs.answers.append(True)
    w.chat.organizer.delete_session(a)
    driver.until(lambda: not w.sidebar.model.has(a))
    driver.until(lambda: driver.run(w.store.list_sessions(include_archived=True)) == [])
    assert not w.undo.pending


def test_cancelled_delete_changes_nothing(driver):
    w = driver.configured()
    (a,) = _chats(driver, w, "Alpha")
    dialogs.answers.append(False)
    w.chat.organizer.delete_session(a)
    driver.settle()
    assert w.sidebar.model.has(a) and not w.undo.pending


def test_a_pending_delete_is_made_final_when_parley_closes(driver, home):
    w = driver.configured()
    a, b = _chats(driver, w, "Alpha", "Beta")
    dialogs.answers.append(True)
    w.chat.organizer.delete_session(a)
    driver.until(lambda: w.undo.pending)
    driver.close(w)
    again = driver.open()
    assert again.sidebar.model.session_ids() == [b]
    assert [s.id for s in driver.run(again.store.list_sessions(include_archived=True))] == [b]


def test_pin_from_the_context_menu_and_undo(driver, qtbot):
    w = driver.configured()
    a, b = _chats(driver, w, "Alpha", "Beta")
    assert w.sidebar.model.session_ids() == [b, a]
    _menu_action(_row_menu(w, a), "Pin to top").trigger()
    driver.until(lambda: w.sidebar.model.session_ids() == [a, b])
    assert w.sidebar.model.index_of(a).data(PINNED) is True
    assert driver.run(w.store.get_session(a)).pinned
    assert _menu_action(_row_menu(w, a), "Unpin") is not None
    qtbot.mouseClick(w.toast.undo_button, Qt.MouseButton.LeftButton)
    driver.until(lambda: w.sidebar.model.session_ids() == [b, a])
    assert not driver.run(w.store.get_session(a)).pinned


def test_archived_chats_are_hidden_unless_asked_for(driver, qtbot):
    w = driver.configured()
    a, b = _chats(driver, w, "Alpha", "Beta")
    w.chat.open_session(a)
    driver.until(lambda: w.session_id == a)
    w.window_commands.close_chat()  # Ctrl+W, "Archive chat"
    driver.until(lambda: w.sidebar.model.session_ids() == [b])
    driver.until(lambda: w.session_id == b)
    assert driver.run(w.store.get_session(a)).archived
    w.window_commands.toggle_archived_visible()
    driver.until(lambda: set(w.sidebar.model.session_ids()) == {a, b})
    assert w.sidebar.model.index_of(a).data(ARCHIVED) is True
    assert w.sidebar.archived_action.isChecked()
    _menu_action(_row_menu(w, a), "Unarchive").trigger()
    driver.until(lambda: not driver.run(w.store.get_session(a)).archived)
    w.window_commands.toggle_archived_visible()
    driver.until(lambda: set(w.sidebar.model.session_ids()) == {a, b})  # unarchived: listed


def test_archive_undo_brings_the_chat_back(driver, qtbot):
    w = driver.configured()
    a, b = _chats(driver, w, "Alpha", "Beta")
    w.chat.organizer.archive_session(a)
    driver.until(lambda: w.sidebar.model.session_ids() == [b])
    qtbot.mouseClick(w.toast.undo_button, Qt.MouseButton.LeftButton)
    driver.until(lambda: w.sidebar.model.session_ids() == [b, a])
    assert not driver.run(w.store.get_session(a)).archived


def test_undo_after_ctrl_w_reopens_the_closed_chat(driver, qtbot):
    w = driver.configured()
    a, b = _chats(driver, w, "Alpha", "Beta")
    w.chat.open_session(a)
    driver.until(lambda: w.session_id == a)
    qtbot.keyClick(w, Qt.Key.Key_W, Qt.KeyboardModifier.ControlModifier)  # close: archived
    driver.until(lambda: w.sidebar.model.session_ids() == [b] and w.session_id != a
                 and w.toast.isVisible() and w.toast.offers_undo)
    qtbot.mouseClick(w.toast.undo_button, Qt.MouseButton.LeftButton)
    driver.until(lambda: w.session_id == a and a in w.sidebar.model.session_ids())
    assert selected_session_id(w.sidebar) == a
    assert not driver.run(w.store.get_session(a)).archived


def test_move_a_chat_to_another_space_by_menu_and_by_drag(driver):
    w = driver.configured()
    work = driver.run(w.store.create_space("Work"))
    a, b = _chats(driver, w, "Alpha", "Beta")
    model = w.sidebar.model
    _menu_action(_row_menu(w, a), "Work").trigger()
    driver.until(lambda: model.space_of(a) == work.id)
    assert driver.run(w.store.get_session(a)).space_id == work.id
    assert model.index_of(a).parent() == model.space_index(work.id)
    # Drag "Beta" onto the Work heading.
    tree = w.sidebar.tree
    mime = QMimeData()
    mime.setData(SESSION_MIME, QByteArray(b.encode()))
    pos = QPointF(tree.visualRect(model.space_index(work.id)).center())
    drop = QDropEvent(pos, Qt.DropAction.MoveAction, mime, Qt.MouseButton.LeftButton,
                      Qt.KeyboardModifier.NoModifier)
    tree.dropEvent(drop)
    driver.until(lambda: model.space_of(b) == work.id)
    assert driver.run(w.store.get_session(b)).space_id == work.id
    assert model.session_ids() == [b, a]  # General is empty now; Work holds both


def test_move_session_to_space_asks_with_a_menu(driver):
    w = driver.configured()
    work = driver.run(w.store.create_space("Work"))
    (a,) = _chats(driver, w, "Alpha")
    w.chat.open_session(a)
    driver.until(lambda: w.session_id == a)
    w.window_commands.move_session_to_space()
    menu = w.chat.organizer.space_menu
    entries = {act.text(): act for act in menu.actions()}
    assert not entries["General"].isEnabled()  # where it already is
    menu.hide()
    entries["Work"].trigger()
    driver.until(lambda: w.sidebar.model.space_of(a) == work.id)
    assert w.chat.space_id == work.id

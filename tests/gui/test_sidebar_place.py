"""The chat list keeps your place (black-box trial 17): "Show more" from the keyboard leaves
the focus where it was, a right-click only opens the row's menu, a chat opened from
elsewhere is the selected row (its page read if need be), a new space is shown at once.
Real window, real sessions.db."""

from __future__ import annotations

from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QContextMenuEvent
from PySide6.QtWidgets import QApplication

from parley.core.content import TextBlock, Turn
from parley.gui.sidebar.model import ID, KIND
from tests.gui.helpers import search_for
from tests.gui.keyboard import chat_window, key, type_text

pytestmark = pytest.mark.timeout(90)


def chats(driver: Any, w: Any, count: int, titles: dict[int, str] | None = None) -> list[str]:
    """``count`` chats made in the store ("Chat 0" oldest, or ``titles[n]``), listed again;
    their ids, newest first (the list's order)."""

    async def make() -> list[str]:
        ids = []
        for n in range(count):
            title = (titles or {}).get(n, f"Chat {n}")
            s = await w.store.create_session(title=title)
            ids.append(s.id)
        return ids[::-1]

    ids = driver.run(make())
    driver.run(w.chat.load_sidebar())
    return ids


def in_view(tree: Any, index: Any) -> bool:
    return tree.viewport().rect().contains(tree.visualRect(index))


def test_show_more_from_the_keyboard_leaves_the_focus_on_the_first_chat_it_shows(
        driver, fake_provider, qtbot):
    w = chat_window(driver, fake_provider)
    driver.run(w.store.create_space("Work"))
    ids = chats(driver, w, 120)
    w.window_commands.open_session(ids[0])
    driver.until(lambda: w.session_id == ids[0] and w.tasks.pending == 0)
    tree, model = w.sidebar.tree, w.sidebar.model
    key(qtbot, "Ctrl+Shift+E")
    key(qtbot, "End")  # the empty Work's "New chat in Work"
    key(qtbot, "Up")  # its heading
    key(qtbot, "Up")  # General's "Show more"
    assert tree.currentIndex().data(KIND) == "more"
    top = tree.verticalScrollBar().value()
    key(qtbot, "Return")
    driver.until(lambda: model.loaded_count(w.chat.space_id) == 100 and w.tasks.pending == 0)
    QApplication.processEvents()
    current = tree.currentIndex()
    assert current.data(ID) == ids[50], current.data()  # where "Show more" was
    assert in_view(tree, current) and tree.verticalScrollBar().value() == top
    assert QApplication.focusWidget() is tree
    assert w.session_id == ids[0]  # nothing else opened
    assert [i.data(ID) for i in tree.selectionModel().selectedIndexes()] == [ids[0]]
    key(qtbot, "Down")  # and the walk goes on from there
    driver.until(lambda: w.session_id == ids[51])


def test_a_right_click_opens_the_menu_of_a_chat_without_opening_it(driver, fake_provider, qtbot):
    w = chat_window(driver, fake_provider)
    ids = chats(driver, w, 3)
    w.window_commands.open_session(ids[0])
    driver.until(lambda: w.session_id == ids[0] and w.tasks.pending == 0)
    tree = w.sidebar.tree
    rect = tree.visualRect(w.sidebar.model.index_of(ids[2]))
    port = tree.viewport()
    qtbot.mouseClick(port, Qt.MouseButton.RightButton, pos=rect.center())
    QApplication.sendEvent(port, QContextMenuEvent(  # what the platform sends with the press
        QContextMenuEvent.Reason.Mouse, rect.center(), port.mapToGlobal(rect.center())))
    driver.until(lambda: getattr(w.sidebar, "last_menu", None) is not None
                 and w.sidebar.last_menu.isVisible())
    menu = w.sidebar.last_menu
    qtbot.wait(200)
    driver.settle(w)
    assert w.session_id == ids[0]
    assert [i.data(ID) for i in tree.selectionModel().selectedIndexes()] == [ids[0]]
    open_entry = next(a for a in menu.actions() if a.text() == "Open")
    menu.hide()
    open_entry.trigger()  # its Open entry opens it
    driver.until(lambda: w.session_id == ids[2])


def test_a_new_space_is_shown_at_once_with_a_row_that_starts_a_chat_in_it(
        driver, fake_provider, qtbot):
    w = chat_window(driver, fake_provider)
    ids = chats(driver, w, 120)
    w.window_commands.open_session(ids[0])
    driver.until(lambda: w.session_id == ids[0] and w.tasks.pending == 0)
    tree, model = w.sidebar.tree, w.sidebar.model
    space_menu = next(a.menu() for a in w.menuBar().actions() if a.text() == "&Space")
    assert "New space…" in [a.text() for a in space_menu.actions()]  # with the space commands
    w.window_commands.new_space()
    dlg = w.chat.organizer.dialog
    qtbot.keyClicks(dlg.name_edit, "Work")
    qtbot.mouseClick(dlg.ok_button, Qt.MouseButton.LeftButton)
    driver.until(lambda: len(model.space_ids()) == 2)
    work = model.space_ids()[-1]
    driver.until(lambda: w.session_id is None and w.chat.space_id == work
                 and w.tasks.pending == 0)
    QApplication.processEvents()
    start = model.start_index(work)
    assert start.data() == "New chat in Work"
    assert in_view(tree, start)  # below General's 50 chats: scrolled to
    assert in_view(tree, model.space_index(work))
    assert [i.data() for i in tree.selectionModel().selectedIndexes()] == ["New chat in Work"]

    w.window_commands.open_session(ids[0])  # away, then back from the keyboard
    driver.until(lambda: w.session_id == ids[0] and w.tasks.pending == 0)
    assert not in_view(tree, model.start_index(work))
    w.activateWindow()  # the dialog closed
    driver.until(w.isActiveWindow)
    w.window_commands.focus_sidebar()
    key(qtbot, "End")
    assert tree.currentIndex().data(KIND) == "start"
    key(qtbot, "Return")
    driver.until(lambda: w.session_id is None and w.chat.space_id == work
                 and QApplication.focusWidget() is w.composer)

    # a click on it too (from a chat of another space)
    w.window_commands.open_session(ids[0])
    driver.until(lambda: w.session_id == ids[0] and w.tasks.pending == 0)
    tree.scrollTo(model.start_index(work))
    rect = tree.visualRect(model.start_index(work))
    qtbot.mouseClick(tree.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    driver.until(lambda: w.session_id is None and w.chat.space_id == work)
    fake_provider.script("Hi.")
    driver.send("first in work", wait=True)  # the chat made: the row gives way to it
    driver.until(lambda: model.space_of(w.session_id or "") == work)
    assert not model.start_index(work).isValid()


def test_a_chat_opened_from_the_palette_is_listed_selected_and_scrolled_to(
        driver, fake_provider, qtbot):
    w = chat_window(driver, fake_provider)
    ids = chats(driver, w, 160, titles={9: "Quarterly budget"})  # ids[150]: the 151st row
    w.window_commands.open_session(ids[0])
    driver.until(lambda: w.session_id == ids[0] and w.tasks.pending == 0)
    tree, model = w.sidebar.tree, w.sidebar.model
    assert model.loaded_count(w.chat.space_id) == 50
    w.window_commands.focus_composer()
    key(qtbot, "Ctrl+K")
    type_text(qtbot, "Quarterly budget")
    palette = w.command_palette
    driver.until(lambda: palette.current_entry() is not None
                 and palette.current_entry().ref == ids[150])
    key(qtbot, "Return")
    driver.until(lambda: w.session_id == ids[150] and model.has(ids[150])
                 and w.tasks.pending == 0)
    QApplication.processEvents()
    assert model.loaded_count(w.chat.space_id) == 160  # its pages (three more), not others
    assert model.has_more(w.chat.space_id) is False
    assert [i.data(ID) for i in tree.selectionModel().selectedIndexes()] == [ids[150]]
    assert in_view(tree, model.index_of(ids[150]))

    w.window_commands.open_session(ids[60])  # one listed: nothing read
    driver.until(lambda: w.session_id == ids[60] and w.tasks.pending == 0)
    QApplication.processEvents()
    assert [i.data(ID) for i in tree.selectionModel().selectedIndexes()] == [ids[60]]
    assert in_view(tree, model.index_of(ids[60]))


def test_a_chat_opened_from_the_search_popup_is_listed_and_selected(driver, fake_provider,
                                                                   qtbot):
    w = chat_window(driver, fake_provider)
    old = driver.run(w.store.create_session(title="Travel"))  # the oldest: row 120
    driver.run(w.store.append_turn(old.id, Turn("user", [TextBlock("the Alhambra at dawn")])))
    ids = chats(driver, w, 119)
    w.window_commands.open_session(ids[0])
    driver.until(lambda: w.session_id == ids[0] and w.tasks.pending == 0)
    tree, model = w.sidebar.tree, w.sidebar.model
    assert not model.has(old.id)
    popup = search_for(driver, w, qtbot, "alhambra")
    qtbot.keyClick(popup.edit, Qt.Key.Key_Return)
    driver.until(lambda: w.session_id == old.id and model.has(old.id) and w.tasks.pending == 0)
    QApplication.processEvents()
    assert [i.data(ID) for i in tree.selectionModel().selectedIndexes()] == [old.id]
    assert in_view(tree, model.index_of(old.id))

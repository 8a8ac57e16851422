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

from parley.gui.sidebar.model import ID
from tests.gui.keyboard import chat_window

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

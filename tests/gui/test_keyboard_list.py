"""The chat list, the toast's Undo and keyboard-opened menus, driven by keys only.

Fresh-user trial 16: in the chat list (Ctrl+Shift+E) the first arrow opened a chat and
sent the focus to the message box, where the next Up began "Edit last message" and the
Enter meant for "open this chat" sent the edit as a new branch; nothing showed where
the focus was.
"""

from __future__ import annotations

from typing import Any

import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QColor, QContextMenuEvent
from PySide6.QtWidgets import QApplication

from parley.gui import dialogs
from parley.gui.look import appearance
from tests.gui.chats import long_chat
from tests.gui.keyboard import accent_pixels, chat_window, key, say, type_text

pytestmark = pytest.mark.timeout(60)


def three_chats(driver: Any, qtbot: Any, w: Any) -> list[str]:
    """Three chats made from the keyboard; their ids, newest (the open one) first."""
    key(qtbot, "Ctrl+L")
    for word in ("alpha", "bravo", "charlie"):
        key(qtbot, "Ctrl+N")
        driver.until(lambda: w.session_id is None)
        say(driver, qtbot, w, f"{word} plans", f"{word} reply")
    driver.until(lambda: len(w.sidebar.model.session_ids()) == 3)
    return list(w.sidebar.model.session_ids())


def settled(driver: Any, w: Any, sid: str) -> None:
    driver.until(lambda: w.session_id == sid and w.tasks.pending == 0
                 and w.chat.turns and w.chat.turns[0].text().endswith("plans"))
    QApplication.processEvents()


def test_arrows_walk_the_chat_list_and_the_focus_stays_there(driver, fake_provider, qtbot):
    w = chat_window(driver, fake_provider)
    ids = three_chats(driver, qtbot, w)
    tree = w.sidebar.tree
    key(qtbot, "Ctrl+Shift+E")
    assert QApplication.focusWidget() is tree

    key(qtbot, "Down")  # the chat below opens; the list keeps the focus
    settled(driver, w, ids[1])
    assert QApplication.focusWidget() is tree
    key(qtbot, "Down")
    settled(driver, w, ids[2])
    assert QApplication.focusWidget() is tree
    key(qtbot, "Up")
    settled(driver, w, ids[1])
    assert QApplication.focusWidget() is tree
    assert w.chat.editor.editing is None and w.composer.text() == ""

    key(qtbot, "Return")  # open it: to its message box, nothing sent, nothing edited
    driver.until(lambda: QApplication.focusWidget() is w.composer)
    assert w.session_id == ids[1] and w.composer.text() == ""
    assert [t.text() for t in w.chat.turns] == ["bravo plans", "bravo reply"]
    assert len(fake_provider.model_requests) == 3

    key(qtbot, "Ctrl+Shift+E")
    key(qtbot, "Escape")  # back to the message box, the chat unchanged
    assert QApplication.focusWidget() is w.composer and w.session_id == ids[1]

    # A click still opens a chat for typing in it.
    tree.setFocus()
    rect = tree.visualRect(w.sidebar.model.index_of(ids[0]))
    qtbot.mouseClick(tree.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    settled(driver, w, ids[0])
    driver.until(lambda: QApplication.focusWidget() is w.composer)


def test_the_list_and_its_current_row_show_the_focus(driver, fake_provider, qtbot, qapp,
                                                     restore_look):
    w = chat_window(driver, fake_provider)
    appearance.apply(qapp, appearance.LIGHT)  # the application's style sheet
    ids = three_chats(driver, qtbot, w)
    tree = w.sidebar.tree
    rect = tree.visualRect(w.sidebar.model.index_of(ids[0]))

    def shot() -> tuple[int, int]:
        QApplication.processEvents()
        image = w.sidebar.grab().toImage()
        at = tree.viewport().mapTo(w.sidebar, rect.topLeft())
        row = accent_pixels(image, at.x(), at.y(), rect.width(), rect.height())
        frame = tree.mapTo(w.sidebar, tree.rect().topLeft())
        edge = accent_pixels(image, frame.x(), frame.y() + tree.height() // 2, 1, 40)
        return row, edge

    key(qtbot, "Ctrl+L")
    assert shot() == (0, 0)
    key(qtbot, "Ctrl+Shift+E")
    row, edge = shot()
    assert row > 20, "the current row shows no focus outline"
    assert edge > 20, "the list shows no focus ring"
    key(qtbot, "F6")  # on to the conversation: the list shows no focus any more
    assert shot() == (0, 0)


def test_the_conversation_outlines_the_focused_message_and_no_ring_round_it(
        driver, fake_provider, qtbot, qapp, restore_look):
    """Fresh-user trial: with the keyboard in the conversation (Ctrl+Shift+M) a ring went
    round the whole pane besides the focused message's outline, its bottom line across
    the strip under the messages, by the message's buttons there: the message's own
    outline is the one focus shown (the pane does not shift by the ring's pixel either)."""
    w = chat_window(driver, fake_provider)
    appearance.apply(qapp, appearance.LIGHT)  # the application's style sheet
    sid, _ = long_chat(driver, w, 40)  # more than the pane shows: it scrolls
    w.chat.open_session(sid)
    driver.until(lambda: w.session_id == sid and len(w.chat.turns) == 40)
    lv = w.transcript.list_view
    before = lv.viewport().geometry()
    key(qtbot, "Ctrl+Shift+M")
    assert QApplication.focusWidget() is lv
    key(qtbot, "Up")
    qtbot.wait(200)
    image = w.transcript.grab().toImage()
    frame = lv.mapTo(w.transcript, lv.rect().topLeft())
    for x in (frame.x(), frame.x() + lv.width() - 1):  # the pane's left and right edges
        assert accent_pixels(image, x, frame.y() + 10, 1, lv.height() - 20) == 0, \
            "a focus ring goes round the conversation"
    rect = lv.visualRect(w.transcript.model.index(lv.currentIndex().row()))
    at = lv.viewport().mapTo(w.transcript, rect.topLeft())
    row = accent_pixels(image, at.x(), at.y(), rect.width(), rect.height(),
                        lv.delegate.colors.focus)
    assert row > 20, "the focused message shows no outline"
    assert lv.viewport().geometry() == before


def test_undo_a_delete_or_an_archive_from_the_keyboard(driver, fake_provider, qtbot):
    """Trial 16, shot-62..64: the toast's Undo could only be clicked; Ctrl+Z did nothing
    and the palette had no Undo."""
    w = chat_window(driver, fake_provider)
    ids = three_chats(driver, qtbot, w)
    assert "(Ctrl+Z)" in w.toast.undo_button.text()  # the toast names the key

    key(qtbot, "Ctrl+Shift+E")
    dialogs.answers.append(True)  # "Delete chat?" → Delete
    key(qtbot, "Delete")
    driver.until(lambda: ids[0] not in w.sidebar.model.session_ids() and w.undo.pending)
    focus = QApplication.focusWidget()
    assert focus is not None
    key(qtbot, "Ctrl+Z")  # wherever the focus went: the chat comes back
    driver.until(lambda: ids[0] in w.sidebar.model.session_ids() and w.tasks.pending == 0)
    assert not w.undo.pending and not w.toast.isVisible()
    assert driver.run(w.store.get_session(ids[0])).title == "charlie plans"

    key(qtbot, "Ctrl+L")
    key(qtbot, "Ctrl+W")  # archive the open chat, then Undo from the palette
    driver.until(lambda: w.undo.pending and w.tasks.pending == 0)
    archived = next(s for s in ids if s not in w.sidebar.model.session_ids())
    key(qtbot, "Ctrl+K")
    type_text(qtbot, "undo")
    entry = w.command_palette.current_entry()
    assert entry is not None and entry.ref == "edit.undo"
    key(qtbot, "Return")
    driver.until(lambda: archived in w.sidebar.model.session_ids() and w.tasks.pending == 0)
    assert not driver.run(w.store.get_session(archived)).archived

    key(qtbot, "Ctrl+K")  # nothing pending: no Undo offered
    type_text(qtbot, "undo")
    entry = w.command_palette.current_entry()
    assert entry is None or entry.ref != "edit.undo"
    key(qtbot, "Escape")


def test_ctrl_z_undoes_typing_before_the_toast(driver, fake_provider, qtbot):
    """Typing in the message box is undone first; with nothing typed to undo (a draft
    put back), Ctrl+Z takes back the delete."""
    w = chat_window(driver, fake_provider)
    ids = three_chats(driver, qtbot, w)
    dialogs.answers.append(True)
    key(qtbot, "Ctrl+Shift+Backspace")  # delete the open chat
    driver.until(lambda: ids[0] not in w.sidebar.model.session_ids() and w.undo.pending)
    key(qtbot, "Ctrl+L")
    type_text(qtbot, "draft")
    key(qtbot, "Ctrl+Z")  # the typing goes, the chat stays deleted
    assert w.composer.text() != "draft" and w.undo.pending
    while w.composer.document().isUndoAvailable():
        key(qtbot, "Ctrl+Z")
    assert w.composer.text() == "" and w.undo.pending
    w.composer.setPlainText("kept draft")  # no undo of its own (a draft put back)
    key(qtbot, "Ctrl+Z")
    driver.until(lambda: ids[0] in w.sidebar.model.session_ids() and w.tasks.pending == 0)
    assert not w.undo.pending


def test_menus_opened_by_keys_start_on_their_first_entry(driver, fake_provider, qtbot):
    """Trial 16, shot-16 and shot-43: "Regenerate with another model…" and "Move chat to
    space…" opened from the keyboard showed no highlighted entry."""
    w = chat_window(driver, fake_provider)
    work = driver.run(w.store.create_space("Work"))
    ids = three_chats(driver, qtbot, w)
    driver.run(w.chat.load_sidebar())  # the list shows the new space

    key(qtbot, "Ctrl+K")
    type_text(qtbot, "move chat to space")
    assert w.command_palette.current_entry().ref == "session.move"
    key(qtbot, "Return")
    menu = w.chat.organizer.space_menu
    driver.until(menu.isVisible)
    active = menu.activeAction()
    assert active is not None and active.text() == "Work"  # General (its space) is disabled
    qtbot.keyClick(menu, Qt.Key.Key_Return)
    driver.until(lambda: w.sidebar.model.space_of(ids[0]) == work.id and w.tasks.pending == 0)

    w.activateWindow()  # the offscreen platform leaves no window active after a popup
    driver.until(w.isActiveWindow)
    w.composer.setFocus()
    key(qtbot, "Ctrl+K")
    type_text(qtbot, "regenerate with another model")
    assert w.command_palette.current_entry().ref == "run.regenerate_with"
    key(qtbot, "Return")
    menu = w.transcript._menu
    driver.until(lambda: menu is not None and menu.isVisible())
    first = next(a for a in menu.actions() if a.isEnabled() and not a.isSeparator())
    assert menu.activeAction() is first
    qtbot.keyClick(menu, Qt.Key.Key_Escape)

    w.activateWindow()
    driver.until(w.isActiveWindow)
    w.composer.setFocus()
    key(qtbot, "Ctrl+Shift+E")  # a row's menu by Shift+F10: its first entry too
    key(qtbot, "Shift+F10")
    menu = w.sidebar.last_menu
    driver.until(menu.isVisible)
    assert menu.activeAction() is menu.actions()[0]
    qtbot.keyClick(menu, Qt.Key.Key_Escape)

    w.activateWindow()  # a message's menu asked by the keyboard: its first entry too
    driver.until(w.isActiveWindow)
    w.composer.setFocus()
    key(qtbot, "Ctrl+Shift+M")
    before = w.transcript._menu
    lv = w.transcript.list_view  # what the platform sends for the Menu key
    QApplication.sendEvent(lv, QContextMenuEvent(QContextMenuEvent.Reason.Keyboard,
                                                 QPoint(0, 0), lv.mapToGlobal(QPoint(0, 0))))
    driver.until(lambda: w.transcript._menu is not before and w.transcript._menu.isVisible())
    menu = w.transcript._menu
    first = next(a for a in menu.actions() if a.isEnabled() and not a.isSeparator())
    assert menu.activeAction() is first
    qtbot.keyClick(menu, Qt.Key.Key_Escape)


def test_the_first_ctrl_z_in_a_fresh_message_box_is_the_windows_undo(driver, fake_provider,
                                                                     qtbot):
    """Found driving the real window on X: right after start-up the box held an undo step
    of its own (its margin), so the first Ctrl+Z after a delete did nothing."""
    from parley.core.content import TextBlock, Turn

    w = chat_window(driver, fake_provider)
    chat = driver.run(w.store.create_session(title="Kept chat"))
    for role in ("user", "assistant"):
        driver.run(w.store.append_turn(chat.id, Turn(role, [TextBlock(f"kept {role}")])))
    driver.run(w.chat.load_sidebar())
    key(qtbot, "Ctrl+1")
    driver.until(lambda: w.session_id == chat.id and w.tasks.pending == 0)
    key(qtbot, "Ctrl+L")
    assert not w.composer.document().isUndoAvailable()
    dialogs.answers.append(True)
    key(qtbot, "Ctrl+Shift+Backspace")
    driver.until(lambda: chat.id not in w.sidebar.model.session_ids() and w.undo.pending)
    w.composer.setFocus()
    key(qtbot, "Ctrl+Z")
    driver.until(lambda: chat.id in w.sidebar.model.session_ids() and w.tasks.pending == 0)


def test_a_space_headings_outline_goes_round_its_name(driver, fake_provider, qtbot, qapp,
                                                     restore_look):
    """Fresh-user trial: Up from the first chat stops on the space heading ("General",
    Enter folds it) and its outline was drawn round the whole row, the name sitting
    low in it, the outline's bottom on the chat below: the outline goes round the name."""
    w = chat_window(driver, fake_provider)
    appearance.apply(qapp, appearance.LIGHT)
    ids = three_chats(driver, qtbot, w)
    tree = w.sidebar.tree
    key(qtbot, "Ctrl+Shift+E")
    heading = w.sidebar.model.index_of(ids[0]).parent()
    tree.setCurrentIndex(heading)
    qtbot.wait(50)
    rect = tree.visualRect(heading)
    image = tree.viewport().grab(rect).toImage()
    accent = QColor(appearance.current().accent)

    def near_accent(c: QColor) -> bool:  # the 1.5 px pen is blended: a loose match
        return (abs(c.red() - accent.red()) + abs(c.green() - accent.green())
                + abs(c.blue() - accent.blue())) < 120

    ring_rows, ink_rows = [], []
    for y in range(image.height()):
        row = [image.pixelColor(x, y) for x in range(image.width())]
        if sum(map(near_accent, row)) > image.width() // 2:  # the outline's top or bottom
            ring_rows.append(y)
        if any(c.lightness() < 170 and not near_accent(c) for c in row[20: image.width() // 2]):
            ink_rows.append(y)  # the name's letters (right of the outline's rounded side)
    assert ring_rows and ink_rows, "no outline or no name painted"
    ring_mid = (ring_rows[0] + ring_rows[-1]) / 2
    ink_mid = (ink_rows[0] + ink_rows[-1]) / 2
    assert abs(ring_mid - ink_mid) <= 1.5, (ring_rows, ink_rows)

"""Settings → Appearance (theme, text size) applied live and kept, the conversation's zoom
(Ctrl++ / Ctrl+− / Ctrl+0), Ctrl+W closing (archiving) a chat with Undo, Ctrl+B for the
sidebar: a real window on a real sessions.db, driven by keys and clicks."""

from __future__ import annotations

from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import QApplication, QLabel

from parley.core.settings import Settings
from parley.gui.look import appearance
from parley.gui.look.view_prefs import ZOOM_STEPS, zoom_step
from tests.gui.chats import long_chat
from tests.gui.helpers import choose, open_appearance
from tests.gui.keyboard import chat_window, key

pytestmark = [pytest.mark.timeout(90), pytest.mark.usefixtures("restore_look")]


def base_colour(qapp: QApplication) -> str:
    return qapp.palette().color(QPalette.ColorRole.Base).name()


def test_the_theme_is_applied_at_once_and_kept_across_a_restart(driver: Any, qapp) -> None:
    w = driver.configured()
    dialog = open_appearance(driver, w)
    labels = [dialog.editors["appearance.theme"].input.itemText(i) for i in range(3)]
    assert labels == ["System", "Light", "Dark"]
    choose(driver, dialog, "appearance.theme", "Dark")
    assert appearance.current() is appearance.DARK and base_colour(qapp) == appearance.DARK.base
    hints = [h for h in dialog.findChildren(QLabel, "FieldHint") if h.text()]
    assert hints and all(appearance.DARK.muted in h.styleSheet() for h in hints)  # restyled
    choose(driver, dialog, "appearance.theme", "Light")
    assert appearance.current() is appearance.LIGHT and base_colour(qapp) == "#ffffff"
    choose(driver, dialog, "appearance.theme", "Dark")
    dialog.close()
    driver.close(w)

    appearance.set_preference("system")
    appearance.apply(qapp, appearance.LIGHT)
    w = driver.open()
    assert appearance.current() is appearance.DARK  # read back from sessions.db at start
    assert driver.run(Settings.of(w.store).get("appearance.theme")) == "dark"


def test_the_text_size_scales_the_window_and_the_conversation(driver: Any, qapp) -> None:
    w = driver.configured()
    base = qapp.font().pointSizeF()
    dialog = open_appearance(driver, w)
    choose(driver, dialog, "appearance.text_size", "Larger")
    assert qapp.font().pointSizeF() == pytest.approx(base * 1.3, abs=0.1)
    view = w.transcript.list_view
    assert view.font().pointSizeF() == pytest.approx(base * 1.3, abs=0.1)
    choose(driver, dialog, "appearance.text_size", "Default")
    assert qapp.font().pointSizeF() == pytest.approx(base, abs=0.1)


def test_ctrl_plus_minus_zero_zoom_the_conversation_and_the_zoom_is_kept(
    driver: Any, fake_provider: Any, qtbot: Any
) -> None:
    w = chat_window(driver, fake_provider)
    w.composer.setFocus()
    view = w.transcript.list_view
    normal = view.font().pointSizeF()
    sidebar_pt = w.sidebar.font().pointSizeF()
    key(qtbot, "Ctrl++")
    assert view.font().pointSizeF() == pytest.approx(normal * 1.1, abs=0.1)
    key(qtbot, "Ctrl+=")  # the same key without Shift on most layouts
    assert view.font().pointSizeF() == pytest.approx(normal * 1.25, abs=0.1)
    assert w.statusBar().currentMessage() == "Conversation zoom 125%"
    assert w.sidebar.font().pointSizeF() == sidebar_pt  # only the conversation
    driver.until(lambda: w.tasks.pending == 0)
    assert driver.run(Settings.of(w.store).get("appearance.zoom")) == 125
    driver.close(w)

    w = chat_window(driver, fake_provider)
    view = w.transcript.list_view
    assert view.font().pointSizeF() == pytest.approx(normal * 1.25, abs=0.1)
    w.composer.setFocus()
    key(qtbot, "Ctrl+-")
    assert view.font().pointSizeF() == pytest.approx(normal * 1.1, abs=0.1)
    key(qtbot, "Ctrl+0")
    assert view.font().pointSizeF() == pytest.approx(normal, abs=0.1)
    driver.until(lambda: w.tasks.pending == 0)
    assert driver.run(Settings.of(w.store).get("appearance.zoom")) == 100


def test_zoom_steps_stop_at_the_ends() -> None:
    assert zoom_step(100, 1) == 110 and zoom_step(100, -1) == 90
    assert zoom_step(ZOOM_STEPS[-1], 1) == ZOOM_STEPS[-1]
    assert zoom_step(ZOOM_STEPS[0], -1) == ZOOM_STEPS[0]
    assert zoom_step(113, 1) == 125 and zoom_step(113, -1) == 110 and zoom_step(250, 0) == 100


def test_ctrl_w_closes_the_chat_by_archiving_it_with_undo(
    driver: Any, fake_provider: Any, qtbot: Any
) -> None:
    w = chat_window(driver, fake_provider)
    entry = w.qactions["session.close"]  # the menu and the palette say what it does
    assert entry.text().startswith("Archive chat")
    assert "leaves the chat list" in entry.statusTip() and "Undo" in entry.statusTip()
    first, _ = long_chat(driver, w, 2, title="First chat")
    second, _ = long_chat(driver, w, 2, title="Second chat")
    w.chat.open_session(second)
    driver.until(lambda: w.chat.session_id == second)
    w.composer.setFocus()
    key(qtbot, "Ctrl+W")
    driver.until(lambda: not w.sidebar.model.has(second) and w.chat.session_id == first)
    assert driver.run(w.store.get_session(second)).archived
    assert w.toast.message == "Archived “Second chat”" and w.toast.offers_undo
    qtbot.mouseClick(w.toast.undo_button, Qt.MouseButton.LeftButton)
    driver.until(lambda: w.sidebar.model.has(second))
    assert not driver.run(w.store.get_session(second)).archived


def test_ctrl_b_shows_and_hides_the_sidebar(driver: Any, fake_provider: Any, qtbot: Any) -> None:
    w = chat_window(driver, fake_provider)
    w.composer.setFocus()
    assert w.sidebar.isVisible()
    key(qtbot, "Ctrl+B")
    assert not w.sidebar.isVisible()
    key(qtbot, "Ctrl+B")
    assert w.sidebar.isVisible()

"""Toasts never hide what you may need (the last message, its Resume link, the composer),
stay only as long as needed, stay while the pointer rests on them, and can be dismissed;
Undo keeps its meaning (a delete is final when its toast ends)."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QPoint, QPointF, QRect, Qt
from PySide6.QtGui import QEnterEvent
from PySide6.QtWidgets import QAbstractSlider, QApplication, QWidget

from parley.core import paths
from parley.core.app_state import LAST_SESSION, RUN_MARKER
from parley.core.content import TextBlock, Turn
from parley.core.store import Store
from parley.core.tasks import TaskSet
from parley.gui import dialogs
from parley.gui.main_window import INTERRUPTED_NOTICE
from parley.gui.notices.undo import (
    HOLD_GRACE_MS,
    NOTICE_MAX_MS,
    NOTICE_MIN_MS,
    UNDO_WINDOW_MS,
    Toast,
    UndoManager,
    reading_ms,
)
from tests.gui.helpers import resume_point

pytestmark = pytest.mark.timeout(60)

LEFT = Qt.MouseButton.LeftButton
MODEL = "anthropic:claude-sonnet-4-6"
STORY = "\n\n".join(f"Paragraph {i}: " + "once upon a time " * 14 for i in range(30))


def _env(fake_provider) -> dict[str, str]:
    return {"ANTHROPIC_API_KEY": "sk-ant-test", "ANTHROPIC_BASE_URL":
            fake_provider.anthropic_base_url}


def _home_with_cut_off_reply(home, *, crashed: bool) -> str:
    with Store.open(paths.db_path(home)) as store:
        other = store.create_session(title="Another chat", model=MODEL)
        store.append_turn(other.id, Turn("user", [TextBlock("hi")]))
        # answered: the cut-off reply is all a crash left (the notice names each leftover)
        store.append_turn(other.id, Turn("assistant", [TextBlock("hello")], model=MODEL))
        s = store.create_session(title="A long story", model=MODEL)
        store.append_turn(s.id, Turn("user", [TextBlock("Tell me a long story")]))
        store.append_turn(s.id, Turn("assistant", [TextBlock(STORY)], aborted=True,
                                     cut_off=True, model=MODEL))  # as journalled
        store.set_state(LAST_SESSION.name, s.id)
        if crashed:
            store.set_state(RUN_MARKER.name, {"pid": 1, "started_at": 0})  # no clean exit
    return str(s.id)


def window_rect(w, widget: QWidget, rect: QRect | None = None) -> QRect:
    rect = rect if rect is not None else widget.rect()
    return QRect(widget.mapTo(w, rect.topLeft()), rect.size())


def resume_rect(w) -> QRect:
    """The Resume link's line (window coordinates) where it is now, without scrolling."""
    point = resume_point(w)
    viewport = w.transcript.list_view.viewport()
    return window_rect(w, viewport, QRect(point.x() - 40, point.y() - 8, 120, 16))


def last_row_rect(w) -> QRect:
    """The visible part of the last message (window coordinates)."""
    lv = w.transcript.list_view
    rect = lv.visualRect(w.transcript.model.index(w.transcript.model.rowCount() - 1))
    return window_rect(w, lv.viewport(), rect.intersected(lv.viewport().rect()))


def assert_clear(w) -> None:
    toast = w.toast.geometry()
    assert w.toast.isVisible()
    assert not toast.intersects(window_rect(w, w.composer_bar)), "covers the composer"
    assert not toast.intersects(last_row_rect(w)), "covers the last message"
    link = resume_rect(w)
    assert not toast.intersects(link), "covers the Resume link"
    assert link.bottom() < window_rect(w, w.transcript.list_view.viewport()).bottom()
    # What a click there reaches is the conversation, not the toast.
    assert w.childAt(link.center()) is w.transcript.list_view.viewport()


def test_an_undo_toast_leaves_the_last_message_and_its_resume_link_clear(
        driver, fake_provider, home):
    sid = _home_with_cut_off_reply(home, crashed=False)
    w = driver.open(env=_env(fake_provider))
    driver.until(lambda: w.session_id == sid)
    lv = w.transcript.list_view
    lv.verticalScrollBar().triggerAction(QAbstractSlider.SliderAction.SliderToMaximum)
    driver.until(lambda: lv.sticks_to_bottom)  # the person is at the end
    w.chat.organizer.pin_session(sid)
    driver.until(lambda: w.undo.pending and w.toast.isVisible())
    driver.until(lambda: lv.verticalScrollBar().value() == lv.verticalScrollBar().maximum())
    assert_clear(w)
    assert "Pinned" in w.toast.message
    w.resize(900, 640)  # the toast and the room kept for it follow the window
    driver.until(lambda: lv.verticalScrollBar().value() == lv.verticalScrollBar().maximum())
    assert_clear(w)
    w.composer.set_text("a longer message\n" * 4)  # the composer grows: the toast moves up
    driver.until(lambda: not w.toast.geometry().intersects(window_rect(w, w.composer_bar)))
    assert_clear(w)
    w.undo.undo()  # the toast goes: the room kept under the last message goes too
    driver.until(lambda: not w.toast.isVisible())
    assert lv.content_height() - lv.viewport().height() == lv.verticalScrollBar().maximum()
    driver.until(lambda: lv.verticalScrollBar().value() == lv.verticalScrollBar().maximum())
    assert window_rect(w, lv.viewport()).bottom() >= last_row_rect(w).bottom()


def test_the_crash_notice_sits_above_the_composer_short_and_clear(driver, fake_provider, home):
    _home_with_cut_off_reply(home, crashed=True)
    w = driver.open(env=_env(fake_provider))
    assert w.toast.message == INTERRUPTED_NOTICE
    lv = w.transcript.list_view
    lv.verticalScrollBar().triggerAction(QAbstractSlider.SliderAction.SliderToMaximum)
    driver.until(lambda: lv.verticalScrollBar().value() == lv.verticalScrollBar().maximum())
    assert_clear(w)
    assert 0 < w.toast.remaining_ms <= NOTICE_MAX_MS  # was 12 s


def test_hovering_keeps_an_undo_toast_and_its_undo_then_it_goes(driver, home, qtbot):
    w = driver.configured()
    a = driver.run(w.store.create_session(title="Alpha")).id
    driver.run(w.store.append_turn(a, Turn("user", [TextBlock("hi")])))
    driver.run(w.chat.load_sidebar())
    w.undo.window_ms = 300
    dialogs.answers.append(True)
    w.chat.organizer.delete_session(a)
    driver.until(lambda: w.undo.pending and w.toast.isVisible())
    enter(w.toast)
    qtbot.wait(900)  # three times the window: still offered while the pointer rests on it
    assert w.toast.isVisible() and w.undo.pending and w.toast.offers_undo
    leave(w.toast)
    assert w.undo.pending  # a moment to move back onto it
    driver.until(lambda: not w.toast.isVisible() and not w.undo.pending,
                 timeout=(HOLD_GRACE_MS + 2000) / 1000)
    driver.until(lambda: driver.run(w.store.list_sessions(include_archived=True)) == [])


def test_dismissing_an_undo_toast_makes_the_change_final_at_once(driver, qtbot):
    w = driver.configured()
    a = driver.run(w.store.create_session(title="Alpha")).id
    driver.run(w.store.append_turn(a, Turn("user", [TextBlock("hi")])))
    driver.run(w.chat.load_sidebar())
    w.undo.window_ms = 60_000
    dialogs.answers.append(True)
    w.chat.organizer.delete_session(a)
    driver.until(lambda: w.undo.pending and w.toast.isVisible())
    assert w.toast.close_button.accessibleName() == "Dismiss"
    qtbot.mouseClick(w.toast.close_button, LEFT)
    assert not w.toast.isVisible() and not w.undo.pending
    driver.until(lambda: driver.run(w.store.list_sessions(include_archived=True)) == [],
                 timeout=3)


def enter(widget: QWidget) -> None:
    local = QPointF(widget.rect().center())
    QApplication.sendEvent(widget, QEnterEvent(local, local, QPointF(widget.mapToGlobal(
        local.toPoint()))))


def leave(widget: QWidget) -> None:
    from PySide6.QtCore import QEvent

    QApplication.sendEvent(widget, QEvent(QEvent.Type.Leave))


# -- durations and dismissal, on a bare toast -----------------------------------------------


@pytest.fixture
def bare(qtbot, loop):
    parent = QWidget()
    qtbot.addWidget(parent)
    parent.resize(800, 600)
    parent.show()
    toast = Toast(parent)
    yield toast, UndoManager(toast, TaskSet())
    parent.close()  # (the parent is kept alive until here)


def test_undo_is_offered_a_few_seconds_and_plain_notices_go_sooner():
    assert 4000 <= UNDO_WINDOW_MS <= 6000
    assert reading_ms("Compacted.") == NOTICE_MIN_MS < UNDO_WINDOW_MS
    assert NOTICE_MIN_MS < reading_ms(INTERRUPTED_NOTICE) <= NOTICE_MAX_MS <= 6000
    assert reading_ms("word " * 500) == NOTICE_MAX_MS


def test_a_notice_goes_by_itself_after_its_reading_time(bare, qtbot):
    toast, undo = bare
    undo.notice("Saved.", timeout_ms=150)
    assert toast.isVisible() and not toast.offers_undo
    qtbot.waitUntil(lambda: not toast.isVisible(), timeout=2000)
    undo.notice("Compacted.")
    assert 0 < toast.remaining_ms <= NOTICE_MIN_MS * 1.05  # (a coarse timer: 5 %)


def test_escape_on_the_toast_dismisses_it(bare, qtbot):
    toast, undo = bare
    dismissed = []
    toast.dismissed.connect(lambda: dismissed.append(True))
    undo.notice("Exported.")
    toast.undo_button.setFocus()
    qtbot.keyClick(toast.close_button, Qt.Key.Key_Escape)
    assert not toast.isVisible() and dismissed == [True]


def test_the_toast_says_what_it_covers(bare, qtbot):
    toast, undo = bare
    covered: list[QRect] = []
    toast.covers.connect(covered.append)
    toast.anchor = lambda: QRect(QPoint(100, 500), toast.parentWidget().size() / 4)
    undo.notice("Exported.")
    assert covered[-1] == toast.geometry() and toast.geometry().bottom() < 500
    toast.hide()
    assert covered[-1].isEmpty()

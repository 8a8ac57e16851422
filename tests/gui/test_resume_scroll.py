"""Resume on a long cut-off reply keeps the view at the end and follows the continuation
(like any reply being written); scrolling up stops following; a click in a tall message
does not scroll it to its top."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtWidgets import QAbstractSlider

from parley.core import paths
from parley.core.app_state import LAST_SESSION
from parley.core.content import TextBlock, Turn
from parley.core.store import Store
from parley.gui.transcript.listview import STICK_SLACK
from tests.gui.helpers import resume_point
from tests.gui.transcript_reading import show_turns

pytestmark = pytest.mark.timeout(60)

LEFT = Qt.MouseButton.LeftButton
MODEL = "anthropic:claude-sonnet-4-6"
STORY = "\n\n".join(f"Paragraph {i}: " + "once upon a time " * 14 for i in range(30))
MORE = "\n\n".join(f"More {i}: " + "and then they went on " * 10 for i in range(14))


def _env(fake_provider) -> dict[str, str]:
    return {"ANTHROPIC_API_KEY": "sk-ant-test", "ANTHROPIC_BASE_URL":
            fake_provider.anthropic_base_url}


def _cut_off_chat(home) -> str:
    """A chat whose last reply is long and was cut off; it is the one open at start."""
    with Store.open(paths.db_path(home)) as store:
        s = store.create_session(title="A long story", model=MODEL)
        store.append_turn(s.id, Turn("user", [TextBlock("Tell me a long story")]))
        store.append_turn(s.id, Turn("assistant", [TextBlock(STORY)], aborted=True, model=MODEL))
        store.set_state(LAST_SESSION.name, s.id)
    return str(s.id)


def at_end(list_view) -> bool:
    bar = list_view.verticalScrollBar()
    return bar.maximum() > 0 and bar.value() >= bar.maximum() - STICK_SLACK


def test_a_chat_opened_at_start_shows_the_end_of_its_long_last_reply(driver, fake_provider,
                                                                     home):
    sid = _cut_off_chat(home)
    w = driver.open(env=_env(fake_provider))
    driver.until(lambda: w.session_id == sid)
    lv = w.transcript.list_view
    driver.until(lambda: at_end(lv))  # where Resume is, not at the reply's top
    assert lv.sticks_to_bottom
    resume_point(w)  # in view


def test_resume_follows_the_continuation_at_the_end(driver, fake_provider, home):
    sid = _cut_off_chat(home)
    w = driver.open(env=_env(fake_provider))
    driver.until(lambda: w.session_id == sid)
    lv = w.transcript.list_view
    lv.verticalScrollBar().triggerAction(QAbstractSlider.SliderAction.SliderToMaximum)
    driver.until(lambda: at_end(lv) and lv.sticks_to_bottom)  # the person is at the end
    fake_provider.script(MORE, token_delay_ms=15, chunk_size=20)
    driver.qtbot.mouseClick(lv.viewport(), LEFT, pos=resume_point(w))
    samples: list[tuple[bool, int]] = []

    def done() -> bool:
        if w.composer_bar.busy:
            samples.append((at_end(lv), lv.verticalScrollBar().maximum()))
        return not w.composer_bar.busy and w.tasks.pending == 0 and len(w.chat.turns) == 4

    driver.until(done, timeout=20)
    assert len(samples) > 20  # streamed over more than the ~0.5 s Qt waits after a click
    assert all(end for end, _ in samples), samples
    assert samples[-1][1] > samples[0][1]  # it grew, and the view went along
    assert at_end(lv) and lv.sticks_to_bottom
    assert driver.last_text().startswith("More 0") and "More 13" in driver.transcript_text()


def test_scrolling_up_during_the_continuation_stops_following(driver, fake_provider, home):
    sid = _cut_off_chat(home)
    w = driver.open(env=_env(fake_provider))
    driver.until(lambda: w.session_id == sid)
    lv = w.transcript.list_view
    fake_provider.script(MORE, token_delay_ms=15, chunk_size=16)
    w.transcript.message_action("retry")  # r on the focused (last) message: Resume
    driver.until(lambda: "More 1" in driver.transcript_text(), timeout=10)
    bar = lv.verticalScrollBar()
    bar.triggerAction(QAbstractSlider.SliderAction.SliderPageStepSub)  # the person scrolls up
    assert not lv.sticks_to_bottom
    value = bar.value()
    driver.until(lambda: "More 5" in driver.transcript_text(), timeout=10)
    # Stays where the person is (give or take a row above measured anew) as the reply grows.
    assert abs(bar.value() - value) <= 4 and not at_end(lv) and not lv.sticks_to_bottom
    w.window_commands.stop_run()
    driver.settle()


def test_a_click_in_a_tall_message_does_not_scroll_it_to_its_top(view, qtbot):
    show_turns(view, [Turn("user", [TextBlock("story")], id="u1"),
                    Turn("assistant", [TextBlock(STORY)], id="a1", model=MODEL)])
    lv = view.list_view
    lv.settle()
    assert at_end(lv)
    value = lv.verticalScrollBar().value()
    qtbot.mouseClick(lv.viewport(), LEFT, pos=QPoint(300, lv.viewport().height() // 2))
    qtbot.wait(900)  # Qt scrolls to a pressed row about 0.5 s after the press
    assert lv.verticalScrollBar().value() == value and lv.sticks_to_bottom


def test_resume_from_the_keyboard_goes_to_the_end_first(view, qtbot):
    show_turns(view, [Turn("user", [TextBlock("story")], id="u1"),
                    Turn("assistant", [TextBlock(STORY)], id="a1", model=MODEL, aborted=True)])
    lv = view.list_view
    lv.settle()
    lv.verticalScrollBar().triggerAction(QAbstractSlider.SliderAction.SliderPageStepSub)
    assert not at_end(lv)
    with qtbot.waitSignal(view.resumeRequested, timeout=1000) as sig:
        assert view.message_action("retry", 1)
    assert sig.args == ["a1"] and lv.sticks_to_bottom
    lv.settle()
    assert at_end(lv)

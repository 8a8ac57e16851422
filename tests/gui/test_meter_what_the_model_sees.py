"""The context meter shows what the model sees (issue 30): once the run leaves a chat's
oldest turns off the wire (no summary could be made), the meter counts the narrowed
request — the last reply's reported input plus what was added since — not the whole
chat, and reads the same after a restart; a message refused because the window is too
small for it shows the refusal's count, not the local estimate. Real window, store, SDK
and fake provider with an enforced window."""

from __future__ import annotations

from typing import Any

import pytest
from PySide6.QtCore import Qt

from parley.core.compaction.unseen import load_unseen
from parley.core.context.tokens import estimate_tokens
from tests.core.unseen_support import message
from tests.gui.long_chats import restart

pytestmark = pytest.mark.timeout(180)

WINDOW = 20_000


def small_window(fake: Any, scale: float = 1.0) -> None:
    fake.anthropic_models = [
        {"id": m, "display_name": name, "max_input_tokens": WINDOW, "max_tokens": 4_096}
        for m, name in (("claude-sonnet-4-6", "Claude Sonnet 4.6"),
                        ("claude-haiku-4-5", "Claude Haiku 4.5"))]
    fake.windows.enforce_windows = True
    fake.windows.token_scale = scale


def paste_and_send(driver: Any, w: Any, text: str) -> None:
    """Put ``text`` in the message box at once (as a paste does) and press Enter; wait
    until it is answered. Typing its ~8,000 characters key by key (``driver.send``) took
    20-50 s a message on a 2-core machine: the test is about the meter, not typing."""
    turns = len(w.chat.turns)
    w.composer.set_text(text)
    driver.qtbot.keyClick(w.composer, Qt.Key.Key_Return)
    driver.until(lambda: len(w.chat.turns) == turns + 2 and w.chat.turns[-1].role == "assistant"
                 and w.tasks.pending == 0, timeout=30)
    driver.settle(w)


# Twelve exchanges against a 20,000-token window, compaction failing from the fifth on:
# 9-30 s on a 2-core machine with the messages pasted (typed, 130-400 s).
@pytest.mark.slow
def test_the_meter_counts_the_narrowed_request_before_and_after_a_restart(driver: Any) -> None:
    small_window(driver.fake)
    driver.fake.summary_answers = "empty"  # no summary can be made: the run narrows
    w = driver.configured()
    for n in range(12):
        paste_and_send(driver, w, message(n))
    sid = w.chat.session_id
    unseen = driver.run(load_unseen(w.store, sid))
    assert unseen is not None and driver.fake.windows.refused == 0
    meter = w.context_meter
    driver.until(lambda: w.chat.state.unseen is not None and meter.measured, timeout=10)
    whole = estimate_tokens(w.chat.turns)
    assert whole > WINDOW  # the whole chat would not fit
    last = w.chat.turns[-1]
    assert last.usage is not None
    reported = last.usage.total_input_tokens
    # what the model sees: the last request's reported input plus the reply added
    assert reported < meter.used <= WINDOW < whole
    before = meter.used

    w2 = restart(driver, w, sid)
    driver.until(lambda: w2.chat.state.unseen is not None, timeout=10)
    driver.until(lambda: w2.context_meter.used <= WINDOW, timeout=10)
    assert abs(w2.context_meter.used - before) <= before * 0.1


def test_a_message_too_long_for_the_window_shows_the_providers_count(driver: Any) -> None:
    small_window(driver.fake, scale=40)  # the provider counts 40 tokens per estimated one
    w = driver.configured()
    w.composer.set_text("Hello " + "there " * 600)  # ~600 estimated tokens: ~24,000 counted
    driver.qtbot.keyClick(w.composer, Qt.Key.Key_Return)  # pasted: typed, it took ~20 s
    driver.until(lambda: "too long" in driver.error_text(w), timeout=20)
    driver.settle(w)
    meter = w.context_meter
    assert driver.fake.windows.refused == 1
    assert meter.used > WINDOW and meter.measured


def test_at_first_start_the_meter_shows_the_listed_window_before_any_request(
        driver: Any) -> None:
    small_window(driver.fake)  # the provider lists its models with a 20,000-token window
    w = driver.configured()
    model = w.chat.current_model()
    assert model is not None and model.endswith(("claude-sonnet-4-6", "claude-haiku-4-5"))
    driver.until(lambda: w.tasks.pending == 0 and w.model_picker.choices, timeout=10)
    driver.until(lambda: w.context_meter.context_window == WINDOW, timeout=5)
    assert not driver.fake.model_requests  # no request was made
    assert "/ 20k" in w.context_meter.label.text()

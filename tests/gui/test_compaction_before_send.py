"""A message whose request reaches the compaction point is sent after a compaction that
brings it under the point, whether it was typed, queued while a reply streamed, or
regenerated (fresh-user trial 17: a 2,480-word text pasted and queued twice against a
20,000-token window at threshold 0.8; the third request went out at 17.3k of 20k after
a compaction that kept the last four turns verbatim and so summarized one, and its reply
took the chat over the window). Real window, store, SDK and the fake provider server
with an enforced 20,000-token window, as ``--window 20000``."""

from __future__ import annotations

import random
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

from parley.core.content import CompactSummaryBlock

pytestmark = pytest.mark.timeout(240)

WINDOW = 20_000
THRESHOLD = 0.8
POINT = int(WINDOW * THRESHOLD)
WORDS = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india",
         "juliet", "kilo", "lima", "mike", "november", "oscar", "papa", "quebec", "romeo",
         "sierra", "tango"]


def long_text(seed: int, paragraphs: int = 40) -> str:
    """About 2,480 words in 40 paragraphs (~3,900 estimated tokens), as the trial pasted."""
    rng = random.Random(seed)
    return "\n\n".join(f"Paragraph {n}: " + " ".join(rng.choice(WORDS) for _ in range(60)) + "."
                       for n in range(1, paragraphs + 1))


def small_window(driver: Any) -> Any:
    """A window on the fake server whose models hold 20,000 tokens, threshold 0.8."""
    driver.fake.anthropic_models = [
        {"id": "claude-sonnet-4-6", "display_name": "Claude Small Window (20,000 tokens)",
         "max_input_tokens": WINDOW, "max_tokens": 4_096}]
    driver.fake.windows.enforce_windows = True
    w = driver.configured()
    driver.run(w.store.set_setting("compaction.threshold", THRESHOLD))
    return w


def paste_and_enter(driver: Any, w: Any, text: str) -> None:
    """Paste ``text`` into the message box and press Enter (sent, or queued while busy)."""
    w.composer.setFocus()
    QApplication.clipboard().setText(text)
    driver.qtbot.keyClick(w.composer, Qt.Key.Key_V, Qt.KeyboardModifier.ControlModifier)
    driver.qtbot.keyClick(w.composer, Qt.Key.Key_Return)


def answered(driver: Any, w: Any, users: int) -> bool:
    """The chat holds ``users`` written messages, each answered, and nothing is working."""
    sid = w.chat.session_id
    if sid is None or w.composer_bar.busy or w.tasks.pending:
        return False
    turns = driver.run(w.store.get_turns(sid))
    written = [t for t in turns if t.role == "user"
               and not any(isinstance(b, CompactSummaryBlock) for b in t.blocks)]
    return len(written) == users and turns[-1].role == "assistant" and not turns[-1].aborted


def wait_answered(driver: Any, w: Any, users: int, timeout: float = 120) -> None:
    """Wait until :func:`answered`; on a timeout say what the chat holds."""
    try:
        driver.until(lambda: answered(driver, w, users), timeout=timeout)
    except Exception as exc:
        sid = w.chat.session_id
        turns = driver.run(w.store.get_turns(sid)) if sid else []
        held = [(t.role, len(t.text()), t.aborted, t.usage.total_input_tokens if t.usage else None)
                for t in turns]
        raise AssertionError(f"not answered: busy={w.composer_bar.busy} "
                             f"pending={w.tasks.pending} error={driver.error_text(w)[:200]!r} "
                             f"turns={held}") from exc


def inputs(driver: Any, w: Any) -> list[int]:
    """Input tokens the provider reported for each reply of the chat, in order."""
    turns = driver.run(w.store.get_turns(w.chat.session_id))
    return [t.usage.total_input_tokens for t in turns
            if t.role == "assistant" and t.usage is not None and not t.aborted]


def summaries(driver: Any, w: Any) -> int:
    turns = driver.run(w.store.get_turns(w.chat.session_id))
    return sum(1 for t in turns if any(isinstance(b, CompactSummaryBlock) for b in t.blocks))


def assert_under_the_point(driver: Any, w: Any) -> None:
    """Every reply's request was under the compaction point, a summary was written, no
    request was refused, and the meter is within the window after the last reply."""
    figures = inputs(driver, w)
    assert figures and max(figures) < POINT, figures
    assert summaries(driver, w) >= 1
    assert driver.fake.windows.refused == 0
    driver.until(lambda: w.context_meter.measured and w.tasks.pending == 0, timeout=20)
    assert w.context_meter.used <= WINDOW, (w.context_meter.used, figures)


def test_queued_messages_over_the_point_are_sent_after_a_compaction(driver: Any) -> None:
    w = small_window(driver)
    driver.fake.default_delay_ms = 3  # the echoed reply streams for a few seconds
    paste_and_enter(driver, w, long_text(1))
    driver.until(lambda: w.composer_bar.busy and bool(w.chat.partial), timeout=20)
    paste_and_enter(driver, w, long_text(2))  # Enter during the reply: queued
    paste_and_enter(driver, w, long_text(3))
    sid = w.chat.session_id
    driver.until(lambda: len(w.chat.runs.queue.messages(sid)) == 2, timeout=10)
    wait_answered(driver, w, 3, timeout=180)
    assert_under_the_point(driver, w)


def test_typed_messages_over_the_point_are_sent_after_a_compaction(driver: Any) -> None:
    w = small_window(driver)
    for n in range(1, 4):
        paste_and_enter(driver, w, long_text(n))
        wait_answered(driver, w, n)
    assert_under_the_point(driver, w)


def test_regenerate_over_the_point_is_sent_after_a_compaction(driver: Any) -> None:
    w = small_window(driver)
    driver.run(w.store.set_setting("compaction.auto", False))  # the chat grows past it
    for n, paragraphs in ((1, 40), (2, 40), (3, 29)):
        paste_and_enter(driver, w, long_text(n, paragraphs))
        wait_answered(driver, w, n)
    assert inputs(driver, w)[-1] >= POINT and summaries(driver, w) == 0
    # The point lowered to 0.7 (14,000): the four turns a compaction keeps by default
    # (15.5k) would hold the request over it.
    driver.run(w.store.set_setting("compaction.threshold", 0.7))
    driver.run(w.store.set_setting("compaction.auto", True))
    replies = len(driver.fake.model_requests)
    w.window_commands.regenerate_reply()
    driver.until(lambda: len(driver.fake.model_requests) > replies, timeout=20)
    wait_answered(driver, w, 3)
    last = driver.run(w.store.get_turns(w.chat.session_id))[-1]
    assert last.role == "assistant" and last.usage is not None
    assert last.usage.total_input_tokens < int(WINDOW * 0.7), last.usage
    assert summaries(driver, w) >= 1 and driver.fake.windows.refused == 0

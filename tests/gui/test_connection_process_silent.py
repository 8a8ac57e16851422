"""A reply waiting on a connection process that stopped answering says so (real window,
store, SDK and provider process against the fake provider server; the process stopped
with SIGSTOP, as a deadlock looks from outside).

The shared provider process of these tests is made with a shorter ``HUNG_AFTER_S``
(``parley.core.providers.process.client``: read when the process is made), so the
watchdog restarts it within the test; the hint comes at the product's
``SILENT_AFTER_S``.
"""

from __future__ import annotations

import contextlib
import os
import signal
from collections.abc import Iterator
from typing import Any

import pytest

from parley.core.providers.process import client
from parley.gui.notices.retry_notice import SILENT

#: The watchdog's patience here (s): past SILENT_AFTER_S, with time to see the hint.
HUNG_HERE_S = 6.0


@pytest.fixture
def quick_watchdog(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The shared provider process made anew, with :data:`HUNG_HERE_S`; ended after."""
    client.close_shared()
    monkeypatch.setattr(client, "HUNG_AFTER_S", HUNG_HERE_S)
    yield
    client.close_shared()  # the next test's is made with the product's patience


def bar_text(w: Any) -> str:
    return str(w.chat.runs.retry_notice.bar.text())


def go_on(pid: int) -> None:
    """SIGCONT for ``pid``, unless the watchdog killed it (and it was reaped) already."""
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGCONT)


def helper_pid() -> int:
    proc = client.shared_process()._proc  # noqa: SLF001 - the process to stop
    assert proc is not None and proc.poll() is None
    return proc.pid


def test_a_message_sent_to_a_stopped_process_says_so_then_is_answered(
        quick_watchdog: None, driver: Any) -> None:
    w = driver.configured()
    pid, first = helper_pid(), client.shared_process().generation
    driver.fake.script("Answered after the restart.")
    os.kill(pid, signal.SIGSTOP)
    try:
        driver.qtbot.wait(1000)
        driver.send("hello", w)
        driver.until(lambda: bar_text(w) == SILENT, timeout=HUNG_HERE_S)
        bar = w.chat.runs.retry_notice.bar
        assert bar.isVisible() and "has not answered" in bar.toolTip()
        assert not w.chat.turns or w.chat.turns[-1].role == "user"  # nothing came yet
        # Restarted after its silence: the message goes to the new process.
        driver.until(lambda: driver.last_text(w) == "Answered after the restart.",
                     timeout=HUNG_HERE_S + 15)
        driver.settle(w)
        assert bar_text(w) == "" and not bar.isVisible()
        assert driver.error_text(w) == ""
        assert client.shared_process().generation == first + 1
    finally:
        go_on(pid)


def test_a_reply_waiting_on_a_stopped_process_says_so_until_it_answers_or_is_restarted(
        quick_watchdog: None, driver: Any) -> None:
    w = driver.configured()
    pid = helper_pid()
    driver.fake.script("word " * 400, token_delay_ms=50, chunk_size=5)
    driver.send("hello", w)
    driver.until(lambda: "word word" in driver.transcript_text(w), timeout=15)  # streaming
    os.kill(pid, signal.SIGSTOP)
    try:
        driver.until(lambda: bar_text(w) == SILENT, timeout=HUNG_HERE_S)
        os.kill(pid, signal.SIGCONT)  # it answers again: the hint goes, the reply goes on
        shown = len(driver.transcript_text(w))
        driver.until(lambda: bar_text(w) == "", timeout=3)
        driver.until(lambda: len(driver.transcript_text(w)) > shown, timeout=3)
        assert driver.error_text(w) == ""
        os.kill(pid, signal.SIGSTOP)  # and stops for good
        driver.until(lambda: bar_text(w) == SILENT, timeout=HUNG_HERE_S)
        driver.until(lambda: "stopped answering and was restarted" in driver.error_text(w),
                     timeout=HUNG_HERE_S + 5)
        assert bar_text(w) == ""
        assert driver.last_text(w).startswith("word word")  # what arrived is kept, saved
        driver.settle(w)
    finally:
        go_on(pid)

"""A draft is written while it is still being typed, not only once typing stops.

The trial that found it: ~155 characters typed without a pause over ~7 s, then
kill -9 — the next start had an empty message box, because the draft was written
only 600 ms after the *last* keystroke. Now it is written at most
``LONGEST_MS`` after the first keystroke not yet written, even while typing goes on
(:mod:`parley.gui.composer.draft_timer`). The typing here is a person's: one key
every 40 ms from a timer, as ``xdotool type --delay 40`` did. The kill is played as
``test_restart_after_kill`` does: the file as it is at that moment becomes sessions.db.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QTimer
from PySide6.QtTest import QTest

from parley.gui.composer.draft_timer import LONGEST_MS, QUIET_MS
from parley.gui.composer.drafts import draft_key
from tests.gui.damage import as_if_killed

pytestmark = pytest.mark.timeout(120)

TEXT = ("Continuous typing with no pause long enough for a debounce to fire, "
        "for longer than any debounce waits, and then the machine goes away.")
KEY_MS = 40  # as xdotool type --delay 40


class Typist:
    """Types ``TEXT`` into a window's message box, one key every :data:`KEY_MS`."""

    def __init__(self, window: Any) -> None:
        self.window, self.typed = window, 0
        self.timer = QTimer()
        self.timer.setInterval(KEY_MS)
        self.timer.timeout.connect(self._key)
        self.started = time.monotonic()
        self.timer.start()

    @property
    def typing(self) -> bool:
        return self.timer.isActive()

    def _key(self) -> None:
        if self.typed == len(TEXT):
            self.timer.stop()
            return
        QTest.keyClicks(self.window.composer, TEXT[self.typed])
        self.typed += 1


def _stored(driver: Any, w: Any) -> str:
    return driver.run(w.store.get_state(draft_key(w.chat.session_id))) or ""


def test_a_draft_is_written_while_typing_goes_on(driver: Any) -> None:
    w = driver.configured()
    typist = Typist(w)
    seen: list[tuple[float, int, str]] = []  # (s since typing began, keys typed, stored)

    def written_twice() -> bool:
        stored = _stored(driver, w)
        if stored and (not seen or stored != seen[-1][2]):
            seen.append((time.monotonic() - typist.started, typist.typed, stored))
        return len(seen) >= 2

    driver.until(written_twice, timeout=len(TEXT) * KEY_MS / 1000 + 5)
    assert typist.typing, f"typing ended before the draft was written twice: {seen}"
    assert typist.typed > 2 * QUIET_MS / KEY_MS  # longer than the debounce: it never fired
    for _at, typed, stored in seen:
        assert TEXT.startswith(stored) and len(stored) <= typed
    assert seen[0][0] < 3 * LONGEST_MS / 1000 + 1, seen  # the throttle, with a busy machine's slack
    driver.until(lambda: not typist.typing, timeout=20)
    driver.until(lambda: _stored(driver, w) == TEXT, timeout=5)  # and once it stops


def test_a_kill_during_continuous_typing_keeps_what_was_typed(driver: Any, home: Path) -> None:
    w = driver.configured()
    typist = Typist(w)
    keys = 3 * LONGEST_MS // KEY_MS  # ~3 s of typing, never pausing
    driver.until(lambda: typist.typed >= keys, timeout=30)
    assert typist.typing
    typist.timer.stop()  # the kill: no key and no event after this one
    as_if_killed(driver, w, home)

    again = driver.open()
    driver.until(lambda: again.tasks.pending == 0, timeout=10)
    kept = again.composer.text()
    assert kept and TEXT.startswith(kept), kept
    assert len(kept) >= keys - 2 * LONGEST_MS // KEY_MS  # written within the last ~2 s


def test_a_kill_half_a_second_after_typing_stopped_keeps_the_words(driver: Any, home: Path) -> None:
    """Fresh-user trial 15: words typed, `kill -9` 0.3–0.5 s later: gone after the restart
    (the draft was written 600 ms after the last key)."""
    w = driver.configured()
    driver.send("hello", w, wait=True)  # a saved chat, reopened after the restart
    QTest.keyClicks(w.composer, "typed just before the crash")
    driver.qtbot.wait(500)
    as_if_killed(driver, w, home)

    again = driver.open()
    driver.until(lambda: again.tasks.pending == 0 and again.chat.session_id is not None,
                 timeout=10)
    assert again.composer.text() == "typed just before the crash"

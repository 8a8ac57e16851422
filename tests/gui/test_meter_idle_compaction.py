"""The context meter says when the experimental idle compaction will compact a long chat
(real window, store and SDK against the fake provider server, real cache timer)."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt

from parley.core.settings import Settings

EXPERIMENT = "experimental.compact_before_cache_expiry"


def test_the_meter_shows_when_a_long_idle_chat_will_be_compacted(driver: Any) -> None:
    w = driver.configured()
    driver.run(Settings.of(w.store).set(EXPERIMENT, True))  # as the Settings dialog does
    # long: half the auto-compaction point of a 1M window (0.5 x 0.8 x 1M = 400k)
    driver.fake.script("Noted.", usage={"input_tokens": 450_000})
    driver.send("Here is the whole report.", w, wait=True)
    sid = w.chat.session_id
    driver.until(lambda: w.cache_timer.armed(sid) is not None, timeout=10)
    armed = w.cache_timer.armed(sid)

    driver.until(lambda: f"compacts {armed:%H:%M} if idle" in w.context_meter.label.text())
    assert f"compacted at about {armed:%H:%M}" in w.context_meter.toolTip()
    assert "cache warm until" in w.context_meter.label.text()

    w.cache_timer.quiet_s = 1.0  # how long the composer must stay still (5 s in the app)
    driver.qtbot.keyClicks(w.composer, "x")  # a stray keystroke pauses it, the meter says so
    driver.qtbot.keyClick(w.composer, Qt.Key.Key_Backspace)
    assert w.composer.text() == ""
    driver.until(lambda: w.cache_timer.armed(sid) is None)
    driver.until(lambda: "compacts" not in w.context_meter.label.text())
    assert "compacted at about" not in w.context_meter.toolTip()

    # Once the composer is still, the same deadline is armed again and shown again.
    driver.until(lambda: w.cache_timer.armed(sid) == armed, timeout=10)
    driver.until(lambda: f"compacts {armed:%H:%M} if idle" in w.context_meter.label.text())
    assert f"compacted at about {armed:%H:%M}" in w.context_meter.toolTip()


def test_a_short_chat_shows_no_compaction_time(driver: Any) -> None:
    w = driver.configured()
    driver.run(Settings.of(w.store).set(EXPERIMENT, True))  # as the Settings dialog does
    driver.fake.script("Hi.", usage={"input_tokens": 900})
    driver.send("Hello", w, wait=True)
    driver.until(lambda: "cache warm until" in w.context_meter.label.text())
    assert w.cache_timer.armed(w.chat.session_id) is None
    assert "compacts" not in w.context_meter.label.text()

"""The context meter's "cache warm until …" and "compacts … if idle" go once their time
has passed (trial 21a: "cache warm until 20:27" still shown at 20:33), with one timer set
for the next change and none running while nothing is shown (real window, store and SDK
against the fake provider server)."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from parley.core.events import CacheUpdated


def _now() -> datetime:
    return datetime.now().astimezone()


def test_the_warm_cache_label_goes_when_the_cache_expires(driver: Any) -> None:
    w = driver.configured()
    driver.fake.script("ok")
    driver.send("hello", w, wait=True)
    sid, meter = w.chat.session_id, w.context_meter
    expires, compacts = _now() + timedelta(seconds=1.2), _now() + timedelta(seconds=0.6)
    w.runner.events.emit(CacheUpdated(sid, expires, compacts))
    assert f"cache warm until {expires:%H:%M}" in meter.label.text()
    assert f"compacts {compacts:%H:%M} if idle" in meter.label.text()
    assert meter.next_change.isActive()  # one timer, for the next change

    driver.until(lambda: "compacts" not in meter.label.text(), timeout=5)
    assert _now() >= compacts  # not before its time
    assert "cache warm until" in meter.label.text() and meter.next_change.isActive()
    assert "compacted at about" not in meter.toolTip()

    driver.until(lambda: "cache warm" not in meter.label.text(), timeout=5)
    assert _now() >= expires
    assert "warm until" not in meter.toolTip()
    assert "·" not in meter.label.text()  # the figure alone stays
    assert not meter.next_change.isActive()  # nothing more to change: no timer runs


def test_an_expiry_already_past_is_not_shown(driver: Any) -> None:
    w = driver.configured()
    driver.fake.script("ok")
    driver.send("hello", w, wait=True)
    past = _now() - timedelta(minutes=6)  # as a chat opened after its cache expired
    w.runner.events.emit(CacheUpdated(w.chat.session_id, past, past))
    assert "cache warm" not in w.context_meter.label.text()
    assert "compacts" not in w.context_meter.label.text()
    assert "warm until" not in w.context_meter.toolTip()
    assert not w.context_meter.next_change.isActive()


def test_the_window_coming_back_after_a_sleep_checks_the_time(driver: Any) -> None:
    """A computer asleep past the expiry: the timer fires late (it does not count the
    sleep); the window brought back to the front shows what is true at once."""
    from PySide6.QtCore import QEvent
    from PySide6.QtWidgets import QApplication

    w = driver.configured()
    driver.fake.script("ok")
    driver.send("hello", w, wait=True)
    meter = w.context_meter
    expires = _now() + timedelta(seconds=0.3)
    w.runner.events.emit(CacheUpdated(w.chat.session_id, expires, None))
    assert "cache warm until" in meter.label.text()
    meter.next_change.start(60_000)  # as after a sleep: it would fire a minute late
    driver.until(lambda: _now() > expires)
    assert "cache warm until" in meter.label.text()
    w.activateWindow()  # back to the front (offscreen: the event it brings, sent)
    QApplication.sendEvent(meter, QEvent(QEvent.Type.ActivationChange))
    assert "cache warm" not in meter.label.text()
    assert not meter.next_change.isActive()

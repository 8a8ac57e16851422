"""How a backup's time is said: to the minute, or to the second where backups are listed."""

from __future__ import annotations

from datetime import datetime

from parley.core.store.sqlite.backups import age_text


def test_two_backups_in_the_same_minute_read_differently_with_seconds() -> None:
    now = datetime(2026, 12, 1, 17, 30, 0)
    a, b = datetime(2026, 12, 1, 17, 23, 4), datetime(2026, 12, 1, 17, 23, 41)
    assert age_text(a, now) == age_text(b, now) == "today 17:23"
    assert (age_text(a, now, seconds=True), age_text(b, now, seconds=True)) == (
        "today 17:23:04", "today 17:23:41")
    assert age_text(datetime(2026, 11, 30, 9, 5, 7), now, seconds=True) == "yesterday 09:05:07"
    assert age_text(datetime(2026, 3, 3, 18, 0, 0), now) == "3 Mar 2026 18:00"

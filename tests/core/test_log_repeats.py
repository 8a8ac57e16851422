"""Repeated log lines are written once per interval (parley.core.log_repeats), and a
streaming reply's failing journal writes during an outage make one line, not one per write."""

from __future__ import annotations

import logging

from parley.core.log_repeats import RepeatLimiter


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_the_same_line_once_per_interval_with_the_count_left_out(caplog):
    clock = Clock()
    limiter = RepeatLimiter(logging.getLogger("t.repeats"), every_s=30, clock=clock)
    with caplog.at_level(logging.INFO, logger="t.repeats"):
        for _ in range(120):  # 30 s of a failure every 250 ms
            limiter.warning("journal write failed: %s", "the server cannot be reached")
            clock.now += 0.25
        limiter.warning("journal write failed: %s", "the server cannot be reached")
    lines = [r.getMessage() for r in caplog.records]
    assert lines == [
        "journal write failed: the server cannot be reached",
        "journal write failed: the server cannot be reached (and 119 more times in the "
        "last 30 s)",
    ]


def test_another_message_is_written_at_once(caplog):
    clock = Clock()
    limiter = RepeatLimiter(logging.getLogger("t.repeats2"), every_s=30, clock=clock)
    with caplog.at_level(logging.INFO, logger="t.repeats2"):
        assert limiter.warning("failed: %s", "disk full")
        assert not limiter.warning("failed: %s", "disk full")
        assert limiter.warning("failed: %s", "locked")
        assert limiter.info("other")
    assert [r.getMessage() for r in caplog.records] == ["failed: disk full", "failed: locked",
                                                        "other"]

"""Repeated log lines are written once per interval (parley.core.log_repeats), and a
streaming reply's failing journal writes during an outage make one line, not one per write."""

from __future__ import annotations

import logging

from parley.core.content import TextBlock
from parley.core.log_repeats import RepeatLimiter
from tests.core.faults import MODEL, disk_nearly_full


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


async def test_a_reply_streaming_into_a_full_disk_logs_its_failing_journal_once(
        tmp_path, chat, fake_provider, caplog):
    """The journal fails every 10 ms here (the disk is full): one log line, not one each."""
    from parley.core.chat import journal

    journal._failures._last.clear()  # noqa: SLF001 - what earlier tests logged is forgotten
    store, runner = await chat(tmp_path / "sessions.db")
    sid = (await store.create_session(title="full")).id
    await disk_nearly_full(store)
    fake_provider.script("word " * 6000, token_delay_ms=10, chunk_size=300)  # ~1 s
    with caplog.at_level(logging.WARNING, logger="parley.core.chat.journal"):
        reply = await runner.send(sid, [TextBlock("q")], model_ref=MODEL)
    assert reply is not None and runner.saves.holds(reply.id)  # kept whole, as before
    failed = [r.getMessage() for r in caplog.records
              if r.getMessage().startswith("journal write failed")]
    assert len(failed) == 1, failed
    assert "disk" in failed[0]

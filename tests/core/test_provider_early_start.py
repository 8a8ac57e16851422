"""The provider process started early (parley.core.providers.process.spawn.start_early): once
only, and never once a request took or made one (a late call leaves no second process)."""

from __future__ import annotations

import pytest

from parley.core.providers.process import spawn
from parley.core.providers.process.protocol import encode, read_message, write_all


@pytest.fixture
def fresh(monkeypatch):
    """The module as in a new app: nothing started early yet."""
    monkeypatch.setattr(spawn, "_early", None)
    monkeypatch.setattr(spawn, "_early_asked", False)
    yield
    proc = spawn._early  # noqa: SLF001 - one this test left behind
    if proc is not None and proc.stdin is not None:
        proc.stdin.close()
        proc.wait(timeout=30)


def test_it_is_started_once_and_taken_once(fresh):
    spawn.start_early()
    first = spawn._early  # noqa: SLF001
    assert first is not None and first.poll() is None
    spawn.start_early()  # the fallback timer, after the paint started it
    assert spawn._early is first  # noqa: SLF001 - no second process
    taken = spawn.take_early()
    assert taken is first and spawn.take_early() is None
    try:
        assert taken.stdin is not None and taken.stdout is not None
        write_all(taken.stdin.fileno(), encode(("ping", 0)))
        assert read_message(taken.stdout.fileno()) == ("pong", 0, None)
    finally:
        assert taken.stdin is not None
        taken.stdin.close()
        taken.wait(timeout=30)


def test_none_is_started_after_a_request_took_or_made_one(fresh):
    assert spawn.take_early() is None  # a request came first: it made its own
    spawn.start_early()  # the paint's call, late
    assert spawn._early is None  # noqa: SLF001

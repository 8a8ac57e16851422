"""A message the person stopped before any reply came is remembered as stopped
(``parley.core.chat.stopped``): a crash's restart notice does not count it as left
unanswered, while one cut short by Parley closing still is; sending it again forgets it.

Real store (a sessions.db file), real runner, the fake provider over real HTTP.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from parley.core.chat.stopped import stopped_before_reply, stopped_turn
from parley.core.content import TextBlock
from parley.core.recovery import previous_run
from parley.core.recovery.restart_notice import UNANSWERED
from tests.core.hubs import fake_workspace

MODEL = "anthropic:claude-sonnet-4-6"


@pytest.fixture
async def ws(tmp_path, fake_provider):
    ws = await fake_workspace(tmp_path, fake_provider)
    yield ws
    await ws.close()


async def _stopped_waiting(ws: Any, fake: Any, *, person: bool) -> tuple[str, str]:
    """A chat whose message waited for a reply that never came, then was stopped (by the
    person, or as Parley closing stops it); returns (session id, message id)."""
    sid = (await ws.store.create_session()).id
    asked = len(fake.model_requests)
    fake.fail("hang", seconds=30)
    task = asyncio.ensure_future(ws.runner.send(sid, [TextBlock("hello?")], model_ref=MODEL))
    for _ in range(500):
        if len(fake.model_requests) > asked:
            break
        await asyncio.sleep(0.01)
    assert ws.runner.cancel(sid, person=person)
    assert await task is None
    fake.reset()  # the server lets the stopped request go
    turns = await ws.store.get_turns(sid)
    assert [t.role for t in turns] == ["user"]
    return sid, turns[0].id


async def test_a_message_stopped_by_the_person_is_no_leftover_of_a_crash(ws, fake_provider):
    await previous_run.mark_running(ws.store, pid=1, now_ms=1)  # this run: it will "crash"
    stopped, message = await _stopped_waiting(ws, fake_provider, person=True)
    assert await stopped_before_reply(ws.store, stopped, message)
    quit_cut, _ = await _stopped_waiting(ws, fake_provider, person=False)  # Parley closing
    assert await stopped_turn(ws.store, quit_cut) is None

    previous = await previous_run.mark_running(ws.store, pid=2)  # the next start
    assert previous is not None
    assert [(i.session_id, i.kind) for i in previous.interrupted] == [(quit_cut, "unanswered")]
    assert previous.notice() == UNANSWERED


async def test_sending_the_stopped_message_again_forgets_it(ws, fake_provider):
    sid, message = await _stopped_waiting(ws, fake_provider, person=True)
    fake_provider.fail("hang", seconds=30)  # Retry, and Parley is killed while it waits
    task = asyncio.ensure_future(ws.runner.retry(sid, model_ref=MODEL))
    for _ in range(500):
        if ws.runner.is_running(sid) and fake_provider.model_requests:
            break
        await asyncio.sleep(0.01)
    for _ in range(500):
        if await stopped_turn(ws.store, sid) is None:
            break
        await asyncio.sleep(0.01)
    assert not await stopped_before_reply(ws.store, sid, message)  # a crash now: unanswered
    assert ws.runner.cancel(sid)
    await task

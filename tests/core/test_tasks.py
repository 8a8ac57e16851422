"""parley.core.tasks.TaskSet: errors of background tasks reach their handler, never vanish."""

from __future__ import annotations

import asyncio

from parley.core.errors import ParleyError
from parley.core.tasks import TaskSet


class _Refused(ParleyError):
    pass


async def test_errors_go_to_their_handlers_and_cancellation_is_silent() -> None:
    user: list[BaseException] = []
    bugs: list[BaseException] = []
    tasks = TaskSet(on_user_error=user.append, on_bug=bugs.append)

    async def refuse() -> None:
        raise _Refused("the provider said no")

    async def crash() -> None:
        raise KeyError("bug")

    async def sleep() -> None:
        await asyncio.sleep(30)

    tasks.spawn(refuse(), name="refuse")
    tasks.spawn(crash())
    sleeper = tasks.spawn(sleep())
    await asyncio.sleep(0.01)
    assert [type(e) for e in user] == [_Refused]
    assert [type(e) for e in bugs] == [KeyError]
    assert tasks.pending == 1
    await tasks.cancel_all()
    assert sleeper.cancelled()
    assert tasks.pending == 0
    assert len(user) == 1 and len(bugs) == 1  # the cancellation reported nothing


async def test_wait_idle_waits_for_tasks_started_meanwhile() -> None:
    tasks = TaskSet()
    done: list[str] = []

    async def second() -> None:
        await asyncio.sleep(0.02)
        done.append("second")

    async def first() -> None:
        await asyncio.sleep(0.01)
        tasks.spawn(second())
        done.append("first")

    tasks.spawn(first())
    await tasks.wait_idle()
    assert done == ["first", "second"]
    assert tasks.pending == 0


async def test_cancel_returns_the_tasks_to_await() -> None:
    tasks = TaskSet()
    t = tasks.spawn(asyncio.sleep(30))
    assert tasks.cancel() == [t]
    await asyncio.gather(t, return_exceptions=True)
    assert t.cancelled() and tasks.pending == 0

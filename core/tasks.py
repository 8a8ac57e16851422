"""Background tasks of one owner, started, kept and ended without losing their errors.

The core's API is async; its owners (the window, Settings pages, the cache idle-timer)
start work that nobody awaits. :class:`TaskSet` starts a coroutine as a task on the
running loop, keeps a reference until it ends (a task nobody holds can be
garbage-collected mid-flight), and routes how it ended:

* a :class:`~parley.core.errors.ParleyError` (something the user can act on) goes to
  ``on_user_error`` — the window shows it in words;
* any other exception is a bug: it goes to ``on_bug``, by default ``sys.excepthook``,
  which the app sets to its crash handler (log + dialog) and pytest-qt turns into a test
  failure;
* cancellation is silent.

No Qt here: the GUI starts these tasks on the qasync loop. asyncio is imported when a
task is started, not with this module: the main window is made (and painted) before
asyncio is imported (``parley.gui.app``).
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, TypeVar

from parley.core.errors import ParleyError

if TYPE_CHECKING:
    import asyncio

log = logging.getLogger(__name__)
T = TypeVar("T")


class TaskSet:
    """The background tasks of one owner (e.g. the main window).

    Args:
        on_user_error: called with a ParleyError a task raised; defaults to logging it.
        on_bug: called with any other exception a task raised; defaults to
            :func:`report_bug` (``sys.excepthook``).
    """

    def __init__(self, on_user_error: Callable[[ParleyError], None] | None = None,
                 on_bug: Callable[[BaseException], None] | None = None) -> None:
        self._tasks: set[asyncio.Task[Any]] = set()
        self.on_user_error = on_user_error or (lambda e: log.warning("%s", e))
        self.on_bug = on_bug or report_bug

    def spawn(self, coro: Awaitable[T], *, name: str | None = None) -> asyncio.Task[T]:
        """Run ``coro`` as a task on the current event loop; returns the task."""
        import asyncio

        task = asyncio.ensure_future(coro)
        if name:
            task.set_name(name)
        self._tasks.add(task)
        task.add_done_callback(self._done)
        return task

    def _done(self, task: asyncio.Task[Any]) -> None:
        self._tasks.discard(task)
        if task.cancelled():
            return
        exc = task.exception()
        if exc is None:
            return
        if isinstance(exc, ParleyError):
            log.info("task %s: %s", task.get_name(), exc)
            self.on_user_error(exc)
        else:
            self.on_bug(exc)

    @property
    def pending(self) -> int:
        """How many tasks are still running."""
        return len(self._tasks)

    def cancel(self) -> list[asyncio.Task[Any]]:
        """Cancel every task without waiting; returns the tasks cancelled (to await)."""
        tasks = [t for t in self._tasks if not t.done()]
        for t in tasks:
            t.cancel()
        return tasks

    async def cancel_all(self, timeout_s: float | None = 2.0) -> None:
        """Cancel every task and wait (≤ ``timeout_s`` seconds; None: no limit) for them
        to end."""
        import asyncio

        tasks = self.cancel()
        if tasks:
            await asyncio.wait(tasks, timeout=timeout_s)

    async def wait_idle(self) -> None:
        """Wait until no task is left, tasks started meanwhile included (their errors
        went to the handlers already)."""
        import asyncio

        while self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)


def report_bug(exc: BaseException) -> None:
    """Send an unexpected exception to ``sys.excepthook`` (the crash handler)."""
    sys.excepthook(type(exc), exc, exc.__traceback__)

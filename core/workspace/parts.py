"""The parts of a :class:`~parley.core.workspace.Workspace`: its stages, the options of
what it opens, and the steps of opening and closing them that are not the workspace's
own state (stopping the runs, one closing step, the imports made in a worker thread)."""

from __future__ import annotations

import enum
import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from parley.core.errors import ParleyError
from parley.core.gc_pause import pausing_gc

if TYPE_CHECKING:
    from parley.core.chat.run import ChatRunner

log = logging.getLogger(__name__)

#: How long :meth:`Workspace.close` waits for stopped runs to save what they had (s).
RUNS_STOP_S = 5.0


class Stage(enum.Enum):
    """How far a :class:`Workspace` is open (the table in ``parley.core.workspace``)."""

    NEW = "new"
    STORE = "store"
    READY = "ready"
    CLOSED = "closed"


class NotOpen(RuntimeError):
    """A part of the workspace was asked for before it was opened, or after closing (a bug)."""


@dataclass(frozen=True)
class Options:
    """Which parts :meth:`Workspace.open_providers` opens, and the runner's timing.

    The defaults are the window's. Tests leave out what they do not exercise.

    Attributes:
        tools: memory, skills and session search as tools the model can use
            (``parley.core.tools``); off: the runner offers no tools.
        mcp: the MCP servers of ``mcp.json`` (``parley.core.mcp``); only with ``tools``.
        backups: automatic backups while open and a last one at close (a file only:
            a PostgreSQL server's own backups apply).
        cache_timer: the compaction just before an idle chat's prompt cache expires
            (``parley.core.compaction.cache_timer``; it acts only when its setting is on).
        prepare: prepare the providers in use (the default model's first: their SDK
            clients made in the provider process) in the background once the hub is
            loaded.
        journal_interval_s: how often a streamed reply is journalled (s).
        emit_interval_s: how often streamed text is handed on (s).
    """

    tools: bool = True
    mcp: bool = True
    backups: bool = True
    cache_timer: bool = True
    prepare: bool = True
    journal_interval_s: float = 0.25
    emit_interval_s: float = 0.05



async def stop_runs(runner: ChatRunner) -> None:
    """Stop every run and compaction of ``runner``, give them :data:`RUNS_STOP_S` to save
    what arrived, and stop the retries of replies not saved yet (they stay listed)."""
    if not await runner.stop_all(RUNS_STOP_S):
        log.warning("a run was still working %.0f s after it was stopped", RUNS_STOP_S)
    await runner.saves.aclose()


async def close_step(bugs: list[BaseException], what: str, closing: Any) -> None:
    """Await one closing step: a ParleyError is logged, a bug kept in ``bugs``."""
    try:
        await closing
    except ParleyError as exc:  # a full disk, a damaged file…: closing goes on
        log.warning("%s: %s", what, exc.message)
    except Exception as exc:  # a bug: raised by close() once the rest is closed
        log.exception("%s failed", what)
        bugs.append(exc)


@pausing_gc
def import_store() -> None:
    """Import the store (SQLAlchemy) and what the first step needs; in a worker thread."""
    import parley.core.recovery.previous_run  # noqa: F401
    import parley.core.settings  # noqa: F401
    import parley.core.store.async_store  # noqa: F401


@pausing_gc
def import_providers() -> None:
    """Import the hub (no SDK: those are the provider process's), the runner, the
    tools, MCP, the timer and the backups; in a worker thread."""
    import parley.core.chat.run  # noqa: F401
    import parley.core.compaction.cache_timer  # noqa: F401
    import parley.core.mcp  # noqa: F401
    import parley.core.providers.hub  # noqa: F401
    import parley.core.recovery.backup_schedule  # noqa: F401
    import parley.core.tools  # noqa: F401


"""A run of Parley that did not exit cleanly: what it left, found at the next start.

A reply cut off by a process death is already in the store as an assistant turn
marked ``aborted`` (the run loop journals it while it streams), so nothing has to be
rebuilt. What is left is to tell the person: :func:`mark_running` records that Parley
runs and returns, when the previous run did not end with :func:`mark_clean_exit`, the
sessions whose reply was interrupted (:func:`interrupted_replies`) and the compactions
it was working on (:class:`CompactionMarks`), so the window can offer Continue
(``parley.core.recovery.restart_notice`` words it).
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
from dataclasses import dataclass, field
from typing import Literal

from parley.core.app_state import COMPACTING, RUN_MARKER
from parley.core.chat.stopped import stopped_before_reply
from parley.core.compaction.types import CompactEvent
from parley.core.content import CompactSummaryBlock, Turn
from parley.core.events import Events
from parley.core.recovery.restart_notice import restart_notice
from parley.core.store.async_store import AsyncStore
from parley.core.store.errors import (
    StoreError,
)

log = logging.getLogger(__name__)

PAGE = 200
#: Turns read from a session's end to find its last message (past compaction summaries).
_TAIL = 3


@dataclass(frozen=True, slots=True)
class InterruptedReply:
    """A session whose last request got no complete reply.

    Attributes:
        session_id: the session.
        title: its title (None when untitled).
        turn_id: the aborted reply (``kind == "partial"``) or the unanswered
            user turn (``kind == "unanswered"``).
        kind: ``partial`` — a reply was cut off; what arrived is kept as an
            aborted turn; ``unanswered`` — the user's message was saved but no
            reply text arrived.
        chars: characters of reply text kept (0 for ``unanswered``).
    """

    session_id: str
    title: str | None
    turn_id: str
    kind: Literal["partial", "unanswered"]
    chars: int


@dataclass(frozen=True, slots=True)
class PreviousRun:
    """A previous run of Parley that did not exit cleanly.

    Attributes:
        pid: its process id.
        started_at: when it started, epoch ms.
        interrupted: sessions it left without a complete reply, newest first.
        compacting: sessions a compaction was working in when it stopped
            (:class:`CompactionMarks`); nothing of those compactions was saved.
    """

    pid: int
    started_at: int
    interrupted: list[InterruptedReply]
    compacting: list[str] = field(default_factory=list)

    def notice(self) -> str | None:
        """What to tell the person (``parley.core.recovery.restart_notice``), None when nothing
        was left."""
        return restart_notice(self.interrupted, self.compacting)


async def interrupted_replies(
    store: AsyncStore, *, since_ms: int = 0, limit: int = 100
) -> list[InterruptedReply]:
    """Find sessions whose last message is a reply cut off or an unanswered message.

    Args:
        store: the open store.
        since_ms: only sessions with activity at or after this time (epoch ms);
            sessions are read newest first, so this bounds the work at start.
        limit: at most this many results.

    Returns:
        Newest activity first. A reply counts as cut off when it was kept as
        journalled while it streamed (``Turn.cut_off``): Parley ended before it
        finished. A reply the user stopped, or one that failed, was told when it
        happened and is no leftover of the run; so is a message the user stopped
        before any reply came (``parley.core.chat.stopped``). A compaction's summary is no
        message (it is stored last, with role ``user``): the message before it is
        the session's last.

    Raises:
        StoreError: the file cannot be read.
    """
    found: list[InterruptedReply] = []
    offset = 0
    while len(found) < limit:
        page = await store.list_sessions(
            include_archived=True, pinned_first=False, limit=PAGE, offset=offset,
        )
        for session in page:
            if session.updated_at < since_ms:
                return found
            last = await _last_message(store, session.id)
            item = _interrupted(session.id, session.title, last)
            if item is not None and item.kind == "unanswered" \
                    and await stopped_before_reply(store, session.id, item.turn_id):
                item = None  # the person stopped it before a reply came: no crash's doing
            if item is not None:
                found.append(item)
                if len(found) >= limit:
                    return found
        if len(page) < PAGE:
            return found
        offset += PAGE
    return found


def _is_summary(turn: Turn) -> bool:
    return any(isinstance(b, CompactSummaryBlock) for b in turn.blocks)


async def _last_message(store: AsyncStore, session_id: str) -> Turn | None:
    """The session's last stored turn that is no compaction summary (None: none)."""
    tail = await store.get_turns(session_id, last=_TAIL, hydrate=False)
    if len(tail) == _TAIL and all(_is_summary(t) for t in tail):  # summaries of summaries
        tail = await store.get_turns(session_id, hydrate=False)
    messages = [t for t in tail if not _is_summary(t)]
    return messages[-1] if messages else None


def _interrupted(session_id: str, title: str | None, last: Turn | None
                 ) -> InterruptedReply | None:
    if last is None:
        return None
    if last.role == "assistant" and last.aborted and last.cut_off \
            and not last.writing_elsewhere:  # another computer's, still streaming
        return InterruptedReply(session_id, title, last.id, "partial", len(last.text()))
    if last.role == "user":
        return InterruptedReply(session_id, title, last.id, "unanswered", 0)
    return None


async def mark_running(
    store: AsyncStore, *, pid: int | None = None, now_ms: int | None = None
) -> PreviousRun | None:
    """Call once at start: report an unclean previous run, then record this one.

    In a PostgreSQL database the run is this machine's (``parley.core.app_state.RUN_MARKER``): other
    machines' Parleys running meanwhile are no previous run.

    Args:
        store: the open store.
        pid: this process's id (default ``os.getpid()``).
        now_ms: this run's start, epoch ms (default now).

    Returns:
        The previous run when it did not call :func:`mark_clean_exit` (a
        crash, a kill, a power cut), with the replies it left interrupted;
        None after a clean exit or on a new file.

    Raises:
        StoreError: the file cannot be read or written (e.g. DiskFull).
    """
    previous = await RUN_MARKER.get(store)
    compacting = await COMPACTING.get(store)
    result = None
    if isinstance(previous, dict) and isinstance(previous.get("started_at"), int):
        started = int(previous["started_at"])
        interrupted = await interrupted_replies(store, since_ms=started)
        cut = sorted(compacting) if isinstance(compacting, dict) else []
        result = PreviousRun(int(previous.get("pid") or 0), started, interrupted, cut)
    if compacting is not None:
        await COMPACTING.set(store, None)
    marker = {
        "pid": os.getpid() if pid is None else pid,
        "started_at": int(time.time() * 1000) if now_ms is None else now_ms,
    }
    await RUN_MARKER.set(store, marker)
    return result


async def mark_clean_exit(store: AsyncStore) -> None:
    """Call at a normal exit (after the last run ended): the next start finds no marker."""
    await RUN_MARKER.set(store, None)


class CompactionMarks:
    """Records which sessions a compaction works in (app_state ``COMPACTING``), so
    the next start can tell an interrupted compaction (:attr:`PreviousRun.compacting`).

    Listens to ``compact:start`` / ``compact:end`` events; each change writes
    the whole set in the background (one small write per compaction start and end).

    Args:
        store: the open ``AsyncStore``.
        events: the run loop's bus (``ChatRunner.events``).
    """

    def __init__(self, store: AsyncStore, events: Events) -> None:
        self.store = store
        self.active: dict[str, int] = {}
        self._writes: set[asyncio.Task[None]] = set()
        events.on(CompactEvent, self._compacting)

    def _compacting(self, event: CompactEvent) -> None:
        if event.name == "compact:start":
            self.active[event.session_id] = int(time.time() * 1000)
            self._write()
        elif event.name == "compact:end" and self.active.pop(event.session_id, None) is not None:
            self._write()

    def _write(self) -> None:
        value = dict(self.active) or None
        task = asyncio.ensure_future(self._set(value))
        self._writes.add(task)
        task.add_done_callback(self._writes.discard)

    async def _set(self, value: dict[str, int] | None) -> None:
        try:
            await COMPACTING.set(self.store, value)
        except StoreError as exc:  # only the restart notice's words depend on it
            log.info("compaction mark not written: %s", exc.message)

    async def wait(self) -> None:
        """Wait for the writes under way (tests, shutdown)."""
        if self._writes:
            await asyncio.wait(list(self._writes))


# --- damaged files --------------------------------------------------------------


__all__ = [
    "CompactionMarks",
    "InterruptedReply",
    "PreviousRun",
    "interrupted_replies",
    "mark_clean_exit",
    "mark_running",
]

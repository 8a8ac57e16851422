"""One run: save the user's turn, stream the reply, journal it, save it.

Durability rules (shared/DESIGN.md, Durability):

* the user's turn is committed before the request leaves;
* the streamed reply is journalled as it arrives, at most every
  ``journal_interval_s`` (0.25 s by default), as an assistant turn marked
  ``aborted`` — so a process death leaves exactly what a crash should: an
  aborted reply holding the text received so far, shown in the transcript and
  left out of the model context (wire rule 1);
* the completed reply, its usage and the session's counters are committed in
  one transaction (``Store.finish_turn``), clearing the aborted mark;
* Stop (cancel) ends in the same state as a crash, only cleaner.

Listeners receive :class:`RunEvent` values; ``ReplyUpdated`` is coalesced to
at most one per ``emit_interval_s`` so a GUI never falls behind a fast stream.
Hooks ``session:start`` and ``session:end`` (status, turn range) fire at run
boundaries.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from core.content import Block, TextBlock, Turn, Usage
from core.errors import ParleyError
from core.hooks import Hooks
from core.providers.base import ChatRequest, ModelInfo
from core.reply import ReplyBuilder

log = logging.getLogger(__name__)


class RunInProgress(ParleyError):
    """A second run or a compaction was asked for while a run is working."""

    def __init__(self) -> None:
        super().__init__(
            "Parley is still answering in this session. Wait for the reply or press Esc "
            "to stop it, then try again."
        )


class NoProviderConfigured(ParleyError):
    """The model reference names a provider that is not set up."""

    def __init__(self, model_ref: str) -> None:
        super().__init__(
            f"No provider is set up for the model '{model_ref}'. Open Settings → Providers "
            "to add one."
        )


@dataclass(frozen=True, slots=True)
class RunStarted:
    session_id: str
    user_turn: Turn | None
    reply_id: str


@dataclass(frozen=True, slots=True)
class ReplyUpdated:
    session_id: str
    turn: Turn


@dataclass(frozen=True, slots=True)
class RunFinished:
    session_id: str
    turn: Turn


@dataclass(frozen=True, slots=True)
class RunFailed:
    session_id: str
    error: ParleyError
    partial: Turn | None


@dataclass(frozen=True, slots=True)
class RunCancelled:
    session_id: str
    partial: Turn | None


@dataclass(frozen=True, slots=True)
class SessionTitled:
    session_id: str
    title: str


RunEvent = RunStarted | ReplyUpdated | RunFinished | RunFailed | RunCancelled | SessionTitled
Listener = Callable[[RunEvent], None]


def usage_cost(usage: Usage, info: ModelInfo | None) -> Usage:
    """Return ``usage`` with ``cost_usd`` computed from the model's prices per MTok.

    Prices missing from the catalog count as 0; a cost the provider already
    reported (non-zero) is kept.
    """
    if info is None or usage.cost_usd:
        return usage
    return replace(usage, cost_usd=info.cost_usd(usage))


def first_line_title(text: str, limit: int = 60) -> str:
    """Return a title from the first non-empty line of ``text`` (≤ ``limit`` chars)."""
    for line in text.splitlines():
        line = line.strip().lstrip("#>*- ").strip()
        if line:
            return line if len(line) <= limit else line[: limit - 1].rstrip() + "…"
    return "New chat"


class ChatRunner:
    """Runs requests for sessions; at most one run per session at a time.

    Args:
        store: an ``AsyncStore`` (every method awaitable).
        hub: a ``ProviderHub`` resolving ``provider:model`` references.
        hooks: hook registry (``session:start`` / ``session:end``).
        journal_interval_s: seconds between journal writes of a streaming reply.
        emit_interval_s: seconds between ``ReplyUpdated`` events.
        clock: monotonic clock in seconds (injectable for tests).
    """

    def __init__(
        self,
        store: Any,
        hub: Any,
        *,
        hooks: Hooks | None = None,
        journal_interval_s: float = 0.25,
        emit_interval_s: float = 0.05,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.store = store
        self.hub = hub
        self.hooks = hooks or Hooks()
        self.journal_interval_s = journal_interval_s
        self.emit_interval_s = emit_interval_s
        self.clock = clock
        self._tasks: dict[str, asyncio.Task[None]] = {}
        self._busy: set[str] = set()

    def is_running(self, session_id: str) -> bool:
        """True while a run (or something holding the session, e.g. compaction) works."""
        return session_id in self._busy

    def cancel(self, session_id: str) -> bool:
        """Stop the run of ``session_id``; returns False when none was running.

        What arrived so far is kept as an aborted reply (see module docstring).
        """
        task = self._tasks.get(session_id)
        if task is None or task.done():
            return False
        task.cancel()
        return True

    def claim(self, session_id: str) -> None:
        """Mark the session busy (a run or a compaction).

        Raises:
            RunInProgress: it is already busy.
        """
        if session_id in self._busy:
            raise RunInProgress()
        self._busy.add(session_id)

    def release(self, session_id: str) -> None:
        """Undo :meth:`claim`."""
        self._busy.discard(session_id)

    async def send(
        self,
        session_id: str,
        blocks: list[Block],
        *,
        model_ref: str,
        on_event: Listener | None = None,
    ) -> Turn | None:
        """Save a user turn, then ask the model and stream its reply.

        Args:
            session_id: the session to continue.
            blocks: the user's content blocks (text, images, documents).
            model_ref: ``"provider_id:model_id"``.
            on_event: receives :class:`RunEvent` values on the caller's loop.

        Returns:
            The saved assistant turn, or None when the run failed or was stopped
            (a ``RunFailed`` / ``RunCancelled`` event says which).

        Raises:
            RunInProgress: the session is busy; nothing was saved.
            SessionNotFound: no such session; nothing was saved.
        """
        self.claim(session_id)
        try:
            user_turn = Turn("user", list(blocks))
            await self.store.append_turn(session_id, user_turn)
            return await self._run(session_id, model_ref, on_event, user_turn)
        finally:
            self.release(session_id)

    async def retry(
        self, session_id: str, *, model_ref: str, on_event: Listener | None = None
    ) -> Turn | None:
        """Send the session's current history again (Retry after an error, Resume
        after an aborted reply). The aborted reply stays in the transcript and is
        left out of the request by the wire rules.

        Raises:
            RunInProgress: the session is busy.
        """
        self.claim(session_id)
        try:
            return await self._run(session_id, model_ref, on_event, None)
        finally:
            self.release(session_id)

    async def _run(
        self, session_id: str, model_ref: str, on_event: Listener | None, user_turn: Turn | None
    ) -> Turn | None:
        emit = on_event or (lambda _e: None)
        builder = ReplyBuilder(model=model_ref)
        emit(RunStarted(session_id, user_turn, builder.turn_id))
        turns = await self.store.get_turns(session_id)
        first_seq = max(0, len(turns) - (1 if user_turn else 0))
        self.hooks.fire("session:start", session_id=session_id, model=model_ref)
        task = asyncio.ensure_future(
            self._stream(session_id, model_ref, turns, builder, emit)
        )
        self._tasks[session_id] = task
        status = "error"
        try:
            try:
                await task
            except asyncio.CancelledError:
                if not task.cancelled():
                    raise  # our caller was cancelled, not the run
                status = "cancelled"
                return await self._keep_partial(session_id, builder, emit, None)
            except ParleyError as exc:
                return await self._keep_partial(session_id, builder, emit, exc)
            status = "ok"
            turn = builder.turn(aborted=False)
            info = self._model_info(model_ref)
            usage = usage_cost(builder.usage or Usage(), info)
            turn = replace(turn, usage=usage)
            await self.store.finish_turn(session_id, turn, usage)
            emit(RunFinished(session_id, turn))
            await self._auto_title(session_id, turns, emit)
            return turn
        finally:
            self._tasks.pop(session_id, None)
            self.hooks.fire(
                "session:end",
                session_id=session_id,
                status=status,
                turn_range=(first_seq, first_seq + (1 if user_turn else 0) + 1),
            )

    def _model_info(self, model_ref: str) -> ModelInfo | None:
        try:
            info: ModelInfo = self.hub.model_info(model_ref)
            return info
        except Exception:  # an unknown model just has no price
            return None

    async def _stream(
        self,
        session_id: str,
        model_ref: str,
        turns: list[Turn],
        builder: ReplyBuilder,
        emit: Listener,
    ) -> None:
        provider, model_id = self.hub.resolve(model_ref)
        session = await self.store.get_session(session_id)
        request = ChatRequest(model=model_id, turns=turns, system=session.system_prompt or None)
        last_emit = last_journal = self.clock()
        journal: asyncio.Future[Any] | None = None
        async for event in provider.stream(request):
            builder.feed(event)
            now = self.clock()
            if builder.has_content and now - last_emit >= self.emit_interval_s:
                last_emit = now
                emit(ReplyUpdated(session_id, builder.turn(aborted=False)))
            if builder.has_content and now - last_journal >= self.journal_interval_s:
                if journal is None or journal.done():
                    last_journal = now
                    journal = asyncio.ensure_future(
                        self.store.upsert_turn(session_id, builder.turn(aborted=True))
                    )
        if journal is not None:
            await journal
        if builder.has_content:
            emit(ReplyUpdated(session_id, builder.turn(aborted=False)))

    async def _keep_partial(
        self,
        session_id: str,
        builder: ReplyBuilder,
        emit: Listener,
        error: ParleyError | None,
    ) -> None:
        partial = None
        if builder.has_content:
            partial = builder.turn(aborted=True)
            await asyncio.shield(self.store.upsert_turn(session_id, partial))
        if error is None:
            emit(RunCancelled(session_id, partial))
        else:
            log.info("run failed in session %s: %s", session_id, error)
            emit(RunFailed(session_id, error, partial))
        return None

    async def _auto_title(self, session_id: str, turns: list[Turn], emit: Listener) -> None:
        session = await self.store.get_session(session_id)
        if session.title:
            return
        first_user = next((t for t in turns if t.role == "user" and t.text()), None)
        if first_user is None:
            return
        title = first_line_title(first_user.text())
        if await self.store.set_auto_title(session_id, title):
            emit(SessionTitled(session_id, title))


def text_blocks(text: str) -> list[Block]:
    """Return the blocks of a plain composer message (one text block)."""
    return [TextBlock(text)]

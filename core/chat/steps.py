"""The steps of one run: its context read once, its title, each reply, the tools between.

:class:`parley.core.chat.run.ChatRunner` owns a run (the session's busy mark, the user's
turn, events, hooks, its outcome); :class:`RunSteps` does what happens between
``RunStarted`` and the final reply: each request is streamed
(:class:`parley.core.chat.stream.RequestStream`) and its reply saved (``finish_turn``
through the runner's ``SaveQueue``); a reply that stops for ``tool_use`` has its calls
run and the user turn of their results saved, then the model is asked again, up to
``tools.max_rounds`` rounds per message (``parley.core.tools.loop``). Each saved step is
announced (``ToolStepFinished``, ``ToolResultsSaved``); ``RunFinished`` carries the last
reply. A tool's failure is an error result the model reads, never a failed run. Stop
while a tool works saves no results: the wire rules answer those calls as interrupted.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from parley.core.chat.events import Listener, RunCancelled, RunFailed, SessionTitled
from parley.core.chat.reply import ReplyBuilder, failed_stop_reason
from parley.core.chat.save_queue import FIRST_WAIT_S, PASSING, SaveQueue
from parley.core.chat.stream import RequestStream
from parley.core.chat.titles import (
    answered,
    first_line_title,
    first_reply_titles,
    is_first_exchange,
    typed_text,
)
from parley.core.compaction.compact import SentRequest
from parley.core.compaction.run import RunCompaction, RunState
from parley.core.compaction.settings import CompactionSettings
from parley.core.compaction.settings import from_values as compaction_settings
from parley.core.content import Turn, Usage
from parley.core.errors import ParleyError
from parley.core.providers.base import ModelInfo
from parley.core.settings import Settings
from parley.core.tools.loop import MAX_ROUNDS_KEY, RunTools, ToolStepFinished, wants_tools

if TYPE_CHECKING:
    from parley.core.providers.hub import ProviderHub
    from parley.core.store.async_store import AsyncStore
    from parley.core.store.models import Session

log = logging.getLogger(__name__)


def usage_cost(usage: Usage, info: ModelInfo | None) -> Usage:
    """Return ``usage`` with ``cost_usd`` computed from the model's prices per MTok.

    Prices missing from the catalog count as 0; a cost the provider already
    reported (non-zero) is kept.
    """
    if info is None or usage.cost_usd:
        return usage
    return replace(usage, cost_usd=info.cost_usd(usage))


class RunSteps:
    """Streams a run's replies and runs its tools between them (one per runner).

    Args:
        store: the ``AsyncStore``.
        hub: the ``ProviderHub`` resolving ``provider:model`` references.
        saves: the runner's queue of replies not saved yet (every step is saved through it).
        tools: what the run asks of the tools (``RunTools``; no executor: no tools).
        compaction: the run's compaction policy (``RunCompaction``).
        sent: the runner's last accepted request per session (kept here, read by the
            compactor for a cache-friendly summary).
        clock: monotonic clock in seconds.
        journal_interval_s: seconds between journal writes of a streaming reply.
        emit_interval_s: seconds between ``ReplyUpdated`` events.
    """

    def __init__(
        self,
        store: AsyncStore,
        hub: ProviderHub,
        *,
        saves: SaveQueue,
        tools: RunTools,
        compaction: RunCompaction,
        sent: dict[str, SentRequest],
        clock: Callable[[], float],
        journal_interval_s: float,
        emit_interval_s: float,
    ) -> None:
        self.store = store
        self.hub = hub
        self.saves = saves
        self._tools = tools
        self._compaction = compaction
        self._request = RequestStream(
            store, hub, tools=tools, compaction=compaction, sent=sent, clock=clock,
            journal_interval_s=journal_interval_s, emit_interval_s=emit_interval_s,
        )

    async def context(self, session_id: str, session: Session | None) -> RunContext:
        """The run's :class:`RunContext`: ``session`` as the caller read it (None: read
        now) and one snapshot of the settings (one store read)."""
        if session is None:
            session = await self.store.get_session(session_id)
        return RunContext(session, await Settings.of(self.store).values())

    async def first_title(
        self, session_id: str, turns: list[Turn], emit: Listener, session: Session | None = None
    ) -> bool:
        """Title an untitled session from its first message (emits ``SessionTitled``).

        Args:
            session_id: the run's session.
            turns: the turns the run's request is built from (its user turn included).
            emit: the run's listener.
            session: the session as the caller just read it (saves reading it again).

        Returns:
            Whether a reply that completes in this run is the chat's first, to be titled
            by the title model (``RunFinished.first_reply``; :func:`first_reply_titles`):
            the session had no title, or no reply in it ever completed, on any branch
            (read only while the path has none before its last message).

        Raises:
            SessionNotFound: no such session (``session`` None).
        """
        if session is None:
            session = await self.store.get_session(session_id)
        was_untitled = not session.title
        if was_untitled:
            await self._placeholder(session_id, turns, emit)
        if not is_first_exchange(turns):
            return False
        if was_untitled:
            return first_reply_titles(turns, was_untitled=True, answered_before=True)
        try:
            tree = await self.store.get_tree(session_id)
        except PASSING as exc:  # the answer matters more than a title
            log.info("session %s: whether it was answered unknown: %s", session_id, exc.message)
            return False
        return first_reply_titles(turns, was_untitled=False,
                                  answered_before=answered(t.turn for t in tree))

    async def _placeholder(self, session_id: str, turns: list[Turn], emit: Listener) -> None:
        """Give an untitled session its first message's first line as its title."""
        first_user = next((t for t in turns if t.role == "user" and t.text()), None)
        if first_user is None:
            return
        title = first_line_title(typed_text(first_user))
        try:
            titled = await self.store.set_auto_title(session_id, title)
        except PASSING as exc:  # the question is saved: its answer matters more than a title
            log.info("session %s not titled yet: %s", session_id, exc.message)
            return  # untitled: titled from the first reply once it can be written
        if titled:
            emit(SessionTitled(session_id, title))

    async def run(
        self,
        ctx: RunContext,
        model_ref: str,
        stored: list[Turn],
        progress: RunProgress,
        emit: Listener,
        state: RunState,
    ) -> None:
        """Stream replies, running tools between them, until a reply needs no tools.

        The last reply is left in ``progress.builder`` for the runner to save (:meth:`finish`),
        unless the tool-round limit ended the run (``progress.final``).
        """
        session_id = ctx.session.id
        rounds = None
        if self._tools.executor is not None:
            provider, _model_id = self.hub.resolve(model_ref)
            # The provider's model list first (once): a compatible server says there
            # whether its model takes tools (ModelInfo.tools), and so gets them.
            await self._compaction.limits(model_ref)
            rounds = await self._tools.rounds(ctx.session, provider, model_ref,
                                              ctx.max_rounds)
        while True:
            tools_on = await self._request.stream(
                ctx.session, model_ref, stored, progress.builder, emit, state,
                tools_on=rounds is not None,
                own=rounds is not None and rounds.own,
                mcp=rounds is not None and rounds.mcp,
            )
            builder = progress.builder
            if not tools_on or rounds is None:
                return
            if not wants_tools(builder.turn(aborted=False), builder.stop_reason):
                return
            # Waited for to the end: its tools run only once it is saved.
            turn = await self.finish(session_id, model_ref, progress, wait_s=None)
            if self.saves.holds(turn.id):  # not saved yet: no tool runs on an unsaved call
                progress.final = turn
                return
            emit(ToolStepFinished(session_id, turn))
            again = await rounds.answer(turn, stored, emit)
            progress.saved += 1
            if not again:
                progress.final = turn
                return
            stored = await self.store.context_turns(session_id)

    async def answer_only(self, ctx: RunContext, model_ref: str, stored: list[Turn],
                          progress: RunProgress, emit: Listener, state: RunState) -> None:
        """Stream one reply into ``progress.builder`` without tools (one of several models'
        answers, ``parley.core.chat.several``): the request is built as a run's
        (``RequestStream.stream``: the same cache rules), left for :meth:`finish`."""
        await self._request.stream(ctx.session, model_ref, stored, progress.builder, emit,
                                   state)

    async def finish(self, session_id: str, model_ref: str, progress: RunProgress, *,
                     wait_s: float | None = FIRST_WAIT_S) -> Turn:
        """Save the reply of ``progress.builder`` as complete, with its usage and cost
        (kept by :attr:`saves` when the store refuses it for now, or has not taken it
        within ``wait_s`` seconds: ``SaveQueue.save``)."""
        builder = progress.builder
        progress.builder = ReplyBuilder(model=model_ref)  # a Stop from here keeps no partial
        info = self._model_info(model_ref)
        usage = usage_cost(builder.usage or Usage(), info)
        turn = replace(builder.turn(aborted=False), usage=usage)
        await self.saves.save(session_id, turn, usage, wait_s=wait_s)
        progress.saved += 1
        return turn

    async def keep_partial(
        self, session_id: str, builder: ReplyBuilder, emit: Listener, error: ParleyError | None
    ) -> None:
        """Save what a stopped (``error`` None) or failed run streamed so far as an aborted
        reply (kept by :attr:`saves` when the store refuses it for now), and say so:
        ``RunCancelled`` or ``RunFailed`` (with the partial turn, or None when nothing came)."""
        partial = None
        if builder.has_content:  # a failure's cause is kept with it: its mark says why
            partial = builder.turn(aborted=True)
            if error is not None:
                partial = replace(partial, stop_reason=failed_stop_reason(error))
            await self.saves.save(session_id, partial)
        if error is None:
            emit(RunCancelled(session_id, partial))
        else:
            log.info("run failed in session %s: %s", session_id, error)
            emit(RunFailed(session_id, error, partial))

    def _model_info(self, model_ref: str) -> ModelInfo | None:
        try:
            info: ModelInfo = self.hub.model_info(model_ref)
            return info
        except Exception:  # an unknown model just has no price
            return None

@dataclass(frozen=True)
class RunContext:
    """What one run reads once and passes to its steps (each request of a tool loop).

    Attributes:
        session: the session as the run started (``id``, ``space_id``,
            ``system_prompt`` …).
        settings: every declared setting, read once through its declaration
            (:meth:`parley.core.settings.Settings.values`): key -> value.
    """

    session: Session
    settings: Mapping[str, Any]

    @property
    def compaction(self) -> CompactionSettings:
        """The compaction settings of the snapshot."""
        return compaction_settings(self.settings)

    @property
    def max_rounds(self) -> int:
        """The ``tools.max_rounds`` setting of the snapshot (tool rounds per message)."""
        return int(self.settings[MAX_ROUNDS_KEY])


@dataclass
class RunProgress:
    """One run's moving parts.

    Attributes:
        builder: the reply being streamed (a fresh one once a step is saved).
        saved: assistant steps and tool-result turns this run saved so far.
        final: the last reply when the tool-round limit ended the run (saved).
    """

    builder: ReplyBuilder
    saved: int = 0
    final: Turn | None = None

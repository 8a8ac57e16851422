"""One run: save the user's turn, stream the reply, journal it, save it.

Durability rules (the journal is ``parley.core.chat.journal``'s):

* the user's turn is committed before the request leaves;
* the streamed reply is journalled as it arrives, at most every
  ``journal_interval_s`` (0.25 s by default), as an assistant turn marked
  ``aborted`` — so a process death leaves exactly what a crash should: an
  aborted reply holding the text received so far, shown in the transcript and
  left out of the model context (wire rule 1);
* the completed reply, its usage and the session's counters are committed in
  one transaction (``Store.finish_turn``), clearing the aborted mark;
* Stop (cancel) ends in the same state as a crash, only cleaner;
* a save that fails for a passing reason (disk full, the file locked past the
  busy timeout, a disk error) keeps the *complete* turn in memory
  (``parley.core.chat.save_queue.SaveQueue``, :attr:`ChatRunner.saves`), which writes it in
  the background as soon as the store takes it: ``RunFinished.saved`` is False
  until then, and :meth:`ChatRunner.send` / :meth:`ChatRunner.retry` refuse
  with ``SavesPending`` meanwhile, so a journalled prefix never stands in for
  a complete reply and nothing later is saved before it;
* a new message is announced (``UserTurnSaving``) before it is written, so a
  window can show it while a locked file makes the write wait.

Listeners receive :class:`RunEvent` values; ``ReplyUpdated`` is coalesced to
at most one per ``emit_interval_s`` so a GUI never falls behind a fast stream.
Hooks ``session:start`` and ``session:end`` (status, turn range) fire at run
boundaries.

Compaction (``parley.core.compaction.compact``, ``parley.core.compaction.run``):

* before a request whose context (``parley.core.compaction.wire.context_tokens``)
  reaches ``compaction.threshold`` of the model's context window, and with
  ``compaction.auto`` on, the session is compacted (strategy ``summary``) or
  its older tool output is hidden on the wire (strategy ``tail``); the
  compaction's :class:`~parley.core.compaction.compact.CompactEvent` values reach listeners
  like the run's own events. A failed auto-compaction is logged and the
  request is sent as it is;
* a new message that alone (with the system prompt) is longer than the
  model's context window is refused before it is saved: ``MessageTooLong``;
  a request still over the window after auto-compaction is stubbed, compacted
  keeping fewer turns, or refused before it is sent: ``HistoryTooLong``
  (``parley.core.compaction.run``);
* a context overflow before any output: older tool output and files are
  stubbed and the request sent once more; then the session is compacted and
  sent again; then the run fails with ``CompactPromptTooLongError``;
* a session is held by one run *or* one compaction at a time: :meth:`ChatRunner.claim`
  raises ``RunInProgress`` or ``CompactionInProgress``.

Tools (``parley.core.tools``; only for a runner given a ``ToolExecutor``):

* the request carries the tools (memory, skills, session search) when they are
  on for the session's space and model, and the session's frozen system prompt
  with its memory and skills blocks (``parley.core.tools.system_prompt``); the output
  of unloaded skills is stubbed on the wire;
* a reply that stops for ``tool_use`` is saved (``finish_turn``, like any
  reply), its calls run and the user turn of their results is saved; then the
  model is asked again, up to ``tools.max_rounds`` rounds per message
  (``parley.core.tools.loop``). Each saved step is announced (``ToolStepFinished``,
  ``ToolResultsSaved``); ``RunFinished`` carries the last reply. A tool's
  failure is an error result the model reads, never a failed run. Stop while
  a tool works saves no results: the wire rules answer those calls as interrupted;
* a server that rejects tools gets the request again without them, and the
  user a ``ToolsUnavailable`` notice.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from parley.core.attachments.limits import check_turns, explain_refusal, limits_for
from parley.core.chat.events import (
    Listener,
    ReplyUpdated,
    RetryWaiting,
    RunCancelled,
    RunEvent,
    RunFailed,
    RunFinished,
    RunInProgress,
    RunStarted,
    SessionTitled,
    UserTurnSaving,
)
from parley.core.chat.journal import Journal
from parley.core.chat.reply import ReplyBuilder
from parley.core.chat.save_queue import PASSING, SaveQueue, SavesPending
from parley.core.chat.titles import first_line_title, first_reply_titles
from parley.core.compaction.compact import (
    CompactEvent,
    CompactionInProgress,
    Compactor,
    CompactPromptTooLongError,
    CompactResult,
    SentRequest,
    Trigger,
)
from parley.core.compaction.run import HistoryTooLong, MessageTooLong, RunCompaction, RunState
from parley.core.compaction.settings import CompactionSettings
from parley.core.compaction.settings import from_values as compaction_settings
from parley.core.content import Block, TextBlock, Turn, Usage, new_id
from parley.core.errors import ParleyError
from parley.core.hooks import Hooks
from parley.core.local_traffic import traffic_for
from parley.core.providers.base import ChatRequest, ModelInfo
from parley.core.providers.errors import ContextOverflow, ProviderError
from parley.core.providers.retry import RetryWait, retry_waits
from parley.core.settings import Settings
from parley.core.text_limits import check_blocks
from parley.core.tokens import estimate_tokens
from parley.core.tools.executor import ToolExecutor
from parley.core.tools.loop import (
    MAX_ROUNDS_KEY,
    RunTools,
    ToolStepFinished,
    wants_tools,
)
from parley.core.window_errors import SentMessageTooLong, model_name
from parley.core.wire import to_messages

if TYPE_CHECKING:
    from parley.core.providers.base import Provider
    from parley.core.providers.hub import ProviderHub
    from parley.core.store.async_store import AsyncStore
    from parley.core.store.models import Session

__all__ = [  # the events are defined in parley.core.chat.events and are part of this API
    "ChatRunner",
    "HistoryTooLong",
    "Listener",
    "MessageTooLong",
    "ReplyUpdated",
    "RetryWaiting",
    "RunCancelled",
    "RunEvent",
    "RunFailed",
    "RunFinished",
    "RunInProgress",
    "RunStarted",
    "SavesPending",
    "SessionTitled",
    "UserTurnSaving",
    "text_blocks",
    "usage_cost",
]

log = logging.getLogger(__name__)

#: Sessions whose last request is kept for a cache-friendly summary.
MAX_REMEMBERED_REQUESTS = 16


def usage_cost(usage: Usage, info: ModelInfo | None) -> Usage:
    """Return ``usage`` with ``cost_usd`` computed from the model's prices per MTok.

    Prices missing from the catalog count as 0; a cost the provider already
    reported (non-zero) is kept.
    """
    if info is None or usage.cost_usd:
        return usage
    return replace(usage, cost_usd=info.cost_usd(usage))


class ChatRunner:
    """Runs requests for sessions; at most one run or compaction per session at a time.

    Args:
        store: an ``AsyncStore`` (every method awaitable).
        hub: a ``ProviderHub`` resolving ``provider:model`` references.
        hooks: hook registry (``session:start`` / ``session:end``, ``compact:*``).
        journal_interval_s: seconds between journal writes of a streaming reply.
        emit_interval_s: seconds between ``ReplyUpdated`` events.
        clock: monotonic clock in seconds (injectable for tests).
        tools: Parley's tools (memory, skills, session search) and the frozen
            system prompt; None sends no tools and the session's system prompt
            as it is.

    Attributes:
        compactor: the :class:`~parley.core.compaction.compact.Compactor` sharing this
            runner's busy marks and last requests (for the cache-friendly summary).
        tools: the ``tools`` argument.
        saves: the :class:`~parley.core.chat.save_queue.SaveQueue` of replies not saved yet.
    """

    def __init__(
        self,
        store: AsyncStore,
        hub: ProviderHub,
        *,
        hooks: Hooks | None = None,
        journal_interval_s: float = 0.25,
        emit_interval_s: float = 0.05,
        clock: Callable[[], float] = time.monotonic,
        tools: ToolExecutor | None = None,
    ) -> None:
        self.store = store
        self.tools = tools
        self._tools = RunTools(tools, store)
        self.hub = hub
        self.hooks = hooks or Hooks()
        self.journal_interval_s = journal_interval_s
        self.emit_interval_s = emit_interval_s
        self.clock = clock
        self._tasks: dict[str, asyncio.Task[None]] = {}
        self.saves = SaveQueue(store)
        self._busy: dict[str, str] = {}
        self.sent: dict[str, SentRequest] = {}
        self.compactor = Compactor(
            store,
            hub,
            hooks=self.hooks,
            guard=self,
            sent=self.sent,
            skills=tools.active_skills if tools is not None else None,
            clock=clock,
        )
        self._compaction = RunCompaction(store, hub, self.compactor)

    def is_running(self, session_id: str) -> bool:
        """True while a run (or something holding the session, e.g. compaction) works."""
        return session_id in self._busy

    def cancel(self, session_id: str) -> bool:
        """Stop the run (or the compaction) of ``session_id``; False when none was working.

        What arrived so far is kept as an aborted reply (see module docstring);
        a stopped compaction saves nothing.
        """
        task = self._tasks.get(session_id)
        if task is None or task.done():
            return self.compactor.cancel(session_id)
        task.cancel()
        return True

    def claim(self, session_id: str, holder: str = "run") -> None:
        """Mark the session busy.

        Args:
            session_id: the session.
            holder: ``run`` or ``compaction``.

        Raises:
            RunInProgress: a run holds it.
            CompactionInProgress: a compaction holds it.
        """
        held = self._busy.get(session_id)
        if held == "compaction":
            raise CompactionInProgress()
        if held is not None:
            raise RunInProgress()
        self._busy[session_id] = holder

    def release(self, session_id: str) -> None:
        """Undo :meth:`claim`."""
        self._busy.pop(session_id, None)

    async def compact(
        self,
        session_id: str,
        *,
        keep_turns: int | None = None,
        reason: Trigger = "manual",
        model_ref: str | None = None,
        on_event: Callable[[CompactEvent], None] | None = None,
    ) -> CompactResult:
        """Compact a session now: :meth:`parley.core.compaction.compact.Compactor.compact`.

        Raises:
            RunInProgress: a run works in the session.
            CompactionInProgress: a compaction already works in it.
        """
        return await self.compactor.compact(
            session_id,
            keep_turns=keep_turns,
            reason=reason,
            model_ref=model_ref,
            on_event=on_event,
        )

    async def refresh_system_prompt(self, session_id: str) -> None:
        """Render the session's system prompt (memory, skills) again at its next request,
        and list its MCP tools again (``parley.core.mcp.tools``).

        The prompt is otherwise frozen per session (``parley.core.tools.system_prompt``)
        so the provider's prompt cache keeps its prefix. No-op without tools.
        """
        if self.tools is not None:
            await self.tools.prompts.refresh(session_id)
            if self.tools.mcp is not None:  # the MCP servers' tools are listed again too
                await self.tools.mcp.refresh(session_id)

    def check_message(
        self, blocks: list[Block], *, model_ref: str, system: str | None = None
    ) -> None:
        """Refuse a message too long for the model's context window, before anything is
        saved (:meth:`parley.core.compaction.run.RunCompaction.check_message`; :meth:`send`
        calls it, a caller may call it earlier, e.g. before creating a session).

        Args:
            blocks: the user's content blocks.
            model_ref: ``"provider_id:model_id"``.
            system: the session's system prompt, if any.

        Raises:
            TextTooLong: its text is longer than any model can read
                (``parley.core.text_limits``; for any model, known or not).
            MessageTooLong: the message with the system prompt is estimated at more
                tokens than the model's context window (models the catalog knows).
        """
        check_blocks(blocks)
        self._compaction.check_message(blocks, model_ref, system)

    async def send(
        self,
        session_id: str,
        blocks: list[Block],
        *,
        model_ref: str,
        on_event: Listener | None = None,
        turn_id: str | None = None,
    ) -> Turn | None:
        """Save a user turn, then ask the model and stream its reply.

        Args:
            session_id: the session to continue.
            blocks: the user's content blocks (text, images, documents).
            model_ref: ``"provider_id:model_id"``.
            on_event: receives :class:`RunEvent` values on the caller's loop
                (``CompactEvent`` values too, when the run compacts).
            turn_id: the id of the user turn (default: a new one), so a window
                can show the message before it is saved.

        Returns:
            The saved assistant turn, or None when the run failed or was stopped
            (a ``RunFailed`` / ``RunCancelled`` event says which).

        Raises:
            RunInProgress: a run holds the session; nothing was saved.
            CompactionInProgress: a compaction holds it; nothing was saved.
            SessionNotFound: no such session; nothing was saved.
            MessageTooLong: the message cannot fit the model's context window
                (:meth:`check_message`); nothing was saved or sent.
            SavesPending: an earlier reply is not saved yet (:attr:`saves`);
                nothing was saved or sent.
            StoreError: the message could not be saved (``DiskFull``,
                ``DatabaseBusy`` …); nothing was sent.
        """
        self.saves.check()
        self.claim(session_id)
        try:
            session = await self.store.get_session(session_id)
            self.check_message(blocks, model_ref=model_ref, system=session.system_prompt)
            user_turn = Turn("user", list(blocks), id=turn_id or new_id())
            if on_event is not None:
                on_event(UserTurnSaving(session_id, user_turn))
            await self.store.append_turn(session_id, user_turn)
            return await self._run(session_id, model_ref, on_event, user_turn, session)
        finally:
            self.release(session_id)

    async def send_saved(
        self,
        session_id: str,
        user_turn: Turn,
        *,
        model_ref: str,
        on_event: Listener | None = None,
    ) -> Turn | None:
        """Ask the model about ``user_turn``, saved already as the session's last turn
        (a message written while the providers were still loading: saved at once, as
        the durability rules want, and sent once its provider is ready). Otherwise
        as :meth:`send`; a message too long for the model fails the run (``RunFailed``)
        and stays saved.

        Raises:
            RunInProgress: a run holds the session; nothing was sent.
            CompactionInProgress: a compaction holds it; nothing was sent.
            SessionNotFound: no such session.
            SavesPending: an earlier reply is not saved yet (:attr:`saves`); nothing
                was sent.
        """
        self.saves.check()
        self.claim(session_id)
        try:
            session = await self.store.get_session(session_id)
            return await self._run(session_id, model_ref, on_event, user_turn, session)
        finally:
            self.release(session_id)

    async def retry(
        self, session_id: str, *, model_ref: str, on_event: Listener | None = None
    ) -> Turn | None:
        """Send the session's current history again (Retry after an error, Resume
        after an aborted reply). The aborted reply stays in the transcript and is
        left out of the request by the wire rules.

        Raises:
            RunInProgress: a run holds the session.
            CompactionInProgress: a compaction holds it.
            SavesPending: an earlier reply is not saved yet (:attr:`saves`).
        """
        self.saves.check()
        self.claim(session_id)
        try:
            return await self._run(session_id, model_ref, on_event, None)
        finally:
            self.release(session_id)

    async def _run(
        self,
        session_id: str,
        model_ref: str,
        on_event: Listener | None,
        user_turn: Turn | None,
        session: Session | None = None,
    ) -> Turn | None:
        emit = on_event or (lambda _e: None)
        progress = _Progress(ReplyBuilder(model=model_ref))
        emit(RunStarted(session_id, user_turn, progress.builder.turn_id))
        turns = await self.store.get_turns(session_id)
        ctx = await self._context(session_id, session)
        # Titled from the first message at once, so a chat whose reply never finishes
        # (Stop, Parley quit) is not left as "New chat"; TitleService improves it later.
        was_untitled = await self._auto_title(session_id, turns, emit, ctx.session)
        first_seq = max(0, len(turns) - (1 if user_turn else 0))
        state = RunState(settings=ctx.compaction)
        self.hooks.fire("session:start", session_id=session_id, model=model_ref)
        task = asyncio.ensure_future(
            self._steps(ctx, model_ref, turns, progress, emit, state)
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
                await self._keep_partial(session_id, progress.builder, emit, None)
                return None
            except ParleyError as exc:
                # A server that refused images or documents is named with the model.
                exc = explain_refusal(exc, model_ref=model_ref, turns=turns)
                await self._keep_partial(session_id, progress.builder, emit, exc)
                return None
            status = "ok"
            turn = progress.final or await self._finish_step(session_id, model_ref, progress)
            first = first_reply_titles(turns, was_untitled=was_untitled)
            emit(RunFinished(session_id, turn, first_reply=first,
                             saved=not self.saves.holds(turn.id)))
            return turn
        finally:
            self._tasks.pop(session_id, None)
            unfinished = 0 if status == "ok" else 1  # the reply being written, if any
            added = (1 if user_turn else 0) + progress.saved + unfinished + state.summaries
            self.hooks.fire(
                "session:end",
                session_id=session_id,
                status=status,
                turn_range=(first_seq, first_seq + added),
            )

    async def _context(self, session_id: str, session: Session | None) -> RunContext:
        """The run's :class:`RunContext`: ``session`` as the caller read it (None: read
        now) and one snapshot of the settings (one store read)."""
        if session is None:
            session = await self.store.get_session(session_id)
        return RunContext(session, await Settings.of(self.store).values())

    async def _steps(
        self,
        ctx: RunContext,
        model_ref: str,
        stored: list[Turn],
        progress: _Progress,
        emit: Listener,
        state: RunState,
    ) -> None:
        """Stream replies, running tools between them, until a reply needs no tools.

        The last reply is left in ``progress.builder`` for ``_run`` to save,
        unless the tool-round limit ended the run (``progress.final``).
        """
        session_id = ctx.session.id
        rounds = None
        if self.tools is not None:
            provider, _model_id = self.hub.resolve(model_ref)
            # The provider's model list first (once): a compatible server says there
            # whether its model takes tools (ModelInfo.tools), and so gets them.
            await self._compaction.limits(model_ref)
            rounds = await self._tools.rounds(ctx.session, provider, model_ref,
                                              ctx.max_rounds)
        while True:
            tools_on = await self._stream(
                ctx, model_ref, stored, progress.builder, emit, state,
                tools_on=rounds is not None,
                own=rounds is not None and rounds.own,
                mcp=rounds is not None and rounds.mcp,
            )
            builder = progress.builder
            if not tools_on or rounds is None:
                return
            if not wants_tools(builder.turn(aborted=False), builder.stop_reason):
                return
            turn = await self._finish_step(session_id, model_ref, progress)
            if self.saves.holds(turn.id):  # not saved yet: no tool runs on an unsaved call
                progress.final = turn
                return
            emit(ToolStepFinished(session_id, turn))
            again = await rounds.answer(turn, stored, emit)
            progress.saved += 1
            if not again:
                progress.final = turn
                return
            stored = await self.store.get_turns(session_id)

    async def _finish_step(self, session_id: str, model_ref: str, progress: _Progress) -> Turn:
        """Save the reply of ``progress.builder`` as complete, with its usage and cost
        (kept by :attr:`saves` when the store refuses it for now)."""
        builder = progress.builder
        progress.builder = ReplyBuilder(model=model_ref)  # a Stop from here keeps no partial
        info = self._model_info(model_ref)
        usage = usage_cost(builder.usage or Usage(), info)
        turn = replace(builder.turn(aborted=False), usage=usage)
        await self.saves.save(session_id, turn, usage)
        progress.saved += 1
        return turn

    def _model_info(self, model_ref: str) -> ModelInfo | None:
        try:
            info: ModelInfo = self.hub.model_info(model_ref)
            return info
        except Exception:  # an unknown model just has no price
            return None

    async def _stream(
        self,
        ctx: RunContext,
        model_ref: str,
        stored: list[Turn],
        builder: ReplyBuilder,
        emit: Listener,
        state: RunState,
        *,
        tools_on: bool = False,
        own: bool = False,
        mcp: bool = False,
    ) -> bool:
        """Send one request and stream its reply into ``builder``.

        ``tools_on``: tools go at all; ``own`` / ``mcp``: which (``RunTools.request``).

        Returns:
            Whether the request carried tools (False once a server rejected them).
        """
        provider, model_id = self.hub.resolve(model_ref)
        # Files over the provider's limits fail here, in words, before anything is sent.
        # (Only what is sent counts: aborted and compacted turns are left out.)
        messages = to_messages(stored, provider.caps)
        check_turns(messages, limits_for(provider.caps.kind))
        session_id, session = ctx.session.id, ctx.session
        request = await self._tools.request(session, model_id, stored, tools_on,
                                            own=own, mcp=mcp)
        request.keep_messages(stored, provider.caps, messages)  # converted once per request
        summaries = state.summaries
        stored, request = await self._compaction.prepare(
            state, session_id, model_ref, provider, request, emit
        )
        compacted = state.summaries != summaries  # the frozen prompt is rendered again
        request = await self._tools.finish(request, session, stored, tools_on,
                                           compacted=compacted, own=own, mcp=mcp)
        attempt = 0
        while True:
            try:
                await self._stream_once(
                    session_id, model_ref, provider, stored, request, builder, emit
                )
                return tools_on
            except ContextOverflow as exc:
                if builder.has_content:
                    raise
                attempt += 1
                retry = await self._compaction.recover(
                    state, attempt, session_id, model_ref, stored, request, emit, error=exc
                )
                if retry is None:
                    raise self._too_long(model_ref, stored, request, exc,
                                         compacted=state.summaries != summaries) from exc
                stored, request = retry
                compacted = state.summaries != summaries
                request = await self._tools.finish(
                    request, session, stored, tools_on, compacted=compacted, own=own, mcp=mcp
                )
            except ProviderError as exc:
                if builder.has_content or not self._tools.rejected(exc, request, provider):
                    raise
                tools_on = False
                request = await self._tools.without_tools(
                    request, session, stored, model_ref, exc, emit
                )

    def _too_long(self, model_ref: str, stored: list[Turn], request: ChatRequest,
                  error: ContextOverflow, *, compacted: bool) -> ParleyError:
        """Why a refused request was given up, with the numbers: the new message alone
        too long for the window (nothing earlier to compact, or it fills the window by
        itself), the history too long with nothing compacted, or still too long after a
        compaction."""
        if compacted:
            return CompactPromptTooLongError(model_ref, during="run")
        info = self.hub.model_info(model_ref)
        window = error.maximum or info.context_window
        tokens = error.tokens or estimate_tokens(request.turns, system=request.system)
        name = model_name(info, model_ref)
        last = stored[-1] if stored and stored[-1].role == "user" else None
        alone = estimate_tokens([last]) if last is not None else 0
        if last is not None and (len(stored) == 1 or alone * 2 >= window):
            return SentMessageTooLong(tokens, window, model_ref, name=name)
        return HistoryTooLong(tokens, window, model_ref, name=name, compacted=False)

    async def _stream_once(
        self,
        session_id: str,
        model_ref: str,
        provider: Provider,
        stored: list[Turn],
        request: ChatRequest,
        builder: ReplyBuilder,
        emit: Listener,
    ) -> None:
        last_emit = self.clock()
        journal = Journal(self.store, session_id, builder, self.journal_interval_s, self.clock)
        accepted = False

        def waiting(wait: RetryWait) -> None:
            log.info("session %s: retry %d in %.1f s (%s)", session_id, wait.attempt,
                     wait.seconds, wait.error.message)
            emit(RetryWaiting(session_id, wait.seconds, wait.rate_limited,
                              wait.error.message, wait.attempt))

        try:
            with retry_waits(waiting):
                async with traffic_for(self.hub).foreground(provider):  # titles wait (local)
                    async for event in provider.stream(request):
                        if not accepted:  # the provider took the request: its prefix is cached
                            accepted = True
                            self._remember_request(session_id, SentRequest(
                                model_ref, tuple(stored), request, self.clock()))
                        builder.feed(event)
                        now = self.clock()
                        if builder.has_content and now - last_emit >= self.emit_interval_s:
                            last_emit = now
                            emit(ReplyUpdated(session_id, builder.turn(aborted=False)))
                        if builder.has_content:
                            journal.changed()
        finally:
            journal.stop()
        await journal.wait()
        if builder.has_content:
            emit(ReplyUpdated(session_id, builder.turn(aborted=False)))

    def _remember_request(self, session_id: str, sent: SentRequest) -> None:
        """Keep the session's last accepted request (for the cache-friendly summary)."""
        self.sent.pop(session_id, None)
        self.sent[session_id] = sent
        while len(self.sent) > MAX_REMEMBERED_REQUESTS:  # the least recently used go first
            del self.sent[next(iter(self.sent))]

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
            await self.saves.save(session_id, partial)
        if error is None:
            emit(RunCancelled(session_id, partial))
        else:
            log.info("run failed in session %s: %s", session_id, error)
            emit(RunFailed(session_id, error, partial))

    async def _auto_title(
        self, session_id: str, turns: list[Turn], emit: Listener, session: Session | None = None
    ) -> bool:
        """Title an untitled session from its first message; return whether it was untitled.

        ``session``: the session as the caller just read it (saves reading it again).
        """
        if session is None:
            session = await self.store.get_session(session_id)
        if session.title:
            return False
        first_user = next((t for t in turns if t.role == "user" and t.text()), None)
        if first_user is None:
            return True
        title = first_line_title(first_user.text())
        try:
            titled = await self.store.set_auto_title(session_id, title)
        except PASSING as exc:  # the question is saved: its answer matters more than a title
            log.info("session %s not titled yet: %s", session_id, exc.message)
            return True  # untitled: titled from the first reply once it can be written
        if titled:
            emit(SessionTitled(session_id, title))
        return True


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
class _Progress:
    """One run's moving parts.

    Attributes:
        builder: the reply being streamed (a fresh one once a step is saved).
        saved: assistant steps and tool-result turns this run saved so far.
        final: the last reply when the tool-round limit ended the run (saved).
    """

    builder: ReplyBuilder
    saved: int = 0
    final: Turn | None = None


def text_blocks(text: str) -> list[Block]:
    """Return the blocks of a plain composer message (one text block)."""
    return [TextBlock(text)]

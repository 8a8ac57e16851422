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

A run's steps (its settings read once, its title, the replies and the tool rounds
between them) are :mod:`parley.core.chat.steps`'s; each request (compaction before and
during it, a server's refusals) is :mod:`parley.core.chat.stream`'s. A session is held
by one run *or* one compaction at a time: :meth:`ChatRunner.claim` raises
``RunInProgress`` or ``CompactionInProgress``. A new message that alone (with the
system prompt) is longer than the model's context window is refused before it is
saved: ``MessageTooLong``.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Literal

from parley.core.attachments.limits import explain_refusal
from parley.core.chat import stopped
from parley.core.chat.events import (
    Listener,
    OlderTurnsUnseen,
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
from parley.core.chat.reply import ReplyBuilder
from parley.core.chat.save_queue import PASSING, SaveQueue, SavesPending
from parley.core.chat.steps import RunProgress, RunSteps, usage_cost
from parley.core.compaction.compact import (
    CompactEvent,
    CompactionInProgress,
    Compactor,
    CompactResult,
    SentRequest,
    Trigger,
)
from parley.core.compaction.run import HistoryTooLong, MessageTooLong, RunCompaction, RunState
from parley.core.content import Block, TextBlock, Turn, new_id
from parley.core.context.text_limits import check_blocks
from parley.core.errors import ParleyError
from parley.core.events import Events, RequestEnded, RequestStarted
from parley.core.tools.executor import ToolExecutor
from parley.core.tools.loop import RunTools

if TYPE_CHECKING:
    from parley.core.compaction.unseen import Unseen
    from parley.core.providers.hub import ProviderHub
    from parley.core.store.async_store import AsyncStore
    from parley.core.store.models import Session

log = logging.getLogger(__name__)

__all__ = [  # the events are defined in parley.core.chat.events and are part of this API
    "ChatRunner", "HistoryTooLong", "Listener", "MessageTooLong", "ReplyUpdated", "RetryWaiting",
    "RunCancelled", "RunEvent", "RunFailed", "RunFinished", "RunInProgress", "RunStarted",
    "SavesPending", "SessionTitled", "UserTurnSaving", "text_blocks", "usage_cost",
]

class ChatRunner:
    """Runs requests for sessions; at most one run or compaction per session at a time.

    Args:
        store: an ``AsyncStore`` (every method awaitable).
        hub: a ``ProviderHub`` resolving ``provider:model`` references.
        events: the bus (``parley.core.events``): ``RequestStarted`` / ``RequestEnded``
            here, ``CompactEvent`` from the compactor, ``CacheUpdated`` from the cache timer.
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
        events: Events | None = None,
        journal_interval_s: float = 0.25,
        emit_interval_s: float = 0.05,
        clock: Callable[[], float] = time.monotonic,
        tools: ToolExecutor | None = None,
    ) -> None:
        self.store = store
        self.tools = tools
        self._tools = RunTools(tools, store)
        self.hub = hub
        self.events = events or Events()
        self._tasks: dict[str, asyncio.Task[None]] = {}
        self.saves = SaveQueue(store)
        self._busy: dict[str, str] = {}
        #: Set when the session is let go (:meth:`release`), for :meth:`wait_released`.
        self._released: dict[str, asyncio.Event] = {}
        #: Sessions whose run was stopped before its request began (see :meth:`cancel`).
        self._stop_asked: set[str] = set()
        #: Sessions whose run the person stopped (:meth:`cancel` ``person``), not a quit.
        self._person_stops: set[str] = set()
        self.sent: dict[str, SentRequest] = {}
        self.compactor = Compactor(
            store,
            hub,
            events=self.events,
            guard=self,
            sent=self.sent,
            skills=tools.active_skills if tools is not None else None,
            clock=clock,
        )
        self._compaction = RunCompaction(store, hub, self.compactor)
        self._steps = RunSteps(
            store, hub, saves=self.saves, tools=self._tools, compaction=self._compaction,
            sent=self.sent, clock=clock, journal_interval_s=journal_interval_s,
            emit_interval_s=emit_interval_s,
        )

    @property
    def steps(self) -> RunSteps:
        """The steps runs are made of (several models' answers use them too:
        ``parley.core.chat.several``)."""
        return self._steps

    def track(self, session_id: str, task: asyncio.Task[None] | None) -> None:
        """Let :meth:`cancel` stop ``task``, a run of ``session_id`` made outside this class
        (``parley.core.chat.several``; the caller holds the session: :meth:`claim`); None
        forgets it."""
        if task is None:
            self._tasks.pop(session_id, None)
        else:
            self._tasks[session_id] = task

    def is_running(self, session_id: str) -> bool:
        """True while a run (or something holding the session, e.g. compaction) works."""
        return session_id in self._busy

    def holder(self, session_id: str) -> str | None:
        """What holds the session: ``"run"``, ``"compaction"`` (Compact now, the cache
        idle-timer; an automatic compaction before a request is part of its run), or None."""
        return self._busy.get(session_id)

    def cancel(self, session_id: str, *, person: bool = False) -> bool:
        """Stop the run (or the compaction) of ``session_id``; False when none was working.

        What arrived so far is kept as an aborted reply (see module docstring);
        a stopped compaction saves nothing. A run that holds the session but has not
        sent its request yet (its message being saved, its context read) stops as
        soon as it would send it: its message stays saved, no request is made, and
        ``RunCancelled`` ends it. ``person``: the person stopped it (Esc, Cancel), not
        Parley closing: a message left with no reply at all is remembered as stopped
        (``parley.core.chat.stopped``), so a restart says so too.
        """
        if person and self._busy.get(session_id) == "run":
            self._person_stops.add(session_id)
        task = self._tasks.get(session_id)
        if task is None or task.done():
            if self._busy.get(session_id) == "run" and session_id not in self._tasks:
                self._stop_asked.add(session_id)
                return True
            return self.compactor.cancel(session_id)
        task.cancel()
        return True

    async def stop_all(self, timeout_s: float) -> bool:
        """Stop every run and compaction (:meth:`cancel`) and wait, up to ``timeout_s``
        seconds, until none holds a session (a stopped run has then saved what arrived).

        Returns:
            True when none is left working; False when one still was at the timeout.
        """
        for session_id in list(self._busy):
            self.cancel(session_id)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout_s
        while self._busy and loop.time() < deadline:
            await asyncio.sleep(0.02)
        return not self._busy

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
        self._stop_asked.discard(session_id)
        released = self._released.pop(session_id, None)
        if released is not None:
            released.set()

    async def wait_released(self, session_id: str) -> None:
        """Return once no run or compaction holds ``session_id`` (at once when none
        does): e.g. a message queued while the chat is being compacted goes when the
        compaction ends, whichever way it ends (``parley.gui.chat.run``). A session held
        again the moment it was let go is waited for again."""
        while session_id in self._busy:
            await self._released.setdefault(session_id, asyncio.Event()).wait()

    async def compact(
        self,
        session_id: str,
        *,
        keep_turns: int | None = None,
        reason: Trigger = "manual",
        model_ref: str | None = None,
        on_event: Callable[[CompactEvent], None] | None = None,
        on_unseen: Callable[[OlderTurnsUnseen], None] | None = None,
    ) -> CompactResult:
        """Compact a session now: :meth:`parley.core.compaction.compact.Compactor.compact`.

        When it fails and the session's oldest turns are left off the wire (its
        ``Unseen`` record, ``parley.core.compaction.unseen``), the record takes this
        failure's reason, detail and attempts, and ``on_unseen`` is told
        (:class:`OlderTurnsUnseen`) so the note says why now.

        Raises:
            RunInProgress: a run works in the session.
            CompactionInProgress: a compaction already works in it.
            ParleyError: the compaction failed (``Compactor.compact``).
        """
        try:
            return await self.compactor.compact(
                session_id,
                keep_turns=keep_turns,
                reason=reason,
                model_ref=model_ref,
                on_event=on_event,
            )
        except (RunInProgress, CompactionInProgress):
            raise
        except ParleyError as exc:
            def told(unseen: Unseen | None) -> None:
                if on_unseen is not None:
                    on_unseen(OlderTurnsUnseen(session_id, unseen))

            await self._compaction.slide.failed(session_id, exc, model_ref or "", told)
            raise

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
                (``parley.core.context.text_limits``; for any model, known or not).
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
        progress = RunProgress(ReplyBuilder(model=model_ref))
        emit(RunStarted(session_id, user_turn, progress.builder.turn_id))
        # What the request is built from: not the turns the latest summary replaced
        # (parley.core.context.since_summary), so a message costs what is sent.
        turns, stored_count = await self.store.context_turns_counted(session_id)
        ctx = await self._steps.context(session_id, session)
        if user_turn is None:  # its last message is sent again: no longer a stopped one
            await self._forget_stop(session_id)
        # Titled from the first message at once, so a chat whose reply never finishes
        # (Stop, Parley quit) is not left as "New chat"; TitleService improves it later.
        first = await self._steps.first_title(session_id, turns, emit, ctx.session)
        first_seq = max(0, stored_count - (1 if user_turn else 0))
        state = RunState(settings=ctx.compaction)
        self.events.emit(RequestStarted(session_id, model_ref))
        task = asyncio.ensure_future(
            self._steps.run(ctx, model_ref, turns, progress, emit, state)
        )
        self._tasks[session_id] = task
        if session_id in self._stop_asked:  # stopped before its request began
            self._stop_asked.discard(session_id)
            task.cancel()
        status: Literal["ok", "cancelled", "error"] = "error"
        try:
            try:
                await task
            except asyncio.CancelledError:
                if not task.cancelled():
                    raise  # our caller was cancelled, not the run
                status = "cancelled"
                if session_id in self._person_stops and progress.saved == 0 \
                        and not progress.builder.has_content:
                    await self._mark_stop(session_id, turns)
                await self._steps.keep_partial(session_id, progress.builder, emit, None)
                return None
            except ParleyError as exc:
                # A server that refused images or documents is named with the model.
                exc = explain_refusal(exc, model_ref=model_ref, turns=turns)
                await self._steps.keep_partial(session_id, progress.builder, emit, exc)
                return None
            status = "ok"
            turn = progress.final or await self._steps.finish(session_id, model_ref, progress)
            emit(RunFinished(session_id, turn, first_reply=first,
                             saved=not self.saves.holds(turn.id)))
            return turn
        finally:
            self._tasks.pop(session_id, None)
            self._person_stops.discard(session_id)
            unfinished = 0 if status == "ok" else 1  # the reply being written, if any
            added = (1 if user_turn else 0) + progress.saved + unfinished + state.summaries
            self.events.emit(RequestEnded(session_id, status, (first_seq, first_seq + added)))

    async def _mark_stop(self, session_id: str, turns: list[Turn]) -> None:
        """The person stopped the run before any reply came: remember its last message
        (``parley.core.chat.stopped``; a store that refuses it now is only logged)."""
        last = turns[-1] if turns else None
        if last is None or last.role != "user":
            return
        try:
            await stopped.mark(self.store, session_id, last.id)
        except PASSING as exc:
            log.info("session %s: its stop not remembered: %s", session_id, exc.message)

    async def _forget_stop(self, session_id: str) -> None:
        """The chat's last message is sent again: it is no stopped one any more."""
        try:
            await stopped.forget(self.store, session_id)
        except PASSING as exc:
            log.info("session %s: its stop not forgotten: %s", session_id, exc.message)


def text_blocks(text: str) -> list[Block]:
    """Return the blocks of a plain composer message (one text block)."""
    return [TextBlock(text)]

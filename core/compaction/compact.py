"""Compaction: older turns summarized by a model, the summary standing in for them.

The rules are in the README (Compaction); the parts live in
``parley.core.compaction.plan`` (where to cut), ``parley.core.compaction.summary`` (which
request writes the summary), ``parley.core.compaction.prompt`` (what the model is
asked), ``parley.core.compaction.wire`` (request transforms and the cache-friendly
request), ``parley.core.compaction.settings``, ``parley.core.compaction.types`` (errors,
results, events; re-exported here) and ``parley.core.compaction.run`` (the run
loop's part).

A compaction, manual (``keep_turns`` given), automatic (the run loop, before a
request reaching the threshold) or from the cache timer:

1. plans the cut (:func:`parley.core.compaction.plan.plan_compaction`); nothing to
   cut, or no such session: a result with ``compacted=False`` and no request; a
   manual compaction that certainly would not make the context smaller
   (``parley.core.compaction.plan.cannot_reduce``): ``would-not-reduce``, no request;
2. asks for a summary and checks it (``parley.core.compaction.summary``) — first by
   resending the session's last request with a note (cache-friendly), when
   the session still starts with that request's turns, the cut lies within
   them and the summary model is the chat's own (``compaction.model`` unset
   or naming it); else, or when that fails or its answer is refused, by a
   separate request to the summary model with the turns as a transcript,
   then in parts that fit; no usable summary: nothing is saved
   (``CompactNoSummaryError`` says why);
3. saves, in one transaction, a summary turn (role user: one
   ``CompactSummaryBlock`` with the range, then the restored files and skills),
   the compactions row with ``tokens_before`` / ``tokens_after``, and the
   summary requests' usage added to the session's totals — unless a manual
   compaction's summary leaves the estimated context no smaller
   (``would-not-reduce``: nothing saved). A saved summary removes the session's
   record of turns left off the wire (``parley.core.compaction.unseen``). The
   replaced turns stay; nothing is written before this step, so a failure or
   an abort leaves the session exactly as it was.

Events ``compact:start``, ``compact:progress`` and ``compact:end`` go to the
hooks (payload: the :class:`CompactEvent` fields) and to ``on_event``.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from parley.core.compaction.manual_keep import manual_keep
from parley.core.compaction.plan import (
    Plan,
    cannot_reduce,
    file_label,
    plan_compaction,
    restorable_files,
    summary_block,
)
from parley.core.compaction.prompt import has_content
from parley.core.compaction.settings import CompactionSettings, chosen_model_ref, load_settings
from parley.core.compaction.summary import Outcome, Summarizer
from parley.core.compaction.types import (
    CompactEvent,
    CompactInvalidInputError,
    CompactionInProgress,
    CompactListener,
    CompactNoSummaryError,
    CompactPromptTooLongError,
    CompactResult,
    EventName,
    NotCompacted,
    SentRequest,
    SessionGuard,
    Skill,
    Trigger,
)
from parley.core.compaction.unseen import load_unseen, save_unseen
from parley.core.compaction.wire import estimate_request
from parley.core.content import Block, CompactSummaryBlock, TextBlock, Turn
from parley.core.context.since_summary import latest_range, stored_prefix
from parley.core.context.tokens import estimate_tokens
from parley.core.errors import ParleyError
from parley.core.events import Events
from parley.core.providers.base import ChatRequest
from parley.core.providers.cheap_models import cheap_model_ref
from parley.core.store.errors import SessionNotFound

if TYPE_CHECKING:
    from parley.core.providers.base import Provider
    from parley.core.providers.hub import ProviderHub
    from parley.core.store.async_store import AsyncStore

__all__ = [
    "CompactEvent",
    "CompactInvalidInputError",
    "CompactListener",
    "CompactNoSummaryError",
    "CompactPromptTooLongError",
    "CompactResult",
    "CompactionInProgress",
    "Compactor",
    "NotCompacted",
    "SentRequest",
    "Skill",
    "Trigger",
]

log = logging.getLogger(__name__)

RESTORED_FILES_TEXT = "[Files the user attached earlier, kept after the summary:]"

# --- the compactor -------------------------------------------------------------


class Compactor:
    r"""Compacts sessions. One per app (``ChatRunner`` makes one).

    Args:
        store: an ``AsyncStore``.
        hub: a ``ProviderHub``.
        events: the bus its ``CompactEvent``\ s go on (``parley.core.events``).
        guard: marks sessions busy; without one the compactor only excludes
            itself (two compactions of a session).
        sent: last accepted request per session (kept by the run loop).
        skills: active skills of a session, added back after the summary.
        clock: monotonic seconds (injectable).
        progress_interval_s: least seconds between ``compact:progress`` events.
    """

    def __init__(
        self,
        store: AsyncStore,
        hub: ProviderHub,
        *,
        events: Events | None = None,
        guard: SessionGuard | None = None,
        sent: dict[str, SentRequest] | None = None,
        skills: Callable[[str], Sequence[Skill]] | None = None,
        clock: Callable[[], float] = time.monotonic,
        progress_interval_s: float = 0.1,
    ) -> None:
        self.store = store
        self.hub = hub
        self.events = events or Events()
        self.guard = guard
        self.sent: dict[str, SentRequest] = {} if sent is None else sent
        self.skills = skills
        self.summarizer = Summarizer(hub, clock=clock, progress_interval_s=progress_interval_s)
        self._active: set[str] = set()
        self._tasks: dict[str, asyncio.Task[Outcome]] = {}
        self._stopped: set[str] = set()
        #: The summary model each session's latest compaction asked (``provider:model``).
        self.asked: dict[str, str] = {}

    def cancel(self, session_id: str) -> bool:
        """Stop a compaction while it waits for its summary; nothing is saved.

        Returns:
            False when no compaction of the session is waiting for a summary.
        """
        task = self._tasks.get(session_id)
        if task is None or task.done():
            return False
        self._stopped.add(session_id)
        task.cancel()
        return True

    async def compact(
        self,
        session_id: str,
        *,
        keep_turns: int | None = None,
        reason: Trigger = "manual",
        model_ref: str | None = None,
        summary_model: str | None = None,
        on_event: CompactListener | None = None,
    ) -> CompactResult:
        """Summarize a session's older turns and save the summary (non-destructive).

        Args:
            session_id: the session.
            keep_turns: recent turns kept verbatim (default: ``compaction.keep_turns``).
            reason: what asked for it: ``manual``, ``auto`` or ``cache-timer``.
            model_ref: the conversation's model (``provider:model``): its
                window sizes the estimates and restored files, its provider
                gives the default summary model. Default: the session's model,
                else the app's default model.
            summary_model: the model that writes the summary (default:
                ``compaction.model``; when neither is set: the conversation's
                model from its prompt cache when the cache-friendly request
                can be made, else a cheap model its provider lists). When set,
                the cache-friendly request is made only if it is the
                conversation's model.
            on_event: receives :class:`CompactEvent` values.

        Returns:
            The result; ``compacted=False`` with ``reason`` ``would-not-reduce``
            (manual: the summary would not make the context smaller; nothing saved),
            ``no-session`` or
            ``nothing-to-compact`` (no provider request made) or ``aborted``
            (:meth:`cancel` was called; nothing saved).

        Raises:
            RunInProgress: a run works in this session (from the guard).
            CompactionInProgress: another compaction works in it.
            CompactInvalidInputError: nothing to summarize (the older turns hold no
                text, tool calls or files), ``keep_turns`` < 0, or no model to use.
            InvalidModelRef, UnknownProvider: the conversation's model cannot be used.
            CompactPromptTooLongError: the turns do not fit the summary model
                even in parts.
            CompactNoSummaryError: no answer was a usable summary (none, cut
                off, or implausibly short; ``reason`` says which).
            UnusableModelSetting: ``compaction.model`` names a provider that is
                not set up (raised before the separate request; nothing saved).
            ProviderError: the separate summary request failed.
            StoreError: the summary could not be saved.
        """
        if session_id in self._active:
            raise CompactionInProgress()
        if self.guard is not None:
            self.guard.claim(session_id, "compaction")
        try:
            return await self.compact_held(
                session_id,
                keep_turns=keep_turns,
                reason=reason,
                model_ref=model_ref,
                summary_model=summary_model,
                on_event=on_event,
            )
        finally:
            if self.guard is not None:
                self.guard.release(session_id)

    async def compact_held(
        self,
        session_id: str,
        *,
        keep_turns: int | None = None,
        reason: Trigger = "auto",
        model_ref: str | None = None,
        summary_model: str | None = None,
        on_event: CompactListener | None = None,
        min_new_tokens: int = 0,
        token_scale: float = 1.0,
    ) -> CompactResult:
        """:meth:`compact` for a caller that already holds the session (the run loop).

        Same arguments, result and errors, except that nothing is claimed and a
        cancellation of the caller propagates (after ``compact:end``).

        Args:
            min_new_tokens: ``nothing-to-compact`` (no request) unless the turns
                to summarize, a previous summary left aside, hold at least this
                many tokens, in the provider's tokens (the local estimate times
                ``token_scale``). Auto-compaction uses it so a history whose kept
                turns alone pass the threshold is not summarized again before
                every request.
            token_scale: provider tokens per estimated token (the ratio the
                provider's reported usage shows, ``parley.core.compaction.run``; >= 1).
        """
        if session_id in self._active:
            raise CompactionInProgress()
        self._active.add(session_id)
        try:
            return await self._compact(
                session_id, keep_turns, reason, model_ref, summary_model, on_event,
                min_new_tokens * 1.0 / max(1.0, token_scale), max(1.0, token_scale),
            )
        finally:
            self._active.discard(session_id)

    async def _compact(
        self,
        session_id: str,
        keep_turns: int | None,
        reason: Trigger,
        model_ref: str | None,
        summary_model: str | None,
        on_event: CompactListener | None,
        min_new_tokens: float = 0,
        scale: float = 1.0,
    ) -> CompactResult:
        settings = await load_settings(self.store)
        keep = settings.keep_turns if keep_turns is None else keep_turns
        if keep < 0:
            raise CompactInvalidInputError(
                "The number of recent turns to keep cannot be negative; nothing was compacted."
            )
        try:
            session = await self.store.get_session(session_id)
        except SessionNotFound:
            return CompactResult(False, "no-session", reason)
        # Not the turns the latest summary replaced (parley.core.context.since_summary):
        # the same model view, so the same plan, read in proportion to what is sent.
        stored = await self.store.context_turns(session_id)
        if reason == "manual":  # over or near the window: fewer turns kept, as automatic
            keep = await self._manual_keep(session_id, stored, keep, settings,
                                           model_ref or session.model)
            if keep < 0:
                return CompactResult(False, "newest-too-long", reason)
        plan = await self._counted(session_id, stored, plan_compaction(stored, keep))
        if plan is None or _new_tokens(plan) < min_new_tokens:
            return CompactResult(False, "nothing-to-compact", reason)
        if not has_content(plan.summarized):
            raise CompactInvalidInputError(
                f"The {plan.replaced_count:,} older turn(s) hold nothing that can be summarized "
                "(no text, tool calls or files), so nothing was compacted."
            )
        conv_ref = model_ref or session.model or self.hub.default_model_ref()
        if not conv_ref:
            raise CompactInvalidInputError(
                "No model is set up to write the summary, so nothing was compacted. Add a "
                "provider in Settings → Providers."
            )
        provider, _ = self.hub.resolve(conv_ref)  # a provider not set up fails before any call
        window = int(self.hub.model_info(conv_ref).context_window)
        if reason == "manual" and cannot_reduce(plan, window):
            return CompactResult(False, "would-not-reduce", reason)
        emit = self._emitter(session_id, reason, on_event)
        emit("compact:start")
        try:
            outcome = await self._summarize_task(
                session_id, plan, stored, conv_ref, summary_model, settings, emit, scale
            )
            if outcome is None:
                result = CompactResult(False, "aborted", reason)
                emit("compact:end", result=result)
                return result
            emit("compact:progress", stage="saving")
            result = await self._save(
                session_id, session.system_prompt, plan, stored, provider, window, outcome, reason
            )
            if result.compacted:
                await self._forget_unseen(session_id)
        except asyncio.CancelledError:
            emit("compact:end", result=CompactResult(False, "aborted", reason))
            raise
        except ParleyError as exc:
            emit("compact:end", error=exc)
            raise
        emit("compact:end", result=result)
        return result

    async def _forget_unseen(self, session_id: str) -> None:
        """A saved summary stands for the older turns again: remove the session's record
        of turns left off the wire (``parley.core.compaction.unseen``), if any."""
        try:
            if await load_unseen(self.store, session_id) is not None:
                await save_unseen(self.store, session_id, None)
        except ParleyError as exc:  # the summary is saved; the next run removes it
            log.warning("session %s: the unseen-turns record was not removed: %s",
                        session_id, exc)

    async def _manual_keep(self, session_id: str, stored: list[Turn], keep: int,
                           settings: CompactionSettings, model_ref: str | None) -> int:
        """The turns "Compact now" keeps verbatim (``parley.core.compaction.manual_keep``):
        ``keep``, fewer when the chat is over or near its window; -1 when it is over
        the window with nothing older than its newest turn to summarize. Without a
        usable model ``keep`` (the error comes later, as before)."""
        ref = model_ref or self.hub.default_model_ref()
        try:
            provider, _ = self.hub.resolve(ref) if ref else (None, None)
            window = int(self.hub.model_info(ref).context_window) if ref else 0
        except ParleyError:
            return keep
        if provider is None or window <= 0:
            return keep
        chosen = manual_keep(provider, stored, keep, model_ref=ref or "", window=window,
                             threshold=settings.threshold, sent=self.sent.get(session_id))
        if chosen.over and plan_compaction(stored, chosen.keep_turns) is None:
            return -1
        return chosen.keep_turns

    async def _counted(self, session_id: str, stored: list[Turn], plan: Plan | None
                       ) -> Plan | None:
        """``plan`` with ``replaced_count`` counting the stored turns its range replaces
        that ``stored`` left out (``AsyncStore.messages_between``)."""
        hidden = _hidden_in(plan, stored) if plan is not None else None
        if plan is None or hidden is None:
            return plan
        more = await self.store.messages_between(session_id, *hidden)
        return replace(plan, replaced_count=plan.replaced_count + more)

    # --- events ------------------------------------------------------------------

    def _emitter(
        self, session_id: str, trigger: str, on_event: CompactListener | None
    ) -> Callable[..., None]:
        def emit(name: EventName, **fields: Any) -> None:
            event = CompactEvent(name, session_id, trigger, **fields)
            self.events.emit(event)
            if on_event is not None:
                try:
                    on_event(event)
                except Exception:  # a listener's bug must not break the compaction
                    log.exception("compaction listener failed")

        return emit

    # --- summary -------------------------------------------------------------

    async def _summarize_task(
        self,
        session_id: str,
        plan: Plan,
        stored: list[Turn],
        conv_ref: str,
        summary_model: str | None,
        settings: CompactionSettings,
        emit: Callable[..., None],
        scale: float = 1.0,
    ) -> Outcome | None:
        """Run the summary requests as a task :meth:`cancel` can stop (None: stopped)."""
        chosen = summary_model or chosen_model_ref(self.hub, conv_ref, settings.model)
        prev = self.summarizer.reusable(_as_stored(self.sent.get(session_id), stored), stored, plan)
        if prev is not None and chosen is not None and chosen != prev.model_ref:
            prev = None  # the user chose another model to write summaries

        self.asked[session_id] = prev.model_ref if prev is not None else chosen or conv_ref

        async def summary_ref() -> str:
            ref = chosen if chosen is not None else await cheap_model_ref(self.hub, conv_ref)
            self.asked[session_id] = ref
            return ref

        task = asyncio.ensure_future(
            self.summarizer.summarize(plan, prev, summary_ref, emit, scale))
        self._tasks[session_id] = task
        try:
            return await task
        except asyncio.CancelledError:
            if session_id in self._stopped:
                return None
            raise
        finally:
            self._tasks.pop(session_id, None)
            self._stopped.discard(session_id)

    # --- saving ----------------------------------------------------------------

    async def _save(
        self,
        session_id: str,
        system_prompt: str | None,
        plan: Plan,
        stored: list[Turn],
        provider: Provider,
        window: int,
        outcome: Outcome,
        trigger: str,
    ) -> CompactResult:
        """Write the summary turn and the compactions row (one transaction)."""
        files = restorable_files(plan.summarized, window)
        skills = list(self.skills(session_id)) if self.skills is not None else []
        blocks: list[Block] = [
            CompactSummaryBlock(
                outcome.summary,
                plan.replaced_count,
                plan.first_turn_id,
                plan.last_turn_id,
            )
        ]
        if files:
            blocks.append(TextBlock(RESTORED_FILES_TEXT))
            blocks.extend(files)
        blocks.extend(
            TextBlock(f"[Active skill, kept after the summary: {s.name}]\n{s.instructions}")
            for s in skills
        )
        turn = Turn("user", blocks)
        # The system prompt and tools as the chat's requests send them (memory, skills).
        sent = self.sent.get(session_id)
        system = sent.request.system if sent is not None else system_prompt or None
        tools = list(sent.request.tools) if sent is not None else []
        before = estimate_request(provider, ChatRequest("", list(stored), system, tools=tools))
        after = estimate_request(provider, ChatRequest("", [*stored, turn], system, tools=tools))
        if trigger == "manual" and after >= before:  # Compact now must not make it larger
            return CompactResult(
                False, "would-not-reduce", trigger, model=outcome.model, usage=outcome.usage,
                effective_tokens=after, tokens_before=before,
            )
        row = await asyncio.shield(
            self.store.record_compaction(
                session_id,
                turn,
                first_turn_id=plan.first_turn_id,
                last_turn_id=plan.last_turn_id,
                replaced_count=plan.replaced_count,
                dropped_count=plan.dropped_count,
                model=outcome.model,
                usage=outcome.usage,
                reason=trigger,
                tokens_before=before,
                tokens_after=after,
                count_usage=True,  # the summary's cost joins the session's, same transaction
            )
        )
        saved = await self.store.get_turn(row.summary_turn_id)
        return CompactResult(
            True,
            None,
            trigger,
            summary_turn_id=row.summary_turn_id,
            compaction_id=row.id,
            replaced_count=plan.replaced_count,
            dropped_count=plan.dropped_count,
            restored_files=tuple(file_label(f) for f in files),
            restored_skills=tuple(s.name for s in skills),
            model=outcome.model,
            usage=outcome.usage,
            effective_tokens=after,
            tokens_before=before,
            cache_reused=outcome.cache_reused,
            summary_turn=saved,
            summary_parts=outcome.parts,
        )


def _hidden_in(plan: Plan, stored: list[Turn]) -> tuple[str, str] | None:
    """The ends of the turns ``stored`` (a ``since_summary`` list) leaves out between
    them, when they lie in the range ``plan`` replaces; else None."""
    gap = latest_range(stored)
    if gap is None or gap[1] == gap[0]:
        return None
    if not plan.first_index <= gap[0] < gap[1] <= plan.last_index:
        return None
    return stored[gap[0]].id, stored[gap[1]].id


def _as_stored(sent: SentRequest | None, stored: list[Turn]) -> SentRequest | None:
    """``sent`` with the stored turns it was built from as they are in ``stored`` (a run
    builds its request from ``parley.core.context.since_summary``'s list); None when
    ``stored`` no longer starts with them."""
    prefix = stored_prefix(sent.stored_turns, stored) if sent is not None else None
    return replace(sent, stored_turns=prefix) if sent is not None and prefix is not None else None


def _new_tokens(plan: Plan) -> int:
    """Estimated tokens of the turns a compaction would summarize, earlier summaries aside."""
    return estimate_tokens([t for t in plan.summarized if summary_block(t) is None])

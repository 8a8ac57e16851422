"""Compaction's part in a run: the context window before a request, overflow recovery.

Rules (settings in ``parley.core.compaction.settings``):

* A new message: when it alone, with the system prompt, is longer than the
  model's context window (``parley.core.context.tokens.estimate_tokens``, the estimate the
  context meter shows), :meth:`RunCompaction.check_message` refuses it with
  :class:`MessageTooLong` before it is saved or sent. Only for models whose
  window the catalog (or a model override) knows: an unknown model's window
  is a guess.
* Before a request: when ``compaction.auto`` is on and the request's context
  (:func:`parley.core.compaction.wire.context_tokens`: the provider's count near the
  trigger, else the local estimate over system prompt, tools and every block)
  reaches ``compaction.threshold`` × the model's context window, the session
  is compacted (strategy ``summary``; reason ``auto``; only when the turns to
  summarize hold at least :data:`MIN_NEW_SHARE` of the trigger; fewer than
  ``keep_turns`` turns are then kept verbatim when the kept ones would hold the
  request at the trigger, so it goes out under it, with room for the reply) or its
  older tool output is hidden on the wire (strategy ``tail``). A failed auto-compaction is
  logged (its ``compact:end`` event carries the error) and the request goes
  out as it is (stubbed, in the steps below). After a summary that was refused
  (``CompactNoSummaryError``) or failed (a provider error, too long to summarize),
  automatic compaction of the session waits until its history grew by 10 % of the
  window or two more messages, the summary model changed, or Compact now was used
  (``parley.core.compaction.backoff``); while it waits, no summary is asked for
  before or after the request.
* Still over the context window itself after that (auto on, a window the
  catalog or the provider gave) — too few turns beyond the ``keep_turns`` kept
  ones, kept turns that alone pass the threshold, or a compaction that did not
  save enough — the overflow steps are taken before sending rather than after
  the API refuses: older tool output and files are stubbed
  (:func:`stub_for_overflow`); then the session is compacted keeping fewer turns
  verbatim if it must (:func:`parley.core.compaction.plan.fit_keep_turns`, down to
  the message being answered; a summary is written whatever the strategy, as
  after an overflow).
* When no summary can help — it was refused or failed, automatic compaction
  waits, or the newest turns leave no room for one — the request goes out with
  its oldest turns left off the wire: the newest turns that fit, older tool
  output stubbed, the latest summary first when it fits too
  (``parley.core.compaction.slide``, ``parley.core.compaction.window``). The store
  keeps every turn; the session's ``Unseen`` record (``parley.core.compaction.unseen``)
  says which turns the model no longer sees and why, and ``on_unseen`` is told
  each time it is written, moved or removed. Later requests start where the last
  one did while that fits, else move forward. The next saved summary (any
  trigger) removes the record, as does a request whose whole history fits again.
  Only when even the newest message, with what it answers, does not fit does
  the run fail with :class:`HistoryTooLong` (``newest``) and nothing is sent.
* After a context overflow with no output yet: first the tool output and
  files before the last user turn are stubbed (:func:`stub_for_overflow`);
  if that overflows too, the session is compacted and the compacted history
  (stubbed the same way) is sent; when no summary can be made, the newest
  turns that fit the window the refusal named are sent (as above); then the
  run gives up and reports ``CompactPromptTooLongError`` (the caller raises it).
* Units: every comparison is in the provider's tokens — the measured request
  (reported usage plus an estimate of what was added), and local estimates
  scaled by the ratio that measure shows (``Target.scale``): the trigger, the
  planner's :data:`MIN_NEW_SHARE`, backoff growth and the fitting of kept or
  newest turns.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from parley.core.compaction.backoff import Backoff, Refusal, written_messages
from parley.core.compaction.compact import (
    CompactEvent,
    CompactNoSummaryError,
    Compactor,
    CompactPromptTooLongError,
)
from parley.core.compaction.manual_keep import SUMMARY_ROOM_SHARE
from parley.core.compaction.plan import fit_keep_turns, plan_compaction, summary_block
from parley.core.compaction.run_state import RunState, Target, UnseenListener, token_scale
from parley.core.compaction.settings import CompactionSettings
from parley.core.compaction.slide import Slide
from parley.core.compaction.summary import SUMMARY_MAX_TOKENS
from parley.core.compaction.wire import (
    estimate_request,
    hide_tool_output,
    stub_for_overflow,
)
from parley.core.content import Block, Turn
from parley.core.context.tokens import estimate_tokens
from parley.core.context.too_long import HistoryTooLong, MessageTooLong, larger_model, model_name
from parley.core.errors import ParleyError
from parley.core.providers.base import ChatRequest, ModelInfo
from parley.core.providers.errors import ContextOverflow, ProviderError
from parley.core.wire import to_messages

if TYPE_CHECKING:
    from parley.core.providers.base import Provider
    from parley.core.providers.hub import ProviderHub
    from parley.core.store.async_store import AsyncStore

__all__ = [  # the errors live in parley.core.context.too_long; they are part of this API
    "HistoryTooLong",
    "MessageTooLong",
    "RunCompaction",
    "RunState",
    "larger_model",
]

log = logging.getLogger(__name__)

#: Auto-compaction summarizes only when the turns it would replace (an earlier
#: summary aside) hold at least this share of the trigger, so kept turns that
#: alone pass the threshold do not cause a summary request before every request.
MIN_NEW_SHARE = 0.1

class RunCompaction:
    """The run loop's compaction policy.

    Args:
        store: the ``AsyncStore``.
        hub: the ``ProviderHub`` (model windows).
        compactor: compacts while the run holds the session.
    """

    def __init__(self, store: AsyncStore, hub: ProviderHub, compactor: Compactor) -> None:
        self.store = store
        self.hub = hub
        self.compactor = compactor
        self.backoff = Backoff()
        self.slide = Slide(store, hub, compactor.asked)
        #: model_ref -> provider tokens per estimated token a refusal showed (a request
        #: refused before any reply measured it): later requests are judged by it
        self.refused_scale: dict[str, float] = {}
        compactor.events.on(CompactEvent, self.backoff.on_compact)

    def check_message(
        self, blocks: Sequence[Block], model_ref: str, system: str | None = None
    ) -> None:
        """Refuse a new message that cannot fit the model's context window.

        Args:
            blocks: the message's content blocks (text, images, documents).
            model_ref: ``provider:model`` that would answer.
            system: the session's system prompt, if any.

        Raises:
            MessageTooLong: the message with the system prompt is estimated
                (``parley.core.context.tokens.estimate_tokens`` over the wire form, as the
                context meter counts) at more tokens than the model's context
                window. Models the catalog does not know, models whose
                provider is not set up and malformed references are not
                checked (the run reports those).
        """
        try:
            info = self.hub.model_info(model_ref)
            provider, _ = self.hub.resolve(model_ref)
        except ParleyError:
            return
        if not info.known:
            return
        turns = to_messages([Turn("user", list(blocks))], provider.caps)
        tokens = estimate_tokens(turns, system=system)
        if tokens > info.context_window:
            raise MessageTooLong(
                tokens, info.context_window, model_ref, name=model_name(info, model_ref),
                larger=larger_model(self.hub, tokens),
            )

    async def _compact(
        self,
        state: RunState,
        session_id: str,
        model_ref: str,
        emit: Callable[[CompactEvent], None],
        min_new_tokens: int = 0,
        keep_turns: int | None = None,
        scale: float = 1.0,
    ) -> bool:
        """Compact (the run holds the session); True when a summary was saved.

        ``min_new_tokens`` is in the provider's tokens; ``scale``: provider tokens per
        estimated token (``Compactor.compact_held``). A failed compaction is remembered
        (``state.failure``) and automatic compaction of the session waits
        (``parley.core.compaction.backoff``)."""
        try:
            result = await self.compactor.compact_held(
                session_id,
                keep_turns=keep_turns,
                reason="auto",
                model_ref=model_ref,
                on_event=emit,
                min_new_tokens=min_new_tokens,
                token_scale=scale,
            )
        except ParleyError as exc:
            log.warning("auto-compaction of session %s failed: %s", session_id, exc)
            state.compaction_failed = True
            state.failure = exc
            if state.unseen is not None:  # the note says why now
                state.unseen = await self.slide.failed(session_id, exc, model_ref,
                                                       state.on_unseen, state.unseen)
            if isinstance(exc, CompactNoSummaryError | CompactPromptTooLongError | ProviderError):
                turns = await self.store.context_turns(session_id)
                self.backoff.refused(session_id, Refusal(
                    state.tokens, written_messages(turns), state.window, state.summary_model))
            return False
        if result.compacted:
            state.summaries += 1
            state.unseen_removed()  # the compactor removed the record with the summary
        return result.compacted

    async def prepare(
        self,
        state: RunState,
        session_id: str,
        model_ref: str,
        provider: Provider,
        request: ChatRequest,
        emit: Callable[[CompactEvent], None],
        on_unseen: UnseenListener | None = None,
    ) -> tuple[list[Turn], ChatRequest]:
        """Apply auto-compaction to a request about to be sent (module docstring).

        Args:
            state: this run's state.
            session_id: the session (held by the run).
            model_ref: the run's model.
            provider: its adapter.
            request: the request built from the stored turns (``request.turns``).
            emit: receives the compaction's events.
            on_unseen: told the session's record of turns left off the wire when the
                run writes, moves or removes it (``parley.core.compaction.unseen``).

        Returns:
            (the stored turns now, the request to send).

        Raises:
            HistoryTooLong: with ``compaction.auto`` on, the request is over the
                model's context window and even its newest message (with what it
                answers) does not fit alone, or a saved summary and the turns kept
                after it do not fit; nothing was sent.
        """
        settings = await state.compaction_settings(self.store)
        state.on_unseen = on_unseen
        stored = request.turns
        try:
            info = await self.limits(model_ref)
        except ParleyError:
            return stored, request
        target = self._target(session_id, provider, model_ref, info, settings)
        tokens, scale = await target.measure(request)
        estimate = estimate_request(provider, request)
        target = replace(target, scale=max(scale, token_scale(tokens, estimate)))
        refused = self.refused_scale.get(model_ref)
        if refused is not None:  # a refusal counted this model's requests before any reply
            target = replace(target, scale=max(target.scale, refused))
            tokens = max(tokens, target.estimate(request))
        if tokens > target.window and (info.known or refused is not None):
            small = target.newest_too_small(request)
            if small is not None:  # nothing earlier to leave out or summarize can help
                raise small
        if tokens >= target.trigger or self.slide.known(session_id):
            # (a record only matters near the window: a chat below the trigger reads none)
            state.unseen = await self.slide.load(session_id)
        if state.unseen is not None:
            tokens, target = await self.slide.measure_narrowed(target, request, state.unseen,
                                                          tokens, estimate)
        state.tokens, state.window, state.summary_model = tokens, target.window, settings.model
        if not settings.auto:
            return stored, request
        if tokens < target.trigger:
            await self.slide.whole_fits(state, session_id)
            return stored, request
        summaries = state.summaries
        if self.backoff.waiting(session_id, tokens, stored, settings.model):
            log.info("auto-compaction of session %s waits after a refused summary", session_id)
            state.backed_off = True
        if settings.strategy == "tail":
            request = replace(request, turns=hide_tool_output(stored, settings.keep_turns))
        elif not state.backed_off:
            least = int(target.trigger * MIN_NEW_SHARE)
            keep = self._under_point(target, settings, stored, request, least)
            if await self._compact(state, session_id, model_ref, emit, least,
                                   keep_turns=keep, scale=target.scale):
                stored = await self.store.context_turns(session_id)
            request = replace(request, turns=stored)
        if not info.known:
            return stored, request
        if tokens <= target.window:
            await self.slide.whole_fits(state, session_id)
            return stored, request
        if state.compaction_failed:
            return await self.slide.narrow_run(state, session_id, target, stored, request, tokens)
        if request.turns != stored or state.summaries != summaries:
            tokens = await target.tokens(request)
        if tokens <= target.window:
            await self.slide.whole_fits(state, session_id)
            return stored, request
        return await self._fit(state, settings, session_id, target, stored, request, tokens, emit)

    async def limits(self, model_ref: str) -> ModelInfo:
        """The model's window and output limit, the provider's own numbers first
        (``ProviderHub.fetch_model_info`` lists its models once)."""
        fetch = getattr(self.hub, "fetch_model_info", None)
        info: ModelInfo = await fetch(model_ref) if fetch else self.hub.model_info(model_ref)
        return info

    def _target(
        self, session_id: str, provider: Provider, model_ref: str, info: ModelInfo,
        settings: CompactionSettings,
    ) -> Target:
        trigger = int(settings.threshold * info.context_window)
        sent = self.compactor.sent.get(session_id)
        return Target(provider, model_ref, info, trigger, sent)

    @staticmethod
    def _under_point(
        target: Target, settings: CompactionSettings, stored: list[Turn], request: ChatRequest,
        least: int,
    ) -> int | None:
        """Turns an automatic compaction keeps verbatim: None (the setting ``keep_turns``),
        or fewer when the setting's plan summarizes enough (``least`` provider tokens) but
        would leave the request at the trigger (its kept turns, the system prompt and the
        tools, the summary aside, by the scaled estimate). Kept turns that alone pass
        the trigger still cause no summary (the setting's plan decides that).

        Kept turns that hold the request at the trigger leave the reply too little of the
        window (trial 17: 2,480-word messages, four kept turns at 17.3k of 20k, and the
        reply took the chat over the window)."""
        plan = plan_compaction(stored, settings.keep_turns)
        if plan is None:
            return None
        new = estimate_tokens([t for t in plan.summarized if summary_block(t) is None])
        if new * target.scale < least:
            return None

        def fits(kept: list[Turn]) -> bool:
            return target.estimate(replace(request, turns=kept)) < target.trigger

        if fits(plan.kept):
            return None
        return fit_keep_turns(stored, settings.keep_turns, fits)

    async def _fit(
        self,
        state: RunState,
        settings: CompactionSettings,
        session_id: str,
        target: Target,
        stored: list[Turn],
        request: ChatRequest,
        tokens: int,
        emit: Callable[[CompactEvent], None],
    ) -> tuple[list[Turn], ChatRequest]:
        """Bring a request of ``tokens`` tokens, over the context window, under it, or
        refuse it: stub older tool output and files; then compact keeping as many turns
        verbatim as fit (at most ``keep_turns``), and stub again if needed. A failed
        compaction sends the stubbed request (the API has the last word, as for any
        failed auto-compaction)."""
        stubbed = replace(request, turns=stub_for_overflow(request.turns))
        if stubbed.turns != request.turns:
            tokens = await target.tokens(stubbed)
            if tokens <= target.window:
                await self.slide.whole_fits(state, session_id)
                return stored, stubbed
        if state.backed_off:  # no summary is asked for: the newest turns that fit go
            return await self.slide.narrow_run(state, session_id, target, stored, request, tokens)
        room = min(SUMMARY_MAX_TOKENS, int(target.window * SUMMARY_ROOM_SHARE))

        def fits(kept: list[Turn]) -> bool:
            wire = replace(request, turns=stub_for_overflow(kept))
            return target.estimate(wire) + room <= target.window

        keep = fit_keep_turns(stored, settings.keep_turns, fits)
        if keep is None or not await self._compact(
            state, session_id, target.model_ref, emit, keep_turns=keep, scale=target.scale
        ):
            return await self.slide.narrow_run(state, session_id, target, stored, request, tokens)
        stored = await self.store.context_turns(session_id)
        request = replace(request, turns=stored)
        tokens = await target.tokens(request)
        if tokens <= target.window:
            return stored, request
        stubbed = replace(request, turns=stub_for_overflow(stored))
        tokens = await target.tokens(stubbed)
        if tokens <= target.window:
            return stored, stubbed
        raise target.too_long(tokens, compacted=True)

    async def recover(
        self,
        state: RunState,
        attempt: int,
        session_id: str,
        model_ref: str,
        stored: list[Turn],
        request: ChatRequest,
        emit: Callable[[CompactEvent], None],
        error: ContextOverflow | None = None,
    ) -> tuple[list[Turn], ChatRequest] | None:
        """The next request to try after the ``attempt``-th context overflow (1, 2, …).

        The window the provider named in its refusal is remembered
        (``ProviderHub.learn_limits``). First older tool output and files are
        stubbed, when there are any; then (at once when there were none) the
        session is compacted once, keeping as many recent turns verbatim as the
        window takes by the provider's count, and the compacted history is
        sent; after that the run gives up.

        Args:
            stored: the stored turns the failed request was built from.
            request: the failed request.
            error: the refusal (its ``tokens`` / ``maximum`` when the provider said).

        Returns:
            (the stored turns now, the request to send), or None to give up.
        """
        learn = getattr(self.hub, "learn_limits", None)
        if error is not None and error.maximum and learn is not None:
            learn(model_ref, error.maximum)
        if error is not None and error.tokens:  # the provider's count: is the window too small?
            measured = await self._overflow_target(state, model_ref, request, error)
            small = measured.newest_too_small(request, sent=True) if measured is not None else None
            if small is not None and measured is not None:
                self.refused_scale[model_ref] = measured.scale
                state.too_long = small  # no summary of unanswered turns: the caller says so
                return None
        if attempt == 1:
            stubbed = stub_for_overflow(request.turns)
            if stubbed != request.turns:
                return stored, replace(request, turns=stubbed)
        if state.narrowed or (state.overflow_compacted and state.failure is None):
            return None
        target = await self._overflow_target(state, model_ref, request, error)
        if target is None:
            return None
        if not (state.overflow_compacted or state.compaction_failed or state.backed_off):
            state.overflow_compacted = True
            keep = self._overflow_keep(target, await state.compaction_settings(self.store),
                                       stored, request)
            # (the summary requests learn the provider's count from their own refusals)
            if await self._compact(state, session_id, model_ref, emit, keep_turns=keep):
                stored = await self.store.context_turns(session_id)
                return stored, replace(request, turns=stub_for_overflow(stored))
        if not target.info.known and not (error is not None and error.maximum):
            return None  # no window to fit into
        try:  # no summary helped: the newest turns that fit the window the provider named
            return await self.slide.narrow_run(state, session_id, target, stored, request,
                                      error.tokens if error is not None and error.tokens else 0)
        except HistoryTooLong as exc:
            state.too_long = exc  # the newest message alone: the caller says so
            return None

    async def _overflow_target(
        self, state: RunState, model_ref: str, request: ChatRequest,
        error: ContextOverflow | None,
    ) -> Target | None:
        """The model's window (as the refusal named it, once learnt) and the provider's
        tokens per estimated token (the refusal's token figure against the estimate)."""
        settings = await state.compaction_settings(self.store)
        try:
            info = await self.limits(model_ref)
            provider, _ = self.hub.resolve(model_ref)
        except ParleyError:
            return None
        if error is not None and error.maximum:
            info = replace(info, context_window=min(info.context_window, error.maximum))
        estimate = estimate_request(provider, request)
        scale = token_scale(error.tokens if error is not None and error.tokens else 0, estimate)
        return replace(self._target("", provider, model_ref, info, settings), scale=scale)

    @staticmethod
    def _overflow_keep(
        target: Target, settings: CompactionSettings, stored: list[Turn], request: ChatRequest
    ) -> int | None:
        """Recent turns to keep verbatim in a compaction after an overflow: the setting,
        or fewer when the kept turns would not fit the window by the provider's count."""
        room = min(SUMMARY_MAX_TOKENS, int(target.window * SUMMARY_ROOM_SHARE))

        def fits(kept: list[Turn]) -> bool:
            wire = replace(request, turns=stub_for_overflow(kept))
            return target.estimate(wire) + room <= target.window

        return fit_keep_turns(stored, settings.keep_turns, fits)

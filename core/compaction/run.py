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
  summarize hold at least :data:`MIN_NEW_SHARE` of the trigger) or its older
  tool output is hidden on the wire (strategy ``tail``). A failed auto-compaction is
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
  scaled by the ratio that measure shows (``_Target.scale``): the trigger, the
  planner's :data:`MIN_NEW_SHARE`, backoff growth and the fitting of kept or
  newest turns.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from parley.core.compaction.backoff import Backoff, Refusal, written_messages
from parley.core.compaction.compact import (
    CompactEvent,
    CompactNoSummaryError,
    Compactor,
    CompactPromptTooLongError,
)
from parley.core.compaction.plan import fit_keep_turns
from parley.core.compaction.settings import CompactionSettings, load_settings
from parley.core.compaction.slide import Slide, UnseenListener, failure_cause, waiting_cause
from parley.core.compaction.summary import SUMMARY_MAX_TOKENS
from parley.core.compaction.unseen import Unseen, load_unseen, save_unseen
from parley.core.compaction.window import newest_turns
from parley.core.compaction.wire import (
    context_tokens,
    estimate_request,
    hide_tool_output,
    stub_for_overflow,
)
from parley.core.content import Block, Turn
from parley.core.context.size import measure
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
#: Room left for the summary when choosing how many turns to keep verbatim so a
#: request fits: the separate summary request's output limit, at most this share
#: of the window.
SUMMARY_ROOM_SHARE = 0.05

@dataclass
class RunState:
    """What compaction did during one run.

    Attributes:
        summaries: summary turns saved during the run.
        compaction_failed: an auto-compaction failed (not tried again in this run).
        overflow_compacted: the run compacted after a context overflow (once per run).
        backed_off: automatic compaction waits after a refused summary
            (``parley.core.compaction.backoff``): none is tried in this run.
        tokens: the request's context tokens counted before it was sent (0: not counted).
        window: the model's context window (0: not known yet).
        summary_model: the ``compaction.model`` setting (None: the default).
        settings: the compaction settings of the run's settings snapshot (None: read
            them when needed).
        failure: the error of the run's failed auto-compaction (None: none failed).
        unseen: the session's record of turns left off the wire
            (``parley.core.compaction.unseen``) as the run last knew it.
        narrowed: a request of this run went out with its oldest turns left off.
        too_long: why a refused request was given up when the reason is known (the
            newest message alone does not fit the window the refusal named).
        on_unseen: told when the run writes, moves or removes that record.
    """

    summaries: int = 0
    compaction_failed: bool = False
    overflow_compacted: bool = False
    backed_off: bool = False
    tokens: int = 0
    window: int = 0
    summary_model: str | None = None
    settings: CompactionSettings | None = None
    failure: ParleyError | None = None
    unseen: Unseen | None = None
    narrowed: bool = False
    too_long: HistoryTooLong | None = None
    on_unseen: UnseenListener | None = None

    def unseen_removed(self) -> None:
        """A saved summary removed the session's record: say so once."""
        if self.unseen is not None:
            self.unseen = None
            if self.on_unseen is not None:
                self.on_unseen(None)

    async def compaction_settings(self, store: AsyncStore) -> CompactionSettings:
        """The run's compaction settings: :attr:`settings` when the run read them with
        its other settings, else read now (``load_settings``)."""
        return self.settings if self.settings is not None else await load_settings(store)


@dataclass(frozen=True)
class _Target:
    """The model a request goes to, for the context-window steps."""

    provider: Provider
    model_ref: str
    info: ModelInfo
    trigger: int
    # the session's last accepted request (parley.core.compaction.compact.SentRequest)
    sent: Any = None
    scale: float = 1.0  # provider tokens per estimated token, when a reply said (>= 1)

    @property
    def window(self) -> int:
        return int(self.info.context_window)

    async def tokens(self, request: ChatRequest) -> int:
        """The request's input tokens (:meth:`measure`)."""
        return (await self.measure(request))[0]

    async def measure(self, request: ChatRequest) -> tuple[int, float]:
        """(the request's input tokens, provider tokens per estimated token): the last
        reply's reported input plus what was added since, scaled by the ratio that reply
        showed (``parley.core.context.size.measure``); without such a reply, the
        provider's count near the trigger against the estimate, else the estimate
        (system prompt and tools included everywhere)."""
        measured = measure(self.provider.caps, request, self.model_ref, self.sent)
        if measured is not None:
            return measured.tokens, measured.scale
        tokens = await context_tokens(self.provider, request, self.trigger)
        return tokens, _scale(tokens, estimate_request(self.provider, request))

    def estimate(self, request: ChatRequest) -> int:
        """The local estimate, scaled by what the provider's counts showed of it."""
        return int(estimate_request(self.provider, request) * self.scale)

    def too_long(self, tokens: int, compacted: bool, newest: bool = False) -> HistoryTooLong:
        name = model_name(self.info, self.model_ref)
        return HistoryTooLong(tokens, self.window, self.model_ref, name=name,
                              compacted=compacted, newest=newest)

    def fits(self, request: ChatRequest, share: float = 1.0) -> bool:
        """The request takes at most ``share`` of the window (scaled estimate)."""
        return self.estimate(request) <= self.window * share


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
        self.slide = Slide(store)
        #: sessions whose record of turns left off the wire this run loop wrote or read
        self._unseen: set[str] = set()
        compactor.hooks.on("compact:end", self.backoff.on_compact_end)

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
                larger=larger_model(provider.caps.kind, tokens),
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
        target = replace(target, scale=max(scale, _scale(tokens, estimate)))
        if tokens >= target.trigger or session_id in self._unseen:
            # (a record only matters near the window: a chat below the trigger reads none)
            state.unseen = await self._load_unseen(session_id)
        if state.unseen is not None:
            tokens, target = await self._measure_narrowed(target, request, state.unseen,
                                                          tokens, estimate)
        state.tokens, state.window, state.summary_model = tokens, target.window, settings.model
        if not settings.auto:
            return stored, request
        if tokens < target.trigger:
            await self._whole_fits(state, session_id)
            return stored, request
        summaries = state.summaries
        if self.backoff.waiting(session_id, tokens, stored, settings.model):
            log.info("auto-compaction of session %s waits after a refused summary", session_id)
            state.backed_off = True
        if settings.strategy == "tail":
            request = replace(request, turns=hide_tool_output(stored, settings.keep_turns))
        elif not state.backed_off:
            least = int(target.trigger * MIN_NEW_SHARE)
            if await self._compact(state, session_id, model_ref, emit, least,
                                   scale=target.scale):
                stored = await self.store.context_turns(session_id)
            request = replace(request, turns=stored)
        if not info.known:
            return stored, request
        if tokens <= target.window:
            await self._whole_fits(state, session_id)
            return stored, request
        if state.compaction_failed:
            return await self._narrow(state, session_id, target, stored, request, tokens)
        if request.turns != stored or state.summaries != summaries:
            tokens = await target.tokens(request)
        if tokens <= target.window:
            await self._whole_fits(state, session_id)
            return stored, request
        return await self._fit(state, settings, session_id, target, stored, request, tokens, emit)

    async def _load_unseen(self, session_id: str) -> Unseen | None:
        """The session's record of turns left off the wire (None when it cannot be read:
        the run goes on as if the model saw every turn)."""
        try:
            unseen = await load_unseen(self.store, session_id)
        except ParleyError as exc:
            log.warning("session %s: the unseen-turns record could not be read: %s",
                        session_id, exc)
            return None
        if unseen is None:
            self._unseen.discard(session_id)
        else:
            self._unseen.add(session_id)
        return unseen

    async def _whole_fits(self, state: RunState, session_id: str) -> None:
        """The whole chat (or its summary and what follows) goes out: remove the record."""
        if state.unseen is None:
            return
        try:
            await save_unseen(self.store, session_id, None)
        except ParleyError as exc:
            log.warning("session %s: the unseen-turns record was not removed: %s",
                        session_id, exc)
            return
        self._unseen.discard(session_id)
        state.unseen_removed()

    async def _measure_narrowed(
        self, target: _Target, request: ChatRequest, unseen: Unseen, tokens: int, estimate: int
    ) -> tuple[int, _Target]:
        """The whole request's tokens when the last ones went out narrowed: the provider
        counted only what was sent, so its ratio to the estimate there is applied to the
        whole history (after a restart the run no longer has the request it sent)."""
        turns = request.turns
        at = next((i for i, t in enumerate(turns) if t.id == unseen.first_seen_turn_id), None)
        if at is None:
            return tokens, target
        narrowed = replace(request, turns=list(turns[at:]))
        counted = measure(target.provider.caps, narrowed, target.model_ref)
        if counted is None:
            return tokens, target
        scale = max(target.scale, counted.scale)
        return max(tokens, int(estimate * scale)), replace(target, scale=scale)

    async def _narrow(
        self,
        state: RunState,
        session_id: str,
        target: _Target,
        stored: list[Turn],
        request: ChatRequest,
        tokens: int,
    ) -> tuple[list[Turn], ChatRequest]:
        """No summary can help: send the newest turns that fit (``parley.core.compaction.slide``).

        Raises:
            HistoryTooLong: even the newest message, with what it answers, does not fit.
        """
        if state.backed_off and state.failure is None:
            cause = waiting_cause(state.unseen)
        else:
            cause = failure_cause(self.hub, state.failure,
                                  self.compactor.asked.get(session_id), target.model_ref)
        done = await self.slide.narrow(session_id, stored, request, target.fits, cause,
                                       state.unseen, state.on_unseen)
        if done is None:
            newest = replace(request, turns=stub_for_overflow(newest_turns(stored)))
            raise target.too_long(max(target.estimate(newest), 1), compacted=False,
                                  newest=True)
        request, state.unseen = done
        state.narrowed = True
        self._unseen.add(session_id)
        return stored, request

    async def limits(self, model_ref: str) -> ModelInfo:
        """The model's window and output limit, the provider's own numbers first
        (``ProviderHub.fetch_model_info`` lists its models once)."""
        fetch = getattr(self.hub, "fetch_model_info", None)
        info: ModelInfo = await fetch(model_ref) if fetch else self.hub.model_info(model_ref)
        return info

    def _target(
        self, session_id: str, provider: Provider, model_ref: str, info: ModelInfo,
        settings: CompactionSettings,
    ) -> _Target:
        trigger = int(settings.threshold * info.context_window)
        sent = self.compactor.sent.get(session_id)
        return _Target(provider, model_ref, info, trigger, sent)

    async def _fit(
        self,
        state: RunState,
        settings: CompactionSettings,
        session_id: str,
        target: _Target,
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
                await self._whole_fits(state, session_id)
                return stored, stubbed
        if state.backed_off:  # no summary is asked for: the newest turns that fit go
            return await self._narrow(state, session_id, target, stored, request, tokens)
        room = min(SUMMARY_MAX_TOKENS, int(target.window * SUMMARY_ROOM_SHARE))

        def fits(kept: list[Turn]) -> bool:
            wire = replace(request, turns=stub_for_overflow(kept))
            return target.estimate(wire) + room <= target.window

        keep = fit_keep_turns(stored, settings.keep_turns, fits)
        if keep is None or not await self._compact(
            state, session_id, target.model_ref, emit, keep_turns=keep, scale=target.scale
        ):
            return await self._narrow(state, session_id, target, stored, request, tokens)
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
            return await self._narrow(state, session_id, target, stored, request,
                                      error.tokens if error is not None and error.tokens else 0)
        except HistoryTooLong as exc:
            state.too_long = exc  # the newest message alone: the caller says so
            return None

    async def _overflow_target(
        self, state: RunState, model_ref: str, request: ChatRequest,
        error: ContextOverflow | None,
    ) -> _Target | None:
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
        scale = _scale(error.tokens if error is not None and error.tokens else 0, estimate)
        return replace(self._target("", provider, model_ref, info, settings), scale=scale)

    @staticmethod
    def _overflow_keep(
        target: _Target, settings: CompactionSettings, stored: list[Turn], request: ChatRequest
    ) -> int | None:
        """Recent turns to keep verbatim in a compaction after an overflow: the setting,
        or fewer when the kept turns would not fit the window by the provider's count."""
        room = min(SUMMARY_MAX_TOKENS, int(target.window * SUMMARY_ROOM_SHARE))

        def fits(kept: list[Turn]) -> bool:
            wire = replace(request, turns=stub_for_overflow(kept))
            return target.estimate(wire) + room <= target.window

        return fit_keep_turns(stored, settings.keep_turns, fits)


def _scale(counted: int, estimated: int) -> float:
    """Provider tokens per estimated token (at least 1: the estimate is never scaled down)."""
    if counted <= 0 or estimated <= 0:
        return 1.0
    return max(1.0, counted / estimated)

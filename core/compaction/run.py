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
  out as it is (stubbed, in the steps below). After a *refused* summary
  (``CompactNoSummaryError``) automatic compaction of the session waits until
  its history grew by 10 % of the window or two more messages, the summary
  model changed, or Compact now was used (``parley.core.compaction.backoff``); while
  it waits, no summary is asked for before or after the request: the request
  goes out as it is (older tool output stubbed if over the window), or fails
  with :class:`HistoryTooLong` when it cannot fit.
* Still over the context window itself after that (auto on, a window the
  catalog knows, no failed compaction) — too few turns beyond the
  ``keep_turns`` kept ones, kept turns that alone pass the threshold, or a
  compaction that did not save enough — the overflow steps are taken before
  sending rather than after the API refuses: older tool output and files are
  stubbed (:func:`stub_for_overflow`); then the session is compacted keeping
  fewer turns verbatim if it must (:func:`parley.core.compaction.plan.fit_keep_turns`,
  down to the message being answered; a summary is written whatever the
  strategy, as after an overflow); when even that cannot fit, the run
  fails with :class:`HistoryTooLong` (a ``CompactPromptTooLongError``) and
  nothing is sent.
* After a context overflow with no output yet: first the tool output and
  files before the last user turn are stubbed (:func:`stub_for_overflow`);
  if that overflows too, the session is compacted and the compacted history
  (stubbed the same way) is sent; then the run gives up and reports
  ``CompactPromptTooLongError`` (the caller raises it).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from parley.core.compaction.backoff import Backoff, Refusal, written_messages
from parley.core.compaction.compact import CompactEvent, CompactNoSummaryError, Compactor
from parley.core.compaction.plan import fit_keep_turns
from parley.core.compaction.settings import CompactionSettings, load_settings
from parley.core.compaction.summary import SUMMARY_MAX_TOKENS
from parley.core.compaction.wire import (
    context_tokens,
    estimate_request,
    hide_tool_output,
    stub_for_overflow,
)
from parley.core.content import Block, Turn
from parley.core.context.size import measured_tokens
from parley.core.context.tokens import estimate_tokens
from parley.core.context.too_long import HistoryTooLong, MessageTooLong, larger_model, model_name
from parley.core.errors import ParleyError
from parley.core.providers.base import ChatRequest, ModelInfo
from parley.core.providers.errors import ContextOverflow
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
    """

    summaries: int = 0
    compaction_failed: bool = False
    overflow_compacted: bool = False
    backed_off: bool = False
    tokens: int = 0
    window: int = 0
    summary_model: str | None = None
    settings: CompactionSettings | None = None

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
        """The request's input tokens: the last reply's reported input plus an estimate
        of what was added since; without such a reply, the provider's count near the
        trigger, else the estimate (system prompt and tools included everywhere)."""
        measured = measured_tokens(self.provider.caps, request, self.model_ref, self.sent)
        if measured is not None:
            return measured
        return await context_tokens(self.provider, request, self.trigger)

    def estimate(self, request: ChatRequest) -> int:
        """The local estimate, scaled by what the provider's counts showed of it."""
        return int(estimate_request(self.provider, request) * self.scale)

    def too_long(self, tokens: int, compacted: bool) -> HistoryTooLong:
        name = model_name(self.info, self.model_ref)
        return HistoryTooLong(tokens, self.window, self.model_ref, name=name, compacted=compacted)


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
    ) -> bool:
        """Compact (the run holds the session); True when a summary was saved."""
        try:
            result = await self.compactor.compact_held(
                session_id,
                keep_turns=keep_turns,
                reason="auto",
                model_ref=model_ref,
                on_event=emit,
                min_new_tokens=min_new_tokens,
            )
        except ParleyError as exc:
            log.warning("auto-compaction of session %s failed: %s", session_id, exc)
            state.compaction_failed = True
            if isinstance(exc, CompactNoSummaryError):
                turns = await self.store.get_turns(session_id)
                self.backoff.refused(session_id, Refusal(
                    state.tokens, written_messages(turns), state.window, state.summary_model))
            return False
        if result.compacted:
            state.summaries += 1
        return result.compacted

    async def prepare(
        self,
        state: RunState,
        session_id: str,
        model_ref: str,
        provider: Provider,
        request: ChatRequest,
        emit: Callable[[CompactEvent], None],
    ) -> tuple[list[Turn], ChatRequest]:
        """Apply auto-compaction to a request about to be sent (module docstring).

        Args:
            state: this run's state.
            session_id: the session (held by the run).
            model_ref: the run's model.
            provider: its adapter.
            request: the request built from the stored turns (``request.turns``).
            emit: receives the compaction's events.

        Returns:
            (the stored turns now, the request to send).

        Raises:
            HistoryTooLong: with ``compaction.auto`` on, the request is over the
                model's context window and neither stubbing nor compaction can
                bring it under; nothing was sent.
        """
        settings = await state.compaction_settings(self.store)
        stored = request.turns
        try:
            info = await self.limits(model_ref)
        except ParleyError:
            return stored, request
        target = self._target(session_id, provider, model_ref, info, settings)
        tokens = await target.tokens(request)
        target = replace(target, scale=_scale(tokens, estimate_request(provider, request)))
        state.tokens, state.window, state.summary_model = tokens, target.window, settings.model
        if not settings.auto or tokens < target.trigger:
            return stored, request
        summaries = state.summaries
        if self.backoff.waiting(session_id, tokens, stored, settings.model):
            log.info("auto-compaction of session %s waits after a refused summary", session_id)
            state.backed_off = True
        if settings.strategy == "tail":
            request = replace(request, turns=hide_tool_output(stored, settings.keep_turns))
        elif not state.backed_off:
            least = int(target.trigger * MIN_NEW_SHARE)
            if await self._compact(state, session_id, model_ref, emit, least):
                stored = await self.store.get_turns(session_id)
            request = replace(request, turns=stored)
        if tokens <= target.window or not info.known or state.compaction_failed:
            return stored, request
        if request.turns != stored or state.summaries != summaries:
            tokens = await target.tokens(request)
        if tokens <= target.window:
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
                return stored, stubbed
        if state.backed_off:  # no summary is asked for: it cannot fit
            raise target.too_long(tokens, compacted=state.summaries > 0)
        room = min(SUMMARY_MAX_TOKENS, int(target.window * SUMMARY_ROOM_SHARE))

        def fits(kept: list[Turn]) -> bool:
            wire = replace(request, turns=stub_for_overflow(kept))
            return target.estimate(wire) + room <= target.window

        keep = fit_keep_turns(stored, settings.keep_turns, fits)
        if keep is None:
            raise target.too_long(tokens, compacted=state.summaries > 0)
        if not await self._compact(state, session_id, target.model_ref, emit, keep_turns=keep):
            return stored, stubbed
        stored = await self.store.get_turns(session_id)
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
        if state.overflow_compacted or state.compaction_failed or state.backed_off:
            return None
        state.overflow_compacted = True
        keep = await self._overflow_keep(state, model_ref, stored, request, error)
        if not await self._compact(state, session_id, model_ref, emit, keep_turns=keep):
            return None
        stored = await self.store.get_turns(session_id)
        return stored, replace(request, turns=stub_for_overflow(stored))

    async def _overflow_keep(
        self, state: RunState, model_ref: str, stored: list[Turn], request: ChatRequest,
        error: ContextOverflow | None,
    ) -> int | None:
        """Recent turns to keep verbatim in a compaction after an overflow: the setting,
        or fewer when the kept turns would not fit the window by the provider's count
        (the refusal's token figure against the local estimate)."""
        settings = await state.compaction_settings(self.store)
        try:
            info = await self.limits(model_ref)
            provider, _ = self.hub.resolve(model_ref)
        except ParleyError:
            return None
        estimate = estimate_request(provider, request)
        scale = _scale(error.tokens if error is not None and error.tokens else 0, estimate)
        target = replace(self._target("", provider, model_ref, info, settings), scale=scale)
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

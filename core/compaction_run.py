"""Compaction's part in a run: auto-compaction before the request, overflow recovery.

Rules (shared/DESIGN.md, Compaction; settings in ``core.compaction_settings``):

* Before a request: when ``compaction.auto`` is on and the request's context
  (:func:`core.compaction_wire.context_tokens`: the provider's count near the
  trigger, else the local estimate over system prompt, tools and every block)
  reaches ``compaction.threshold`` × the model's context window, the session
  is compacted (strategy ``summary``; reason ``auto``; only when the turns to
  summarize hold at least :data:`MIN_NEW_SHARE` of the trigger) or its older
  tool output is hidden on the wire (strategy ``tail``). A failed auto-compaction is
  logged (its ``compact:end`` event carries the error) and the request goes
  out as it is.
* After a context overflow with no output yet: first the tool output and
  files before the last user turn are stubbed (:func:`stub_for_overflow`);
  if that overflows too, the session is compacted and the compacted history
  (stubbed the same way) is sent; then the run gives up and reports
  ``CompactPromptTooLongError`` (the caller raises it).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from core.compaction import CompactEvent, Compactor
from core.compaction_settings import load_settings
from core.compaction_wire import context_tokens, hide_tool_output, stub_for_overflow
from core.content import Turn
from core.errors import ParleyError
from core.providers.base import ChatRequest

log = logging.getLogger(__name__)

#: Auto-compaction summarizes only when the turns it would replace (an earlier
#: summary aside) hold at least this share of the trigger, so kept turns that
#: alone pass the threshold do not cause a summary request before every request.
MIN_NEW_SHARE = 0.1


@dataclass
class RunState:
    """What compaction did during one run.

    Attributes:
        summaries: summary turns saved during the run.
        compaction_failed: an auto-compaction failed (not tried again in this run).
    """

    summaries: int = 0
    compaction_failed: bool = False


class RunCompaction:
    """The run loop's compaction policy.

    Args:
        store: the ``AsyncStore``.
        hub: the ``ProviderHub`` (model windows).
        compactor: compacts while the run holds the session.
    """

    def __init__(self, store: Any, hub: Any, compactor: Compactor) -> None:
        self.store = store
        self.hub = hub
        self.compactor = compactor

    async def _compact(
        self,
        state: RunState,
        session_id: str,
        model_ref: str,
        emit: Callable[[CompactEvent], None],
        min_new_tokens: int = 0,
    ) -> bool:
        """Compact (the run holds the session); True when a summary was saved."""
        try:
            result = await self.compactor.compact_held(
                session_id,
                reason="auto",
                model_ref=model_ref,
                on_event=emit,
                min_new_tokens=min_new_tokens,
            )
        except ParleyError as exc:
            log.warning("auto-compaction of session %s failed: %s", session_id, exc)
            state.compaction_failed = True
            return False
        if result.compacted:
            state.summaries += 1
        return result.compacted

    async def prepare(
        self,
        state: RunState,
        session_id: str,
        model_ref: str,
        provider: Any,
        request: ChatRequest,
        emit: Callable[[CompactEvent], None],
    ) -> tuple[list[Turn], ChatRequest]:
        """Apply auto-compaction to a request about to be sent.

        Args:
            state: this run's state.
            session_id: the session (held by the run).
            model_ref: the run's model.
            provider: its adapter.
            request: the request built from the stored turns (``request.turns``).
            emit: receives the compaction's events.

        Returns:
            (the stored turns now, the request to send).
        """
        settings = await load_settings(self.store)
        stored = request.turns
        try:
            window = int(self.hub.model_info(model_ref).context_window)
        except ParleyError:
            return stored, request
        trigger = int(settings.threshold * window)
        if not settings.auto or await context_tokens(provider, request, trigger) < trigger:
            return stored, request
        if settings.strategy == "tail":
            return stored, replace(request, turns=hide_tool_output(stored, settings.keep_turns))
        least = int(trigger * MIN_NEW_SHARE)
        if await self._compact(state, session_id, model_ref, emit, least):
            stored = await self.store.get_turns(session_id)
        return stored, replace(request, turns=stored)

    async def recover(
        self,
        state: RunState,
        attempt: int,
        session_id: str,
        model_ref: str,
        stored: list[Turn],
        request: ChatRequest,
        emit: Callable[[CompactEvent], None],
    ) -> tuple[list[Turn], ChatRequest] | None:
        """The next request to try after the ``attempt``-th context overflow (1, 2, …).

        Args:
            stored: the stored turns the failed request was built from.
            request: the failed request.

        Returns:
            (the stored turns now, the request to send), or None to give up.
        """
        if attempt == 1:
            return stored, replace(request, turns=stub_for_overflow(request.turns))
        if attempt != 2 or state.compaction_failed:
            return None
        if not await self._compact(state, session_id, model_ref, emit):
            return None
        stored = await self.store.get_turns(session_id)
        return stored, replace(request, turns=stub_for_overflow(stored))

"""The run's last step when no summary can be made: send the newest turns that fit.

``parley.core.compaction.run`` calls :meth:`Slide.narrow` when a request is over the
model's context window and automatic compaction could not help (the summary was
refused, the summary request failed, automatic compaction waits after such a failure
(``parley.core.compaction.backoff``), or the newest turns leave no room for a summary).
The request then goes out with the oldest turns left off the wire
(:func:`parley.core.compaction.window.newest_that_fit`, older tool output and files
stubbed), the store keeps every turn, and the session's
:class:`~parley.core.compaction.unseen.Unseen` record says which turns the model no
longer sees and why — written when it is new or moves, with ``on_unseen`` told each
time. Models are named by their display names (``ModelInfo.display_name``).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from parley.core.compaction.run_state import RunState, Target, UnseenListener
from parley.core.compaction.types import CompactNoSummaryError, CompactPromptTooLongError
from parley.core.compaction.unseen import Reason, Unseen, load_unseen, save_unseen
from parley.core.compaction.window import Window, newest_that_fit, newest_turns
from parley.core.compaction.wire import stub_for_overflow
from parley.core.content import Turn
from parley.core.context.size import measure
from parley.core.errors import ParleyError
from parley.core.providers.base import ChatRequest

if TYPE_CHECKING:
    from parley.core.providers.hub import ProviderHub
    from parley.core.store.async_store import AsyncStore

log = logging.getLogger(__name__)

#: Share of the context window a narrowed request fills when it must move: the rest
#: absorbs the estimate's error, and the next few requests fit before it moves again.
FILL_SHARE = 0.9


_REFUSED_WHY = {
    "no-summary": "did not answer with a summary",
    "not-a-summary": "answered with something that is not a summary",
    "cut-off": "stopped before its summary was complete",
    "too-short": "wrote a summary far too short for the conversation",
}


@dataclass(frozen=True)
class Cause:
    """Why no summary stands for the older turns (the record's reason, detail, attempts)."""

    reason: Reason
    detail: str
    attempts: tuple[str, ...] = ()


def display_name(hub: ProviderHub, model_ref: str | None) -> str:
    """A model's name for people (its display name; the reference when unknown)."""
    if not model_ref:
        return "the summary model"
    try:
        info = hub.model_info(model_ref)
    except ParleyError:
        return model_ref
    return info.display_name or model_ref


def _named(hub: ProviderHub, attempts: Sequence[str], refs: Sequence[str]) -> tuple[str, ...]:
    out = []
    for line in attempts:
        for ref in refs:
            if ref:
                line = line.replace(ref, display_name(hub, ref))
        out.append(line)
    return tuple(out)


def failure_cause(
    hub: ProviderHub, error: ParleyError | None, summary_ref: str | None, chat_ref: str
) -> Cause:
    """The cause of a failed (or not possible) automatic compaction.

    Args:
        hub: names the models.
        error: what the compaction raised (None: no summary was asked for, because the
            newest turns leave no room for one).
        summary_ref: the summary model asked last (``Compactor.asked``), if known.
        chat_ref: the chat's model.
    """
    if isinstance(error, CompactNoSummaryError):
        name = display_name(hub, error.model)
        why = _REFUSED_WHY.get(error.reason, _REFUSED_WHY["no-summary"])
        refs = [error.model, summary_ref or "", chat_ref]
        return Cause("summary-refused", f"{name} {why}",
                     _named(hub, error.attempts, refs))
    if isinstance(error, CompactPromptTooLongError):
        name = display_name(hub, getattr(error, "model", None) or summary_ref)
        return Cause("summary-failed",
                     f"The conversation is too long for {name} to summarize, even in parts")
    if error is not None:
        name = display_name(hub, summary_ref)
        first = error.message.split(". ")[0].rstrip(".")
        return Cause("summary-failed", f"{name} could not write a summary: {first}",
                     (f"{name}: {error.message}",))
    return Cause("summary-failed",
                 f"The newest turns leave no room for a summary in "
                 f"{display_name(hub, chat_ref)}'s context window")


def waiting_cause(previous: Unseen | None) -> Cause:
    """The cause while automatic compaction waits after a failure (``backoff``)."""
    again = "Parley asks for a summary again after two more messages"
    if previous is None:
        return Cause("waiting", f"A summary could not be made a moment ago; {again}")
    detail = previous.detail.split("; Parley asks")[0]
    return Cause("waiting", f"{detail}; {again}", previous.attempts)


class Slide:
    """Narrows requests to the newest turns that fit, and keeps the record of it.

    A session's record is read only when it can matter (a request at or over the
    compaction trigger, or a session this run loop knows has one): a chat far from its
    window costs no store trip for it.

    Args:
        store: the ``AsyncStore`` (app state ``unseen:<session_id>``).
        hub: names the models.
        asked: the summary model each session's latest compaction asked
            (``Compactor.asked``).
    """

    def __init__(self, store: AsyncStore, hub: ProviderHub, asked: Mapping[str, str]) -> None:
        self.store = store
        self.hub = hub
        self.asked = asked
        #: sessions whose record this run loop wrote or read
        self._known: set[str] = set()

    def known(self, session_id: str) -> bool:
        """True when this run loop wrote or read a record of the session."""
        return session_id in self._known

    async def load(self, session_id: str) -> Unseen | None:
        """The session's record of turns left off the wire (None when it cannot be read:
        the run goes on as if the model saw every turn)."""
        try:
            unseen = await load_unseen(self.store, session_id)
        except ParleyError as exc:
            log.warning("session %s: the unseen-turns record could not be read: %s",
                        session_id, exc)
            return None
        if unseen is None:
            self._known.discard(session_id)
        else:
            self._known.add(session_id)
        return unseen

    async def whole_fits(self, state: RunState, session_id: str) -> None:
        """The whole chat (or its summary and what follows) goes out: remove the record."""
        if state.unseen is None:
            return
        try:
            await save_unseen(self.store, session_id, None)
        except ParleyError as exc:
            log.warning("session %s: the unseen-turns record was not removed: %s",
                        session_id, exc)
            return
        self._known.discard(session_id)
        state.unseen_removed()

    async def measure_narrowed(
        self, target: Target, request: ChatRequest, unseen: Unseen, tokens: int, estimate: int
    ) -> tuple[int, Target]:
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

    async def failed(
        self, session_id: str, error: ParleyError, chat_ref: str,
        on_unseen: UnseenListener | None, current: Unseen | None = None,
    ) -> Unseen | None:
        """A compaction of the session failed (automatic or Compact now): its record of
        turns left off the wire, when it has one, takes this failure's cause (reason,
        detail, attempts) so the note says why now, and ``on_unseen`` is told.

        Args:
            session_id: the session.
            error: what the compaction raised.
            chat_ref: the chat's model (``provider:model``; "" when unknown).
            on_unseen: told the changed record.
            current: the record as the caller knows it (None: read it).

        Returns:
            The record now (None: the session has none). A record that could not be
            read or written is logged and left as it was.
        """
        unseen = current if current is not None else await self.load(session_id)
        if unseen is None:
            return None
        cause = failure_cause(self.hub, error, self.asked.get(session_id), chat_ref)
        changed = replace(unseen, reason=cause.reason, detail=cause.detail,
                          attempts=cause.attempts)
        if changed == unseen:
            return unseen
        try:
            await save_unseen(self.store, session_id, changed)
        except ParleyError as exc:
            log.warning("session %s: the unseen-turns record was not updated: %s",
                        session_id, exc)
            return unseen
        if on_unseen is not None:
            on_unseen(changed)
        return changed

    async def narrow_run(
        self,
        state: RunState,
        session_id: str,
        target: Target,
        stored: list[Turn],
        request: ChatRequest,
        tokens: int,
    ) -> tuple[list[Turn], ChatRequest]:
        """No summary can help: send the newest turns that fit (:meth:`narrow`), the cause
        taken from the run's state.

        Raises:
            HistoryTooLong: even the newest message, with what it answers, does not fit.
        """
        if state.backed_off and state.failure is None:
            cause = waiting_cause(state.unseen)
        else:
            cause = failure_cause(self.hub, state.failure,
                                  self.asked.get(session_id), target.model_ref)
        done = await self.narrow(session_id, stored, request, target.fits, cause,
                                       state.unseen, state.on_unseen)
        if done is None:
            newest = replace(request, turns=stub_for_overflow(newest_turns(stored)))
            raise target.too_long(max(target.estimate(newest), 1), compacted=False,
                                  newest=True)
        request, state.unseen = done
        state.narrowed = True
        self._known.add(session_id)
        return stored, request

    async def narrow(
        self,
        session_id: str,
        stored: list[Turn],
        request: ChatRequest,
        fits: Callable[[ChatRequest, float], bool],
        cause: Cause,
        previous: Unseen | None,
        on_unseen: UnseenListener | None,
    ) -> tuple[ChatRequest, Unseen] | None:
        """The request with its oldest turns left off, and the record (saved).

        Args:
            session_id: the session.
            stored: its stored turns (the request was built from them).
            request: the request as it would go; its turns are replaced.
            fits: ``fits(request, share)``: True when a request takes at most ``share``
                of the model's context window, in the provider's tokens.
            cause: why (the record's reason, detail and attempts).
            previous: the session's record before this request, if any.
            on_unseen: told the record when it is new or moved.

        Returns:
            None when nothing can be left off, or even the newest message does not fit
            (the caller says so).

        Raises:
            StoreError: the record could not be saved (the caller logs it: the request
                still goes).
        """
        def wire(turns: list[Turn]) -> ChatRequest:
            return replace(request, turns=stub_for_overflow(turns))

        start = previous.first_seen_turn_id if previous is not None else None
        window = _keep(stored, lambda turns, share: fits(wire(turns), share), start)
        if window is None:
            return None
        unseen = Unseen(session_id, window.first_seen.id, window.hidden, cause.reason,
                        cause.detail, cause.attempts)
        if unseen != previous:
            try:
                await save_unseen(self.store, session_id, unseen)
            except ParleyError as exc:  # the chat goes on; the card shows next time
                log.warning("session %s: the unseen-turns record was not saved: %s",
                            session_id, exc)
            if on_unseen is not None:
                on_unseen(unseen)
        log.info("session %s: %d older turns left off the wire (%s)", session_id,
                 window.hidden, cause.reason)
        return wire(window.turns), unseen


def _keep(
    stored: list[Turn], fits: Callable[[list[Turn], float], bool], start: str | None
) -> Window | None:
    """Where the request starts: the previous start while the request from it still fits
    the whole window (the same prefix, so the provider's prompt cache keeps working);
    else the newest turns that fill :data:`FILL_SHARE` of it, never before that start."""
    if start is not None:
        same = newest_that_fit(stored, lambda t: fits(t, 1.0), not_before=start)
        if same is not None and same.first_seen.id == start:
            return same
    filled = newest_that_fit(stored, lambda t: fits(t, FILL_SHARE), not_before=start)
    return filled or newest_that_fit(stored, lambda t: fits(t, 1.0), not_before=start)

"""Compaction: older turns summarized by a model, the summary standing in for them.

Rules from shared/DESIGN.md (Compaction); the parts live in
``core.compaction_plan`` (where to cut), ``core.compaction_prompt`` (what the
model is asked), ``core.compaction_wire`` (request transforms and the
cache-friendly request) and ``core.compaction_settings``.

A compaction, manual (``keep_turns`` given), automatic (the run loop, before a
request reaching the threshold) or from the cache timer:

1. plans the cut (:func:`core.compaction_plan.plan_compaction`); nothing to
   cut, or no such session: a result with ``compacted=False`` and no request;
2. asks for a summary — first by resending the session's last request with a
   note (cache-friendly), when the session still starts with that request's
   turns and the cut lies within them; else, or when that fails or brings no
   summary, by a separate request to the summary model with the turns as a
   transcript, shortened step by step while it is too long;
3. saves, in one transaction, a summary turn (role user: one
   ``CompactSummaryBlock`` with the range, then the restored files and skills)
   and the compactions row with ``tokens_before`` / ``tokens_after``. The
   replaced turns stay; nothing is written before this step, so a failure or
   an abort leaves the session exactly as it was.

Events ``compact:start``, ``compact:progress`` and ``compact:end`` go to the
hooks (payload: the :class:`CompactEvent` fields) and to ``on_event``.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, TypeAlias

from core.compaction_plan import Plan, file_label, plan_compaction, restorable_files, summary_block
from core.compaction_prompt import (
    LEVELS,
    SUMMARIZER_SYSTEM,
    extract_summary,
    note_text,
    transcript_prompt,
)
from core.compaction_settings import CompactionSettings, load_settings, summary_model_ref
from core.compaction_wire import estimate_request, note_params, stream_params
from core.content import Block, CompactSummaryBlock, TextBlock, Turn, Usage
from core.errors import ParleyError
from core.hooks import Hooks
from core.providers.base import ChatRequest, Event, TextDelta, UsageUpdate
from core.providers.errors import ContextOverflow, ProviderError
from core.store.errors import SessionNotFound
from core.tokens import estimate_tokens

log = logging.getLogger(__name__)

Trigger: TypeAlias = Literal["manual", "auto", "cache-timer"]
NotCompacted: TypeAlias = Literal["nothing-to-compact", "no-session", "aborted"]
EventName: TypeAlias = Literal["compact:start", "compact:progress", "compact:end"]

#: Output limit of a summary request (tokens), capped by the model's own limit.
SUMMARY_MAX_TOKENS = 8_192
#: Share of the summary model's window the transcript may fill at the last level.
LAST_LEVEL_SHARE = 0.5
RESTORED_FILES_TEXT = "[Files the user attached earlier, kept after the summary:]"


# --- errors ------------------------------------------------------------------


class CompactionInProgress(ParleyError):
    """A run or a second compaction was asked for while a compaction works."""

    def __init__(self) -> None:
        super().__init__(
            "Parley is compacting this session. Wait a moment until the summary is "
            "written (or press Esc to stop it), then try again."
        )


class CompactInvalidInputError(ParleyError):
    """The compaction request cannot be carried out as given (nothing to summarize)."""


class CompactPromptTooLongError(ParleyError):
    """The conversation is still too long after compaction's retries."""

    def __init__(self, model: str | None = None, *, during: str = "summary") -> None:
        who = f" for {model}" if model else ""
        if during == "run":
            text = (
                f"This conversation is still too long{who}, even after hiding older tool "
                "output and compacting it. Nothing was lost: the whole conversation is "
                "saved. Remove large attachments, start a new session, or pick a model "
                "with a larger context window."
            )
        else:
            text = (
                f"Parley could not compact this conversation: it is too long{who} to "
                "summarize, even shortened. Nothing was changed. Pick a summary model with "
                "a larger context window (Settings → Compaction) or start a new session."
            )
        super().__init__(text)


class CompactNoSummaryError(ParleyError):
    """The summary model answered without a summary."""

    def __init__(self, model: str) -> None:
        super().__init__(
            f"{model} did not write a summary, so nothing was compacted and the "
            "conversation is unchanged. Try again, or pick another summary model in "
            "Settings → Compaction."
        )


# --- results and events --------------------------------------------------------


@dataclass(frozen=True)
class CompactResult:
    """What a compaction did.

    Attributes:
        compacted: True when a summary was saved.
        reason: when not compacted: ``nothing-to-compact`` | ``no-session`` |
            ``aborted`` (None otherwise).
        trigger: ``manual`` | ``auto`` | ``cache-timer``.
        summary_turn_id: the saved summary turn.
        compaction_id: the saved compactions row.
        replaced_count: stored turns the summary stands for.
        dropped_count: turns in the range left out without being summarized.
        restored_files: labels of the files added back after the summary.
        restored_skills: names of the skills added back after the summary.
        model: ``provider:model`` that wrote the summary.
        usage: the summary request(s)' usage and cost.
        effective_tokens: estimated context tokens after compaction.
        tokens_before: estimated context tokens before.
        cache_reused: the summary came from the cache-friendly request.
        summary_turn: the saved summary turn (for the transcript).
    """

    compacted: bool
    reason: NotCompacted | None = None
    trigger: str = "manual"
    summary_turn_id: str | None = None
    compaction_id: str | None = None
    replaced_count: int = 0
    dropped_count: int = 0
    restored_files: tuple[str, ...] = ()
    restored_skills: tuple[str, ...] = ()
    model: str | None = None
    usage: Usage | None = None
    effective_tokens: int | None = None
    tokens_before: int | None = None
    cache_reused: bool = False
    summary_turn: Turn | None = field(default=None, repr=False)


@dataclass(frozen=True)
class CompactEvent:
    """One compaction event (also fired as a hook with these fields).

    Attributes:
        name: ``compact:start`` | ``compact:progress`` | ``compact:end``.
        session_id: the session.
        trigger: ``manual`` | ``auto`` | ``cache-timer``.
        stage: progress: ``summarizing`` (cache-friendly request),
            ``summarizing-separately`` (separate request), ``saving``.
        received_chars: progress: summary characters received so far.
        result: end: the result (None when it failed).
        error: end: the error, when it failed.
    """

    name: EventName
    session_id: str
    trigger: str
    stage: str = ""
    received_chars: int = 0
    result: CompactResult | None = None
    error: ParleyError | None = None


CompactListener = Callable[[CompactEvent], None]


@dataclass(frozen=True)
class Skill:
    """An active skill, added back after a summary (none exist yet)."""

    name: str
    instructions: str


@dataclass(frozen=True)
class SentRequest:
    """The last request of a session that the provider accepted.

    Attributes:
        model_ref: ``provider:model`` it went to.
        stored_turns: the stored turns it was built from.
        request: the request exactly as sent.
        at: monotonic seconds when it was sent.
    """

    model_ref: str
    stored_turns: tuple[Turn, ...]
    request: ChatRequest
    at: float


class SessionGuard(Protocol):
    """Marks sessions busy (``core.run.ChatRunner``)."""

    def claim(self, session_id: str, holder: str = "run") -> None: ...

    def release(self, session_id: str) -> None: ...


@dataclass
class _Outcome:
    summary: str
    model: str
    usage: Usage
    omitted: int
    cache_reused: bool


# --- the compactor -------------------------------------------------------------


class Compactor:
    """Compacts sessions. One per app (``ChatRunner`` makes one).

    Args:
        store: an ``AsyncStore``.
        hub: a ``ProviderHub``.
        hooks: where ``compact:*`` hooks fire.
        guard: marks sessions busy; without one the compactor only excludes
            itself (two compactions of a session).
        sent: last accepted request per session (kept by the run loop).
        skills: active skills of a session, added back after the summary.
        clock: monotonic seconds (injectable).
        progress_interval_s: least seconds between ``compact:progress`` events.
    """

    def __init__(
        self,
        store: Any,
        hub: Any,
        *,
        hooks: Hooks | None = None,
        guard: SessionGuard | None = None,
        sent: dict[str, SentRequest] | None = None,
        skills: Callable[[str], Sequence[Skill]] | None = None,
        clock: Callable[[], float] = time.monotonic,
        progress_interval_s: float = 0.1,
    ) -> None:
        self.store = store
        self.hub = hub
        self.hooks = hooks or Hooks()
        self.guard = guard
        self.sent: dict[str, SentRequest] = {} if sent is None else sent
        self.skills = skills
        self.clock = clock
        self.progress_interval_s = progress_interval_s
        self._active: set[str] = set()
        self._tasks: dict[str, asyncio.Task[_Outcome]] = {}
        self._stopped: set[str] = set()

    def is_compacting(self, session_id: str) -> bool:
        """True while a compaction of the session works."""
        return session_id in self._active

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
            summary_model: the model of the separate summary request
                (default: ``compaction.model``, else a cheap model of the
                conversation's provider).
            on_event: receives :class:`CompactEvent` values.

        Returns:
            The result; ``compacted=False`` with ``reason`` ``no-session`` or
            ``nothing-to-compact`` (no provider request made) or ``aborted``
            (:meth:`cancel` was called; nothing saved).

        Raises:
            RunInProgress: a run works in this session (from the guard).
            CompactionInProgress: another compaction works in it.
            CompactInvalidInputError: ``keep_turns`` < 0, or no model to use.
            CompactPromptTooLongError: the turns do not fit the summary model
                even after dropping the oldest.
            CompactNoSummaryError: the summary model answered with no text.
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
    ) -> CompactResult:
        """:meth:`compact` for a caller that already holds the session (the run loop).

        Same arguments, result and errors, except that nothing is claimed; a
        cancellation of the caller propagates (after ``compact:end``).
        """
        if session_id in self._active:
            raise CompactionInProgress()
        self._active.add(session_id)
        try:
            return await self._compact(
                session_id, keep_turns, reason, model_ref, summary_model, on_event
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
        stored = await self.store.get_turns(session_id)
        plan = plan_compaction(stored, keep)
        if plan is None:
            return CompactResult(False, "nothing-to-compact", reason)
        conv_ref = model_ref or session.model or self.hub.default_model_ref()
        if not conv_ref:
            raise CompactInvalidInputError(
                "No model is set up to write the summary, so nothing was compacted. Add a "
                "provider in Settings → Providers."
            )
        emit = self._emitter(session_id, reason, on_event)
        emit("compact:start")
        try:
            outcome = await self._summarize_task(
                session_id, plan, stored, conv_ref, summary_model, settings, emit
            )
            if outcome is None:
                result = CompactResult(False, "aborted", reason)
                emit("compact:end", result=result)
                return result
            emit("compact:progress", stage="saving")
            result = await self._save(session_id, session, plan, stored, conv_ref, outcome, reason)
        except asyncio.CancelledError:
            emit("compact:end", result=CompactResult(False, "aborted", reason))
            raise
        except ParleyError as exc:
            emit("compact:end", error=exc)
            raise
        emit("compact:end", result=result)
        return result

    # --- events ------------------------------------------------------------------

    def _emitter(
        self, session_id: str, trigger: str, on_event: CompactListener | None
    ) -> Callable[..., None]:
        def emit(name: EventName, **fields: Any) -> None:
            event = CompactEvent(name, session_id, trigger, **fields)
            self.hooks.fire(
                name,
                session_id=session_id,
                trigger=trigger,
                stage=event.stage,
                received_chars=event.received_chars,
                result=event.result,
                error=event.error,
            )
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
    ) -> _Outcome | None:
        """Run the summary requests as a task :meth:`cancel` can stop (None: stopped)."""
        task = asyncio.ensure_future(
            self._summarize(session_id, plan, stored, conv_ref, summary_model, settings, emit)
        )
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

    async def _summarize(
        self,
        session_id: str,
        plan: Plan,
        stored: list[Turn],
        conv_ref: str,
        summary_model: str | None,
        settings: CompactionSettings,
        emit: Callable[..., None],
    ) -> _Outcome:
        usage = Usage()
        prev = self._reusable(session_id, stored, plan)
        if prev is not None:
            emit("compact:progress", stage="summarizing")
            try:
                provider, _ = self.hub.resolve(prev.model_ref)
                shown = {t.id for t in prev.stored_turns}
                kept = [t for t in plan.kept if not t.aborted and t.id in shown]
                note = note_text(kept, bool(plan.previous))
                params = note_params(provider, prev.request, note)
                text, used = await self._read(stream_params(provider, params), emit, "summarizing")
                usage = usage + used
                summary = extract_summary(text)
                if summary:
                    return _Outcome(summary, prev.model_ref, usage, 0, True)
                log.info("the cache-friendly summary request brought no summary")
            except ProviderError as exc:
                log.info("cache-friendly summary request failed, sending a separate one: %s", exc)
        emit("compact:progress", stage="summarizing-separately")
        ref = summary_model or summary_model_ref(self.hub, conv_ref, settings.model)
        return await self._separate(plan, ref, usage, emit)

    def _reusable(self, session_id: str, stored: list[Turn], plan: Plan) -> SentRequest | None:
        """The last request, if the cache-friendly summary request may resend it."""
        prev = self.sent.get(session_id)
        if prev is None:
            return None
        n = len(prev.stored_turns)
        if n > len(stored) or tuple(stored[:n]) != prev.stored_turns:
            return None  # the history changed (edited, deleted) since
        if any(summary_block(t) is not None for t in stored[n:]) or plan.last_index >= n:
            return None  # it would not show the model what is to be summarized
        try:
            provider, _ = self.hub.resolve(prev.model_ref)
        except ParleyError:
            return None
        ttl = provider.caps.cache_ttl_s
        if ttl is not None and self.clock() - prev.at > ttl:
            return None  # the cache has expired: a cheap model reads it for less
        return prev

    async def _separate(
        self, plan: Plan, ref: str, usage: Usage, emit: Callable[..., None]
    ) -> _Outcome:
        provider, model_id = self.hub.resolve(ref)
        info = self.hub.model_info(ref)
        max_out = min(SUMMARY_MAX_TOKENS, info.max_output_tokens)
        budget = info.context_window - max_out
        previous = bool(plan.previous)
        refused: int | None = None  # estimate of the last transcript the provider refused
        for level in range(LEVELS + 1):
            omitted = 0
            if level < LEVELS:
                prompt = transcript_prompt(
                    plan.summarized, level=level, omitted=0, previous=previous
                )
            else:
                # Our estimate may be low for this model: aim well under what was refused.
                target = int(budget * LAST_LEVEL_SHARE)
                if refused is not None:  # halve the transcript part of it
                    empty = _prompt_tokens(transcript_prompt([], level=level, omitted=0))
                    target = min(target, empty + (refused - empty) // 2)
                fitted = _fit_oldest_out(plan.summarized, target, previous)
                if fitted is None:
                    break
                prompt, omitted = fitted
            request = ChatRequest(
                model=model_id,
                turns=[Turn("user", [TextBlock(prompt)])],
                system=SUMMARIZER_SYSTEM,
                max_tokens=max_out,
                cache=False,
            )
            size = estimate_request(provider, request)
            if size > budget:
                continue  # would overflow: shorten first
            try:
                text, used = await self._read(
                    provider.stream(request), emit, "summarizing-separately"
                )
            except ContextOverflow:
                refused = size
                continue
            summary = extract_summary(text)
            if summary is None:
                raise CompactNoSummaryError(ref)
            return _Outcome(summary, ref, usage + used, omitted, False)
        raise CompactPromptTooLongError(ref)

    async def _read(
        self, events: AsyncIterator[Event], emit: Callable[..., None], stage: str
    ) -> tuple[str, Usage]:
        """Collect a reply's text and usage, emitting progress as it streams."""
        parts: list[str] = []
        usage = Usage()
        chars = 0
        last = self.clock()
        async for event in events:
            if isinstance(event, TextDelta):
                parts.append(event.text)
                chars += len(event.text)
                now = self.clock()
                if now - last >= self.progress_interval_s:
                    last = now
                    emit("compact:progress", stage=stage, received_chars=chars)
            elif isinstance(event, UsageUpdate):
                usage = event.usage
        return "".join(parts), usage

    # --- saving ----------------------------------------------------------------

    async def _save(
        self,
        session_id: str,
        session: Any,
        plan: Plan,
        stored: list[Turn],
        conv_ref: str,
        outcome: _Outcome,
        trigger: str,
    ) -> CompactResult:
        provider, _ = self.hub.resolve(conv_ref)
        window = self.hub.model_info(conv_ref).context_window
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
        system = session.system_prompt or None
        before = estimate_request(provider, ChatRequest("", list(stored), system))
        after = estimate_request(provider, ChatRequest("", [*stored, turn], system))
        row = await asyncio.shield(
            self.store.record_compaction(
                session_id,
                turn,
                first_turn_id=plan.first_turn_id,
                last_turn_id=plan.last_turn_id,
                replaced_count=plan.replaced_count,
                dropped_count=plan.dropped_count + outcome.omitted,
                model=outcome.model,
                usage=outcome.usage,
                reason=trigger,
                tokens_before=before,
                tokens_after=after,
            )
        )
        if outcome.usage != Usage():
            await asyncio.shield(self.store.add_usage(session_id, outcome.usage))
        saved = await self.store.get_turn(row.summary_turn_id)
        return CompactResult(
            True,
            None,
            trigger,
            summary_turn_id=row.summary_turn_id,
            compaction_id=row.id,
            replaced_count=plan.replaced_count,
            dropped_count=plan.dropped_count + outcome.omitted,
            restored_files=tuple(file_label(f) for f in files),
            restored_skills=tuple(s.name for s in skills),
            model=outcome.model,
            usage=outcome.usage,
            effective_tokens=after,
            tokens_before=before,
            cache_reused=outcome.cache_reused,
            summary_turn=saved,
        )


def _prompt_tokens(prompt: str) -> int:
    return estimate_tokens([Turn("user", [TextBlock(prompt)])], system=SUMMARIZER_SYSTEM)


def _fit_oldest_out(turns: list[Turn], budget: int, previous: bool) -> tuple[str, int] | None:
    """The shortest-level transcript without the oldest turns, within ``budget`` tokens.

    A previous summary (first) is always kept; at least the newest turn must
    fit. Returns (prompt, turns left out), or None when even that is too long.
    """
    head = [t for t in turns[:1] if summary_block(t) is not None]
    body = turns[len(head) :]

    def prompt(dropped: int) -> str:
        return transcript_prompt(
            head + body[dropped:], level=LEVELS - 1, omitted=dropped, previous=previous
        )

    def fits(dropped: int) -> bool:
        return _prompt_tokens(prompt(dropped)) <= budget

    if not body or not fits(len(body) - 1):
        return None
    low, high = 0, len(body) - 1  # the least number dropped that fits lies in [low, high]
    while low < high:
        mid = (low + high) // 2
        if fits(mid):
            high = mid
        else:
            low = mid + 1
    return prompt(low), low

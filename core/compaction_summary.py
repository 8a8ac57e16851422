"""Getting a summary written: the cache-friendly request, then the separate one.

Order (shared/DESIGN.md, Compaction):

1. When the session still starts with the turns of its last accepted request
   (:class:`~core.compaction_types.SentRequest`), nothing was compacted since,
   the turns to summarize all lie within it, and its prompt cache is still
   warm (the provider's TTL; always for local servers), that request is sent
   again with the summary instruction as a note after its last message
   (:func:`core.compaction_wire.note_params`), to the same model.
2. Otherwise, or when that request fails or brings no summary, a separate
   request goes to the summary model: the turns as a transcript in one user
   message. While it is too long (by the local estimate, or the provider
   says so) it is shortened: level 0, level 1 (tool output and long text
   clipped), then the oldest turns are left out (a previous summary always
   stays) until the transcript is half of what was refused. Then
   :class:`~core.compaction_types.CompactPromptTooLongError`.
"""

from __future__ import annotations

import logging
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any

from core.compaction_plan import Plan, summary_block
from core.compaction_prompt import (
    LEVELS,
    SUMMARIZER_SYSTEM,
    extract_summary,
    note_text,
    transcript_prompt,
)
from core.compaction_types import CompactNoSummaryError, CompactPromptTooLongError, SentRequest
from core.compaction_wire import estimate_request, note_params, stream_params
from core.content import TextBlock, Turn, Usage
from core.errors import ParleyError
from core.providers.base import ChatRequest, Event, TextDelta, UsageUpdate
from core.providers.errors import ContextOverflow, ProviderError
from core.tokens import estimate_tokens

log = logging.getLogger(__name__)

#: Output limit of a separate summary request (tokens), capped by the model's own limit.
SUMMARY_MAX_TOKENS = 8_192
#: Share of the summary model's window the transcript may fill at the last level.
LAST_LEVEL_SHARE = 0.5

Emit = Callable[..., None]


@dataclass(frozen=True)
class Outcome:
    """A summary and what it cost.

    Attributes:
        summary: the summary text.
        model: ``provider:model`` that wrote it.
        usage: usage of every summary request made (cost included).
        omitted: oldest turns left out of the transcript to make it fit.
        cache_reused: it came from the cache-friendly request.
    """

    summary: str
    model: str
    usage: Usage
    omitted: int
    cache_reused: bool


class Summarizer:
    """Asks models for summaries.

    Args:
        hub: the ``ProviderHub``.
        clock: monotonic seconds (the same clock that stamps ``SentRequest.at``).
        progress_interval_s: least seconds between progress events while streaming.
    """

    def __init__(
        self,
        hub: Any,
        *,
        clock: Callable[[], float] = time.monotonic,
        progress_interval_s: float = 0.1,
    ) -> None:
        self.hub = hub
        self.clock = clock
        self.progress_interval_s = progress_interval_s

    def reusable(
        self, prev: SentRequest | None, stored: list[Turn], plan: Plan
    ) -> SentRequest | None:
        """Return ``prev`` when the cache-friendly request may resend it, else None."""
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

    async def summarize(
        self,
        plan: Plan,
        prev: SentRequest | None,
        summary_ref: Callable[[], str],
        emit: Emit,
    ) -> Outcome:
        """Get a summary of ``plan.summarized``.

        Args:
            plan: the cut.
            prev: the request to resend (see :meth:`reusable`), or None.
            summary_ref: gives the summary model for the separate request.
            emit: ``emit(name, **fields)`` for ``compact:progress``.

        Raises:
            CompactPromptTooLongError: the transcript does not fit, even shortened.
            CompactNoSummaryError: the separate request brought no summary.
            ProviderError: the separate request failed otherwise.
        """
        usage = Usage()
        if prev is not None:
            emit("compact:progress", stage="summarizing")
            try:
                summary, used = await self._cached(plan, prev, emit)
                usage = usage + used
                if summary:
                    return Outcome(summary, prev.model_ref, usage, 0, True)
                log.info("the cache-friendly summary request brought no summary")
            except ProviderError as exc:
                log.info("cache-friendly summary request failed, sending a separate one: %s", exc)
        emit("compact:progress", stage="summarizing-separately")
        return await self._separate(plan, summary_ref(), usage, emit)

    async def _cached(
        self, plan: Plan, prev: SentRequest, emit: Emit
    ) -> tuple[str | None, Usage]:
        provider, _ = self.hub.resolve(prev.model_ref)
        shown = {t.id for t in prev.stored_turns}
        kept = [t for t in plan.kept if not t.aborted and t.id in shown]
        params = note_params(provider, prev.request, note_text(kept, bool(plan.previous)))
        text, usage = await self._read(stream_params(provider, params), emit, "summarizing")
        return extract_summary(text), usage

    async def _separate(self, plan: Plan, ref: str, usage: Usage, emit: Emit) -> Outcome:
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
                    empty = _prompt_tokens(transcript_prompt([], level=LEVELS - 1, omitted=0))
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
            return Outcome(summary, ref, usage + used, omitted, False)
        raise CompactPromptTooLongError(ref)

    async def _read(
        self, events: AsyncIterator[Event], emit: Emit, stage: str
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


def _prompt_tokens(prompt: str) -> int:
    return estimate_tokens([Turn("user", [TextBlock(prompt)])], system=SUMMARIZER_SYSTEM)


def _fit_oldest_out(turns: list[Turn], budget: int, previous: bool) -> tuple[str, int] | None:
    """The last-level transcript without the oldest turns, within ``budget`` tokens.

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

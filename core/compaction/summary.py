"""Getting a summary written, and checked, before it replaces anything.

Order (README, Compaction):

1. **Cache-friendly** — when the session still starts with the turns of its
   last accepted request (:class:`~parley.core.compaction.types.SentRequest`),
   nothing was compacted since, the turns to summarize all lie within it, its
   prompt cache is still warm (the provider's TTL; always for local servers),
   *and the summary model is the chat's own model* (the setting
   ``compaction.model`` is unset, or names that very model), that request is
   sent again with the summary instruction as a note after its last message
   (:func:`parley.core.compaction.wire.note_params`).
2. **One separate request** to the summary model (the setting, else a cheap
   model the provider lists: ``parley.core.providers.cheap_models``): the turns as a
   transcript in one user message; shortened once (level 1: tool input and
   output clipped harder; what the user and the assistant wrote never is)
   when it does not fit. An answer that is no summary is followed by one more
   request, the format stated plainly (``parley.core.compaction.prompt.plainly``).
3. **In parts** — when the transcript does not fit even shortened, or the
   answer so far was refused: the turns are cut into parts that fit
   (``parley.core.compaction.parts``; no turn is left out), each part is summarized,
   then the parts' summaries are combined (in rounds, when they do not fit
   one request). A refused part or combination is asked once more, the format
   stated plainly.

Every answer is checked (``parley.core.compaction.check``): an answer without a
``<summary>`` section stands as the summary only when it is about the turns it
replaces (not empty, not an echo of the request, not a reply to the last
message); one cut off at the output limit, or one implausibly short for what it
replaces, is refused, and the next step is taken. When the last step is refused
too, :class:`~parley.core.compaction.types.CompactNoSummaryError` says why and
nothing is replaced (the run then sends the newest turns that fit,
``parley.core.compaction.slide``).
"""

from __future__ import annotations

import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from parley.core.compaction.check import Source, Verdict, check_answer
from parley.core.compaction.parts import group, split_parts, transcript_tokens
from parley.core.compaction.plan import Plan, summary_block
from parley.core.compaction.prompt import (
    LEVELS,
    SUMMARIZER_SYSTEM,
    merge_prompt,
    note_text,
    part_prompt,
    plainly,
    render_turn,
    transcript_prompt,
)
from parley.core.compaction.types import (
    CompactNoSummaryError,
    CompactPromptTooLongError,
    SentRequest,
)
from parley.core.compaction.wire import estimate_request, note_params, stream_params
from parley.core.content import TextBlock, Turn, Usage, apply_compactions
from parley.core.context.tokens import estimate_tokens, text_tokens
from parley.core.errors import ParleyError
from parley.core.providers.base import ChatRequest, Event, Stop, TextDelta, UsageUpdate
from parley.core.providers.errors import ContextOverflow, ProviderError
from parley.core.providers.local_traffic import traffic_for

if TYPE_CHECKING:
    from parley.core.providers.base import Provider
    from parley.core.providers.hub import ProviderHub

log = logging.getLogger(__name__)

#: Output limit of a separate summary request (tokens), capped by the model's own limit
#: and by :data:`OUTPUT_SHARE` of its window.
SUMMARY_MAX_TOKENS = 8_192
#: Most of the summary model's window one summary's output may take.
OUTPUT_SHARE = 0.2
#: Share of the room left (window less output) one part's transcript may fill: local
#: estimates may be low for the model's tokenizer.
PART_SHARE = 0.6
#: Times the parts are cut smaller after the provider refused one as too long.
PART_RETRIES = 3

Emit = Callable[..., None]


@dataclass(frozen=True)
class Outcome:
    """A summary and what it cost.

    Attributes:
        summary: the summary text.
        model: ``provider:model`` that wrote it.
        usage: usage of every summary request made (cost included).
        cache_reused: it came from the cache-friendly request.
        parts: how many parts the transcript was summarized in (1: at once).
    """

    summary: str
    model: str
    usage: Usage
    cache_reused: bool
    parts: int = 1


class _TooLong(Exception):
    """A summary request does not fit the model (by the estimate, or the provider said so)."""


@dataclass
class _Job:
    """Separate summary requests to one model, and what they have cost so far."""

    summarizer: Summarizer
    ref: str
    emit: Emit
    usage: Usage = field(default_factory=Usage)
    attempts: list[str] = field(default_factory=list)
    last: Verdict | None = None
    #: provider tokens per estimated token (the run's measure, ``parley.core.compaction.run``)
    scale: float = 1.0

    def __post_init__(self) -> None:
        hub = self.summarizer.hub
        self.provider, self.model_id = hub.resolve(self.ref)
        info = hub.model_info(self.ref)
        self.max_out = max(1, min(SUMMARY_MAX_TOKENS, info.max_output_tokens,
                                  int(info.context_window * OUTPUT_SHARE)))
        self.budget = int(info.context_window) - self.max_out
        self.overhead = estimate_tokens([Turn("user", [TextBlock("")])], system=SUMMARIZER_SYSTEM)

    async def ask(
        self, prompt: str, replaced: int, stage: str, source: Source | None = None,
        **progress: int,
    ) -> Verdict:
        """Send one summary request and judge its answer (``source``: what it summarizes,
        for an answer without tags; ``parley.core.compaction.check``).

        Raises:
            _TooLong: it does not fit the model (nothing was sent, or it was refused).
            ProviderError: the request failed otherwise.
        """
        request = ChatRequest(
            model=self.model_id,
            turns=[Turn("user", [TextBlock(prompt)])],
            system=SUMMARIZER_SYSTEM,
            max_tokens=self.max_out,
            cache=False,
        )
        estimate = estimate_request(self.provider, request)
        if estimate * self.scale > self.budget:
            raise _TooLong()
        self.emit("compact:progress", stage=stage, **progress)
        try:
            text, stop, used = await self.summarizer.read(
                self.provider.stream(request), self.emit, stage, provider=self.provider,
                **progress,
            )
        except ContextOverflow:
            raise _TooLong() from None
        self.usage = self.usage + used
        self.last = check_answer(text, stop, replaced, source)
        if not self.last.ok:
            log.info("%s: summary refused (%s)", self.ref, self.last.reason)
        return self.last

    async def ask_twice(
        self, prompt: str, replaced: int, stage: str, source: Source, **progress: int
    ) -> Verdict:
        """Ask; after an answer that is no summary, once more with the format stated
        plainly (``parley.core.compaction.prompt.plainly``)."""
        verdict = await self.ask(prompt, replaced, stage, source, **progress)
        if verdict.ok:
            return verdict
        return await self.ask(plainly(prompt), replaced, stage, source, **progress)


class Summarizer:
    """Asks models for summaries.

    Args:
        hub: the ``ProviderHub``.
        clock: monotonic seconds (the same clock that stamps ``SentRequest.at``).
        progress_interval_s: least seconds between progress events while streaming.
    """

    def __init__(
        self,
        hub: ProviderHub,
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
        """Return ``prev`` when the cache-friendly request may resend it, else None.

        (Whether the summary model allows it is the caller's question.)
        """
        if prev is None:
            return None
        n = len(prev.stored_turns)
        if n > len(stored) or tuple(stored[:n]) != prev.stored_turns:
            return None  # the history changed (edited, deleted) since
        if any(summary_block(t) is not None for t in stored[n:]) or plan.last_index >= n:
            return None  # it would not show the model what is to be summarized
        if _narrowed(prev):
            return None  # it left the oldest turns off (parley.core.compaction.slide)
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
        summary_ref: Callable[[], Awaitable[str]],
        emit: Emit,
        scale: float = 1.0,
    ) -> Outcome:
        """Get a checked summary of ``plan.summarized`` (see the module's order).

        Args:
            plan: the cut.
            prev: the request to resend (see :meth:`reusable`; None when the
                summary model is not the chat's own), or None.
            summary_ref: gives the summary model for the separate requests.
            emit: ``emit(name, **fields)`` for ``compact:progress``.
            scale: provider tokens per estimated token (>= 1): the separate requests
                and their parts are sized to the summary model's window in its tokens.

        Raises:
            CompactNoSummaryError: no answer was a usable summary (its
                ``reason`` is the last refusal's).
            CompactPromptTooLongError: the turns cannot be cut into parts that fit.
            ProviderError: a separate request failed otherwise.
            UnusableModelSetting: the summary model setting cannot be used.
        """
        replaced = transcript_tokens(plan.summarized)
        usage = Usage()
        refused: Verdict | None = None
        cached_try: list[str] = []
        if prev is not None and not self._note_fits(plan, prev, scale):
            log.info("the cache-friendly summary request would not fit %s", prev.model_ref)
            prev = None
        if prev is not None:
            emit("compact:progress", stage="summarizing")
            cached_try.append("the chat's model (reading the conversation from its cache)")
            try:
                summary, used = await self._cached(plan, prev, replaced, emit)
                usage = usage + used
                if summary.ok and summary.summary is not None:
                    return Outcome(summary.summary, prev.model_ref, usage, True)
                refused = summary
                log.info("the cache-friendly summary was refused (%s)", summary.reason)
            except ProviderError as exc:
                log.info("cache-friendly summary request failed, sending a separate one: %s", exc)
        ref = await summary_ref()
        await self.hub.fetch_model_info(ref)  # its window and output limit, as the provider lists
        job = _Job(self, ref, emit, usage, cached_try, refused, max(1.0, scale))
        emit("compact:progress", stage="summarizing-separately")
        outcome = await self._at_once(plan, job, replaced)
        if outcome is None:
            outcome = await self._in_parts(plan, job, replaced)
        if outcome is not None:
            return outcome
        last = job.last or Verdict(None, "no-summary")
        raise CompactNoSummaryError(
            job.ref, last.reason or "no-summary", attempts=tuple(job.attempts),
            tokens=last.tokens, floor=last.floor,
        )

    def _note_fits(self, plan: Plan, prev: SentRequest, scale: float) -> bool:
        """The last request with the summary note still fits its model's window (its
        estimate times ``scale``, the provider's tokens per estimated token)."""
        try:
            provider, _ = self.hub.resolve(prev.model_ref)
            window = self.hub.model_info(prev.model_ref).context_window
        except ParleyError:
            return False
        note = note_text(plan.kept, bool(plan.previous))
        tokens = (estimate_request(provider, prev.request) + text_tokens(note)) * scale
        return tokens <= window

    async def _cached(
        self, plan: Plan, prev: SentRequest, replaced: int, emit: Emit
    ) -> tuple[Verdict, Usage]:
        provider, _ = self.hub.resolve(prev.model_ref)
        shown = {t.id for t in prev.stored_turns}
        kept = [t for t in plan.kept if not t.aborted and t.id in shown]
        params = note_params(provider, prev.request, note_text(kept, bool(plan.previous)))
        text, stop, usage = await self.read(
            stream_params(provider, params), emit, "summarizing", provider=provider)
        return check_answer(text, stop, replaced, _source(plan.summarized)), usage

    async def _at_once(self, plan: Plan, job: _Job, replaced: int) -> Outcome | None:
        """The whole transcript in one request (shortened once if need be), asked once
        more with the format stated plainly when the answer is no summary; None when it
        does not fit or both answers were refused."""
        previous = bool(plan.previous)
        source = _source(plan.summarized)
        for level in range(LEVELS):
            prompt = transcript_prompt(plan.summarized, level=level, previous=previous)
            try:
                verdict = await job.ask(prompt, replaced, "summarizing-separately", source)
            except _TooLong:
                continue
            job.attempts.append(f"{job.ref} for the whole conversation")
            if not verdict.ok:
                try:
                    verdict = await job.ask(plainly(prompt), replaced,
                                            "summarizing-separately", source)
                except _TooLong:
                    return None
                job.attempts.append(f"{job.ref} once more, the format stated plainly")
            if verdict.ok and verdict.summary is not None:
                return Outcome(verdict.summary, job.ref, job.usage, False)
            return None
        return None

    async def _in_parts(self, plan: Plan, job: _Job, replaced: int) -> Outcome | None:
        """Summaries of parts, then of those summaries; None when one was refused twice.

        Raises:
            CompactPromptTooLongError: parts of :data:`MIN_PART_TOKENS` do not fit.
        """
        previous = bool(plan.previous)
        asking = text_tokens(part_prompt("", part=99, parts=99, previous=previous))
        target = int(job.budget / job.scale * PART_SHARE) - job.overhead
        room = target - asking
        if job.last is not None:  # an answer was refused: smaller parts, at least two
            room = min(room, replaced // 2 + 1)
        for _ in range(PART_RETRIES + 1):
            bodies = split_parts(plan.summarized, room)
            n = len(bodies)
            try:
                summaries: list[str] = []
                for k, body in enumerate(bodies, 1):
                    prompt = part_prompt(body, part=k, parts=n, previous=previous and k == 1)
                    verdict = await job.ask_twice(
                        prompt, text_tokens(body), "summarizing-in-parts", Source.of([body]),
                        part=k, parts=n,
                    )
                    if not verdict.ok or verdict.summary is None:
                        job.attempts.append(f"{job.ref} in {n} parts")
                        return None
                    summaries.append(verdict.summary)
                summary = await self._combine(summaries, job, replaced, target)
            except _TooLong:
                target, room = target // 2, room // 2
                continue
            job.attempts.append(f"{job.ref} in {n} parts")
            if summary is None:
                return None
            return Outcome(summary, job.ref, job.usage, False, parts=n)
        raise CompactPromptTooLongError(job.ref)

    async def _combine(
        self, summaries: list[str], job: _Job, replaced: int, target: int
    ) -> str | None:
        """One summary of the parts' summaries (in rounds while they do not fit one
        request); None when a combination was refused twice.

        Raises:
            _TooLong: two summaries do not fit one request.
        """
        total = len(summaries)
        if total == 1:
            return summaries[0]
        items = summaries
        spans = [(i, i) for i in range(1, total + 1)]
        while True:
            groups = group(items, target - text_tokens(merge_prompt([""])))
            if len(groups) == 1:
                verdict = await job.ask_twice(
                    merge_prompt(items, spans, total), replaced, "combining",
                    Source.of([*items, ""]), parts=total,
                )
                return verdict.summary if verdict.ok else None
            if len(groups) == len(items):
                raise _TooLong()  # no two of them fit together
            merged: list[str] = []
            merged_spans: list[tuple[int, int]] = []
            at = 0
            for g in groups:
                these = spans[at : at + len(g)]
                at += len(g)
                merged_spans.append((these[0][0], these[-1][1]))
                if len(g) == 1:
                    merged.append(g[0])
                    continue
                verdict = await job.ask_twice(
                    merge_prompt(g, these, total),
                    sum(text_tokens(x) for x in g), "combining", Source.of([*g, ""]),
                    parts=total,
                )
                if not verdict.ok or verdict.summary is None:
                    return None
                merged.append(verdict.summary)
            items, spans = merged, merged_spans

    async def read(
        self, events: AsyncIterator[Event], emit: Emit, stage: str, *,
        provider: Provider | None = None, **progress: int,
    ) -> tuple[str, str | None, Usage]:
        """Collect a reply's text, stop reason and usage, emitting progress as it streams.

        A summary request is a foreground one for a local server
        (``parley.core.providers.local_traffic``): a background title request to the same server
        waits.
        """
        async with traffic_for(self.hub).foreground(provider):
            return await self._collect(events, emit, stage, **progress)

    async def _collect(
        self, events: AsyncIterator[Event], emit: Emit, stage: str, **progress: int
    ) -> tuple[str, str | None, Usage]:
        parts: list[str] = []
        usage = Usage()
        stop: str | None = None
        chars = 0
        last = self.clock()
        async for event in events:
            if isinstance(event, TextDelta):
                parts.append(event.text)
                chars += len(event.text)
                now = self.clock()
                if now - last >= self.progress_interval_s:
                    last = now
                    emit("compact:progress", stage=stage, received_chars=chars, **progress)
            elif isinstance(event, UsageUpdate):
                usage = event.usage
            elif isinstance(event, Stop):
                stop = event.reason
        return "".join(parts), stop, usage


def _source(summarized: list[Turn]) -> Source:
    """What a summary of ``summarized`` is judged against when it comes without tags."""
    return Source.of(render_turn(t) for t in summarized)


def _narrowed(prev: SentRequest) -> bool:
    """True when the request left turns of the model's view off the wire (the newest turns
    that fit, ``parley.core.compaction.slide``): a summary from it would not have seen them."""
    sent = {t.id for t in prev.request.turns}
    return any(t.id not in sent for t in apply_compactions(prev.stored_turns) if not t.aborted)

"""The vocabulary of compaction: errors, results, events, and what the run loop records.

Everything here is re-exported by :mod:`parley.core.compaction.compact`; import it from there.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal, Protocol, TypeAlias

from parley.core.content import Turn, Usage
from parley.core.errors import ParleyError
from parley.core.providers.base import ChatRequest

Trigger: TypeAlias = Literal["manual", "auto", "cache-timer"]
NotCompacted: TypeAlias = Literal[
    "nothing-to-compact", "no-session", "aborted", "would-not-reduce", "newest-too-long"
]
EventName: TypeAlias = Literal["compact:start", "compact:progress", "compact:end"]


# --- errors ------------------------------------------------------------------


class CompactionInProgress(ParleyError):
    """A run or a second compaction was asked for while a compaction works."""

    def __init__(self) -> None:
        super().__init__(
            "Parley is compacting this chat. Wait a moment until the summary is "
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
                "saved. Remove large attachments, start a new chat, or pick a model "
                "with a larger context window."
            )
        else:
            text = (
                f"Parley could not compact this conversation: it is too long{who} to "
                "summarize, even shortened. Nothing was changed. Pick a summary model with "
                "a larger context window (Settings → Compaction) or start a new chat."
            )
        super().__init__(text)


class CompactNoSummaryError(ParleyError):
    """No usable summary came, after every way of asking; nothing was replaced.

    Attributes:
        model: ``provider:model`` asked last.
        reason: why the last answer was refused: ``no-summary`` (no
            ``<summary>`` section, or an empty one), ``too-short``
            (implausibly short for what it would replace), ``cut-off`` (it
            stopped at the output limit); see ``parley.core.compaction.check``.
        attempts: how the summary was asked for, in order (``the chat's model
            from the prompt cache``, ``one request``, ``3 parts``).
    """

    def __init__(
        self,
        model: str,
        reason: str = "no-summary",
        *,
        attempts: tuple[str, ...] = (),
        tokens: int = 0,
        floor: int = 0,
    ) -> None:
        why = {
            "too-short": (
                f"its summary was far too short to stand for the turns it would replace "
                f"(about {tokens:,} tokens; at least {floor:,} were expected)"
            ),
            "cut-off": "its summary was cut off at the model's output limit",
        }.get(reason, "its answer held no summary")
        tried = f" Parley asked {', then '.join(attempts)}." if attempts else ""
        super().__init__(
            f"Parley could not get a usable summary from {model}: {why}.{tried} Nothing "
            "was compacted and the conversation is unchanged. Try again, or pick another "
            "summary model in Settings → Compaction."
        )
        self.model, self.reason, self.attempts = model, reason, attempts


# --- results and events --------------------------------------------------------


@dataclass(frozen=True)
class CompactResult:
    """What a compaction did.

    Attributes:
        compacted: True when a summary was saved.
        reason: when not compacted (None otherwise): ``nothing-to-compact`` (too few
            turns beyond the kept ones; no request made) | ``no-session`` |
            ``aborted`` (stopped; nothing saved) | ``would-not-reduce`` (a manual
            compaction whose summary would leave the context no smaller: nothing
            saved, the chat unchanged; decided before asking when certain —
            ``parley.core.compaction.plan.cannot_reduce`` — else once the summary came,
            comparing the estimated context before and after, which
            ``tokens_before`` / ``effective_tokens`` then hold with the summary's
            ``model`` and ``usage``, not added to the session's totals) |
            ``newest-too-long`` (a manual compaction of a chat over the model's
            window whose newest turn, kept verbatim, is all there is: nothing older
            to summarize; ``parley.core.compaction.manual_keep``).
        trigger: ``manual`` | ``auto`` | ``cache-timer``.
        summary_turn_id: the saved summary turn.
        compaction_id: the saved compactions row.
        replaced_count: stored turns the summary stands for.
        dropped_count: turns in the range left out without being summarized
            (aborted replies; a summary never leaves turns out to fit).
        restored_files: labels of the files added back after the summary.
        restored_skills: names of the skills added back after the summary.
        model: ``provider:model`` that wrote the summary.
        usage: the summary request(s)' usage and cost.
        effective_tokens: estimated context tokens after compaction.
        tokens_before: estimated context tokens before.
        cache_reused: the summary came from the cache-friendly request.
        summary_turn: the saved summary turn (for the transcript).
        summary_parts: how many parts the conversation was summarized in
            (1: at once; more: a conversation too long for the summary model).
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
    summary_parts: int = 1


@dataclass(frozen=True)
class CompactEvent:
    """One compaction event (also fired as a hook with these fields).

    Attributes:
        name: ``compact:start`` | ``compact:progress`` | ``compact:end``.
        session_id: the session.
        trigger: ``manual`` | ``auto`` | ``cache-timer``.
        stage: progress: ``summarizing`` (cache-friendly request),
            ``summarizing-separately`` (separate request),
            ``summarizing-in-parts`` (one part of a long conversation),
            ``combining`` (the parts' summaries into one), ``saving``.
        received_chars: progress: summary characters received so far.
        part: progress in parts: the part being summarized (1-based; 0 otherwise).
        parts: progress in parts: how many parts there are (0 otherwise).
        result: end: the result (None when it failed).
        error: end: the error, when it failed.
    """

    name: EventName
    session_id: str
    trigger: str
    stage: str = ""
    received_chars: int = 0
    part: int = 0
    parts: int = 0
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
    """Marks sessions busy (``parley.core.chat.run.ChatRunner``)."""

    def claim(self, session_id: str, holder: str = "run") -> None: ...

    def release(self, session_id: str) -> None: ...

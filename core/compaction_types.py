"""The vocabulary of compaction: errors, results, events, and what the run loop records.

Everything here is re-exported by :mod:`core.compaction`; import it from there.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal, Protocol, TypeAlias

from core.content import Turn, Usage
from core.errors import ParleyError
from core.providers.base import ChatRequest

Trigger: TypeAlias = Literal["manual", "auto", "cache-timer"]
NotCompacted: TypeAlias = Literal["nothing-to-compact", "no-session", "aborted"]
EventName: TypeAlias = Literal["compact:start", "compact:progress", "compact:end"]


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

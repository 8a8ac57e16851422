"""When automatic compaction of a chat waits after a refused or failed summary.

A summary model that writes no usable summary (``CompactNoSummaryError``:
no summary, cut off, far too short) usually does so again for the same
conversation, and asking costs minutes with a slow local model; a summary
request that failed (a provider error, a conversation too long to summarize)
costs as much to fail again. So after an automatic compaction of a session
was refused or failed (``parley.core.compaction.run``), automatic compaction
of that session (before a request, and after a context overflow) waits until
one of these is true:

* the history grew by at least :data:`GROWTH_SHARE` (10 %) of the model's
  context window, in the tokens the run counts before a request;
* :data:`GROWTH_MESSAGES` (2) more messages were written in it;
* the summary model setting (``compaction.model``) changed;
* a compaction of the session was asked for by hand (Compact now), or one
  (of any trigger) saved a summary.

While it waits the request goes out as it is, or with its oldest turns left off
the wire when it cannot fit (``parley.core.compaction.slide``). The record lives in memory
(one per session, for the life of the run loop): a restart tries again.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from parley.core.content import DocumentBlock, ImageBlock, TextBlock, Turn

if TYPE_CHECKING:
    from parley.core.compaction.types import CompactEvent

#: Share of the context window the history must grow by before trying again.
GROWTH_SHARE = 0.1
#: Messages the user must write before trying again.
GROWTH_MESSAGES = 2


def written_messages(turns: list[Turn]) -> int:
    """User turns someone wrote (text, image or document; tool results aside)."""
    return sum(
        1 for t in turns
        if t.role == "user"
        and any(isinstance(b, TextBlock | ImageBlock | DocumentBlock) for b in t.blocks)
    )


@dataclass(frozen=True)
class Refusal:
    """What a session looked like when its automatic compaction was refused.

    Attributes:
        tokens: the request's context tokens counted before it (0 when unknown).
        messages: :func:`written_messages` then.
        window: the model's context window (tokens).
        summary_model: the ``compaction.model`` setting then (None: the default).
    """

    tokens: int
    messages: int
    window: int
    summary_model: str | None


class Backoff:
    """Refused automatic compactions, by session (see the module docstring)."""

    def __init__(self) -> None:
        self._refused: dict[str, Refusal] = {}

    def refused(self, session_id: str, refusal: Refusal) -> None:
        """Record that ``session_id``'s automatic compaction was just refused."""
        self._refused[session_id] = refusal

    def clear(self, session_id: str) -> None:
        """Forget a refusal (Compact now was asked for; a summary was saved)."""
        self._refused.pop(session_id, None)

    def waiting(
        self, session_id: str, tokens: int, turns: list[Turn], summary_model: str | None
    ) -> bool:
        """True while automatic compaction of the session should not be tried.

        Args:
            session_id: the session.
            tokens: the context tokens of the request about to go (0 when unknown).
            turns: its stored turns now.
            summary_model: the ``compaction.model`` setting now.
        """
        last = self._refused.get(session_id)
        if last is None:
            return False
        grown = tokens - last.tokens >= GROWTH_SHARE * last.window if tokens and last.tokens \
            else False
        more = written_messages(turns) - last.messages >= GROWTH_MESSAGES
        if grown or more or summary_model != last.summary_model:
            del self._refused[session_id]
            return False
        return True

    def on_compact(self, event: CompactEvent) -> None:
        """At ``compact:end``: a manual compaction, or any saved summary, clears."""
        if event.name != "compact:end":
            return
        if event.trigger == "manual" or (event.result is not None and event.result.compacted):
            self.clear(event.session_id)

"""Older turns the model no longer sees: the last step when no summary can be made.

When automatic compaction cannot produce an acceptable summary (the summary model
refused the format, failed, or the turns cannot be summarized), a chat must still go
on: the request is sent with the oldest turns left off the wire — a sliding window
over the newest turns that fit the model's context window, older tool output stubbed
first. The store keeps every turn; only the wire is narrowed. This module owns the
record of that state, one per session, kept in the store's app state under
``unseen:<session_id>`` so the transcript can show it across a restart:

* written (or moved forward) by the run each time a request is narrowed;
* removed by the next compaction that saves a summary (the summary then stands for
  the older turns again), and when the whole chat fits once more.

The transcript shows one quiet card before :attr:`Unseen.first_seen_turn_id` saying
how many earlier turns the model no longer sees and why, with "Try compacting again".
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any, Literal

from parley.core.app_state import UNSEEN

if TYPE_CHECKING:
    from parley.core.store.async_store import AsyncStore


#: Why the model no longer sees older turns:
#: ``summary-refused`` — the summary model answered, but no answer was a usable summary;
#: ``summary-failed`` — the summary request failed (provider error, too long for it);
#: ``waiting`` — a summary was refused recently and automatic compaction waits
#: (``parley.core.compaction.backoff``) before asking again.
Reason = Literal["summary-refused", "summary-failed", "waiting"]


@dataclass(frozen=True)
class Unseen:
    """The turns left off the wire in a session's latest request.

    Attributes:
        session_id: the session.
        first_seen_turn_id: id of the oldest stored turn still sent to the model; the
            card stands just before it in the transcript.
        hidden_turns: how many stored turns before it (after the last summary, if
            any; aborted turns aside) the model no longer sees (>= 1).
        reason: why (:data:`Reason`).
        detail: one line naming the cause for a person ("Claude Haiku 4.5 did not
            answer with a summary"), models by their display names; "" when unknown.
        attempts: what was tried, one line each, for the Details dialog.
    """

    session_id: str
    first_seen_turn_id: str
    hidden_turns: int
    reason: Reason
    detail: str = ""
    attempts: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        """The JSON object stored in app state."""
        data = asdict(self)
        data["attempts"] = list(self.attempts)
        return data

    @classmethod
    def from_json(cls, data: Any) -> Unseen | None:
        """Read :meth:`to_json`'s object back; None for anything malformed."""
        if not isinstance(data, dict):
            return None
        try:
            hidden = int(data["hidden_turns"])
            first = str(data["first_seen_turn_id"])
            session = str(data["session_id"])
        except (KeyError, TypeError, ValueError):
            return None
        reason = data.get("reason")
        if reason not in ("summary-refused", "summary-failed", "waiting") or hidden < 1:
            return None
        attempts = data.get("attempts") or []
        return cls(
            session, first, hidden, reason, str(data.get("detail") or ""),
            tuple(str(a) for a in attempts if isinstance(a, str)),
        )


async def load_unseen(store: AsyncStore, session_id: str) -> Unseen | None:
    """The session's record, or None when the model sees every turn (or a summary).

    Raises:
        StoreError: the store could not be read.
    """
    return Unseen.from_json(await UNSEEN.get(store, session_id))


async def save_unseen(store: AsyncStore, session_id: str, unseen: Unseen | None) -> None:
    """Write the session's record (None removes it).

    Raises:
        StoreError: the store could not be written.
    """
    await UNSEEN.set(store, None if unseen is None else unseen.to_json(), session_id)

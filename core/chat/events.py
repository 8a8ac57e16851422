"""What a run tells its listeners (:class:`parley.core.chat.run.ChatRunner`), and its one refusal.

Events arrive in this order for one run: ``UserTurnSaving`` (a new message,
before it is written: a locked file may make that wait); ``RunStarted``; ``SessionTitled``
when the session had no title (named from its first message); ``ReplyUpdated``
while the reply streams (coalesced, see ``ChatRunner``), ``RetryWaiting``
before a failed request is sent again after a wait, ``ProviderProcessSilent`` (True,
then False) while a request waits on a provider process that does not answer,
compaction and tool events between; then exactly one of ``RunFinished``, ``RunFailed``
or ``RunCancelled``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from parley.core.compaction.compact import CompactEvent
from parley.core.compaction.unseen import Unseen
from parley.core.content import Turn
from parley.core.errors import ParleyError
from parley.core.tools.loop import (
    ToolResultsSaved,
    ToolRoundLimit,
    ToolStepFinished,
    ToolsUnavailable,
)


class RunInProgress(ParleyError):
    """A second run or a compaction was asked for while a run is working."""

    def __init__(self) -> None:
        super().__init__(
            "Parley is still answering in this session. Wait for the reply or press Esc "
            "to stop it, then try again."
        )


@dataclass(frozen=True, slots=True)
class UserTurnSaving:
    """A new message is being written (it is not in sessions.db yet): show it at once,
    as "saving…" if that takes a while (another program holds the file locked).
    ``RunStarted`` follows once it is saved; a failure raises from ``send``."""

    session_id: str
    turn: Turn


@dataclass(frozen=True, slots=True)
class RunStarted:
    """The run began: ``user_turn`` is saved (None for Retry / Resume); the reply
    will have the id ``reply_id``."""

    session_id: str
    user_turn: Turn | None
    reply_id: str


@dataclass(frozen=True, slots=True)
class RetryWaiting:
    """The request failed for a passing reason and is sent again after a wait.

    Attributes:
        session_id: the session.
        seconds: how long the wait is (the provider's ``retry-after`` for a 429).
        rate_limited: True for the provider's rate limit (HTTP 429); False for an
            overloaded or failing server or the network.
        message: the failure in words (the provider's error message).
        attempt: the number of the retry that follows (1 for the first).
        dropped: True when the connection dropped before any of the reply came (the
            stream broke off, or Parley's provider process stopped): told however
            short the wait (``parley.core.providers.retry.RetryWait.dropped``).

    Stopping the run (``ChatRunner.cancel``) ends the wait; the user's message
    stays saved.
    """

    session_id: str
    seconds: float
    rate_limited: bool
    message: str
    attempt: int = 1
    dropped: bool = False


@dataclass(frozen=True, slots=True)
class ProviderProcessSilent:
    """The run's request waits on Parley's provider process (its connection process),
    which has answered nothing — not even whether it runs — for a few seconds
    (``silent``; ``parley.core.providers.process.client.SILENT_AFTER_S``), or no longer
    keeps it waiting (not ``silent``: it answered, or the request ended). A process
    silent for ``HUNG_AFTER_S`` is restarted: the request then fails, or is sent again,
    as for any process that ended.

    Attributes:
        session_id: the session.
        silent: True when it stopped answering; False when that is over.
    """

    session_id: str
    silent: bool


@dataclass(frozen=True, slots=True)
class ReplyUpdated:
    """The reply so far (not yet saved as complete)."""

    session_id: str
    turn: Turn


@dataclass(frozen=True, slots=True)
class RunFinished:
    """A reply arrived complete and was saved — or, when ``saved`` is False, is kept
    in memory by the runner's ``SaveQueue`` until the store takes it ("not saved yet").

    Attributes:
        session_id: the session.
        turn: the reply (the last assistant step of a tool loop).
        first_reply: True when it is the session's first complete reply
            (earlier ones, if any, were cut off) and its title is only the
            first-line placeholder: the moment to title it
            (:func:`parley.core.chat.titles.first_reply_titles`).
        saved: the reply is in sessions.db (False: kept by ``parley.core.chat.save_queue``,
            written again in the background).
    """

    session_id: str
    turn: Turn
    first_reply: bool = False
    saved: bool = True


@dataclass(frozen=True, slots=True)
class RunFailed:
    """The run stopped on ``error``; ``partial`` is the reply so far, saved as aborted."""

    session_id: str
    error: ParleyError
    partial: Turn | None


@dataclass(frozen=True, slots=True)
class RunCancelled:
    """Stop: ``partial`` is the reply so far, saved as aborted (None if nothing came)."""

    session_id: str
    partial: Turn | None


@dataclass(frozen=True, slots=True)
class SessionTitled:
    """The session got an automatic ``title`` (saved)."""

    session_id: str
    title: str


@dataclass(frozen=True, slots=True)
class OlderTurnsUnseen:
    """The request about to be sent leaves the oldest turns off the wire because no
    summary could be made (``parley.core.compaction.unseen``); ``unseen`` is the new
    record, already saved — or None when the model sees the whole chat (or a summary)
    again and the record was removed."""

    session_id: str
    unseen: Unseen | None


RunEvent = (
    UserTurnSaving
    | RunStarted
    | RetryWaiting
    | ProviderProcessSilent
    | ReplyUpdated
    | RunFinished
    | RunFailed
    | RunCancelled
    | SessionTitled
    | OlderTurnsUnseen
    | CompactEvent
    | ToolStepFinished
    | ToolResultsSaved
    | ToolsUnavailable
    | ToolRoundLimit
)
Listener = Callable[[RunEvent], None]

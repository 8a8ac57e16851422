"""Ask several models: what :mod:`parley.core.chat.several` reports, and how many models.

The events a window follows while several models answer one message at once, and how
each answer ended; see :mod:`parley.core.chat.several` for the order they come in.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from parley.core.chat.events import RunEvent
from parley.core.content import Turn
from parley.core.errors import ParleyError

#: How many models one message can be asked of at once.
MIN_MODELS, MAX_MODELS = 2, 4


class ModelCountRefused(ParleyError):
    """Fewer than two or more than four different models were asked."""

    def __init__(self, count: int) -> None:
        super().__init__(
            f"Ask several models takes {MIN_MODELS} to {MAX_MODELS} different models; "
            f"{count} were chosen. Nothing was sent."
        )


@dataclass(frozen=True, slots=True)
class AnswersStarted:
    """The answers' rows are made (empty, beside the path); their streams begin.

    Attributes:
        session_id: the session.
        prompt_id: the turn they answer (the user's message, or a summary's copy
            carried below it).
        answers: ``(model_ref, turn_id)`` of each answer, in the order asked.
        set_aside: for :func:`answer_with`, the turns that left the path (the old
            reply, kept as a branch): the transcript drops them.
        refused: ``(model_ref, error)`` of models refused before anything was sent
            (their provider is not set up, a file they take no files of).
    """

    session_id: str
    prompt_id: str
    answers: tuple[tuple[str, str], ...]
    set_aside: tuple[str, ...] = ()
    refused: tuple[tuple[str, ParleyError], ...] = ()


@dataclass(frozen=True, slots=True)
class AnswerEvent:
    """One answer's run event.

    Attributes:
        session_id: the session.
        turn_id: the answer's turn id (its column).
        model_ref: the ``provider:model`` writing it.
        event: the run event (``session_id`` the same).
    """

    session_id: str
    turn_id: str
    model_ref: str
    event: RunEvent


@dataclass(frozen=True, slots=True)
class Answer:
    """How one model's answer ended.

    Attributes:
        model_ref: the ``provider:model`` asked.
        turn_id: its turn id ('' when it was refused before anything was made).
        turn: the answer saved complete; None when it failed or was stopped.
        error: why it failed (None: it did not fail).
        kept: an answer that failed or was stopped kept what arrived (an aborted
            reply); False: nothing arrived, and its row was removed.
    """

    model_ref: str
    turn_id: str
    turn: Turn | None = None
    error: ParleyError | None = None
    kept: bool = False


@dataclass(frozen=True, slots=True)
class AnswersFinished:
    """Every answer is done.

    Attributes:
        session_id: the session.
        answers: how each ended, in the order asked.
        shown: the answer the path now ends at (None: none was kept; the path ends
            at the prompt, which can be sent again).
    """

    session_id: str
    answers: tuple[Answer, ...]
    shown: str | None


SeveralEvent = AnswersStarted | AnswerEvent | AnswersFinished | RunEvent


def distinct_models(model_refs: Sequence[str]) -> list[str]:
    """``model_refs`` without repeats, in order.

    Raises:
        ModelCountRefused: fewer than :data:`MIN_MODELS` or more than :data:`MAX_MODELS`.
    """
    out = list(dict.fromkeys(model_refs))
    if not MIN_MODELS <= len(out) <= MAX_MODELS:
        raise ModelCountRefused(len(out))
    return out

"""Regenerate the last reply: a new answer replaces it, the old one is kept as a fork.

The *reply* is the tail of the session the model wrote in answer to the last
prompt: its assistant turns and the tool-result turns between them (a reply
with tool calls spans several turns). The *prompt* is the turn before it —
the user's message, or a compaction summary when one was written just before
the reply.

Order, so that a crash at any point loses nothing:

1. one transaction (``store.set_aside_reply``): a fork holding every turn of
   the session, the reply included, titled "<title> (previous answer)" and
   linked to the session (``parent_session_id``; ``forked_from_turn_id`` =
   the prompt, where the two answers part), and the reply's removal from the
   session. A crash before the commit leaves the session as it was; after
   it, the old reply is in the fork.
2. the request is sent again (``runner.retry``) with the model asked for: the
   new reply is saved, streamed and journalled like any other. If it fails,
   the session ends with the prompt and can be retried (the old answer is
   still in the fork).

The session is held for the whole operation (``runner.claim``), so no other
run or compaction can slip in between the two steps.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from core.content import ToolResultBlock, Turn
from core.errors import ParleyError
from core.run import RunEvent
from core.store.models import Session


class NothingToRegenerate(ParleyError):
    """The session holds no prompt to answer again."""

    def __init__(self) -> None:
        super().__init__(
            "There is no reply to regenerate in this session yet. Send a message first."
        )


@dataclass(frozen=True, slots=True)
class ReplySetAside:
    """The old reply moved to a fork; the new one is about to be requested.

    Attributes:
        session_id: the session being regenerated.
        fork: the new session holding the previous answer.
        removed_turn_ids: the ids of the turns removed from ``session_id``
            (the transcript drops them).
    """

    session_id: str
    fork: Session
    removed_turn_ids: tuple[str, ...]


RegenerateEvent = RunEvent | ReplySetAside


def _is_tool_results(turn: Turn) -> bool:
    return turn.role == "user" and bool(turn.blocks) and all(
        isinstance(b, ToolResultBlock) for b in turn.blocks
    )


def reply_start(turns: Sequence[Turn]) -> int | None:
    """Return the index of the first turn of the last reply, or None when there is none.

    Args:
        turns: a session's stored turns in order (``store.get_turns``).

    Returns:
        The index of the first of the trailing assistant / tool-result turns;
        None when the session ends with a prompt (no reply yet, or the last
        one failed before any output) or is empty.
    """
    i = len(turns)
    while i > 0 and (turns[i - 1].role == "assistant" or _is_tool_results(turns[i - 1])):
        i -= 1
    return None if i == len(turns) else i


async def regenerate(
    runner: Any,
    session_id: str,
    *,
    model_ref: str,
    on_event: Callable[[RegenerateEvent], None] | None = None,
    title: str | None = None,
) -> Turn | None:
    """Answer the last prompt again; the previous answer is kept as a fork.

    Args:
        runner: the :class:`core.run.ChatRunner` (its ``store`` is an ``AsyncStore``).
        session_id: the session.
        model_ref: ``provider:model`` for the new answer (it may differ from
            the one that wrote the old answer; the session's model is not changed).
        on_event: receives :class:`ReplySetAside` once the old reply is in its
            fork, then the run's events (``RunStarted`` … ``RunFinished``).
        title: the fork's title; default "<session title> (previous answer)".

    Returns:
        The new assistant turn, or None when the run failed or was stopped (a
        ``RunFailed`` / ``RunCancelled`` event says which; the old answer is
        in the fork either way).

    Raises:
        NothingToRegenerate: the session has no turn, or only a reply with no
            prompt before it.
        RunInProgress / CompactionInProgress: the session is busy; nothing changed.
        SessionNotFound: no such session.
    """
    emit = on_event or (lambda _e: None)
    runner.claim(session_id)
    try:
        stored = await runner.store.get_turns(session_id, hydrate=False)
        start = reply_start(stored)
        if not stored or start == 0:
            raise NothingToRegenerate()
        if start is not None:
            prompt = stored[start - 1]
            fork = await runner.store.set_aside_reply(session_id, prompt.id, title=title)
            emit(ReplySetAside(session_id, fork, tuple(t.id for t in stored[start:])))
    finally:
        runner.release(session_id)
    # retry claims the session again before its first await: nothing runs in between.
    result: Turn | None = await runner.retry(session_id, model_ref=model_ref, on_event=emit)
    return result

"""Regenerate the last reply: a new answer beside it, the old one kept as a branch.

The *reply* is the tail of the conversation the model wrote in answer to the
last prompt: its assistant turns and the tool-result turns between them (a
reply with tool calls spans several turns). The *prompt* is the turn before
it — the user's message, or a compaction summary when one was written just
before the reply.

Both are found in conversation order (:func:`parley.core.content.apply_compactions`:
a summary turn stands where its range began, the turns it replaced are left
out), not in stored order: a summary turn is stored *after* the turns a
compaction kept, so right after "Compact now" the last stored turn is the
summary, while the conversation still ends with the kept reply.

Order, so that a crash at any point loses nothing:

0. what can be known before anything changes is checked (``preflight``): the
   model's provider is set up and usable, and the files of the turns the new
   request will carry (``parley.core.attachments.limits.check_turns``) are within its
   limits — a PDF for an OpenAI-compatible server is refused here. A refusal
   raises :class:`RegenerateRefused`: nothing was moved, nothing sent.
1. one write (``store.branch_before`` the reply's first turn): the path shown
   now ends at the prompt; the old reply, and whatever the path held after it
   (a summary written after it by "Compact now" too: it was made below the old
   reply, in its branch), stay stored as a branch, shown as ‹ n/m › beside the
   new answer (``parley.core.branches``). No session is made; the one turn copied
   is such a summary when its range lies wholly before the reply: it still
   applies, so the new branch starts with a copy of it and the new request goes
   out compacted (``parley.core.store.summary_carry``).
2. the request is sent again (``runner.retry``) with the model asked for: the
   new reply is saved below the prompt (a sibling of the old one; its ``model``
   says which model wrote it), streamed and journalled like any other. If it
   fails before anything was saved, the path ends at the prompt, which can be
   retried; the old answer is one click away (‹ › on the prompt).

The session is held for the whole operation (``runner.claim``), so no other
run or compaction can slip in between the two steps.

Retry after a reply that ended incomplete (stopped with Esc, cut off by a failure or
by Parley's end: ``aborted``) does the same with that reply alone
(:func:`retry_incomplete`): the incomplete turns ending the conversation are set
aside as a branch and the new answer is their sibling, so ‹ 1/2 › shows the cut reply
and ‹ 2/2 › the new one, as after Regenerate. The completed steps before it (tool
rounds) stay: only what was cut is asked again. (``ChatRunner.retry`` alone leaves
the incomplete reply on the path, above the new one, with no way to tell them apart
as versions.)
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from parley.core.attachments.limits import AT_SEND, check_turns, limits_for
from parley.core.chat.run import RunEvent
from parley.core.content import ToolResultBlock, Turn, apply_compactions
from parley.core.errors import ParleyError
from parley.core.wire import to_messages

if TYPE_CHECKING:
    from parley.core.chat.run import ChatRunner

#: How a refusal ends: what it means for the session.
UNCHANGED = "Nothing was sent, and the answer is unchanged."


class NothingToRegenerate(ParleyError):
    """The session holds no prompt to answer again."""

    def __init__(self) -> None:
        super().__init__(
            "There is no reply to regenerate in this session yet. Send a message first."
        )


class RegenerateRefused(ParleyError):
    """The new answer cannot be asked of that model; the session was left as it was.

    Attributes:
        model_ref: the ``provider:model`` asked for.
        cause: why (``UnknownProvider``, ``InvalidModelRef``, ``ProviderConfigError``,
            ``MediaNotAccepted``, ``AttachmentTooLarge`` …).
    """

    def __init__(self, model_ref: str, cause: ParleyError) -> None:
        reason = cause.message.removesuffix(AT_SEND).rstrip()
        super().__init__(f"{reason} {UNCHANGED}")
        self.model_ref = model_ref
        self.cause = cause


@dataclass(frozen=True, slots=True)
class ReplySetAside:
    """The old reply left the path shown (kept as a branch); the new one is about to be
    requested.

    Attributes:
        session_id: the session being regenerated.
        removed_turn_ids: the turns that left the path shown, in path order (the
            reply's, and any stored after it); the transcript drops them. They stay
            stored, as a branch.
        carried: the id of the copy of a summary the new branch starts with (it
            still applies there: ``Store.branch_before``), or None.
    """

    session_id: str
    removed_turn_ids: tuple[str, ...]
    carried: str | None = None


RegenerateEvent = RunEvent | ReplySetAside


def _is_tool_results(turn: Turn) -> bool:
    return turn.role == "user" and bool(turn.blocks) and all(
        isinstance(b, ToolResultBlock) for b in turn.blocks
    )


def reply_start(turns: Sequence[Turn]) -> int | None:
    """Return the index of the first turn of the last reply, or None when there is none.

    Args:
        turns: a session's turns in conversation order (``apply_compactions`` of
            ``store.get_turns``; a session without compactions: as stored).

    Returns:
        The index of the first of the trailing assistant / tool-result turns;
        None when the session ends with a prompt (no reply yet, or the last
        one failed before any output) or is empty.
    """
    i = len(turns)
    while i > 0 and (turns[i - 1].role == "assistant" or _is_tool_results(turns[i - 1])):
        i -= 1
    return None if i == len(turns) else i


def incomplete_start(turns: Sequence[Turn]) -> int | None:
    """Return the index of the first of the incomplete replies ending the conversation.

    Args:
        turns: a session's turns in conversation order (as for :func:`reply_start`).

    Returns:
        The index of the first of the trailing ``aborted`` assistant turns (stopped,
        cut off), None when the conversation does not end with one (or it is still
        being written on another computer: ``Turn.writing_elsewhere``).
    """
    i = len(turns)
    while i > 0 and turns[i - 1].role == "assistant" and turns[i - 1].aborted \
            and not turns[i - 1].writing_elsewhere:
        i -= 1
    return None if i == len(turns) else i


async def preflight(runner: ChatRunner, model_ref: str, prompt_turns: Sequence[Turn]) -> None:
    """Check what can be checked before the old reply is moved.

    Args:
        runner: the :class:`parley.core.chat.run.ChatRunner` (its ``hub`` resolves ``model_ref``).
        model_ref: ``provider:model`` for the new answer.
        prompt_turns: the stored turns the new request is built from (hydrated:
            files carry their bytes), i.e. the session without its last reply.

    Raises:
        RegenerateRefused: the model reference is malformed, its provider is not
            set up or not usable, or a file of ``prompt_turns`` is one that
            provider takes no files of / is over its limits (the same check a run
            makes before sending, ``parley.core.chat.run``).
    """
    try:
        provider, _model_id = runner.hub.resolve(model_ref)
        sent = to_messages(prompt_turns, provider.caps)
        limits = limits_for(provider.caps.kind)
        await asyncio.to_thread(check_turns, sent, limits)  # may decode images: off the loop
    except ParleyError as exc:
        raise RegenerateRefused(model_ref, exc) from exc


async def regenerate(
    runner: ChatRunner,
    session_id: str,
    *,
    model_ref: str,
    on_event: Callable[[RegenerateEvent], None] | None = None,
) -> Turn | None:
    """Answer the last prompt again; the previous answer is kept as a branch.

    Args:
        runner: the :class:`parley.core.chat.run.ChatRunner` (its ``store`` is an ``AsyncStore``).
        session_id: the session.
        model_ref: ``provider:model`` for the new answer (it may differ from
            the one that wrote the old answer; the session's model is not changed).
        on_event: receives :class:`ReplySetAside` once the old reply has left the
            path shown, then the run's events (``RunStarted`` … ``RunFinished``).

    Returns:
        The new assistant turn, or None when the run failed or was stopped (a
        ``RunFailed`` / ``RunCancelled`` event says which; the old answer is
        kept as a branch either way).

    Raises:
        NothingToRegenerate: the session has no turn, or only a reply with no
            prompt before it.
        RegenerateRefused: ``model_ref`` cannot answer (see :func:`preflight`);
            nothing changed.
        RunInProgress / CompactionInProgress: the session is busy; nothing changed.
        SessionNotFound: no such session.
    """
    async def old_answer(stored: Sequence[Turn], live: Sequence[Turn]) -> str | None:
        start = reply_start(live)
        if not live or start == 0:
            raise NothingToRegenerate()
        reply = {t.id for t in live[start:]} if start is not None else set()
        await preflight(runner, model_ref, [t for t in stored if t.id not in reply])
        return None if start is None else live[start].id

    return await _set_aside_then_retry(runner, session_id, model_ref, on_event, old_answer)


async def retry_incomplete(
    runner: ChatRunner,
    session_id: str,
    *,
    model_ref: str,
    on_event: Callable[[RegenerateEvent], None] | None = None,
) -> Turn | None:
    """Retry: send the session's history again; a reply that ended incomplete (stopped,
    cut off: :func:`incomplete_start`) is set aside first as a branch, so the new answer
    is its sibling (‹ n/m ›, see the module doc). Without one (the last message has no
    reply: it failed before any came, or an edit) it is ``ChatRunner.retry`` alone.

    Args:
        runner: the :class:`parley.core.chat.run.ChatRunner`.
        session_id: the session.
        model_ref: ``provider:model`` asked.
        on_event: receives :class:`ReplySetAside` once the incomplete reply has left the
            path shown, then the run's events.

    Returns:
        The new assistant turn, or None when the run failed or was stopped (the
        incomplete reply stays a branch either way: ‹ under the prompt).

    Raises:
        RunInProgress / CompactionInProgress: the session is busy; nothing changed.
        SavesPending: an earlier reply is not saved yet; nothing changed.
        SessionNotFound: no such session.
    """
    async def incomplete(_stored: Sequence[Turn], live: Sequence[Turn]) -> str | None:
        start = incomplete_start(live)
        return live[start].id if start is not None and start > 0 else None

    return await _set_aside_then_retry(runner, session_id, model_ref, on_event, incomplete)


async def _set_aside_then_retry(
    runner: ChatRunner,
    session_id: str,
    model_ref: str,
    on_event: Callable[[RegenerateEvent], None] | None,
    first_aside: Callable[[Sequence[Turn], Sequence[Turn]], Awaitable[str | None]],
) -> Turn | None:
    """Hold the session, set aside the turns from ``first_aside``'s answer on (given the
    stored turns and the conversation: None sets nothing aside; what it raises leaves
    everything as it was), then send again (``ChatRunner.retry``)."""
    emit = on_event or (lambda _e: None)
    runner.saves.check()  # an earlier reply not saved yet: nothing is changed
    runner.claim(session_id)
    try:
        # Not the turns the latest summary replaced: the same model view, read in
        # proportion to what is sent (parley.core.context.since_summary).
        stored = await runner.store.context_turns(session_id)
        live = apply_compactions(stored)  # conversation order (see the module doc)
        first = await first_aside(stored, live)
        if first is not None:
            await _set_aside(runner, session_id, stored, first, emit)
    finally:
        runner.release(session_id)
    # retry claims the session again before its first await: nothing runs in between.
    result: Turn | None = await runner.retry(session_id, model_ref=model_ref, on_event=emit)
    return result


async def _set_aside(runner: ChatRunner, session_id: str, stored: Sequence[Turn],
                     first_id: str, emit: Callable[[RegenerateEvent], None]) -> None:
    """Cut the path back to end before ``first_id`` (``store.branch_before``: the turns
    from it on stay stored, a branch) and say so (:class:`ReplySetAside`)."""
    first = next(i for i, t in enumerate(stored) if t.id == first_id)
    copy = await runner.store.branch_before(session_id, first_id)
    emit(ReplySetAside(session_id, tuple(t.id for t in stored[first:]),
                       None if copy is None else copy.id))

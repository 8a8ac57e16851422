"""Ask several models: one message answered by 2–4 models at once, the answers siblings.

From the composer (:func:`ask_several`: the message is saved first, as a send saves it)
or on a reply (:func:`answer_with`: the reply is set aside as a branch, as Regenerate
does, and the models answer its prompt), each chosen model streams its own reply at
the same time. Every reply is a child of the prompt in the conversation tree
(``Store.add_answers``: made beside the path, so replies written together never link
below one another), journalled and saved like a single run's (same ``RequestStream``:
each request is built by its model's provider adapter with the same cache rules).

A model that fails (an error, a refusal, the network) ends only its own answer: what
it streamed is kept as an aborted reply, an answer with nothing is removed, and the
others go on. Stop (``ChatRunner.cancel``) stops them all, each keeping what arrived.
When all are done the first complete answer, in the order the models were given, is
shown (``Store.show_branch``); the others are its siblings, ‹ n/m ›, each with its
model's name. Choosing another (:func:`choose`) continues the chat from it.

Answers use no tools (their rounds would save turns on the path) and do not compact
automatically (one summary for several requests at once): the chat's next message does.

Events (``on_event``): :class:`AnswersStarted` once the rows are made, each answer's
run events wrapped in :class:`AnswerEvent` (``RunStarted``, ``ReplyUpdated``,
``RetryWaiting``, then ``RunFinished`` / ``RunFailed`` / ``RunCancelled``),
``SessionTitled`` / ``UserTurnSaving`` as a run sends them, and :class:`AnswersFinished`.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Literal

from parley.core.chat.events import (
    Listener,
    RunFinished,
    RunStarted,
    SessionTitled,
    UserTurnSaving,
)
from parley.core.chat.regenerate import (
    NothingToRegenerate,
    RegenerateRefused,
    preflight,
    reply_start,
)
from parley.core.chat.reply import ReplyBuilder
from parley.core.chat.several_events import (
    MAX_MODELS,
    MIN_MODELS,
    Answer,
    AnswerEvent,
    AnswersFinished,
    AnswersStarted,
    ModelCountRefused,
    SeveralEvent,
    distinct_models,
)
from parley.core.chat.steps import RunContext, RunProgress
from parley.core.compaction.run import RunState
from parley.core.content import Block, Turn, apply_compactions, new_id
from parley.core.errors import ParleyError
from parley.core.events import RequestEnded, RequestStarted

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from parley.core.chat.run import ChatRunner

__all__ = [  # the records are defined in parley.core.chat.several_events; part of this API
    "MAX_MODELS", "MIN_MODELS", "Answer", "AnswerEvent", "AnswersFinished", "AnswersStarted",
    "ModelCountRefused", "SeveralEvent", "answer_with", "ask_several", "choose",
    "distinct_models",
]


async def ask_several(
    runner: ChatRunner,
    session_id: str,
    blocks: list[Block],
    *,
    model_refs: Sequence[str],
    on_event: Callable[[SeveralEvent], None] | None = None,
    turn_id: str | None = None,
) -> list[Answer]:
    """Save a user message, then have every model of ``model_refs`` answer it at once.

    Args:
        runner: the chat runner (its ``store`` and ``hub``).
        session_id: the session to continue.
        blocks: the message's content blocks.
        model_refs: 2–4 ``provider:model`` references (repeats dropped).
        on_event: receives the events listed in the module doc.
        turn_id: the user turn's id (default: a new one).

    Returns:
        Each model's :class:`Answer`, in the order given.

    Raises:
        ModelCountRefused: not 2–4 different models; nothing saved.
        RegenerateRefused: no model can be asked (the first one's reason); nothing saved.
        RunInProgress / CompactionInProgress / SavesPending: the session is busy or an
            earlier reply is not saved yet; nothing saved.
        MessageTooLong: the message does not fit the first model's window; nothing saved.
        SessionNotFound, StoreError: as for ``ChatRunner.send``.
    """
    models = distinct_models(model_refs)
    emit = on_event or (lambda _e: None)
    runner.saves.check()
    runner.claim(session_id)
    try:
        session = await runner.store.get_session(session_id)
        runner.check_message(blocks, model_ref=models[0], system=session.system_prompt)
        user_turn = Turn("user", list(blocks), id=turn_id or new_id())
        emit(UserTurnSaving(session_id, user_turn))
        await runner.store.append_turn(session_id, user_turn)
        return await _answer_all(runner, session_id, models, emit, user_turn=user_turn)
    finally:
        runner.release(session_id)


async def answer_with(
    runner: ChatRunner,
    session_id: str,
    *,
    model_refs: Sequence[str],
    on_event: Callable[[SeveralEvent], None] | None = None,
) -> list[Answer]:
    """Answer the chat's last message again with several models at once ("Answer with…").

    The last reply (if any) leaves the path and stays stored as a branch
    (``Store.branch_before``, as ``parley.core.chat.regenerate`` does); the new answers
    are its siblings.

    Returns:
        Each model's :class:`Answer`, in the order given.

    Raises:
        ModelCountRefused: not 2–4 different models; nothing changed.
        NothingToRegenerate: the chat has no message to answer.
        RegenerateRefused: no model can be asked; nothing changed.
        RunInProgress / CompactionInProgress / SavesPending: as for :func:`ask_several`.
    """
    models = distinct_models(model_refs)
    emit = on_event or (lambda _e: None)
    runner.saves.check()
    runner.claim(session_id)
    try:
        stored = await runner.store.context_turns(session_id)
        live = apply_compactions(stored)
        start = reply_start(live)
        if not live or start == 0:
            raise NothingToRegenerate()
        reply = tuple(t.id for t in live[start:]) if start is not None else ()
        gone: tuple[str, ...] = ()
        if reply:
            await _refuse_all(runner, models, [t for t in stored if t.id not in set(reply)])
            first = next(i for i, t in enumerate(stored) if t.id == reply[0])
            gone = tuple(t.id for t in stored[first:])
            await runner.store.branch_before(session_id, reply[0])
        return await _answer_all(runner, session_id, models, emit, set_aside=gone)
    finally:
        runner.release(session_id)


async def choose(runner: ChatRunner, session_id: str, turn_id: str) -> str:
    """Continue the chat from the answer ``turn_id``: the path ends at it (the next message
    is saved below it). Returns the path's leaf id (``Store.show_branch``).

    Raises:
        SessionNotFound, TurnNotInSession: as for ``Store.show_branch``.
    """
    leaf: str = await runner.store.show_branch(session_id, turn_id)
    return leaf


async def _refuse_all(runner: ChatRunner, models: Sequence[str], turns: list[Turn]) -> None:
    """Raise the first model's refusal when no model of ``models`` can be asked."""
    refusals = await _preflight(runner, models, turns)
    if len(refusals) == len(models):
        raise refusals[models[0]]


async def _preflight(runner: ChatRunner, models: Sequence[str], turns: list[Turn]
                     ) -> dict[str, RegenerateRefused]:
    """{model: why it cannot be asked} for the models of ``models`` that cannot."""
    out: dict[str, RegenerateRefused] = {}
    for ref in models:
        try:
            await preflight(runner, ref, turns)
        except RegenerateRefused as exc:
            out[ref] = exc
    return out


@dataclass
class _Stream:
    """One model's answer under way."""

    model_ref: str
    progress: RunProgress
    task: asyncio.Task[None] | None = None
    turn_id: str = ""  # the answer's id (the builder is replaced once it is saved)

    def __post_init__(self) -> None:
        self.turn_id = self.turn_id or self.progress.builder.turn_id


async def _answer_all(
    runner: ChatRunner,
    session_id: str,
    models: list[str],
    emit: Callable[[SeveralEvent], None],
    *,
    user_turn: Turn | None = None,
    set_aside: tuple[str, ...] = (),
) -> list[Answer]:
    """Stream every model's answer below the path's leaf at once (the caller holds the
    session), then show the first complete one."""
    store, steps = runner.store, runner.steps
    turns, stored_count = await store.context_turns_counted(session_id)
    refused = await _preflight(runner, models, turns)
    if len(refused) == len(models):
        raise refused[models[0]]
    prompt_id = turns[-1].id
    streams = [_Stream(m, RunProgress(ReplyBuilder(model=m))) for m in models if m not in refused]
    await store.add_answers(session_id, prompt_id, [
        replace(s.progress.builder.turn(aborted=True), cut_off=True) for s in streams])
    emit(AnswersStarted(session_id, prompt_id, tuple((s.model_ref, s.turn_id) for s in streams),
                        set_aside, tuple((m, e) for m, e in refused.items())))
    ctx = await steps.context(session_id, None)
    first = await steps.first_title(session_id, turns, emit, ctx.session)
    runner.events.emit(RequestStarted(session_id, streams[0].model_ref))
    for s in streams:
        s.task = asyncio.ensure_future(_stream(runner, ctx, s, turns, _wrap(emit, s)))
    group = asyncio.ensure_future(_all([s.task for s in streams if s.task is not None]))
    runner.track(session_id, group)
    try:
        try:
            await group
        except asyncio.CancelledError:
            if not group.cancelled():
                raise
            await asyncio.wait([s.task for s in streams if s.task is not None])
        answers = [await _outcome(runner, session_id, s, _wrap(emit, s)) for s in streams]
    finally:
        runner.track(session_id, None)
    shown = await _show(runner, session_id, answers)
    for a in answers:
        if a.turn is not None:
            done = RunFinished(session_id, a.turn, first_reply=first and a.turn_id == shown,
                               saved=not runner.saves.holds(a.turn_id))
            emit(AnswerEvent(session_id, a.turn_id, a.model_ref, done))
    added = (1 if user_turn else 0) + sum(a.turn is not None or a.kept for a in answers)
    first_seq = max(0, stored_count - (1 if user_turn else 0))
    status: Literal["ok", "error"] = "ok" if shown is not None else "error"
    runner.events.emit(RequestEnded(session_id, status, (first_seq, first_seq + added)))
    everything = [*answers, *(Answer(m, "", error=e) for m, e in refused.items())]
    order = {m: i for i, m in enumerate(models)}
    everything.sort(key=lambda a: order[a.model_ref])
    emit(AnswersFinished(session_id, tuple(everything), shown))
    return everything


def _wrap(emit: Callable[[SeveralEvent], None], s: _Stream) -> Listener:
    """A run listener that wraps each event of ``s`` in an :class:`AnswerEvent`; a title
    passes as it is."""
    def listener(event: object) -> None:
        if isinstance(event, SessionTitled):
            emit(event)
        else:
            sid = str(getattr(event, "session_id", ""))
            emit(AnswerEvent(sid, s.turn_id, s.model_ref, event))  # type: ignore[arg-type]
    return listener


async def _all(tasks: list[asyncio.Task[None]]) -> None:
    """Wait for every task; one's failure does not stop the others (read by ``_outcome``)."""
    await asyncio.gather(*tasks, return_exceptions=True)


async def _stream(runner: ChatRunner, ctx: RunContext, s: _Stream, turns: list[Turn],
                  emit: Listener) -> None:
    """Stream one model's answer (no tools, no automatic compaction: the module doc)."""
    emit(RunStarted(ctx.session.id, None, s.turn_id))
    state = RunState(settings=replace(ctx.compaction, auto=False), overflow_compacted=True)
    await runner.steps.answer_only(ctx, s.model_ref, turns, s.progress, emit, state)


async def _outcome(runner: ChatRunner, session_id: str, s: _Stream, emit: Listener) -> Answer:
    """Save how ``s`` ended: complete (``RunSteps.finish``), or what arrived before it
    failed or was stopped (``RunSteps.keep_partial``), or nothing (its row removed)."""
    task = s.task
    assert task is not None and task.done()
    builder = s.progress.builder
    error: ParleyError | None = None
    if not task.cancelled():
        exc = task.exception()
        if exc is None:
            turn = await runner.steps.finish(session_id, s.model_ref, s.progress)
            return Answer(s.model_ref, s.turn_id, turn)
        if not isinstance(exc, ParleyError):
            raise exc
        error = exc
    kept = builder.has_content
    await runner.steps.keep_partial(session_id, builder, emit, error)
    if not kept:
        await runner.store.delete_turns(session_id, [s.turn_id])
    return Answer(s.model_ref, s.turn_id, None, error, kept)


async def _show(runner: ChatRunner, session_id: str, answers: list[Answer]) -> str | None:
    """Show the first complete answer (else the first kept one); None when none is kept."""
    pick = next((a for a in answers if a.turn is not None), None)
    pick = pick or next((a for a in answers if a.kept), None)
    if pick is None:
        return None
    await runner.store.show_branch(session_id, pick.turn_id)
    return pick.turn_id

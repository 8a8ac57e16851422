"""Ask several models: one message answered by 2–4 models at once, the answers siblings in
the chat's tree, one failing without stopping the others, one chosen to continue from.

Every test runs on a sessions.db file and on a PostgreSQL database (``env`` below), with
the real SDKs against the fake provider server.
"""

from __future__ import annotations

import asyncio

import pytest

from parley.core.chat.run import ReplyUpdated, RunFailed, RunFinished
from parley.core.chat.several import (
    AnswerEvent,
    AnswersFinished,
    AnswersStarted,
    ModelCountRefused,
    answer_with,
    ask_several,
    choose,
)
from parley.core.content import TextBlock
from tests.core.hubs import fake_workspace
from tests.fakes.validation import validate_anthropic, validate_openai

SONNET = "anthropic:claude-sonnet-4-6"
OPUS = "anthropic:claude-opus-4-6"
GPT = "openai:gpt-5"


@pytest.fixture
async def env(tmp_path, fake_provider, any_target):
    ws = await fake_workspace(tmp_path, fake_provider, at=any_target)  # a file, then PostgreSQL
    session = await ws.store.create_session(title="Trip")
    yield ws.store, ws.runner, session.id
    await ws.close()


def script_three(fake_provider, delay_ms: float = 0.0) -> None:
    fake_provider.script("Sonnet says Lisbon.", model="claude-sonnet-4-6", token_delay_ms=delay_ms)
    fake_provider.script("Opus says Porto.", model="claude-opus-4-6", token_delay_ms=delay_ms)
    fake_provider.script("GPT says Faro.", model="gpt-5", token_delay_ms=delay_ms)


async def test_three_models_answer_one_message_as_siblings(env, fake_provider):
    store, runner, sid = env
    script_three(fake_provider, delay_ms=5)
    events: list = []

    answers = await ask_several(runner, sid, [TextBlock("Where to?")],
                                model_refs=[SONNET, OPUS, GPT], on_event=events.append)

    assert [(a.model_ref, a.turn and a.turn.text()) for a in answers] == [
        (SONNET, "Sonnet says Lisbon."), (OPUS, "Opus says Porto."), (GPT, "GPT says Faro.")]
    tree = await store.get_tree(sid)
    prompt = tree[0].turn
    assert prompt.text() == "Where to?"
    kids = [t for t in tree if t.parent_id == prompt.id]
    assert [(t.turn.model, t.turn.text(), t.turn.aborted) for t in kids] == [
        (SONNET, "Sonnet says Lisbon.", False), (OPUS, "Opus says Porto.", False),
        (GPT, "GPT says Faro.", False)]
    # The first model's answer is shown; the others are its siblings, ‹ 1/3 ›.
    path = await store.get_turns(sid)
    assert [t.id for t in path] == [prompt.id, answers[0].turn_id]
    point = (await store.branches(sid)).points[answers[0].turn_id]
    assert (point.index, point.total) == (1, 3)
    assert point.turn_ids == tuple(a.turn_id for a in answers)
    # Each answer has its usage and cost, as a single reply has.
    assert all(t.turn.usage is not None and t.turn.usage.output_tokens > 0 for t in kids)

    started = [e for e in events if isinstance(e, AnswersStarted)]
    assert len(started) == 1 and started[0].prompt_id == prompt.id
    updated = {e.turn_id for e in events
               if isinstance(e, AnswerEvent) and isinstance(e.event, ReplyUpdated)}
    assert updated == {a.turn_id for a in answers}  # every column streamed
    assert isinstance(events[-1], AnswersFinished) and events[-1].shown == answers[0].turn_id

    # Each model got its own request, built by its own adapter (Anthropic's with
    # cache_control), each holding only the one message.
    reqs = fake_provider.model_requests
    by_model = {r.body["model"]: r for r in reqs}
    assert set(by_model) == {"claude-sonnet-4-6", "claude-opus-4-6", "gpt-5"}
    for name in ("claude-sonnet-4-6", "claude-opus-4-6"):
        body = by_model[name].body
        assert validate_anthropic(body) is None
        assert "cache_control" in str(body)
        assert [m["role"] for m in body["messages"]] == ["user"]
    assert validate_openai(by_model["gpt-5"].body) is None


async def test_the_three_stream_at_the_same_time(env, fake_provider):
    store, runner, sid = env
    for name in ("claude-sonnet-4-6", "claude-opus-4-6", "gpt-5"):  # 25 chunks, 20 ms apart
        fake_provider.script(f"{name} " + "word " * 40, model=name, token_delay_ms=20)
    order: list[str] = []

    def seen(e):
        if isinstance(e, AnswerEvent) and isinstance(e.event, ReplyUpdated):
            order.append(e.model_ref)

    await ask_several(runner, sid, [TextBlock("Go")], model_refs=[SONNET, OPUS, GPT],
                      on_event=seen)
    # Updates of one model come between another's: they were streaming together.
    firsts = [order.index(m) for m in (SONNET, OPUS, GPT)]
    lasts = [len(order) - 1 - order[::-1].index(m) for m in (SONNET, OPUS, GPT)]
    assert max(firsts) < min(lasts)


async def test_one_model_failing_leaves_the_other_two(env, fake_provider):
    store, runner, sid = env
    fake_provider.script("Sonnet says Lisbon.", model="claude-sonnet-4-6")
    fake_provider.fail("bad_request", model="claude-opus-4-6", message="model is not available")
    fake_provider.script("GPT says Faro.", model="gpt-5")
    events: list = []

    answers = await ask_several(runner, sid, [TextBlock("Where to?")],
                                model_refs=[SONNET, OPUS, GPT], on_event=events.append)

    assert [a.turn is not None for a in answers] == [True, False, True]
    assert answers[1].error is not None and not answers[1].kept
    assert "not available" in answers[1].error.message
    failed = [e for e in events if isinstance(e, AnswerEvent) and isinstance(e.event, RunFailed)]
    assert [e.model_ref for e in failed] == [OPUS]
    tree = await store.get_tree(sid)
    assert [t.turn.text() for t in tree[1:]] == ["Sonnet says Lisbon.", "GPT says Faro."]
    assert (await store.branches(sid)).points[answers[0].turn_id].total == 2


async def test_a_failure_mid_way_keeps_what_arrived(env, fake_provider):
    store, runner, sid = env
    fake_provider.fail("mid_stream_error", model="claude-sonnet-4-6",
                       reply="Half of an answer that", after_chars=12)
    fake_provider.script("Opus says Porto.", model="claude-opus-4-6")

    answers = await ask_several(runner, sid, [TextBlock("Hm")], model_refs=[SONNET, OPUS])

    assert answers[0].kept and answers[0].turn is None
    kept = await store.get_turn(answers[0].turn_id)
    assert kept.aborted and kept.text().startswith("Half of")
    # The complete answer is the one shown, though its model was asked second.
    assert (await store.get_turns(sid))[-1].id == answers[1].turn_id


async def test_choosing_an_answer_continues_from_it(env, fake_provider):
    store, runner, sid = env
    script_three(fake_provider)
    answers = await ask_several(runner, sid, [TextBlock("Where to?")],
                                model_refs=[SONNET, OPUS, GPT])

    await choose(runner, sid, answers[2].turn_id)
    fake_provider.script("Faro it is.")
    await runner.send(sid, [TextBlock("Tell me more")], model_ref=GPT)

    tree = {t.turn.id: t for t in await store.get_tree(sid)}
    path = await store.get_turns(sid)
    assert [t.text() for t in path] == ["Where to?", "GPT says Faro.", "Tell me more",
                                        "Faro it is."]
    assert tree[path[2].id].parent_id == answers[2].turn_id
    # The model was sent the chosen answer, not the others.
    sent = str(fake_provider.model_requests[-1].body["messages"])
    assert "GPT says Faro." in sent and "Lisbon" not in sent and "Porto" not in sent


async def test_answer_with_sets_the_reply_aside_as_a_sibling(env, fake_provider):
    store, runner, sid = env
    fake_provider.script("First answer.")
    await runner.send(sid, [TextBlock("Where to?")], model_ref=SONNET)
    prompt, old = await store.get_turns(sid)
    fake_provider.script("Opus says Porto.", model="claude-opus-4-6")
    fake_provider.script("GPT says Faro.", model="gpt-5")
    events: list = []

    answers = await answer_with(runner, sid, model_refs=[OPUS, GPT], on_event=events.append)

    started = next(e for e in events if isinstance(e, AnswersStarted))
    assert started.set_aside == (old.id,) and started.prompt_id == prompt.id
    kids = [t.turn.text() for t in await store.get_tree(sid) if t.parent_id == prompt.id]
    assert kids == ["First answer.", "Opus says Porto.", "GPT says Faro."]
    assert [t.id for t in await store.get_turns(sid)] == [prompt.id, answers[0].turn_id]
    assert sum(isinstance(e, AnswerEvent) and isinstance(e.event, RunFinished)
               for e in events) == 2


async def test_stop_stops_every_answer_keeping_what_arrived(env, fake_provider):
    store, runner, sid = env
    for name in ("claude-sonnet-4-6", "gpt-5"):
        fake_provider.script("word " * 400, model=name, token_delay_ms=20)
    arrived: set[str] = set()

    def seen(e):
        if isinstance(e, AnswerEvent) and isinstance(e.event, ReplyUpdated):
            arrived.add(e.model_ref)

    job = asyncio.ensure_future(ask_several(runner, sid, [TextBlock("Long")],
                                            model_refs=[SONNET, GPT], on_event=seen))
    for _ in range(500):
        if arrived == {SONNET, GPT}:
            break
        await asyncio.sleep(0.02)
    assert runner.cancel(sid)
    answers = await job
    assert all(a.turn is None and a.kept and a.error is None for a in answers)
    kept = [await store.get_turn(a.turn_id) for a in answers]
    assert all(t.aborted and t.text().startswith("word") for t in kept)
    assert not runner.is_running(sid)


@pytest.mark.parametrize("models", [[SONNET], [SONNET, SONNET], [SONNET, OPUS, GPT, SONNET,
                                                                   "openai:gpt-5-mini",
                                                                   "anthropic:claude-haiku-4-5"]])
async def test_two_to_four_models(env, models):
    store, runner, sid = env
    with pytest.raises(ModelCountRefused):
        await ask_several(runner, sid, [TextBlock("Hi")], model_refs=models)
    assert await store.get_turns(sid) == []

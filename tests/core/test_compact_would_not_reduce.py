"""Compact now that would not make the context smaller changes nothing and says so.

The issue's case: "Compact now" on a short chat made the context larger (1.5k → 1.6k
tokens) and said so as if it had helped. Now the result is ``compacted=False`` with
``reason="would-not-reduce"`` and nothing is saved: decided before asking when it is
certain (what the summary would replace is no more than the shortest summary accepted
plus the files restored after it), else once the summary is in. Real sessions.db, real
SDKs over HTTP to the fake provider.
"""

from __future__ import annotations

import base64

from parley.core.compaction.plan import cannot_reduce, plan_compaction
from parley.core.content import ImageBlock, TextBlock, Turn
from tests.core.compaction_support import LONG, SONNET, TAGGED

#: A PNG header of 1000 × 1000 pixels (about 1,300 tokens by the estimate).
BIG_PNG = base64.b64encode(
    b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x03\xe8\x00\x00\x03\xe8\x08\x02\x00\x00\x00"
).decode()


async def add(env, role: str, *blocks) -> Turn:
    return await env.store.append_turn(env.sid, Turn(role, list(blocks)))


async def test_a_summary_longer_than_what_it_replaces_is_not_saved(env, fake_provider):
    await add(env, "user", TextBlock("Hi, what is 2 + 2?"))
    await add(env, "assistant", TextBlock("4."))
    await add(env, "user", TextBlock("And 3 + 3?"))
    await add(env, "assistant", TextBlock("6."))
    before = await env.store.get_turns(env.sid)
    usage = (await env.store.get_session(env.sid)).usage
    fake_provider.script(LONG)  # about 800 tokens for a few words

    result = await env.runner.compact(env.sid, keep_turns=1, model_ref=SONNET)

    assert not result.compacted and result.reason == "would-not-reduce"
    assert result.tokens_before is not None and result.effective_tokens is not None
    assert result.effective_tokens >= result.tokens_before
    assert len(fake_provider.model_requests) == 1  # it was asked, and its answer dropped
    assert await env.store.get_turns(env.sid) == before
    assert await env.store.list_compactions(env.sid) == []
    assert (await env.store.get_session(env.sid)).usage == usage


async def test_when_it_cannot_help_nothing_is_asked(env, fake_provider):
    # The older turns are a picture (restored after any summary) and a word about it.
    await add(env, "user", TextBlock("Look:"), ImageBlock("image/png", BIG_PNG))
    await add(env, "assistant", TextBlock("Nice."))
    await add(env, "user", TextBlock("Thanks, bye."))
    before = await env.store.get_turns(env.sid)
    plan = plan_compaction(before, 1)
    assert plan is not None and cannot_reduce(plan, 200_000)

    result = await env.runner.compact(env.sid, keep_turns=1, model_ref=SONNET)

    assert not result.compacted and result.reason == "would-not-reduce"
    assert fake_provider.model_requests == []
    assert await env.store.get_turns(env.sid) == before


async def test_a_summary_that_reduces_the_context_is_saved(env, fake_provider):
    await env.seed(6, words=60)
    plan = plan_compaction(await env.store.get_turns(env.sid), 1)
    assert plan is not None and not cannot_reduce(plan, 200_000)
    fake_provider.script(TAGGED)

    result = await env.runner.compact(env.sid, keep_turns=1, model_ref=SONNET)

    assert result.compacted and result.reason is None
    assert result.effective_tokens is not None and result.tokens_before is not None
    assert result.effective_tokens < result.tokens_before
    assert len(await env.store.list_compactions(env.sid)) == 1

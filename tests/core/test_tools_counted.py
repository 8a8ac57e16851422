"""The tools and the frozen system prompt (memory, skills) count wherever Parley measures a
chat: the trigger's measure, the meter's and a compaction's ``effective_tokens``. They were
left out (53 % low on a short chat). Real sessions.db, real SDK, the fake provider, whose
count (``count_tokens``) is the truth here."""

from __future__ import annotations

import pytest

from parley.core.chat.run import ChatRunner
from parley.core.content import TextBlock
from parley.core.context.size import measured_tokens, request_estimate
from parley.core.context.tokens import estimate_tokens
from parley.core.providers.base import ChatRequest
from parley.core.store.async_store import AsyncStore
from parley.core.tools import ToolExecutor
from parley.core.tools.skills import SkillLibrary
from parley.core.wire import to_messages
from tests.core.hubs import fake_hub
from tests.fakes.cache import count_anthropic_tokens

SONNET = "anthropic:claude-sonnet-4-6"


@pytest.fixture
async def env(tmp_path, fake_provider):
    store = await AsyncStore.open(tmp_path / "sessions.db")
    hub = await fake_hub(store, tmp_path, fake_provider)
    tools = ToolExecutor(store, library=SkillLibrary(user_dir=tmp_path, bundled_dir=None))
    runner = ChatRunner(store, hub, journal_interval_s=0.02, emit_interval_s=0.0, tools=tools)
    yield store, hub, runner
    await hub.aclose()
    await store.close()


async def test_a_short_chat_is_measured_with_its_tools_and_system_prompt(env, fake_provider):
    store, hub, runner = env
    sid = (await store.create_session()).id
    for text in ("Hello there, what can you do?", "Tell me more about the memory tool."):
        await runner.send(sid, [TextBlock(text)], model_ref=SONNET)
    first, second = fake_provider.model_requests
    assert second.body.get("tools") and second.body.get("system")  # the tools were on
    stored = await store.get_turns(sid)
    provider, model = hub.resolve(SONNET)
    sent = runner.sent[sid]
    request = ChatRequest(model, stored, sent.request.system, tools=sent.request.tools)
    truth = count_anthropic_tokens(provider.request_params(request))  # the provider's count

    measured = measured_tokens(provider.caps, request, SONNET, sent)
    estimated = request_estimate(provider.caps, request)
    old_way = estimate_tokens(to_messages(stored, provider.caps), system=None)

    assert measured is not None and abs(measured - truth) <= 0.15 * truth
    # Without usage, the estimate counts them too (with Anthropic's tool-use prompt, which
    # the fake's count leaves out: the estimate is the higher one here).
    assert 0.9 * truth <= estimated <= 1.6 * truth
    assert old_way < 0.5 * truth  # what was counted before: the turns alone


async def test_effective_tokens_after_a_compaction_count_tools_and_system(env, fake_provider):
    store, hub, runner = env
    sid = (await store.create_session()).id
    for n in range(4):
        await runner.send(sid, [TextBlock(f"Question {n}: " + "words " * 200)], model_ref=SONNET)
    fake_provider.summary_point_chars = 2_000
    result = await runner.compact(sid, keep_turns=2, model_ref=SONNET)
    assert result.compacted
    provider, model = hub.resolve(SONNET)
    sent = runner.sent[sid]
    stored = await store.get_turns(sid)
    request = ChatRequest(model, stored, sent.request.system, tools=sent.request.tools)
    tools_and_system = request_estimate(provider.caps, ChatRequest(model, [], sent.request.system,
                                                                   tools=sent.request.tools))
    assert tools_and_system > 500
    assert result.effective_tokens == request_estimate(provider.caps, request)
    assert result.effective_tokens > tools_and_system

"""A message longer than the model's context window is refused before it is saved or sent
(real sessions.db, real SDKs against the fake provider server, which enforces no limit)."""

from __future__ import annotations

import pytest

from parley.core.chat.run import RunFinished
from parley.core.compaction.run import MessageTooLong
from parley.core.content import TextBlock, Turn
from parley.core.context.tokens import estimate_tokens
from parley.core.errors import ParleyError
from parley.core.wire import to_messages
from tests.core.compaction_support import SONNET
from tests.core.hubs import fake_workspace

HAIKU = "anthropic:claude-haiku-4-5"  # 200,000-token context window in the catalog
COMPATIBLE = "local:llama-test"  # a model the catalog does not know (a guessed 8,192)


def words(n_tokens: int) -> str:
    """Plain prose of about ``n_tokens`` tokens by the app's estimate (4 characters each)."""
    return ("lorem ipsum dolor sit amet " * (n_tokens * 4 // 27 + 1))[: n_tokens * 4]


async def list_all(env) -> set[str]:
    """List every provider's models, as the model menu does; their references."""
    return {f"{c.id}:{m.id}" for c in env.hub.configs for m in await env.hub.list_models(c.id)}


async def test_only_a_model_the_person_can_pick_is_suggested(env, fake_provider):
    # Fresh-user trial 15: "(such as Claude Haiku 5.5, 1,000,000)", a catalog model the
    # fake server does not list, so not in the model menu.
    listed = await list_all(env)
    with pytest.raises(MessageTooLong) as caught:
        await env.runner.send(env.sid, [TextBlock(words(300_000))], model_ref=HAIKU)

    err = caught.value
    assert err.larger is not None and err.larger.context_window > err.tokens
    assert any(ref.endswith(f":{err.larger.id}") for ref in listed)
    assert "Haiku 5.5" not in err.message
    assert f"such as {err.larger.display_name}" in err.message


async def test_no_model_is_suggested_before_the_providers_listed_theirs(env, fake_provider):
    # The catalog knows larger models, but none is known to be in the model menu.
    with pytest.raises(MessageTooLong) as caught:
        await env.runner.send(env.sid, [TextBlock(words(300_000))], model_ref=HAIKU)

    assert caught.value.larger is None and "such as" not in caught.value.message
    assert "larger context window" in caught.value.message


async def test_a_paste_over_the_window_is_refused_with_nothing_saved_or_sent(env, fake_provider):
    paste = words(703_000)  # 2.8 MB, the report's "703k / 200k"
    await list_all(env)  # the model menu's lists, which the suggestion comes from
    listing = len(fake_provider.requests)
    fake_provider.script("Short answer.")  # for the message that fits, below
    events: list = []
    with pytest.raises(MessageTooLong) as caught:
        await env.runner.send(env.sid, [TextBlock(paste)], model_ref=HAIKU,
                              on_event=events.append)

    err = caught.value
    assert isinstance(err, ParleyError)
    assert err.window == 200_000 and 700_000 <= err.tokens <= 710_000
    text = err.message
    assert "too long for Claude Haiku 4.5" in text
    assert f"{err.tokens:,} tokens" in text and "200,000 tokens" in text
    assert "Nothing was sent or saved" in text and "still in the box" in text
    assert "Shorten it" in text and "larger context window" in text
    assert err.larger is not None and err.larger.context_window > err.tokens
    assert err.larger.display_name in text  # a model that would take it, named
    assert events == []  # no run started
    assert fake_provider.requests[listing:] == []  # not even a token count left the machine
    assert await env.store.get_turns(env.sid) == []
    session = await env.store.get_session(env.sid)
    assert session.title is None and session.turn_count == 0  # not titled from it either
    assert not env.runner.is_running(env.sid)

    # The session is free again: a message that fits goes out as usual.
    reply = await env.runner.send(env.sid, [TextBlock("Just the summary, then.")],
                                  model_ref=HAIKU)
    assert reply is not None and reply.text() == "Short answer."
    assert len(fake_provider.model_requests) == 1


async def test_the_refusal_counts_as_the_meter_does_system_prompt_included(env, fake_provider):
    # The meter's count: estimate_tokens over the wire form, system prompt included.
    await env.settings(model_overrides={"claude-haiku-4-5": {"context_window": 1_000}})
    message = words(700)
    prompt = words(400)
    with_prompt = (await env.store.create_session(system_prompt=prompt)).id
    with pytest.raises(MessageTooLong) as caught:
        await env.runner.send(with_prompt, [TextBlock(message)], model_ref=HAIKU)
    wire = to_messages([Turn("user", [TextBlock(message)])], env.hub.resolve(HAIKU)[0].caps)
    assert caught.value.tokens == estimate_tokens(wire, system=prompt)
    assert caught.value.window == 1_000
    assert await env.store.get_turns(with_prompt) == []

    # The same message without that prompt fits, and is sent (the history is saved).
    fake_provider.script("ok")
    events: list = []
    await env.runner.send(env.sid, [TextBlock(message)], model_ref=HAIKU,
                          on_event=events.append)
    assert isinstance(events[-1], RunFinished)
    assert [t.role for t in await env.store.get_turns(env.sid)] == ["user", "assistant"]


async def test_a_message_just_inside_the_window_is_sent(env, fake_provider):
    await env.settings(model_overrides={"claude-sonnet-4-6": {"context_window": 2_000}})
    fake_provider.script("fine")
    reply = await env.runner.send(env.sid, [TextBlock(words(1_980))], model_ref=SONNET)
    assert reply is not None and reply.text() == "fine"


async def test_a_model_whose_window_is_a_guess_is_not_refused(tmp_path, fake_provider):
    ws = await fake_workspace(tmp_path, fake_provider, openai=False,
                              compatible={"name": "Local", "provider_id": "local",
                                          "default_model": "llama-test"})
    try:
        assert not ws.hub.model_info(COMPATIBLE).known  # 8,192 tokens, guessed
        sid = (await ws.store.create_session()).id
        fake_provider.script("read it all")
        reply = await ws.runner.send(sid, [TextBlock(words(20_000))], model_ref=COMPATIBLE)
        assert reply is not None and reply.text() == "read it all"  # the server decides
    finally:
        await ws.close()

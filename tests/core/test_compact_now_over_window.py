"""Compact now on a chat over (or near) its window keeps fewer turns word for word.

Fresh-user trial 15: a small-window model (20,000 tokens), two pasted ~3,000-word
messages; the meter read 22.6k / 20k and Compact now said "There is nothing to compact
yet: the conversation is shorter than the turns kept word for word" — the setting
(4 turns kept) left nothing to summarize. It now keeps fewer turns, as the automatic
compaction does (``parley.core.compaction.manual_keep``); a chat over its window with
nothing older than its newest message says so. Real sessions.db, the fake provider.
"""

from __future__ import annotations

from parley.core.content import TextBlock, Turn, apply_compactions
from tests.core.compaction_support import LONG, SONNET


def words(n: int, tag: str) -> str:
    return " ".join(f"{tag}{k % 97}" for k in range(n))


async def add(env, role: str, text: str) -> Turn:
    return await env.store.append_turn(env.sid, Turn(role, [TextBlock(text)]))


async def small_window(env, tokens: int = 20_000) -> None:
    await env.settings(model_overrides={"claude-sonnet-4-6": {"context_window": tokens}})


async def test_a_chat_over_its_window_is_compacted_keeping_fewer_turns(env, fake_provider):
    await small_window(env)
    await add(env, "user", "PASTE-ONE " + words(6_000, "alpha"))
    await add(env, "assistant", "Read the first paste.")
    await add(env, "user", "PASTE-TWO " + words(6_000, "beta"))
    await add(env, "assistant", "Read the second paste.")
    fake_provider.script(LONG)

    result = await env.runner.compact(env.sid, keep_turns=4, model_ref=SONNET)

    assert result.compacted, result.reason
    assert result.effective_tokens is not None and result.tokens_before is not None
    assert result.effective_tokens < result.tokens_before
    assert result.effective_tokens < 20_000
    assert len(await env.store.list_compactions(env.sid)) == 1


async def test_a_chat_far_below_its_window_keeps_the_setting(env, fake_provider):
    await add(env, "user", "PASTE-ONE " + words(4_000, "alpha"))
    await add(env, "assistant", "Read the first paste.")
    await add(env, "user", "PASTE-TWO " + words(4_000, "beta"))
    await add(env, "assistant", "Read the second paste.")

    result = await env.runner.compact(env.sid, keep_turns=4, model_ref=SONNET)

    assert not result.compacted and result.reason == "nothing-to-compact"
    assert fake_provider.model_requests == []


async def test_over_the_window_with_only_the_newest_message_says_so(env, fake_provider):
    await small_window(env)
    await add(env, "user", "PASTE-ONE " + words(30_000, "alpha"))

    result = await env.runner.compact(env.sid, keep_turns=4, model_ref=SONNET)

    assert not result.compacted and result.reason == "newest-too-long"
    assert fake_provider.model_requests == []


async def test_the_turns_kept_start_with_a_message_not_with_its_answer(env, fake_provider):
    """Trial 15b: Compact now on a chat over its window put a question in the summary card
    and kept its long answer below it, word for word. What is kept starts with one's own
    message: the question and its answer are summarized together."""
    await small_window(env)
    await add(env, "user", "hello")
    await add(env, "assistant", "Hello! What shall we read?")
    question = await add(env, "user", "PASTE-ONE " + words(6_000, "alpha"))
    answer = await add(env, "assistant", "ANSWER-ONE " + words(6_000, "beta"))
    await add(env, "user", "Thanks, and now?")
    await add(env, "assistant", "Now we rest.")
    fake_provider.script(LONG)

    result = await env.runner.compact(env.sid, keep_turns=4, model_ref=SONNET)

    assert result.compacted, result.reason
    [compaction] = await env.store.list_compactions(env.sid)
    assert compaction.last_turn_id == answer.id  # the long answer went with its question
    seen = apply_compactions(await env.store.context_turns(env.sid))  # what is sent now
    assert [t.text() for t in seen[1:]] == ["Thanks, and now?", "Now we rest."]
    assert question.id != compaction.last_turn_id

"""A history over the model's context window is never sent as it is when something can be
done: older tool output is stubbed, then the session compacted (keeping fewer turns verbatim
if it must); when even the turns it must keep do not fit, the run fails before sending.

Real stores (each test on a sessions.db file and on PostgreSQL), real SDKs, the fake
provider server (which enforces no context limit, so whatever is sent is answered: each
test checks what was sent).
"""

from __future__ import annotations

import pytest

from parley.core.chat.run import RunFailed, RunFinished
from parley.core.compaction.compact import CompactEvent, CompactPromptTooLongError
from parley.core.compaction.run import HistoryTooLong
from parley.core.content import TextBlock, Turn
from parley.core.context.tokens import estimate_tokens
from parley.core.wire import SUMMARY_HEADING, to_messages
from tests.core.compaction_support import LONG, SONNET, Env, blocks_text, validate


@pytest.fixture
def env(any_env: Env) -> Env:
    """The shared ``env`` (tests/core/conftest.py), once on each store backend."""
    return any_env


HAIKU = "anthropic:claude-haiku-4-5"  # 200,000-token window; writes its own summaries


def words(n_tokens: int, word: str = "lorem ipsum dolor sit amet ") -> str:
    """Plain prose of about ``n_tokens`` tokens by the app's estimate (4 characters each)."""
    return (word * (n_tokens * 4 // len(word) + 1))[: n_tokens * 4]


async def add(env, role: str, text: str) -> Turn:
    return await env.store.append_turn(env.sid, Turn(role, [TextBlock(text)]))


async def small_window(env, tokens: int = 4_000) -> None:
    """Sonnet with a small window (its summaries are written by Haiku 4.5, 200k window, the
    cheap model the fake server lists)."""
    await env.settings(model_overrides={"claude-sonnet-4-6": {"context_window": tokens}})


async def test_the_reported_case_is_compacted_before_the_follow_up(env, fake_provider):
    # The report: a 516 KB paste answered at length on Claude Haiku 4.5 (200k), then a short
    # follow-up at ~259k / 200k. With the default keep_turns (4) the three turns were all
    # "kept", nothing was compacted and the history went out as it was.
    paste = "PASTE-START " + words(129_000)
    await add(env, "user", paste)
    await add(env, "assistant", "ANSWER-START " + words(129_000, "consectetur adipiscing elit "))
    events: list = []
    fake_provider.script(LONG).script("Follow-up answered.")

    reply = await env.send("And the second point?", model=HAIKU, on_event=events.append)

    assert reply is not None and reply.text() == "Follow-up answered."
    summary_req, final = fake_provider.model_requests
    assert "PASTE-START" in str(summary_req.body)  # the paste was summarized…
    assert "PASTE-START" not in str(final.body)  # …and not sent again
    texts = [blocks_text(m) for m in final.body["messages"]]
    assert texts[0].startswith(SUMMARY_HEADING)
    assert texts[1].startswith("ANSWER-START") and texts[2] == "And the second point?"
    assert validate(final) is None
    (row,) = await env.store.list_compactions(env.sid)
    assert row.reason == "auto" and row.replaced_count == 1
    assert row.tokens_before > 200_000 > row.tokens_after
    stored = await env.store.get_turns(env.sid)
    caps = env.hub.resolve(HAIKU)[0].caps
    assert estimate_tokens(to_messages(stored, caps)) < 200_000  # what the meter shows now
    assert isinstance(events[-1], RunFinished)
    assert [e.name for e in events if isinstance(e, CompactEvent)][-1] == "compact:end"


async def test_kept_turns_that_alone_overflow_are_compacted_keeping_fewer(env, fake_provider):
    await small_window(env)
    await env.settings(compaction__keep_turns=2)
    await add(env, "user", "Write the whole report.")
    await add(env, "assistant", "REPORT-START " + words(3_000))
    fake_provider.script(LONG).script("answered")
    question = "QUESTION " + words(1_200, "what about the budget? ")

    reply = await env.send(question)

    assert reply is not None and reply.text() == "answered"
    summary_req, final = fake_provider.model_requests
    assert summary_req.body["model"] == "claude-haiku-4-5"
    (only,) = final.body["messages"]  # the summary, then the question: one user message
    assert blocks_text(only).startswith(SUMMARY_HEADING) and blocks_text(only).endswith(question)
    assert "REPORT-START" not in str(final.body)  # keep_turns gave way: the report is summarized
    assert validate(final) is None
    (row,) = await env.store.list_compactions(env.sid)
    assert row.replaced_count == 2 and row.tokens_after < 4_000


async def test_older_tool_output_is_stubbed_first_and_nothing_is_summarized(env, fake_provider):
    await small_window(env)
    await add(env, "user", "Read the log.")
    await env.tool_round("read_log", "LOG-START " + words(4_200), "toolu_log")
    await add(env, "assistant", "The log shows three restarts.")
    fake_provider.script("answered")

    reply = await env.send("Why three?")

    assert reply is not None and reply.text() == "answered"
    (final,) = fake_provider.model_requests  # no summary request
    body = str(final.body)
    assert "LOG-START" not in body and "[tool output hidden to save context: " in body
    assert validate(final) is None
    assert await env.store.list_compactions(env.sid) == []
    stored = await env.store.get_turns(env.sid)
    assert any("LOG-START" in str(t.blocks) for t in stored)  # stubbed on the wire only


async def test_a_last_message_that_alone_overflows_fails_before_sending(env, fake_provider):
    # Written for a model with a larger window; now Retry asks one with 4,000 tokens.
    await small_window(env)
    await add(env, "user", "Hello")
    await add(env, "assistant", "Hi! What can I do?")
    await add(env, "user", "BIG " + words(4_500))
    before = await env.store.get_turns(env.sid)
    events: list = []

    assert await env.runner.retry(env.sid, model_ref=SONNET, on_event=events.append) is None

    (failed,) = [e for e in events if isinstance(e, RunFailed)]
    err = failed.error
    assert isinstance(err, HistoryTooLong) and isinstance(err, CompactPromptTooLongError)
    assert err.window == 4_000 and err.tokens > 4_000 and not err.compacted and err.newest
    text = err.message
    assert text.startswith("The newest message is too long for Claude Sonnet 4.6")
    assert "even with every earlier turn left out" in text
    assert "most recent turns alone" not in text  # issue 30: that was not the cause
    assert f"{err.tokens:,} tokens" in text and "4,000 tokens" in text
    assert "Claude Sonnet 4.6" in text
    assert "Nothing was sent" in text and "the whole conversation is saved" in text
    assert "shorten it" in text and "larger context window" in text
    assert fake_provider.model_requests == []  # neither a summary nor the request
    assert await env.store.get_turns(env.sid) == before
    assert await env.store.list_compactions(env.sid) == []


async def test_a_failed_compaction_still_sends_the_stubbed_request(env, fake_provider):
    await small_window(env)
    await env.settings(compaction__keep_turns=2)
    await add(env, "user", "Write the whole report.")
    await add(env, "assistant", words(4_100))
    fake_provider.fail("server_error").script("answered anyway")
    events: list = []

    reply = await env.send("And the budget?", on_event=events.append)

    # As for any failed auto-compaction: logged, told (compact:end with the error), sent.
    assert reply is not None and reply.text() == "answered anyway"
    end = [e for e in events if isinstance(e, CompactEvent)][-1]
    assert end.name == "compact:end" and end.error is not None
    assert len(fake_provider.model_requests) == 2
    assert await env.store.list_compactions(env.sid) == []

"""Compaction inside the run loop: auto trigger, tail strategy, context-overflow recovery.

Every test runs on a sessions.db file and on a PostgreSQL database (``env`` below).
"""

from __future__ import annotations

import base64

import pytest

from parley.core.chat.events import OlderTurnsUnseen
from parley.core.chat.run import RunFailed, RunFinished
from parley.core.compaction.compact import (
    CompactEvent,
    CompactNoSummaryError,
    CompactPromptTooLongError,
)
from parley.core.compaction.unseen import load_unseen
from parley.core.compaction.wire import HIDDEN_OUTPUT
from parley.core.content import ImageBlock, TextBlock, Turn
from parley.core.events import RequestEnded
from parley.core.wire import SUMMARY_HEADING
from tests.core.compaction_support import (
    GPT,
    LONG,
    SONNET,
    SUMMARY,
    Env,
    blocks_text,
    summary_turns,
    tagged_summary,
    validate,
)


@pytest.fixture
def env(any_env: Env) -> Env:
    """The shared ``env`` (tests/core/conftest.py), once on each store backend."""
    return any_env


PNG = base64.b64encode(
    b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x01\x00\x00\x00\x01\x00\x08\x02\x00\x00\x00"
).decode()


@pytest.mark.parametrize("model", [SONNET, GPT])
async def test_auto_compaction_fires_at_the_threshold_and_reuses_the_cache(
    env, fake_provider, model
):
    model_id = model.split(":", 1)[1]
    await env.settings(model_overrides={model_id: {"context_window": 8_000}})
    await env.seed(8, words=30)
    events: list = []
    ends: list[RequestEnded] = []
    env.runner.events.on(RequestEnded, ends.append)

    fake_provider.script("First reply.")
    await env.send("A short question.", model=model, on_event=events.append)
    assert not any(isinstance(e, CompactEvent) for e in events)  # below the threshold
    assert len(fake_provider.model_requests) == 1

    fake_provider.script(f"<summary>{SUMMARY}</summary>").script("Second reply.")
    reply = await env.send("A long paste: " + "lorem ipsum dolor " * 1_300, model=model,
                           on_event=events.append)

    assert reply is not None and reply.text() == "Second reply."
    first, summary_req, second = fake_provider.model_requests
    assert summary_req.body["messages"][: len(first.body["messages"]) - 1] == (
        first.body["messages"][:-1])
    assert "summary of the conversation above" in blocks_text(summary_req.body["messages"][-1])
    sent = [m for m in second.body["messages"] if m["role"] != "system"]
    assert sent[0]["role"] == "user" and blocks_text(sent[0]).startswith(SUMMARY_HEADING)
    assert blocks_text(sent[1]).startswith("Answer 7")  # the kept turns follow, whole
    assert [blocks_text(m) for m in sent[2:4]] == ["A short question.", "First reply."]
    for req in fake_provider.model_requests:
        assert validate(req) is None
    (row,) = await env.store.list_compactions(env.sid)
    assert row.reason == "auto" and row.model == model and row.replaced_count == 15
    assert row.tokens_after < row.tokens_before
    names = [e.name for e in events if isinstance(e, CompactEvent)]
    assert names[0] == "compact:start" and names[-1] == "compact:end"
    assert isinstance(events[-1], RunFinished)
    # The summary turn was saved between the user's turn and the reply.
    stored = await env.store.get_turns(env.sid)
    assert [t.role for t in stored[-3:]] == ["user", "user", "assistant"]
    assert summary_turns(stored) == [stored[-2]]
    assert ends[-1].turn_range == (18, 21)
    # The first reply's usage measured the history exactly: no count_tokens request, even
    # near the trigger (Anthropic has the endpoint; it is for histories without usage).
    assert not any(r.path.endswith("/count_tokens") for r in fake_provider.requests)


async def test_auto_compaction_off_or_failing_still_sends_the_request(env, fake_provider):
    await env.settings(model_overrides={"gpt-5": {"context_window": 500}},
                       compaction__auto=False)
    await env.seed(6, words=30)
    fake_provider.script("plain")
    assert await env.send("hi", model=GPT) is not None
    assert len(fake_provider.model_requests) == 1

    await env.settings(compaction__auto=True)
    # The separate summary request fails. (The cache-friendly one is not sent: the last
    # request, already over the 500-token window, has no room for the summary note.)
    fake_provider.fail("server_error").script("still answered")
    events: list = []
    reply = await env.send("again", model=GPT, on_event=events.append)
    assert reply is not None and reply.text() == "still answered"
    end = [e for e in events if isinstance(e, CompactEvent)][-1]
    assert end.name == "compact:end" and end.error is not None
    assert await env.store.list_compactions(env.sid) == []
    assert len(fake_provider.model_requests) == 3
    assert validate(fake_provider.model_requests[-1]) is None


async def test_tail_strategy_hides_older_tool_output_on_the_wire_only(env, fake_provider):
    await env.settings(model_overrides={"claude-sonnet-4-6": {"context_window": 2_000}},
                       compaction__strategy="tail")
    await env.seed(1)
    for i in range(1, 4):
        await env.tool_round("search", f"result {i} " + "data " * 400, f"toolu_{i}")
    before = await env.store.get_turns(env.sid)
    fake_provider.script("done")
    await env.send("what did you find?")

    (req,) = fake_provider.model_requests
    assert validate(req) is None
    results = {
        b["tool_use_id"]: blocks_text({"content": b["content"]})
        for m in req.body["messages"] for b in m["content"] if b.get("type") == "tool_result"
    }
    assert results["toolu_1"].startswith("[tool output hidden to save context: ")
    assert HIDDEN_OUTPUT.split("{")[0] in results["toolu_1"]
    assert results["toolu_2"].startswith("result 2") and results["toolu_3"].startswith("result 3")
    stored = await env.store.get_turns(env.sid)
    assert stored[: len(before)] == before  # nothing stored changed
    assert await env.store.list_compactions(env.sid) == []


async def test_overflow_stubs_older_output_and_media_then_retries(env, fake_provider):
    await env.store.append_turn(env.sid, Turn("user", [TextBlock("see"), ImageBlock("image/png",
                                                                                     PNG)]))
    await env.store.append_turn(env.sid, Turn("assistant", [TextBlock("seen")]))
    await env.tool_round("read", "line\n" * 500, "toolu_a")
    fake_provider.fail("prompt_too_long").script("fits now")
    reply = await env.send("and?")
    assert reply is not None and reply.text() == "fits now"
    full, stubbed = fake_provider.model_requests
    assert "image" in str(full.body) and "base64" in str(full.body)
    text = str(stubbed.body)
    assert "[image hidden to save context: " in text and '"base64"' not in text
    assert "[tool output hidden to save context: " in text
    assert validate(stubbed) is None
    assert await env.store.list_compactions(env.sid) == []


async def test_overflow_twice_compacts_then_retries(env, fake_provider):
    await env.seed(6)
    fake_provider.fail("prompt_too_long", times=2).script(LONG).script("answered")
    events: list = []
    reply = await env.send("next", on_event=events.append)
    assert reply is not None and reply.text() == "answered"
    summary_req, final = fake_provider.model_requests[2:]
    assert summary_req.body["model"] == "claude-haiku-4-5"
    assert blocks_text(final.body["messages"][0]).startswith(SUMMARY_HEADING)
    assert validate(final) is None
    (row,) = await env.store.list_compactions(env.sid)
    assert row.reason == "auto"
    assert any(isinstance(e, CompactEvent) and e.name == "compact:end" for e in events)


async def test_overflow_after_compaction_is_reported_in_words(env, fake_provider):
    await env.seed(6)
    fake_provider.fail("prompt_too_long", times=2).script(LONG)
    fake_provider.fail("prompt_too_long")
    events: list = []
    assert await env.send("next", on_event=events.append) is None
    (failed,) = [e for e in events if isinstance(e, RunFailed)]
    assert isinstance(failed.error, CompactPromptTooLongError)
    assert "still too long" in failed.error.message and "Nothing was lost" in failed.error.message
    stored = await env.store.get_turns(env.sid)
    assert any(t.text() == "next" for t in stored)  # the user's turn is kept
    assert len(fake_provider.model_requests) == 4


async def test_kept_turns_over_the_threshold_do_not_cause_a_summary_every_request(
    env, fake_provider
):
    await env.settings(model_overrides={"gpt-5": {"context_window": 5_000}})
    await env.seed(6, words=30)
    fake_provider.script(tagged_summary(8)).script("read it")
    await env.send("Please read: " + "lorem ipsum dolor " * 900, model=GPT)
    assert len(fake_provider.model_requests) == 2  # a summary, then the request
    fake_provider.script("ok")
    await env.send("short question", model=GPT)
    # Still over the threshold, but only because of the kept paste: no new summary.
    assert len(fake_provider.model_requests) == 3
    assert len(await env.store.list_compactions(env.sid)) == 1
    fake_provider.script(tagged_summary(8)).script("ok again")
    await env.send("another one", model=GPT)
    # Now the paste left the kept turns: summarizing it is worth a request.
    assert len(fake_provider.model_requests) == 5
    assert len(await env.store.list_compactions(env.sid)) == 2
    assert "lorem ipsum" not in str(fake_provider.model_requests[-1].body)
    assert validate(fake_provider.model_requests[-1]) is None


JUNK = "Sure! Happy to help with that."  # what a tiny local model answers to everything


async def refused_once(env, fake_provider) -> None:
    """A chat over the threshold of a 2,000-token window whose every summary is refused."""
    await env.settings(model_overrides={"gpt-5": {"context_window": 2_000}})
    await env.seed(8, words=60)
    fake_provider.script(JUNK, times=80)
    await env.send("question 0", model=GPT)  # the estimate is under the trigger
    sent = len(fake_provider.model_requests)
    await env.send("question 1", model=GPT)  # the reply's usage is over it: refused
    assert len(fake_provider.model_requests) - sent > 1
    assert await env.store.list_compactions(env.sid) == []


async def sends(env, fake_provider, text: str) -> tuple[int, list]:
    """Send ``text``; return (model requests it made, its compaction events)."""
    before, events = len(fake_provider.model_requests), []
    await env.send(text, model=GPT, on_event=events.append)
    return len(fake_provider.model_requests) - before, [
        e for e in events if isinstance(e, CompactEvent)]


async def test_a_refused_auto_compaction_waits_for_two_more_messages(env, fake_provider):
    """The tester's SmolLM2 on llama-cpp-python: each refused try cost minutes, every send."""
    await refused_once(env, fake_provider)
    assert await sends(env, fake_provider, "question 2") == (1, [])  # waits: sent as it is
    count, events = await sends(env, fake_provider, "question 3")  # two more messages
    assert count > 1 and events[-1].error is not None  # tried (and refused) again
    assert await sends(env, fake_provider, "question 4") == (1, [])  # waits again


async def test_growth_of_a_tenth_of_the_window_ends_the_wait(env, fake_provider):
    await refused_once(env, fake_provider)
    count, events = await sends(env, fake_provider, "paste: " + "lorem ipsum dolor " * 60)
    assert count > 1 and events and events[0].name == "compact:start"


async def test_compact_now_or_another_summary_model_ends_the_wait(env, fake_provider):
    await refused_once(env, fake_provider)
    with pytest.raises(CompactNoSummaryError):
        await env.runner.compact(env.sid)  # Compact now (refused too)
    count, _ = await sends(env, fake_provider, "question 2")
    assert count > 1  # tried again at once
    assert await sends(env, fake_provider, "question 3") == (1, [])
    await env.settings(compaction__model="openai:gpt-5-mini")
    count, _ = await sends(env, fake_provider, "question 4")
    assert count > 1
    assert fake_provider.model_requests[-2].body["model"] == "gpt-5-mini"


async def test_while_waiting_a_history_over_the_window_sends_the_newest_turns_that_fit(
    env, fake_provider
):
    # Was: refused with HistoryTooLong (issue 30: a chat must never stop on compaction).
    await refused_once(env, fake_provider)
    before = len(fake_provider.model_requests)
    # The history (over 80 % of 2,000 tokens) is now over the window itself.
    await env.settings(model_overrides={"gpt-5": {"context_window": 1_500}})
    events: list = []
    reply = await env.send("question 2", model=GPT, on_event=events.append)
    assert reply is not None and not [e for e in events if isinstance(e, RunFailed)]
    assert not [e for e in events if isinstance(e, CompactEvent)]  # no summary asked
    assert len(fake_provider.model_requests) == before + 1
    (told,) = [e.unseen for e in events if isinstance(e, OlderTurnsUnseen)]
    assert told is not None and told.reason == "waiting" and told.hidden_turns >= 1
    assert await load_unseen(env.store, env.sid) == told
    sent = fake_provider.model_requests[-1]
    assert validate(sent) is None and "question 2" in str(sent.body)
    assert "Question 0" not in str(sent.body)  # the oldest turns are left off the wire

"""Summaries are checked before they replace anything, and written by the model the user set.

A real sessions.db, the real SDKs over HTTP to the fake provider server: what
the server received is what is asserted (which model, which turns' text).
"""

from __future__ import annotations

import re

import pytest

from parley.core.compaction.check import FLOOR_MAX, check_answer, summary_floor
from parley.core.compaction.compact import CompactNoSummaryError
from parley.core.compaction.parts import CONTINUED, CONTINUES, split_parts
from parley.core.compaction.prompt import (
    SUMMARIZER_SYSTEM,
    extract_summary,
    plainly,
    render_turn,
)
from parley.core.content import TextBlock, Turn
from parley.core.context.tokens import text_tokens
from tests.core.compaction_support import (
    GPT,
    LONG,
    SONNET,
    SUMMARY,
    TAGGED,
    blocks_text,
    summary_turns,
    validate,
)

HAIKU = "anthropic:claude-haiku-4-5"
#: 14k characters of an answer that is not a summary (the trial's case).
ESSAY = "Here is a short essay on gardening, since you asked about it. " * 230


def prompt_of(request) -> str:
    """The text of a recorded summary request's (last) user message."""
    return blocks_text(request.body["messages"][-1])


async def chat(env, fake, n: int, model: str = SONNET) -> None:
    """``n`` exchanges sent for real (the last request stays warm in the prompt cache)."""
    for i in range(n):
        fake.script(f"Reply {i} about the LISBON-7 trip.")
        await env.send(f"Message {i} about LISBON-7: " + "detail " * 40, model=model)


# -- the rule ------------------------------------------------------------------------


def test_the_floor_is_two_percent_between_25_and_500_tokens_and_never_over_a_quarter():
    assert summary_floor(60) == 15  # a quarter of a tiny transcript
    assert summary_floor(1_000) == 25
    assert summary_floor(10_000) == 200
    assert summary_floor(150_000) == FLOOR_MAX == 500
    assert check_answer("<summary>3:00</summary>", "end_turn", 400).reason == "too-short"
    assert check_answer(ESSAY, "end_turn", 400).reason == "no-summary"
    assert check_answer(TAGGED, "max_tokens", 400).reason == "cut-off"
    good = check_answer(f"Sure.\n{TAGGED}", "end_turn", 400)
    assert good.ok and good.summary == SUMMARY


# -- refused answers: separately, then in parts, then nothing replaced ----------------


async def test_an_answer_without_tags_falls_back_then_parts_then_refuses_with_reason(
    env, fake_provider
):
    await chat(env, fake_provider, 5)
    before = await env.store.get_turns(env.sid)
    usage_before = (await env.store.get_session(env.sid)).usage
    sent = len(fake_provider.model_requests)
    # The chat's model from the cache, the summary model at once (twice: once more with
    # the format stated plainly), its first part twice (the same).
    fake_provider.script(ESSAY, times=5)

    with pytest.raises(CompactNoSummaryError) as caught:
        await env.runner.compact(env.sid, keep_turns=2)

    err = caught.value
    assert err.reason == "no-summary" and fake_provider.pending == 0
    assert "could not get a usable summary from anthropic:claude-haiku-4-5" in err.message
    assert "its answer held no summary" in err.message
    assert re.search(r"asked the chat's model .*, then anthropic:claude-haiku-4-5 for the "
                     r"whole conversation, then anthropic:claude-haiku-4-5 once more, the "
                     r"format stated plainly, then anthropic:claude-haiku-4-5 in \d+ parts",
                     err.message)
    assert "Nothing was compacted and the conversation is unchanged" in err.message
    cached, whole, plain, part, again = fake_provider.model_requests[sent:]
    assert cached.body["model"] == "claude-sonnet-4-6" and "[Context compaction" in prompt_of(
        cached)
    assert [r.body["model"] for r in (whole, plain, part, again)] == ["claude-haiku-4-5"] * 4
    assert "<transcript>" in prompt_of(whole) and "part 1 of" in prompt_of(part)
    assert prompt_of(plain) == plainly(prompt_of(whole))  # the format stated plainly
    assert prompt_of(again) == plainly(prompt_of(part))  # a refused part is asked once more
    # Nothing replaced, nothing saved, nothing counted.
    assert await env.store.get_turns(env.sid) == before
    assert await env.store.list_compactions(env.sid) == []
    assert (await env.store.get_session(env.sid)).usage == usage_before


async def test_after_refused_answers_the_parts_summaries_are_combined(env, fake_provider):
    await chat(env, fake_provider, 5)
    sent = len(fake_provider.model_requests)
    # The cache-friendly and the separate answer (asked twice).
    fake_provider.script(ESSAY, times=3)
    # The parts and their combination: the fake answers like a model (no script).

    result = await env.runner.compact(env.sid, keep_turns=2)

    assert result.compacted and not result.cache_reused and result.summary_parts >= 2
    requests = fake_provider.model_requests[sent + 3:]
    parts = [r for r in requests if "<transcript>" in prompt_of(r)]
    assert len(parts) == result.summary_parts
    assert all(f"of {result.summary_parts} of the transcript" in prompt_of(r) for r in parts)
    assert "<part_summaries>" in prompt_of(requests[-1])  # then one summary of them
    assert all(validate(r) is None for r in requests)
    (saved,) = summary_turns(await env.store.get_turns(env.sid))
    text = saved.blocks[0].summary  # type: ignore[union-attr]
    for i in range(4):  # every summarized user message reached the summary
        assert f"Message {i} about LISBON-7" in text


async def test_an_implausibly_short_summary_is_refused(env, fake_provider):
    await env.settings(compaction__model=HAIKU)
    await env.seed(5)  # nine turns summarized, one kept
    before = await env.store.get_turns(env.sid)
    fake_provider.script("<summary>3:00</summary>", times=4)

    with pytest.raises(CompactNoSummaryError) as caught:
        await env.runner.compact(env.sid, keep_turns=1, model_ref=SONNET)

    assert caught.value.reason == "too-short" and fake_provider.pending == 0
    assert "far too short to stand for the turns it would replace" in caught.value.message
    assert "at least 25 were expected" in caught.value.message
    assert await env.store.get_turns(env.sid) == before
    assert await env.store.list_compactions(env.sid) == []


async def test_a_summary_cut_off_at_the_output_limit_is_not_kept(env, fake_provider):
    await env.settings(compaction__model=HAIKU)
    await env.seed(5)
    fake_provider.script(TAGGED, stop_reason="max_tokens", times=2)  # at once: cut off
    result = await env.runner.compact(env.sid, keep_turns=1, model_ref=SONNET)  # then parts
    assert result.compacted and result.summary_parts >= 2
    assert SUMMARY not in result.summary_turn.blocks[0].summary  # type: ignore[union-attr]


DETAILS = (
    "Sure! Here is what we talked about.\n<details><summary>The conversation so far</summary>\n"
    + "We discussed the LISBON-7 trip at length. " * 20 + "\n</details>"
)


@pytest.mark.parametrize("answer", [
    DETAILS,
    "```html\n<summary>" + "A summary in a code block. " * 20 + "</summary>\n```",
    "Wrap it in `<summary>" + "inline code " * 20 + "</summary>` tags.",
    "<div><p>Notes</p><summary>" + "nested in a div " * 20 + "</summary></div>",
])
def test_a_summary_tag_nested_in_other_markup_or_code_is_no_summary(answer):
    assert extract_summary(answer) is None
    assert check_answer(answer, "end_turn", 400).reason == "no-summary"
    # Parley's own section after such markup still counts; void tags before it do not hide it.
    assert extract_summary(f"{answer}\n{TAGGED}") == SUMMARY
    assert extract_summary(f"Here it is:<br>\n{TAGGED}") == SUMMARY


async def test_a_details_block_from_a_small_model_replaces_nothing(env, fake_provider):
    """The tester's SmolLM2 answered with an HTML ``<details><summary>…`` block."""
    await env.settings(compaction__model=HAIKU)
    await env.seed(5)
    before = await env.store.get_turns(env.sid)
    fake_provider.script(DETAILS, times=4)

    with pytest.raises(CompactNoSummaryError) as caught:
        await env.runner.compact(env.sid, keep_turns=1, model_ref=SONNET)

    assert caught.value.reason == "no-summary" and fake_provider.pending == 0
    assert await env.store.get_turns(env.sid) == before
    assert await env.store.list_compactions(env.sid) == []


# -- a chat larger than the summary model's window ---------------------------------


@pytest.mark.parametrize("told_by", ["provider", "settings"])
async def test_a_chat_larger_than_the_summarizers_window_is_summarized_in_parts(
    env, fake_provider, told_by
):
    window, max_out = 8_192, 1_024  # a small local model's window
    await env.settings(compaction__model=HAIKU)
    if told_by == "provider":  # its model list says so (and it refuses what is over it)
        small_haiku(fake_provider, window, max_out)
    else:  # Settings → Providers, model limits
        await env.settings(model_overrides={"claude-haiku-4-5": {
            "context_window": window, "max_output_tokens": max_out}})
    for i in range(20):  # ~15k tokens in all, ~750 each
        role = "user" if i % 2 == 0 else "assistant"
        words = " ".join(f"t{i}w{k}" for k in range(500))
        await env.store.append_turn(env.sid, Turn(role, [TextBlock(f"TURN-{i:02d} {words}")]))
    stored = await env.store.get_turns(env.sid)
    fake_provider.script(LONG, times=12)

    result = await env.runner.compact(env.sid, keep_turns=2, model_ref=SONNET)

    assert result.compacted and result.replaced_count == 18 and result.dropped_count == 0
    requests = fake_provider.model_requests
    parts = [r for r in requests if "<transcript>" in prompt_of(r)]
    assert result.summary_parts == len(parts) >= 3
    combined = requests[len(parts):]  # then their summaries combined (in rounds: a window
    assert len(combined) == 2  # holds four of these summaries, not five)
    assert "## Parts 1–4 of 5" in prompt_of(combined[1]) and "## Part 5 of 5" in prompt_of(
        combined[1])  # the parts, then their summary
    received = "\n".join(prompt_of(r) for r in parts)
    for turn in stored[:18]:  # every summarized turn's text reached a summarizer, whole
        assert turn.text() in received
    assert "TURN-18" not in received  # the kept turns are not summarized
    assert "left out" not in received and "did not fit" not in received
    for r in requests:  # and every request fit the summary model's window
        assert r.body["model"] == "claude-haiku-4-5" and r.body["max_tokens"] == max_out
        assert text_tokens(prompt_of(r)) + text_tokens(SUMMARIZER_SYSTEM) < window - max_out
    assert "<part_summaries>" in prompt_of(requests[-1])
    assert fake_provider.windows.refused == 0


def small_haiku(fake, window: int, max_out: int) -> None:
    """The fake lists Claude Haiku 4.5 with this window and refuses prompts over it."""
    fake.anthropic_models = [{**m, "max_input_tokens": window, "max_tokens": max_out}
                             if m["id"] == "claude-haiku-4-5" else m
                             for m in fake.anthropic_models]
    fake.windows.enforce_windows = True


async def test_parts_refused_as_too_long_by_the_provider_are_cut_smaller(env, fake_provider):
    """The provider's tokenizer counts three times what the fake's own count says: parts
    it refuses are cut smaller and sent again; every turn still reaches the summarizer."""
    small_haiku(fake_provider, 8_192, 1_024)
    fake_provider.windows.token_scale = 3.0
    await env.settings(compaction__model=HAIKU)
    for i in range(12):
        role = "user" if i % 2 == 0 else "assistant"
        words = " ".join(f"t{i}w{k}" for k in range(500))
        await env.store.append_turn(env.sid, Turn(role, [TextBlock(f"TURN-{i:02d} {words}")]))
    stored = await env.store.get_turns(env.sid)
    fake_provider.script(LONG, times=40)

    result = await env.runner.compact(env.sid, keep_turns=2, model_ref=SONNET)

    assert result.compacted and result.dropped_count == 0
    assert fake_provider.windows.refused >= 1  # the first cut was refused …
    parts = [prompt_of(r) for r in fake_provider.model_requests if "<transcript>" in prompt_of(r)]
    last_cut = [p for p in parts if f"of {result.summary_parts} of the transcript" in p]
    assert len(last_cut) == result.summary_parts  # … the accepted cut is smaller
    for turn in stored[:10]:
        assert turn.text() in "\n".join(last_cut)


def test_a_turn_longer_than_a_part_is_cut_into_pieces_that_keep_all_its_text():
    huge = Turn("user", [TextBlock("\n".join(f"line {k}: " + "x" * 60 for k in range(800)))])
    small = Turn("assistant", [TextBlock("Noted.")])
    bodies = split_parts([small, huge, small], 1_000)
    assert len(bodies) > 10 and all(text_tokens(b) <= 1_000 for b in bodies)
    joined = "\n\n".join(bodies)
    for mark in (f"\n{CONTINUES}\n\n{CONTINUED}\n", f"\n{CONTINUES}\n\n", f"{CONTINUED}\n"):
        joined = joined.replace(mark, "")
    assert render_turn(huge) in joined and joined.count("Noted.") == 2


# -- which model writes it ------------------------------------------------------------


@pytest.mark.parametrize(("chat_model", "setting", "expected"), [
    (SONNET, "anthropic:claude-haiku-4-5", "claude-haiku-4-5"),
    (SONNET, "claude-opus-4-6", "claude-opus-4-6"),  # a bare id: the chat's provider
    (GPT, "gpt-5-mini", "gpt-5-mini"),
])
async def test_the_chosen_summary_model_writes_the_summary_even_with_a_warm_cache(
    env, fake_provider, chat_model, setting, expected
):
    await chat(env, fake_provider, 3, model=chat_model)
    sent = len(fake_provider.model_requests)
    await env.settings(compaction__model=setting)
    fake_provider.script(TAGGED)

    result = await env.runner.compact(env.sid, keep_turns=1)

    assert result.compacted and not result.cache_reused
    assert result.model is not None and result.model.endswith(f":{expected}")
    (request,) = fake_provider.model_requests[sent:]
    assert request.body["model"] == expected
    assert "<transcript>" in prompt_of(request)  # a separate request, not the chat resent
    (row,) = await env.store.list_compactions(env.sid)
    assert row.model == result.model


async def test_the_chats_own_model_as_summary_model_reads_from_the_cache(env, fake_provider):
    await chat(env, fake_provider, 3)
    await env.settings(compaction__model="claude-sonnet-4-6")
    fake_provider.script(TAGGED)
    result = await env.runner.compact(env.sid, keep_turns=1)
    assert result.compacted and result.cache_reused and result.model == SONNET
    request = fake_provider.model_requests[-1]
    assert request.body["model"] == "claude-sonnet-4-6"
    assert "[Context compaction" in prompt_of(request)


def _listing(*ids: str) -> list[dict]:
    return [{"id": i, "display_name": i, "max_input_tokens": 200_000, "max_tokens": 64_000}
            for i in ids]


@pytest.mark.parametrize(("listed", "expected"), [
    (None, "claude-haiku-4-5"),  # the fake's own list: no Haiku 5.5 in it
    (("claude-sonnet-4-6", "claude-haiku-5-5", "claude-haiku-4-5"), "claude-haiku-5-5"),
    (("claude-sonnet-4-6", "claude-haiku-4-5-20251001"), "claude-haiku-4-5-20251001"),
    (("claude-sonnet-4-6", "claude-opus-4-6"), "claude-sonnet-4-6"),  # no cheap one: the chat's
])
async def test_the_default_cheap_model_is_one_the_provider_lists(
    env, fake_provider, listed, expected
):
    if listed is not None:
        fake_provider.anthropic_models = _listing(*listed)
    await env.seed(4)
    fake_provider.script(TAGGED, times=2)

    result = await env.runner.compact(env.sid, keep_turns=2, model_ref=SONNET)
    await env.seed(2, start=10)
    again = await env.runner.compact(env.sid, keep_turns=2, model_ref=SONNET)

    assert result.compacted and again.compacted
    assert [r.body["model"] for r in fake_provider.model_requests] == [expected, expected]
    assert expected in [m["id"] for m in fake_provider.anthropic_models]
    assert result.model == f"anthropic:{expected}"
    lists = [r for r in fake_provider.requests if r.path == "/v1/models"]
    assert len(lists) == 1  # the provider's list is read once, not before every summary

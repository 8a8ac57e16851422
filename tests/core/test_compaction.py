"""Manual compaction against a real store and the fake provider over real HTTP.

Every test runs on a sessions.db file and on a PostgreSQL database (``env`` below):
compactions are saved and read back the same way on both.
"""

from __future__ import annotations

import asyncio
import base64
import json

import pytest

from parley.core.chat.run import RunInProgress
from parley.core.compaction.compact import (
    CompactEvent,
    CompactInvalidInputError,
    CompactionInProgress,
    CompactNoSummaryError,
    CompactPromptTooLongError,
    Skill,
)
from parley.core.compaction.prompt import (
    ANSWER_FORMAT,
    SUMMARIZER_SYSTEM,
    UPDATE_PREVIOUS,
    extract_summary,
)
from parley.core.content import CompactSummaryBlock, DocumentBlock, ImageBlock, TextBlock, Turn
from parley.core.providers.errors import AuthenticationFailed
from parley.core.wire import SUMMARY_HEADING
from tests.core.compaction_support import (
    GPT,
    SONNET,
    SUMMARY,
    TAGGED,
    Env,
    blocks_text,
    summary_turns,
    validate,
)


@pytest.fixture
def env(any_env: Env) -> Env:
    """The shared ``env`` (tests/core/conftest.py), once on each store backend."""
    return any_env


PNG = base64.b64encode(
    b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x10\x00\x00\x00\x10\x08\x02\x00\x00\x00"
).decode()
PDF = base64.b64encode(b"%PDF-1.4\n1 0 obj << /Type /Page >> endobj\n%%EOF").decode()


async def test_manual_compaction_saves_summary_and_reports_every_field(env, fake_provider):
    await env.store.append_turn(env.sid, Turn("user", [
        TextBlock("Here is the diagram and the spec"),
        ImageBlock("image/png", PNG),
        DocumentBlock("application/pdf", PDF, "spec.pdf"),
    ]))
    await env.store.append_turn(env.sid, Turn("assistant", [TextBlock("Got both.")]))
    await env.seed(4)
    before = await env.store.get_turns(env.sid)
    fake_provider.script(f"<summary>\n{SUMMARY}\n</summary>", usage={"output_tokens": 77})
    events: list[CompactEvent] = []
    on_bus: list[CompactEvent] = []
    env.runner.events.on(CompactEvent, on_bus.append)

    result = await env.runner.compact(env.sid, keep_turns=4, model_ref=SONNET,
                                      on_event=events.append)

    assert result.compacted and result.reason is None and result.trigger == "manual"
    assert result.replaced_count == 6 and result.dropped_count == 0
    assert result.restored_files == ("image (image/png)", "spec.pdf")
    assert result.restored_skills == ()
    assert result.model == "anthropic:claude-haiku-4-5"  # the cheap default
    assert result.usage is not None and result.usage.output_tokens == 77
    assert result.tokens_before and result.effective_tokens
    assert result.effective_tokens < result.tokens_before
    assert not result.cache_reused

    # Non-destructive: every turn stays, one summary turn is appended.
    stored = await env.store.get_turns(env.sid)
    assert stored[:-1] == before and stored[-1].id == result.summary_turn_id
    summary = stored[-1]
    block = summary.blocks[0]
    assert summary.role == "user" and isinstance(block, CompactSummaryBlock)
    assert block.summary == SUMMARY and block.replaced_count == 6
    assert (block.first_turn_id, block.last_turn_id) == (before[0].id, before[5].id)
    assert block.compaction_id == result.compaction_id
    assert [type(b).__name__ for b in summary.blocks[1:]] == [
        "TextBlock", "ImageBlock", "DocumentBlock"]
    history = await env.store.history(env.sid)
    assert [t.id for t in history] == [summary.id] + [t.id for t in before[6:]]

    (row,) = await env.store.list_compactions(env.sid)
    assert row.reason == "manual" and row.model == result.model
    assert (row.tokens_before, row.tokens_after) == (result.tokens_before,
                                                     result.effective_tokens)
    assert row.replaced_count == 6 and row.usage == result.usage
    session = await env.store.get_session(env.sid)
    assert session.usage.output_tokens == 77  # the summary's cost counts

    (req,) = fake_provider.model_requests
    assert req.body["model"] == "claude-haiku-4-5"
    assert req.body["system"][0]["text"] == SUMMARIZER_SYSTEM
    prompt = blocks_text(req.body["messages"][0])
    assert "Question 0" in prompt and "Answer 1" in prompt and "Question 2" not in prompt
    assert "[image: image/png]" in prompt and "## Exact details" in prompt
    assert validate(req) is None

    names = [e.name for e in events]
    assert names[0] == "compact:start" and names[-1] == "compact:end"
    assert "compact:progress" in names and events[-1].result == result
    assert on_bus == events  # the same events go on the bus


async def test_the_next_request_sends_the_summary_then_the_kept_turns(env, fake_provider):
    await env.store.append_turn(env.sid, Turn("user", [ImageBlock("image/png", PNG)]))
    await env.seed(5)
    fake_provider.script(TAGGED)
    result = await env.runner.compact(env.sid, keep_turns=2, model_ref=GPT)
    assert result.restored_files == ("image (image/png)",)
    fake_provider.script("ok")
    await env.send("next question", model=GPT)
    req = fake_provider.model_requests[-1]
    assert validate(req) is None
    messages = [m for m in req.body["messages"] if m["role"] != "system"]
    first = blocks_text(messages[0])
    assert messages[0]["role"] == "user" and first.startswith(SUMMARY_HEADING)
    assert "ZEBRA-42" in first and "Question 4" in first  # the kept user turn follows it
    parts = [p["type"] for p in messages[0]["content"]]
    assert parts == ["text", "text", "image_url", "text"]  # summary, note, restored file, kept
    texts = [blocks_text(m) for m in messages[1:]]
    assert texts[0].startswith("Answer 4") and texts[-1] == "next question"
    assert not any("Question 3" in t for t in [first, *texts])


async def test_nothing_to_compact_and_no_session_make_no_request(env, fake_provider):
    await env.seed(2)
    result = await env.runner.compact(env.sid, keep_turns=4, model_ref=SONNET)
    assert not result.compacted and result.reason == "nothing-to-compact"
    missing = await env.runner.compact("no-such-session", keep_turns=0, model_ref=SONNET)
    assert not missing.compacted and missing.reason == "no-session"
    assert fake_provider.requests == []
    assert await env.store.list_compactions(env.sid) == []
    with pytest.raises(CompactInvalidInputError):
        await env.runner.compact(env.sid, keep_turns=-1)
    empty = await env.store.create_session()
    for role in ("user", "assistant", "user"):
        await env.store.append_turn(empty.id, Turn(role, [TextBlock("  ")]))  # type: ignore[arg-type]
    with pytest.raises(CompactInvalidInputError) as err:
        await env.runner.compact(empty.id, keep_turns=1, model_ref=SONNET)
    assert "nothing that can be summarized" in err.value.message
    assert fake_provider.requests == [] and not env.runner.is_running(empty.id)


async def test_compaction_is_rejected_while_a_run_works_and_a_run_while_it_works(
    env, fake_provider
):
    await env.seed(4)
    fake_provider.script("slow " * 40, token_delay_ms=5, chunk_size=5)
    run = asyncio.ensure_future(env.send("go"))
    await asyncio.sleep(0.1)
    with pytest.raises(RunInProgress):
        await env.runner.compact(env.sid, keep_turns=1)
    await run
    turns = await env.store.get_turns(env.sid)

    fake_provider.script(SUMMARY, token_delay_ms=5, chunk_size=4)
    compaction = asyncio.ensure_future(env.runner.compact(env.sid, keep_turns=1))
    await asyncio.sleep(0.1)
    assert env.runner.is_running(env.sid)  # the compaction works: what it refuses, below
    with pytest.raises(CompactionInProgress):
        await env.send("too early")
    with pytest.raises(CompactionInProgress):
        await env.runner.compact(env.sid, keep_turns=1)
    result = await compaction
    assert result.compacted and not env.runner.is_running(env.sid)
    after = await env.store.get_turns(env.sid)
    assert after[:-1] == turns  # the rejected run saved nothing
    assert not any(t.text() == "too early" for t in after)


async def test_cancel_aborts_and_saves_nothing(env, fake_provider):
    await env.seed(4)
    before = await env.store.get_turns(env.sid)
    fake_provider.script(SUMMARY * 5, token_delay_ms=5, chunk_size=4)
    events: list[CompactEvent] = []
    task = asyncio.ensure_future(env.runner.compact(env.sid, keep_turns=2,
                                                    on_event=events.append))
    for _ in range(100):
        await asyncio.sleep(0.01)
        if any(e.name == "compact:progress" and e.received_chars for e in events):
            break
    assert env.runner.cancel(env.sid)
    result = await task
    assert not result.compacted and result.reason == "aborted"
    assert await env.store.get_turns(env.sid) == before
    assert await env.store.list_compactions(env.sid) == []
    assert events[-1].name == "compact:end" and events[-1].result == result
    assert not env.runner.is_running(env.sid)


@pytest.mark.parametrize("model", [SONNET, GPT])
async def test_summary_request_resends_the_last_request_byte_for_byte(env, fake_provider, model):
    await env.store.set_session_system_prompt(env.sid, "You are terse.")
    for i in range(3):
        fake_provider.script(f"Reply number {i} about ZEBRA-42.")
        await env.send(f"Message {i}: " + "detail " * 30, model=model)
    fake_provider.script(f"<summary>{SUMMARY}</summary>")

    result = await env.runner.compact(env.sid, keep_turns=1)

    assert result.compacted and result.cache_reused and result.model == model
    previous, summary_req = fake_provider.model_requests[-2:]
    assert summary_req.body["model"] == previous.body["model"]
    old, new = previous.body["messages"], summary_req.body["messages"]
    if summary_req.api == "anthropic":
        assert summary_req.body["system"] == previous.body["system"]
        assert new[:-1] == old[:-1]
        assert new[-1]["content"][:-1] == old[-1]["content"]  # cache marks included
        note = new[-1]["content"][-1]
        assert result.usage is not None and result.usage.cache_read_tokens > 0
    else:
        assert new[:-1] == old
        note = new[-1]
        assert note["role"] == "user"
    assert "summary of the conversation above" in blocks_text({"content": [note]}
                                                               if "type" in note else note)
    # Byte-identical up to the note: the raw bodies agree until the note begins.
    raw_old, raw_new = previous.raw, summary_req.raw
    common = next(i for i, (a, b) in enumerate(zip(raw_old, raw_new, strict=False)) if a != b)
    start = raw_new.index(b'"messages"')
    assert start < common
    rest = raw_new[common:]
    assert rest.lstrip(b", ").startswith((b'{"type":"text","text":"[Context compaction',
                                          b'{"role":"user","content":"[Context compaction',
                                          b'{"type": "text", "text": "[Context compaction',
                                          b'{"role": "user", "content": "[Context compaction'))
    assert validate(summary_req) is None
    # Everything but the last turn (the kept reply) is summarized.
    stored = await env.store.get_turns(env.sid)
    assert result.replaced_count == 5 and stored[-1].id == result.summary_turn_id

    fake_provider.script("after")
    await env.send("and now?", model=model)
    assert validate(fake_provider.model_requests[-1]) is None


async def test_failed_cache_request_falls_back_to_a_separate_request(env, fake_provider):
    for i in range(3):  # long replies: a summary makes the context smaller (would-not-reduce)
        fake_provider.script(f"reply {i}: " + "a long answer " * 40)
        await env.send(f"message {i}")
    fake_provider.fail("server_error").script(TAGGED)
    result = await env.runner.compact(env.sid, keep_turns=2)
    assert result.compacted and not result.cache_reused
    assert result.model == "anthropic:claude-haiku-4-5"
    cache_try, separate = fake_provider.model_requests[-2:]
    assert cache_try.body["model"] == "claude-sonnet-4-6"
    assert separate.body["model"] == "claude-haiku-4-5"
    assert validate(separate) is None

    # An answer with no summary in it also falls back.
    fake_provider.script("done")
    await env.send("message 3")
    fake_provider.script("").script(TAGGED)
    again = await env.runner.compact(env.sid, keep_turns=1)
    assert again.compacted and not again.cache_reused
    assert [r.body["model"] for r in fake_provider.model_requests[-2:]] == [
        "claude-sonnet-4-6", "claude-haiku-4-5"]


async def test_an_answer_echoing_the_instruction_is_no_summary(env, fake_provider):
    """A server that echoes the request back: the word between the instruction's tags
    ("and") is not taken for a summary; the separate request is sent instead."""
    for i in range(3):  # long replies: a summary makes the context smaller (would-not-reduce)
        fake_provider.script(f"reply {i}: " + "the itinerary in detail " * 30)
        await env.send(f"message {i} about the LISBON-7 trip")
    echo = f"You said: please summarize. {ANSWER_FORMAT}"
    fake_provider.script(echo).script(TAGGED)
    result = await env.runner.compact(env.sid, keep_turns=2)
    assert result.compacted and not result.cache_reused
    [summary] = [t for t in await env.store.get_turns(env.sid) if t.id == result.summary_turn_id]
    assert summary.blocks[0].summary == SUMMARY
    assert extract_summary(echo) is None
    assert extract_summary(f"<summary>{SUMMARY}</summary>") == SUMMARY


async def test_the_fake_servers_cache_friendly_summary_lists_what_the_user_said(
    env, fake_provider
):
    """Unscripted, the fake server answers the resent chat + note like a model would
    (the README's try-it-out path): the summary names the user's messages."""
    for i in range(3):  # long replies: a summary makes the context smaller (would-not-reduce)
        fake_provider.script(f"reply {i}: " + "the itinerary in detail " * 30)
        await env.send(f"message {i} about the LISBON-7 trip")
    result = await env.runner.compact(env.sid, keep_turns=1)
    assert result.compacted and result.cache_reused
    [summary] = [t for t in await env.store.get_turns(env.sid) if t.id == result.summary_turn_id]
    text = summary.blocks[0].summary
    assert "The user said: message 0 about the LISBON-7 trip" in text
    assert "message 2 about the LISBON-7 trip" in text and "Context compaction" not in text


async def test_recompaction_updates_the_previous_summary(env, fake_provider):
    turns = await env.seed(4)
    fake_provider.script(TAGGED)
    first = await env.runner.compact(env.sid, keep_turns=2, model_ref=SONNET)
    await env.seed(3, start=10)
    fake_provider.script("<summary>\n## Topic\nZEBRA-42 migration, now scripted.\n"
                         "## Key points\nThe migration script is written and tested.\n"
                         "## Exact details\n/srv/zebra/config.toml, port 8443\n</summary>")
    second = await env.runner.compact(env.sid, keep_turns=2, model_ref=SONNET)
    assert second.compacted

    prompt = blocks_text(fake_provider.model_requests[-1].body["messages"][0])
    assert "Summary of the earlier conversation:\n## Topic\nPlanning the ZEBRA-42" in prompt
    assert UPDATE_PREVIOUS in prompt
    assert "Answer 3" in prompt and "Question 10" in prompt and "Question 0:" not in prompt

    stored = await env.store.get_turns(env.sid)
    block = stored[-1].blocks[0]
    assert isinstance(block, CompactSummaryBlock) and "port 8443" in block.summary
    assert block.first_turn_id == turns[0].id  # the new range covers the old one
    assert block.replaced_count == 12 and second.replaced_count == 12
    history = await env.store.history(env.sid)
    assert history[0].id == second.summary_turn_id
    assert first.summary_turn_id not in [t.id for t in history]
    assert [t.text()[:9] for t in history[1:]] == ["Question ", "Answer 12"]
    assert len(summary_turns(stored)) == 2  # nothing deleted


async def test_a_failed_summary_leaves_the_session_untouched(env, fake_provider):
    await env.seed(4)
    before = await env.store.get_turns(env.sid)
    fake_provider.fail("auth")
    with pytest.raises(AuthenticationFailed):
        await env.runner.compact(env.sid, keep_turns=2, model_ref=SONNET)
    # Blank answers: to the whole transcript (twice: once more with the format stated
    # plainly), then to the first part twice.
    fake_provider.script("   ", times=4)
    with pytest.raises(CompactNoSummaryError) as refused:
        await env.runner.compact(env.sid, keep_turns=2, model_ref=SONNET)
    assert refused.value.reason == "no-summary" and fake_provider.pending == 0
    assert "held no summary" in refused.value.message
    assert "Nothing was compacted" in refused.value.message
    # Too long for the summary model every time: whole (two levels), then in parts,
    # cut smaller after each refusal, until parts cannot be made smaller.
    fake_provider.fail("prompt_too_long", times=20)
    events: list[CompactEvent] = []
    with pytest.raises(CompactPromptTooLongError) as err:
        await env.runner.compact(env.sid, keep_turns=2, model_ref=SONNET, on_event=events.append)
    assert "Nothing was changed" in err.value.message
    assert events[-1].name == "compact:end" and events[-1].error is err.value
    assert len(fake_provider.model_requests) == 1 + 4 + 2 + 4
    last = fake_provider.model_requests[-1]
    assert "part 1 of" in blocks_text(last.body["messages"][0])  # never turns left out
    assert await env.store.get_turns(env.sid) == before
    assert await env.store.list_compactions(env.sid) == []
    assert (await env.store.get_session(env.sid)).usage.output_tokens == 0
    assert not env.runner.is_running(env.sid)


async def test_too_long_for_the_summary_model_is_shortened_then_refused(env, fake_provider):
    await env.settings(model_overrides={"claude-haiku-4-5": {"context_window": 10_000,
                                                             "max_output_tokens": 1_000}})
    await env.seed(2)
    await env.tool_round("search", "result line\n" * 3000, "toolu_1")  # ~9k tokens of output
    await env.seed(1, start=5)
    fake_provider.script(TAGGED)
    result = await env.runner.compact(env.sid, keep_turns=2, model_ref=SONNET)
    assert result.compacted and result.dropped_count == 0
    (req,) = fake_provider.model_requests
    prompt = blocks_text(req.body["messages"][0])
    assert "characters left out" in prompt and len(prompt) < 20_000

    # A window too small even for the request asking for one part's summary.
    await env.settings(model_overrides={"claude-haiku-4-5": {"context_window": 500,
                                                             "max_output_tokens": 100}})
    await env.seed(3, words=200, start=20)
    with pytest.raises(CompactPromptTooLongError):
        await env.runner.compact(env.sid, keep_turns=1, model_ref=SONNET)
    assert len(fake_provider.model_requests) == 1  # refused by the estimate, nothing sent


async def test_skills_and_settings_model_are_used(env, fake_provider):
    env.compactor.skills = lambda sid: [Skill("pdf-tools", "Use pdftotext for PDFs.")]
    await env.settings(compaction__model="gpt-5-mini", compaction__keep_turns=1)
    await env.seed(3)
    fake_provider.script(TAGGED)
    result = await env.runner.compact(env.sid, model_ref=GPT)
    assert result.model == "openai:gpt-5-mini" and result.restored_skills == ("pdf-tools",)
    assert result.replaced_count == 5
    turn = (await env.store.get_turns(env.sid))[-1]
    assert "Use pdftotext" in turn.blocks[-1].text  # type: ignore[union-attr]
    body = fake_provider.model_requests[-1].body
    assert body["model"] == "gpt-5-mini" and validate(fake_provider.model_requests[-1]) is None
    assert json.dumps(body).count("Question 0") == 1

"""Regenerate checks what it can before the old answer is moved: a refusal changes nothing."""

from __future__ import annotations

import base64

import pytest

from parley.core.chat.regenerate import RegenerateRefused, regenerate
from parley.core.chat.run import RunFailed
from parley.core.content import DocumentBlock, TextBlock, ToolResultBlock, ToolUseBlock, Turn
from tests.core.hubs import fake_workspace

CLAUDE = "anthropic:claude-sonnet-4-6"
LLAMA = "local:llama3.2:3b"
PDF = b"%PDF-1.4\n1 0 obj<</Type/Catalog>>endobj\ntrailer<<>>\n%%EOF\n"


@pytest.fixture
async def env(tmp_path, fake_provider):
    ws = await fake_workspace(tmp_path, fake_provider, compatible={
        "name": "Local", "provider_id": "local", "default_model": "llama3.2:3b"})
    session = await ws.store.create_session(title="Report", model=CLAUDE)
    yield ws.store, ws.runner, session.id
    await ws.close()


async def _answered_with_pdf(store, runner, sid, fake_provider):
    doc = DocumentBlock("application/pdf", base64.b64encode(PDF).decode(), "doc.pdf")
    fake_provider.script("A summary.")
    await runner.send(sid, [doc, TextBlock("Summarize")], model_ref=CLAUDE)
    return [(t.id, t.text()) for t in await store.get_turns(sid)]


async def test_a_pdf_for_a_server_that_reads_none_is_refused_before_anything_moves(
        env, fake_provider):
    store, runner, sid = env
    before = await _answered_with_pdf(store, runner, sid, fake_provider)
    sent = len(fake_provider.model_requests)
    events: list = []

    with pytest.raises(RegenerateRefused) as refused:
        await regenerate(runner, sid, model_ref=LLAMA, on_event=events.append)

    message = refused.value.message
    assert "“doc.pdf” can't be sent to this OpenAI-compatible server" in message
    assert message.endswith("Nothing was sent, and the answer is unchanged.")
    assert "your conversation is saved" not in message  # one ending, not two
    assert refused.value.model_ref == LLAMA
    assert events == []  # no ReplySetAside, no run
    assert [(t.id, t.text()) for t in await store.get_turns(sid)] == before
    assert len(await store.get_tree(sid)) == len(before)  # no branch
    assert len(fake_provider.model_requests) == sent
    assert not runner.is_running(sid)  # released: the chat's own model still works

    fake_provider.script("Another summary.")
    new = await regenerate(runner, sid, model_ref=CLAUDE)
    assert new is not None and new.text() == "Another summary."


async def test_a_provider_that_is_not_set_up_is_refused(env, fake_provider):
    store, runner, sid = env
    fake_provider.script("Hello back.")
    await runner.send(sid, [TextBlock("Hello")], model_ref=CLAUDE)

    with pytest.raises(RegenerateRefused) as refused:
        await regenerate(runner, sid, model_ref="gone:some-model")
    assert "No provider called 'gone' is set up" in refused.value.message
    with pytest.raises(RegenerateRefused):
        await regenerate(runner, sid, model_ref="no-colon")
    assert [t.text() for t in await store.get_turns(sid)] == ["Hello", "Hello back."]
    assert len(await store.get_tree(sid)) == 2  # no branch


async def test_only_the_files_the_new_request_carries_count(env, fake_provider):
    """A PDF in the reply being replaced (a tool's output) is not sent again: no refusal."""
    store, runner, sid = env
    doc = DocumentBlock("application/pdf", base64.b64encode(PDF).decode(), "tool.pdf")
    for t in [
        Turn("user", [TextBlock("Fetch the report")]),
        Turn("assistant", [ToolUseBlock("call_1", "fetch", {"what": "report"})], model=CLAUDE),
        Turn("user", [ToolResultBlock("call_1", (doc,))]),
        Turn("assistant", [TextBlock("It says hi.")], model=CLAUDE),
    ]:
        await store.append_turn(sid, t)
    fake_provider.script("From llama.")
    new = await regenerate(runner, sid, model_ref=LLAMA)
    assert new is not None and new.text() == "From llama." and new.model == LLAMA
    assert [t.text() for t in await store.get_turns(sid)] == ["Fetch the report", "From llama."]
    assert len(await store.get_tree(sid)) == 5  # the old reply kept, as a branch


async def test_a_failure_after_the_checks_still_keeps_the_old_answer(env, fake_provider):
    store, runner, sid = env
    await _answered_with_pdf(store, runner, sid, fake_provider)
    fake_provider.fail("bad_request")
    events: list = []
    assert await regenerate(runner, sid, model_ref=CLAUDE, on_event=events.append) is None
    assert any(isinstance(e, RunFailed) for e in events)
    kept = [t.turn for t in await store.get_tree(sid) if not t.on_path]
    assert kept[-1].text() == "A summary."

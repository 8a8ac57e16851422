"""Regenerate: the new answer takes the last reply's place on the path, the old one is kept
as a branch beside it (no copy, no session).

Every test runs on a sessions.db file and on a PostgreSQL database (``env`` below).
"""

from __future__ import annotations

import base64
import io

import pytest
from PIL import Image

from parley.core.chat.regenerate import NothingToRegenerate, ReplySetAside, regenerate, reply_start
from parley.core.chat.run import RunFailed, RunFinished, RunInProgress, RunStarted
from parley.core.content import ImageBlock, TextBlock, ToolResultBlock, ToolUseBlock, Turn
from parley.core.store import tree as tree_repo
from tests.core.hubs import fake_workspace
from tests.fakes.validation import validate_anthropic, validate_openai

CLAUDE = "anthropic:claude-sonnet-4-6"
GPT = "openai:gpt-5"


@pytest.fixture
async def env(tmp_path, fake_provider, any_target):
    ws = await fake_workspace(tmp_path, fake_provider, at=any_target)  # a file, then PostgreSQL
    session = await ws.store.create_session(title="Trip")
    yield ws.store, ws.runner, session.id
    await ws.close()


async def branch_texts(store, sid: str) -> list[tuple[str, bool]]:
    """``(text, on the path)`` of every turn stored in the session, in stored order."""
    return [(t.turn.text(), t.on_path) for t in await store.get_tree(sid)]


async def test_the_new_answer_is_a_sibling_of_the_old_which_is_kept(env, fake_provider):
    store, runner, sid = env
    fake_provider.script("Answer one.").script("Answer two.")
    await runner.send(sid, [TextBlock("Where to?")], model_ref=CLAUDE)
    prompt, old = await store.get_turns(sid)

    events: list = []
    new = await regenerate(runner, sid, model_ref=CLAUDE, on_event=events.append)

    assert new is not None and new.text() == "Answer two."
    now = await store.get_turns(sid)
    assert [t.id for t in now] == [prompt.id, new.id]
    assert await store.list_forks(sid) == [] and len(await store.list_sessions()) == 1
    tree = await store.get_tree(sid)
    assert [(t.turn.id, t.parent_id, t.on_path) for t in tree] == [
        (prompt.id, None, True), (old.id, prompt.id, False), (new.id, prompt.id, True)]
    kept = tree[1].turn
    assert kept.text() == "Answer one."
    assert kept.model == old.model and kept.created_at == old.created_at
    point = (await store.branches(sid)).points[new.id]
    assert (point.index, point.total, point.turn_ids) == (2, 2, (old.id, new.id))

    assert events[0] == ReplySetAside(sid, (old.id,))
    assert isinstance(events[1], RunStarted) and isinstance(events[-1], RunFinished)
    body = fake_provider.model_requests[-1].body
    assert validate_anthropic(body) is None
    assert [m["role"] for m in body["messages"]] == ["user"]  # the old answer is not sent


async def test_the_model_can_be_switched_for_the_new_answer(env, fake_provider):
    store, runner, sid = env
    fake_provider.script("From Claude.").script("From GPT.")
    await runner.send(sid, [TextBlock("Hello")], model_ref=CLAUDE)
    new = await regenerate(runner, sid, model_ref=GPT)
    assert new is not None and new.model == GPT and new.text() == "From GPT."
    req = fake_provider.model_requests[-1]
    assert req.route == "/v1/chat/completions" and validate_openai(req.body) is None
    # Another model's answer is a sibling like any other; its ``model`` says whose.
    prompt, old, again = (t.turn for t in await store.get_tree(sid))
    assert (old.model, again.model) == (CLAUDE, GPT)
    assert (await store.branches(sid)).points[new.id].turn_ids == (old.id, new.id)


async def test_a_reply_with_tool_calls_is_set_aside_whole(env, fake_provider):
    store, runner, sid = env
    data = base64.b64encode(_png()).decode()
    turns = [
        Turn("user", [TextBlock("Weather?"), ImageBlock("image/png", data)]),
        Turn("assistant", [ToolUseBlock("call_1", "weather", {"city": "Oslo"})], model=CLAUDE),
        Turn("user", [ToolResultBlock("call_1", (TextBlock("rain"),))]),
        Turn("assistant", [TextBlock("It rains.")], model=CLAUDE),
    ]
    for t in turns:
        await store.append_turn(sid, t)
    assert reply_start(turns) == 1

    fake_provider.script("Bring an umbrella.")
    new = await regenerate(runner, sid, model_ref=CLAUDE)
    assert new is not None
    now = await store.get_turns(sid)
    assert [t.id for t in now] == [turns[0].id, new.id]
    assert await branch_texts(store, sid) == [
        ("Weather?", True), ("", False), ("", False), ("It rains.", False),
        ("Bring an umbrella.", True),
    ]  # fmt: skip
    content = fake_provider.model_requests[-1].body["messages"][0]["content"]
    assert content[1]["type"] == "image"  # the prompt's image is sent again
    assert await store.attachment_usage() == (1, len(_png()))  # stored once
    await store.delete_turns(sid, [turns[1].id])  # the old reply's branch, whole
    assert await branch_texts(store, sid) == [("Weather?", True), ("Bring an umbrella.", True)]
    assert (await store.attachment_usage())[0] == 1  # still used by the prompt


async def test_a_failed_regeneration_keeps_the_old_answer_as_a_branch(env, fake_provider):
    store, runner, sid = env
    fake_provider.script("Old answer.")
    await runner.send(sid, [TextBlock("Q")], model_ref=CLAUDE)
    prompt, old = await store.get_turns(sid)
    fake_provider.fail("server_error")
    events: list = []
    assert await regenerate(runner, sid, model_ref=CLAUDE, on_event=events.append) is None
    assert any(isinstance(e, RunFailed) for e in events)
    assert [t.role for t in await store.get_turns(sid)] == ["user"]
    assert await branch_texts(store, sid) == [("Q", True), ("Old answer.", False)]
    # The path ends at the prompt; the old answer is one step away (‹ 1/2 ›).
    point = (await store.branches(sid)).points[prompt.id]
    assert (point.index, point.total, point.target(-1)) == (2, 2, (old.id, False))
    assert not runner.is_running(sid)

    fake_provider.script("New answer.")  # the session ends with the prompt: Retry works
    assert (await runner.retry(sid, model_ref=CLAUDE)).text() == "New answer."


async def test_without_a_reply_it_sends_the_prompt_again_and_branches_nothing(env,
                                                                          fake_provider):
    store, runner, sid = env
    with pytest.raises(NothingToRegenerate):
        await regenerate(runner, sid, model_ref=CLAUDE)
    await store.append_turn(sid, Turn("user", [TextBlock("Unanswered")]))
    fake_provider.script("Answered.")
    new = await regenerate(runner, sid, model_ref=CLAUDE)
    assert new is not None and new.text() == "Answered."
    assert await branch_texts(store, sid) == [("Unanswered", True), ("Answered.", True)]
    assert (await store.branches(sid)).points == {}


async def test_a_busy_session_is_left_untouched(env, fake_provider):
    store, runner, sid = env
    fake_provider.script("Answer.")
    await runner.send(sid, [TextBlock("Q")], model_ref=CLAUDE)
    runner.claim(sid)
    try:
        with pytest.raises(RunInProgress):
            await regenerate(runner, sid, model_ref=CLAUDE)
    finally:
        runner.release(sid)
    assert len(await store.get_turns(sid)) == 2 and len(await store.get_tree(sid)) == 2


async def test_setting_the_reply_aside_is_all_or_nothing(env, fake_provider, monkeypatch):
    store, runner, sid = env
    fake_provider.script("Answer.")
    await runner.send(sid, [TextBlock("Q")], model_ref=CLAUDE)

    def crash(*_args):
        raise RuntimeError("power cut between cutting the path and stamping the prompt")

    monkeypatch.setattr(tree_repo, "leaf", _crash_second(tree_repo.leaf))
    with pytest.raises(RuntimeError):
        await regenerate(runner, sid, model_ref=CLAUDE)
    assert [t.text() for t in await store.get_turns(sid)] == ["Q", "Answer."]
    assert not runner.is_running(sid)
    assert (await store.branches(sid)).points == {}


def _crash_second(leaf):
    """``tree.leaf`` that fails the second time it is called (after the path was cut)."""
    calls = []

    def wrapped(*args):
        calls.append(1)
        if len(calls) == 2:
            raise RuntimeError("power cut after the path was cut")
        return leaf(*args)

    return wrapped


def _png() -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", (6, 6), "green").save(buf, "PNG")
    return buf.getvalue()


async def test_after_a_compaction_the_kept_reply_is_regenerated_not_the_summary(
        env, fake_provider):
    """The summary turn is stored after the turns a compaction kept; the last reply
    and its prompt are found in conversation order, and the summary stays."""
    from parley.core.content import CompactSummaryBlock

    store, runner, sid = env
    stored = [await store.append_turn(sid, Turn("user" if i % 2 == 0 else "assistant",
                                                [TextBlock(f"turn {i}")]))
              for i in range(8)]
    summary = Turn("user", [CompactSummaryBlock("<summary>Turns 0 to 3.</summary>", 4)])
    await store.record_compaction(sid, summary, first_turn_id=stored[0].id,
                                  last_turn_id=stored[3].id, replaced_count=4)
    fake_provider.script("A new turn 7.")
    events: list = []
    new = await regenerate(runner, sid, model_ref=CLAUDE, on_event=events.append)

    assert new is not None and new.text() == "A new turn 7."
    # The summary was written below turn 7 (after it): it leaves the path with it and
    # stays in that branch. Its range (turns 0 to 3) lies before the branch point (turn
    # 6), so it still applies: the new branch starts with one copy of it, and the new
    # answer goes below the copy (issue 32: a branch made after a summary keeps it).
    ev = events[0]
    assert ev.removed_turn_ids == (stored[7].id, summary.id)
    now = await store.get_turns(sid)
    copy = now[7]
    assert ev.carried == copy.id and copy.id != summary.id
    assert [t.id for t in now] == [*(t.id for t in stored[:7]), copy.id, new.id]
    [block] = copy.blocks
    assert isinstance(block, CompactSummaryBlock)
    assert block.summary == "<summary>Turns 0 to 3.</summary>"
    assert (block.first_turn_id, block.last_turn_id) == (stored[0].id, stored[3].id)
    rows = {c.summary_turn_id: c for c in await store.list_compactions(sid)}
    assert set(rows) == {summary.id, copy.id}
    assert block.compaction_id == rows[copy.id].id != rows[summary.id].id
    assert (rows[copy.id].first_turn_id, rows[copy.id].last_turn_id) == (
        stored[0].id, stored[3].id)
    tree = {t.turn.id: t for t in await store.get_tree(sid)}
    assert len(tree) == 8 + 1 + 1 + 1  # the turns, the summary, its copy, the new answer
    assert tree[summary.id].parent_id == stored[7].id and not tree[summary.id].on_path
    assert tree[copy.id].parent_id == stored[6].id and tree[new.id].parent_id == copy.id
    body = fake_provider.model_requests[-1].body
    # The request the new answer came from was compacted: the summary, turns 4 to 6.
    assert "Turns 0 to 3" in str(body) and "turn 7" not in str(body)
    assert not any(f"turn {i}" in str(body) for i in range(4))
    assert "turn 6" in str(body["messages"][-1]["content"])
    context = await store.context_turns(sid)
    assert [t.id for t in context] == [stored[0].id, *(t.id for t in stored[3:7]),
                                       copy.id, new.id]
    # ‹ 2/2 › under the new answer (the copy is not a branch point); ‹ leads back to the
    # old answer with its own summary.
    point = (await store.branches(sid)).points[new.id]
    assert (point.index, point.total, point.turn_ids) == (2, 2, (stored[7].id, new.id))
    assert copy.id not in (await store.branches(sid)).points
    await store.show_branch(sid, point.target(-1)[0])
    assert [t.id for t in await store.get_turns(sid)] == [
        *(t.id for t in stored), summary.id]
    back = (await store.branches(sid)).points[stored[7].id]
    assert (back.index, back.total) == (1, 2) and back.target(+1) == (new.id, False)
    await store.show_branch(sid, new.id)
    assert [t.id for t in await store.get_turns(sid)][-2:] == [copy.id, new.id]

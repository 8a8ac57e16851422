"""A good summary in the wrong wrapper is still a summary; a reply or an echo is not.

The rule (``parley.core.compaction.check``) on answers as small local models write them,
then the whole path: a summary model that never writes the ``<summary>`` tags, asked
for real over HTTP (the fake provider, an enforced 20,000-token window), still compacts
a long chat, and a refused answer is asked once more with the format stated plainly.
"""

from __future__ import annotations

from parley.core.compaction.check import Source, check_answer
from parley.core.compaction.prompt import ANSWER_FORMAT, PLAIN_FORMAT, render_turn
from parley.core.compaction.unseen import load_unseen
from parley.core.content import TextBlock, Turn
from tests.core.compaction_support import SUMMARY, blocks_text
from tests.core.unseen_support import chat, small_enforced_window
from tests.fakes.script import CHATTY

TURNS = [
    Turn("user", [TextBlock("Plan the ZEBRA-42 migration; the port is 8443.")]),
    Turn("assistant", [TextBlock("The ZEBRA-42 migration needs a config at "
                                 "/srv/zebra/config.toml and a script.")]),
    Turn("user", [TextBlock("Write the script now, please.")]),
]
SOURCE = Source.of(render_turn(t) for t in TURNS)


def test_an_untagged_summary_of_the_conversation_is_accepted():
    verdict = check_answer(SUMMARY, "end_turn", 400, SOURCE)
    assert verdict.ok and verdict.summary == SUMMARY
    assert check_answer(SUMMARY, "end_turn", 400).reason == "no-summary"  # no source: tags


def test_a_reply_an_echo_or_nothing_without_tags_is_refused():
    reply = "Here is the script you asked for:\n```sh\n#!/bin/sh\necho done\n```\n" * 3
    assert check_answer(reply, "end_turn", 400, SOURCE).reason == "no-summary"
    assert check_answer(CHATTY, "end_turn", 400, SOURCE).reason == "no-summary"
    echo = f"You said: {SUMMARY}\n{ANSWER_FORMAT}"
    assert check_answer(echo, "end_turn", 400, SOURCE).reason == "no-summary"
    assert not check_answer(f"{SUMMARY}\n{PLAIN_FORMAT}", "end_turn", 400, SOURCE).ok
    assert check_answer("   ", "end_turn", 400, SOURCE).reason == "no-summary"
    # Still judged as any summary: cut off, or far too short for what it replaces.
    assert check_answer(SUMMARY, "max_tokens", 400, SOURCE).reason == "cut-off"
    assert check_answer("ZEBRA-42 migration config", "end_turn", 4_000, SOURCE).reason == (
        "too-short")


async def test_a_summary_model_that_never_writes_tags_still_compacts_a_long_chat(
    env, fake_provider
):
    small_enforced_window(fake_provider, "untagged")
    fake_provider.summary_point_chars = 1_000

    unanswered, _ = await chat(env)

    assert unanswered == 0 and fake_provider.windows.refused == 0
    rows = await env.store.list_compactions(env.sid)
    assert rows and {r.reason for r in rows} == {"auto"}
    assert await load_unseen(env.store, env.sid) is None
    turns = await env.store.get_turns(env.sid)
    summary = [t for t in turns if t.blocks[0].type == "compact_summary"][-1]
    assert summary.blocks[0].summary.startswith("What happened so far:")  # type: ignore[union-attr]


async def test_a_refused_answer_is_asked_once_more_with_the_format_stated_plainly(
    env, fake_provider
):
    await env.seed(5)
    await env.settings(compaction__model="anthropic:claude-haiku-4-5")
    fake_provider.script(CHATTY)  # then the fake answers as a model would

    result = await env.runner.compact(env.sid, keep_turns=1)

    assert result.compacted and result.summary_parts == 1
    first, again = fake_provider.model_requests[-2:]
    asked = blocks_text(again.body["messages"][-1])
    assert asked == blocks_text(first.body["messages"][-1]) + "\n\n" + PLAIN_FORMAT

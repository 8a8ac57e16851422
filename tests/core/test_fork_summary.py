"""A fork of a compacted chat keeps the summary that stands before its fork point.

A compaction stores its summary turn after the turns it keeps word for word, though the
chat shows the summary's card where the replaced turns began. A fork made at one of the
kept turns (after the card, as the chat shows it) used to copy the path up to there only,
leaving the summary behind: the fork showed no card and its next request sent the
replaced turns whole. Real store (a sessions.db file and PostgreSQL), real compaction
and requests over the fake provider.
"""

from __future__ import annotations

from typing import Any

import pytest

from parley.core.content import CompactSummaryBlock, TextBlock, Turn
from parley.core.wire import SUMMARY_HEADING
from tests.core.compaction_support import GPT, SUMMARY, TAGGED, Env, blocks_text, validate


@pytest.fixture
def env(any_env: Env) -> Env:
    """The shared ``env`` (tests/core/conftest.py), once on each store backend."""
    return any_env


async def compacted(env: Env, fake: Any) -> list[Turn]:
    """Ten turns ("Question 0" … "Answer 4"), compacted keeping the last four, then one
    more exchange: returns the stored turns (the summary turn at index 10)."""
    await env.seed(5)
    fake.script(TAGGED)
    result = await env.runner.compact(env.sid, keep_turns=4, model_ref=GPT)
    assert result.compacted and result.replaced_count == 6
    fake.script("Answer after the summary.")
    await env.send("Question after the summary", model=GPT)
    stored = await env.store.get_turns(env.sid)
    assert stored[10].id == result.summary_turn_id and len(stored) == 13
    return stored


def wire(fake: Any) -> list[dict[str, Any]]:
    """The last model request's messages (no system message), as the provider got them."""
    req = fake.model_requests[-1]
    assert validate(req) is None
    return [m for m in req.body["messages"] if m["role"] != "system"]


def texts(turns: list[Turn]) -> list[str]:
    return [t.text() if not isinstance(t.blocks[0], CompactSummaryBlock) else "SUMMARY"
            for t in turns]


async def shown(env: Env, sid: str) -> tuple[list[str], dict[str, list[str]]]:
    """What the chat shows at the top level (turns in conversation order, a card as
    "SUMMARY"), and each card's replaced turns' texts by summary turn id."""
    window = await env.store.transcript_window(sid)
    cards = {s.summary_turn_id: texts((await env.store.compacted_turns(
        sid, s.summary_turn_id)).turns) for s in window.spans.values()}
    order = sorted(window.turns, key=lambda t: min(
        [window.seqs[t.id]] + [s.first_seq for s in window.spans.values()
                               if s.summary_turn_id == t.id]))
    return texts(order), cards


async def send_in(env: Env, fake: Any, sid: str, text: str) -> list[dict[str, Any]]:
    fake.script("ok")
    await env.runner.send(sid, [TextBlock(text)], model_ref=GPT)
    return wire(fake)


@pytest.mark.parametrize("at", [7, 8, 9])  # "Answer 3", "Question 4", "Answer 4"
async def test_a_fork_at_a_turn_kept_after_the_summary_shows_its_card_and_sends_it(
        env, fake_provider, at):
    stored = await compacted(env, fake_provider)
    # What the parent sends next, to compare the fork's request with up to the fork point.
    parent = await send_in(env, fake_provider, env.sid, "Parent's next question")

    fork = await env.store.fork(env.sid, stored[at].id)

    # (a) the card where the replaced turns began, expanding to them, then the kept turns
    top, cards = await shown(env, fork.id)
    assert top == ["SUMMARY", *texts(stored[6:at + 1])]
    assert list(cards.values()) == [texts(stored[:6])]
    [summary] = [t for t in await env.store.get_turns(fork.id)
                 if isinstance(t.blocks[0], CompactSummaryBlock)]
    [row] = await env.store.list_compactions(fork.id)
    assert row.summary_turn_id == summary.id != stored[10].id
    assert fork.turn_count == at + 2  # the copies and the summary's copy

    # (b) the fork's next request: the parent's up to the fork point, then the new message
    sent = await send_in(env, fake_provider, fork.id, "Fork's question")
    first = blocks_text(sent[0])
    assert first.startswith(SUMMARY_HEADING) and SUMMARY.splitlines()[1] in first
    assert "Question 0" not in str(sent) and "Answer 2" not in str(sent)
    n = len(sent) - 1
    if stored[at].role == "user":  # the fork ends with a message: the new one joins it
        assert sent[:n] == parent[:n] and sent[n]["role"] == "user"
        assert blocks_text(sent[n]).startswith(blocks_text(parent[n]))
    else:
        assert sent[:n] == parent[:n]
    assert blocks_text(sent[-1]).endswith("Fork's question")
    # the fork goes on below the summary's copy: it is not compacted again
    after = await env.store.get_turns(fork.id)
    assert after[at + 1].id == summary.id
    assert texts(after[at + 2:]) == ["Fork's question", "ok"]


async def test_a_fork_after_the_summary_turn_is_sent_as_the_parent(env, fake_provider):
    stored = await compacted(env, fake_provider)
    parent = await send_in(env, fake_provider, env.sid, "Parent's next question")
    fork = await env.store.fork(env.sid, stored[12].id)  # "Answer after the summary."
    top, cards = await shown(env, fork.id)
    assert top == ["SUMMARY", *texts(stored[6:10]), *texts(stored[11:])]
    assert list(cards.values()) == [texts(stored[:6])]
    sent = await send_in(env, fake_provider, fork.id, "Fork's question")
    assert sent[:-1] == parent[:-1]


@pytest.mark.parametrize("at", [3, 5])  # inside the summarized turns; 5 is their last
async def test_a_fork_inside_the_summarized_turns_is_the_plain_conversation(
        env, fake_provider, at):
    stored = await compacted(env, fake_provider)
    fork = await env.store.fork(env.sid, stored[at].id)
    top, cards = await shown(env, fork.id)
    assert top == texts(stored[:at + 1]) and cards == {}
    assert await env.store.list_compactions(fork.id) == []
    sent = await send_in(env, fake_provider, fork.id, "Fork's question")
    assert SUMMARY_HEADING not in str(sent) and blocks_text(sent[0]).startswith("Question 0")


async def test_a_fork_of_a_fork_keeps_the_summary(env, fake_provider):
    stored = await compacted(env, fake_provider)
    # A fork at a kept turn, then its fork at one of its own kept turns.
    first = await env.store.fork(env.sid, stored[9].id)
    copies = await env.store.get_turns(first.id)
    second = await env.store.fork(first.id, copies[7].id)
    top, cards = await shown(env, second.id)
    assert top == ["SUMMARY", *texts(stored[6:8])] and list(cards.values()) == [
        texts(stored[:6])]
    # A fork after the summary, then its fork at a kept turn.
    third = await env.store.fork(env.sid, stored[12].id)
    fourth = await env.store.fork(third.id, (await env.store.get_turns(third.id))[8].id)
    assert (await shown(env, fourth.id))[0] == ["SUMMARY", *texts(stored[6:9])]
    for fork in (second, fourth):
        sent = await send_in(env, fake_provider, fork.id, "Fork's question")
        assert blocks_text(sent[0]).startswith(SUMMARY_HEADING)
        assert "Answer 2" not in str(sent) and "Question 3" in blocks_text(sent[0])


async def test_a_fork_at_a_kept_turn_of_a_second_compaction_keeps_the_latest_summary(
        env, fake_provider):
    stored = await compacted(env, fake_provider)
    await env.seed(3, start=5)  # Question 5 … Answer 7
    fake_provider.script(TAGGED.replace("ZEBRA-42", "ZEBRA-43"))
    second = await env.runner.compact(env.sid, keep_turns=4, model_ref=GPT)
    assert second.compacted
    now = await env.store.get_turns(env.sid)
    parent = await send_in(env, fake_provider, env.sid, "Parent's next question")
    kept = now.index(next(t for t in now if t.text().startswith("Answer 6")))
    fork = await env.store.fork(env.sid, now[kept].id)
    top, cards = await shown(env, fork.id)
    assert top == ["SUMMARY", *texts(now[kept - 1:kept + 1])]  # Question 6, Answer 6
    sent = await send_in(env, fake_provider, fork.id, "Fork's question")
    assert "ZEBRA-43" in blocks_text(sent[0]) and "ZEBRA-42" not in str(sent)
    assert sent[:-1] == parent[:len(sent) - 1]
    assert len(stored) == 13  # the first compaction's turns are still all stored


async def test_a_fork_at_the_summary_card_starts_from_the_summary(env, fake_provider):
    """Trial 20c: Fork on the card copied the whole stored path up to the summary turn,
    so the fork showed the card and the turns kept after it. A fork at the card is a
    chat that starts from that summary: the card (opening to the turns it replaced) and
    nothing after it; its next request is the summary, then the new message."""
    stored = await compacted(env, fake_provider)
    summary_id = stored[10].id

    fork = await env.store.fork(env.sid, summary_id)

    top, cards = await shown(env, fork.id)
    assert top == ["SUMMARY"] and list(cards.values()) == [texts(stored[:6])]
    assert fork.forked_from_turn_id == summary_id and fork.turn_count == 7
    copies = await env.store.get_turns(fork.id)
    assert texts(copies) == [*texts(stored[:6]), "SUMMARY"]
    [row] = await env.store.list_compactions(fork.id)
    assert row.summary_turn_id == copies[-1].id != summary_id
    assert (row.first_turn_id, row.last_turn_id) == (copies[0].id, copies[5].id)
    assert len(await env.store.get_turns(env.sid)) == 13  # the parent is as it was

    sent = await send_in(env, fake_provider, fork.id, "Fork's question")
    assert blocks_text(sent[0]).startswith(SUMMARY_HEADING)
    assert blocks_text(sent[-1]).endswith("Fork's question")
    for gone in ("Question 0", "Answer 2", "Question 3", "Answer 4", "after the summary"):
        assert gone not in str(sent)
    after = await env.store.get_turns(fork.id)
    assert texts(after[6:]) == ["SUMMARY", "Fork's question", "ok"]


async def test_a_fork_at_the_card_of_a_second_compaction_holds_both_summaries(
        env, fake_provider):
    await compacted(env, fake_provider)
    await env.seed(3, start=5)  # Question 5 … Answer 7
    fake_provider.script(TAGGED.replace("ZEBRA-42", "ZEBRA-43"))
    second = await env.runner.compact(env.sid, keep_turns=4, model_ref=GPT)
    assert second.compacted

    fork = await env.store.fork(env.sid, second.summary_turn_id)

    top, _cards = await shown(env, fork.id)
    assert top == ["SUMMARY"]
    assert len(await env.store.list_compactions(fork.id)) == 2  # the card opens to the first
    sent = await send_in(env, fake_provider, fork.id, "Fork's question")
    assert "ZEBRA-43" in blocks_text(sent[0]) and "ZEBRA-42" not in str(sent)
    assert "Question 6" not in str(sent) and "Answer 7" not in str(sent)
    # and a fork of that fork at its card is the same
    again = await env.store.fork(fork.id, (await env.store.get_turns(fork.id))[-3].id)
    assert (await shown(env, again.id))[0] == ["SUMMARY"]

"""A long chat never stops because no summary can be made: the newest turns that fit go out.

The fake provider enforces a 20,000-token window (the real "prompt is too long" refusal)
and answers every summary request the way a model or server fails to give one: a chatty
reply without tags, a summary cut off at the output limit, an empty answer, or HTTP 500.
Each of 15 messages of about 2,000 tokens is answered; no request is refused as over the
window; the store keeps every turn, and the session's ``Unseen`` record (app state
``unseen:<session>``) says which turns the model no longer sees and why — also after
the store is opened again. A later good summary removes the record. Real sessions.db,
real SDKs over HTTP.
"""

from __future__ import annotations

import pytest

from parley.core.app_state import UNSEEN
from parley.core.chat.events import OlderTurnsUnseen, RunFailed
from parley.core.compaction.unseen import Unseen, load_unseen
from parley.core.content import apply_compactions
from parley.core.store.async_store import AsyncStore
from tests.core.compaction_support import SONNET, blocks_text, validate
from tests.core.unseen_support import MESSAGES, chat, small_enforced_window


def first_text(request) -> str:
    return blocks_text(request.body["messages"][0])


REASONS = {
    "chatty": "summary-refused",
    "cut": "summary-refused",
    "empty": "summary-refused",
    "error": "summary-failed",
}


@pytest.mark.parametrize("answers", sorted(REASONS))
async def test_every_message_is_answered_when_no_summary_comes(env, fake_provider, answers,
                                                               tmp_path):
    small_enforced_window(fake_provider, answers)

    unanswered, events = await chat(env)

    assert unanswered == 0 and not [e for e in events if isinstance(e, RunFailed)]
    assert fake_provider.windows.refused == 0
    assert await env.store.list_compactions(env.sid) == []
    stored = await env.store.get_turns(env.sid)
    assert len(stored) == 2 * MESSAGES  # the store keeps every turn
    unseen = await load_unseen(env.store, env.sid)
    assert unseen is not None and unseen.reason == REASONS[answers]
    ids = [t.id for t in stored]
    at = ids.index(unseen.first_seen_turn_id)
    assert unseen.hidden_turns == at >= 2 and stored[at].role == "user"
    assert "Claude" in unseen.detail and "anthropic:" not in unseen.detail
    # The last request starts at that turn, whole, and is valid on the wire.
    chats = [r for r in fake_provider.model_requests if "Message 14" in str(r.body)]
    last = chats[-1]
    assert first_text(last).startswith(stored[at].text()[:40])
    assert validate(last) is None
    # Each write or move was told, the last one the record saved.
    told = [e.unseen for e in events if isinstance(e, OlderTurnsUnseen)]
    assert told and told[-1] == unseen
    # The window moved forward as the chat grew.
    firsts = [ids.index(u.first_seen_turn_id) for u in told if u is not None]
    assert firsts == sorted(firsts) and firsts[-1] > firsts[0]
    # Opened again (a restart), the record is the same.
    await env.store.close()
    again = await AsyncStore.open(tmp_path / "sessions.db")
    try:
        assert await load_unseen(again, env.sid) == unseen
    finally:
        await again.close()
        env.store = await AsyncStore.open(tmp_path / "sessions.db")


async def test_a_later_good_summary_removes_the_record(env, fake_provider):
    small_enforced_window(fake_provider, "empty")
    await chat(env, messages=8)
    assert await load_unseen(env.store, env.sid) is not None
    fake_provider.summary_answers = "summary"
    fake_provider.summary_point_chars = 1_000  # long enough for what it replaces

    unanswered, events = await chat(env, messages=3, start=8)

    assert unanswered == 0 and fake_provider.windows.refused == 0
    assert len(await env.store.list_compactions(env.sid)) >= 1
    assert await load_unseen(env.store, env.sid) is None
    assert await env.store.get_state(UNSEEN.key(env.sid)) is None
    told = [e.unseen for e in events if isinstance(e, OlderTurnsUnseen)]
    assert told and told[-1] is None
    # The request after the summary sends it, then the turns kept after it.
    last = fake_provider.model_requests[-1]
    assert "Summary of the earlier conversation" in first_text(last) or "summary" in \
        first_text(last).lower()
    live = apply_compactions(await env.store.get_turns(env.sid))
    assert live[0].blocks[0].type == "compact_summary"


async def test_compact_now_removes_the_record(env, fake_provider):
    small_enforced_window(fake_provider, "error")
    await chat(env, messages=8)
    assert isinstance(await load_unseen(env.store, env.sid), Unseen)
    fake_provider.summary_answers = "summary"
    fake_provider.summary_point_chars = 1_000

    result = await env.runner.compact(env.sid, model_ref=SONNET)

    assert result.compacted
    assert await load_unseen(env.store, env.sid) is None

"""The unseen-turns record follows the latest failure (issue 30): after the run left the
oldest turns off the wire because the summary model answered without a summary, a later
Compact now that fails for another reason (the summary request fails with HTTP 500)
gives the record that reason, detail and attempts, and tells it (``OlderTurnsUnseen``)
so the note redraws. Real sessions.db, real SDK over HTTP, enforced window."""

from __future__ import annotations

import pytest

from parley.core.chat.events import OlderTurnsUnseen
from parley.core.compaction.unseen import load_unseen
from parley.core.errors import ParleyError
from tests.core.unseen_support import chat, small_enforced_window


async def test_a_later_failed_compaction_updates_the_records_reason(env, fake_provider):
    small_enforced_window(fake_provider, "chatty")
    await chat(env, messages=10)
    before = await load_unseen(env.store, env.sid)
    assert before is not None and before.reason == "summary-refused"

    fake_provider.summary_answers = "error"  # the summary request now fails outright
    told: list = []
    with pytest.raises(ParleyError):
        await env.runner.compact(env.sid, on_unseen=told.append)

    after = await load_unseen(env.store, env.sid)
    assert after is not None and after.reason == "summary-failed"
    assert after.detail != before.detail and "could not write a summary" in after.detail
    assert after.attempts and after.attempts != before.attempts
    assert "anthropic:" not in after.detail  # models by their display names
    # the same turns are left off; only the cause changed
    assert (after.first_seen_turn_id, after.hidden_turns) == \
        (before.first_seen_turn_id, before.hidden_turns)
    assert [e.unseen for e in told if isinstance(e, OlderTurnsUnseen)] == [after]

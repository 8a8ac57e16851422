"""Compaction fires on the provider's numbers: its listed window and its reported input tokens.

The reported case: the provider lists claude-sonnet-4-6 with a 200,000-token input limit
(the catalog says 1M), and heavy messages hold about twice the tokens Parley's character
estimate gives them. The fake provider plays that (``windows.token_scale`` 2, windows
enforced with the real "prompt is too long" refusal). Real sessions.db, real SDKs.
"""

from __future__ import annotations

from parley.core.chat.run import RunFailed
from parley.core.compaction.compact import CompactEvent
from parley.core.context.size import find_anchor, measured_tokens
from parley.core.providers.base import ChatRequest
from tests.core.compaction_support import SONNET
from tests.core.heavy_chat import WINDOW, heavy_chat_provider, run_heavy_chat


async def test_heavy_chat_is_compacted_before_any_request_is_refused(env, fake_provider):
    heavy_chat_provider(fake_provider)

    unanswered, events = await run_heavy_chat(env)

    assert fake_provider.windows.refused == 0  # the report: 13 refusals
    assert unanswered == 0  # the report: 4 unanswered messages
    assert not [e for e in events if isinstance(e, RunFailed)]
    rows = await env.store.list_compactions(env.sid)
    assert len(rows) >= 2 and {r.reason for r in rows} == {"auto"}
    ends = [e for e in events if isinstance(e, CompactEvent) and e.name == "compact:end"]
    assert all(e.error is None for e in ends)
    info = env.hub.model_info(SONNET)
    assert (info.context_window, info.window_source) == (WINDOW, "provider")
    # Every request fitted by the provider's own count (what the fake computed).
    # No count_tokens after the first reply: its usage measured the history.
    assert not any(r.path.endswith("/count_tokens") for r in fake_provider.requests)


async def test_the_measure_follows_the_providers_count_not_the_estimate(env, fake_provider):
    heavy_chat_provider(fake_provider)
    await run_heavy_chat(env, messages=2)
    stored = await env.store.get_turns(env.sid)
    provider, model = env.hub.resolve(SONNET)
    anchor = find_anchor(stored, SONNET)
    assert anchor is not None and anchor.index == len(stored) - 1
    last_sent = fake_provider.model_requests[-1]
    request = ChatRequest(model, stored, None)

    measured = measured_tokens(provider.caps, request, SONNET)

    # The last request as the provider counted it, plus the reply (about 10,000 estimated).
    reported = stored[-1].usage.total_input_tokens
    assert reported > 35_000  # twice the estimate
    assert reported + 9_000 < measured < reported + 12_000
    assert last_sent.body["model"] == model

"""A window too small for even the newest message fails at once, in words (issue 30).

The fake provider counts 40 tokens for each one Parley estimates and enforces a
20,000-token window, and the chat's system prompt alone is over it by the provider's
count (about 650 estimated tokens: 26,000 counted). The first message is refused once
as over the window; from the refusal's count Parley knows the newest message with the
system prompt cannot fit, so it asks for no summary of the unanswered turns, does not
retry, and says the window is too small, naming the system prompt and what helps. The
next messages are not sent at all. Real sessions.db, real SDK over HTTP.
"""

from __future__ import annotations

from parley.core.chat.events import RunFailed
from parley.core.compaction.unseen import load_unseen
from parley.core.context.too_long import WindowTooSmall
from tests.core.unseen_support import small_enforced_window

SYSTEM = "You are a careful assistant. " * 90  # ~2,600 characters: ~650 estimated tokens


async def test_the_newest_message_alone_over_the_window_fails_at_once(env, fake_provider):
    small_enforced_window(fake_provider, "summary", scale=40)
    await env.store.set_session_system_prompt(env.sid, SYSTEM)

    errors = []
    for n in range(3):
        events: list = []
        assert await env.send(f"Short question {n}?", on_event=events.append) is None
        errors += [e.error for e in events if isinstance(e, RunFailed)]

    assert len(errors) == 3 and all(isinstance(e, WindowTooSmall) for e in errors)
    error = errors[-1]
    assert error.window == 20_000 and error.tokens > 20_000
    assert error.system_tokens > 20_000 and error.tool_tokens == 0
    text = str(error)
    assert "system prompt" in text and "larger context window" in text
    assert "shorten it" in text and "new session" not in text and "Nothing was sent" in text
    assert "refused it, so it was not answered" in str(errors[0])  # the one refusal
    # One refusal, for the first message; no summary asked for, none saved, no record.
    assert fake_provider.windows.refused == 1
    assert not [r for r in fake_provider.model_requests if "<summary>" in str(r.body)]
    assert len(fake_provider.model_requests) == 1
    assert await env.store.list_compactions(env.sid) == []
    assert await load_unseen(env.store, env.sid) is None
    assert len(await env.store.get_turns(env.sid)) == 3  # every message kept

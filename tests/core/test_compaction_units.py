"""One unit everywhere: compaction decides in the provider's tokens, whatever its tokenizer.

The fake provider counts ``token_scale`` tokens for each token of Parley's character
estimate (1×, 4×, 40×: prose, code and numbers, images or a very different tokenizer)
and refuses any request over a 100,000-token window. The same chat — messages of about
10,000 tokens *as the provider counts them* — compacts at the same point at every ratio,
before the window is reached: no request is refused, every message is answered. (At 40×
Parley's own summary instructions count 40× too: a window of 100,000 leaves them room.)
Real sessions.db, real SDKs over HTTP.
"""

from __future__ import annotations

import pytest

from parley.core.chat.events import RunFailed
from parley.core.compaction.compact import CompactEvent
from tests.core.unseen_support import small_enforced_window

PROVIDER_TOKENS = 10_000  # each message, as the provider counts it
WINDOW = 100_000
MESSAGES = 8


def message(n: int, scale: float) -> str:
    """About ``PROVIDER_TOKENS / scale`` tokens by the app's estimate."""
    chars = int(PROVIDER_TOKENS / scale * 4)
    words = " ".join(f"m{n}w{k}" for k in range(chars // 6))
    return f"Message {n}: {words}"[:chars]


async def compaction_points(env, scale: float) -> tuple[list[int], list]:
    """Send the chat; return (the message numbers before which a summary was saved, events)."""
    events: list = []
    points = []
    for n in range(MESSAGES):
        before = len(events)
        reply = await env.send(message(n, scale), on_event=events.append)
        failed = [e.error for e in events[before:] if isinstance(e, RunFailed)]
        assert reply is not None, f"message {n} was not answered at {scale}x: {failed}"
        ends = [e for e in events[before:] if isinstance(e, CompactEvent)
                and e.name == "compact:end" and e.result is not None and e.result.compacted]
        if ends:
            points.append(n)
    return points, events


@pytest.mark.parametrize("scale", [1.0, 4.0, 40.0])
async def test_the_same_chat_compacts_at_the_same_point_at_every_ratio(env, fake_provider,
                                                                       scale):
    small_enforced_window(fake_provider, "summary", scale=scale, window=WINDOW)
    # Each point of the fake's summary quotes about 500 of the provider's tokens.
    fake_provider.summary_point_chars = int(2_000 / scale)

    points, events = await compaction_points(env, scale)

    assert fake_provider.windows.refused == 0
    assert not [e for e in events if isinstance(e, RunFailed)]
    # At 80 % of 100,000 tokens: before the fifth message (2 × 10,000 tokens an exchange).
    assert points and points[0] == 4, points
    rows = await env.store.list_compactions(env.sid)
    assert {r.reason for r in rows} == {"auto"}

"""A chat of heavy messages against a 200k window the provider counts twice as large (the
report's case), shared by test_window_from_provider and bench_cache_share."""

from __future__ import annotations

WINDOW = 200_000
#: Messages of about 10,000 tokens by Parley's estimate, 20,000 by the provider's count;
#: the fake echoes each one back, so every exchange adds about 40,000 tokens.
MESSAGE_TOKENS = 10_000
MESSAGES = 12


def heavy_chat_provider(fake_provider, scale: float = 2.0) -> None:
    """The fake as in the report: 200k listed, twice the estimated tokens, refusals enforced."""
    fake_provider.anthropic_models = [
        {"id": "claude-sonnet-4-6", "display_name": "Claude Sonnet 4.6",
         "max_input_tokens": WINDOW, "max_tokens": 64_000},
    ]
    fake_provider.windows.enforce_windows = True
    fake_provider.windows.token_scale = scale
    # Its summaries quote more of each message: long enough to stand for ~100k tokens.
    fake_provider.summary_point_chars = 1_500


def message(n: int) -> str:
    words = " ".join(f"item{n}x{k}" for k in range(MESSAGE_TOKENS * 4 // 10))
    return f"Message {n}: {words}"


async def run_heavy_chat(env, messages: int = MESSAGES) -> tuple[int, list]:
    """Send ``messages`` heavy messages; return (unanswered, every event)."""
    events: list = []
    unanswered = 0
    for n in range(messages):
        if await env.send(message(n), on_event=events.append) is None:
            unanswered += 1
    return unanswered, events

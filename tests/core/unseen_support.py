"""Small enforced windows and the chats sent into them, shared by the unseen-turns tests."""

from __future__ import annotations

WINDOW = 20_000
#: About 2,000 tokens by the app's estimate (4 characters a token); the fake echoes it.
MESSAGE_TOKENS = 2_000
MESSAGES = 15


def small_enforced_window(fake_provider, answers: str, scale: float = 1.0,
                          window: int = WINDOW) -> None:
    """Sonnet (and Haiku, its summary model) listed with a 20,000-token window, refusals
    enforced, summaries answered as ``answers`` says, ``scale`` tokens per estimated one."""
    fake_provider.anthropic_models = [
        {"id": "claude-sonnet-4-6", "display_name": "Claude Sonnet 4.6",
         "max_input_tokens": window, "max_tokens": 64_000},
        {"id": "claude-haiku-4-5", "display_name": "Claude Haiku 4.5",
         "max_input_tokens": window, "max_tokens": 64_000},
    ]
    fake_provider.windows.enforce_windows = True
    fake_provider.windows.token_scale = scale
    fake_provider.summary_answers = answers


def message(n: int, tokens: int = MESSAGE_TOKENS) -> str:
    words = " ".join(f"m{n}w{k}" for k in range(tokens * 4 // 8))
    return f"Message {n}: {words}"


async def chat(env, messages: int = MESSAGES, start: int = 0) -> tuple[int, list]:
    """Send ``messages`` messages; return (unanswered, every event)."""
    events: list = []
    unanswered = 0
    for n in range(start, start + messages):
        if await env.send(message(n), on_event=events.append) is None:
            unanswered += 1
    return unanswered, events

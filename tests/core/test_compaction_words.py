"""Compaction's messages call a conversation a "chat", as the rest of the app does
(issue 30): the in-progress refusal, the too-long errors."""

from __future__ import annotations

from parley.core.compaction.types import CompactionInProgress, CompactPromptTooLongError
from parley.core.context.too_long import HistoryTooLong


def test_compaction_messages_say_chat_not_session() -> None:
    messages = [
        CompactionInProgress().message,
        CompactPromptTooLongError("Claude Small", during="run").message,
        CompactPromptTooLongError("Claude Small").message,
        HistoryTooLong(30_000, 20_000, "anthropic:x", compacted=True).message,
        HistoryTooLong(30_000, 20_000, "anthropic:x", compacted=False).message,
    ]
    assert messages[0].startswith("Parley is compacting this chat.")
    assert all("session" not in m for m in messages), messages
    assert sum("new chat" in m for m in messages) == 4

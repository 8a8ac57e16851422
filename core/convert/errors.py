"""Errors of the conversation converters."""

from __future__ import annotations

from parley.core.errors import ParleyError

__all__ = ["EXPECTED", "NotAConversation"]

#: The files Parley imports, named for people (every refusal says them).
EXPECTED = (
    "Parley imports ChatGPT and Claude.ai data exports (conversations.json), Open WebUI chat "
    "exports, its own exports (JSON or Markdown), and Anthropic or OpenAI message lists or "
    "request bodies (JSON)"
)


class NotAConversation(ParleyError):
    """Data given to an importer is not a conversation it can read.

    Attributes:
        reason: what was found and what was wrong, e.g. ``"message 3 has no 'role'"``.

    The message names the formats Parley imports (:data:`EXPECTED`).
    """

    def __init__(self, reason: str) -> None:
        super().__init__(
            f"This is not a conversation Parley can import: {reason}. Nothing was imported. "
            f"{EXPECTED}."
        )
        self.reason = reason

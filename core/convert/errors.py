"""Errors of the conversation converters."""

from __future__ import annotations

from core.errors import ParleyError

__all__ = ["NotAConversation"]


class NotAConversation(ParleyError):
    """Data given to an importer is not a conversation it can read.

    Attributes:
        reason: what was wrong, e.g. ``"message 3 has no 'role'"``.
    """

    def __init__(self, reason: str) -> None:
        super().__init__(
            f"This is not a conversation Parley can import: {reason}. Nothing was imported. "
            "Parley reads its own export files and Anthropic or OpenAI message lists (JSON)."
        )
        self.reason = reason

"""Drafts: what was typed but not sent, kept per chat across switches and restarts.

Each chat's draft lives in memory while Parley runs and in the store's
``app_state`` under ``draft:<session id>`` (``draft:new`` for a new chat that
has no session yet), written a moment after typing stops and at every switch
or close. An empty draft deletes the key.
"""

from __future__ import annotations

from typing import Any

NEW = "new"


def draft_key(session_id: str | None) -> str:
    """The app_state key of a chat's draft (``draft:new`` for a new chat)."""
    return f"draft:{session_id or NEW}"


class Drafts:
    """Drafts of every chat (key None = the new chat), backed by an ``AsyncStore``."""

    def __init__(self, store: Any) -> None:
        self.store = store
        self._texts: dict[str | None, str] = {}

    def typed(self, session_id: str | None, text: str) -> None:
        """Remember what the composer holds for a chat (saved by :meth:`save`)."""
        self._texts[session_id] = text

    async def load(self, session_id: str | None) -> str:
        """Return a chat's draft ('' when none): memory first, then the store."""
        if session_id in self._texts:
            return self._texts[session_id]
        text = await self.store.get_state(draft_key(session_id), None)
        return text if isinstance(text, str) else ""

    async def save(self, session_id: str | None) -> None:
        """Write a chat's draft to the store, if it was typed this run."""
        text = self._texts.get(session_id)
        if text is not None:
            await self.store.set_state(draft_key(session_id), text or None)

    async def discard(self, session_id: str | None) -> None:
        """Forget a chat's draft (it was sent, or the chat deleted)."""
        self._texts.pop(session_id, None)
        await self.store.set_state(draft_key(session_id), None)

"""Memory: one writable context block per space, and the ``set_context`` tool.

A space's memory is a short text the model keeps across the sessions of that
space (facts about the user, decisions, preferences). It is rendered into the
system prompt (``parley.core.tools.system_prompt``) and the model changes it with
``set_context`` — replacing it, or appending to it — never beyond its token
limit (:data:`DEFAULT_LIMIT_TOKENS`, counted with ``parley.core.context.tokens.text_tokens``).
A write that would exceed the limit is refused, nothing changes, and the
refusal names the limit and the size the write would have made. The user reads
and edits the same text in the space's settings (:meth:`MemoryStore.set`).

Stored through the store's app state, key ``memory:<space_id>``, as
``{"text": str, "limit": int, "updated_at": epoch ms}``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from parley.core.app_state import MEMORY
from parley.core.content import now_ms
from parley.core.context.tokens import text_tokens
from parley.core.errors import ParleyError
from parley.core.providers.base import ToolSpec
from parley.core.tools.registry import ToolContext, ToolError

if TYPE_CHECKING:
    from parley.core.store.async_store import AsyncStore

#: A space's memory holds at most this many tokens unless its limit was changed.
DEFAULT_LIMIT_TOKENS = 1_100
#: Bounds of a memory limit a user may set (tokens).
MIN_LIMIT_TOKENS, MAX_LIMIT_TOKENS = 100, 20_000
MEMORY_KEY = "memory"


class MemoryTooLong(ParleyError):
    """A memory text is over its space's token limit; the memory was not changed.

    Attributes:
        tokens: the text's size (tokens).
        limit: the space's limit (tokens).
    """

    def __init__(self, tokens: int, limit: int) -> None:
        super().__init__(
            f"The memory would be about {tokens:,} tokens long, over its limit of "
            f"{limit:,} tokens. The memory was not changed; shorten the text or raise "
            "the limit."
        )
        self.tokens = tokens
        self.limit = limit


class InvalidMemoryLimit(ParleyError):
    """A memory limit outside :data:`MIN_LIMIT_TOKENS` … :data:`MAX_LIMIT_TOKENS`."""

    def __init__(self, limit: int) -> None:
        super().__init__(
            f"A memory limit must be between {MIN_LIMIT_TOKENS:,} and {MAX_LIMIT_TOKENS:,} "
            f"tokens; {limit:,} is not. The limit was not changed."
        )


@dataclass(frozen=True, slots=True)
class Memory:
    """A space's memory.

    Attributes:
        space_id: the space.
        text: the memory ('' when empty).
        limit: the most tokens it may hold.
        updated_at: epoch ms of the last write, 0 if never written.
    """

    space_id: str
    text: str = ""
    limit: int = DEFAULT_LIMIT_TOKENS
    updated_at: int = 0

    @property
    def tokens(self) -> int:
        """The text's size in tokens (estimate, ``parley.core.context.tokens.text_tokens``)."""
        return text_tokens(self.text)


class MemoryStore:
    """Reads and writes space memories through an ``AsyncStore``'s app state.

    Args:
        store: the ``AsyncStore`` (``get_state`` / ``set_state``).
    """

    def __init__(self, store: AsyncStore) -> None:
        self.store = store

    async def get(self, space_id: str) -> Memory:
        """Return a space's memory (empty, with the default limit, if never written)."""
        raw = await MEMORY.get(self.store, space_id)
        if not isinstance(raw, Mapping):
            return Memory(space_id)
        limit = raw.get("limit")
        return Memory(
            space_id,
            str(raw.get("text") or ""),
            int(limit) if isinstance(limit, int) and limit > 0 else DEFAULT_LIMIT_TOKENS,
            int(raw.get("updated_at") or 0),
        )

    async def set(self, space_id: str, text: str, *, limit: int | None = None) -> Memory:
        """Replace a space's memory (the user's edit in the space's settings).

        Args:
            space_id: the space.
            text: the new memory; surrounding whitespace is removed.
            limit: a new token limit, or None to keep the current one.

        Returns:
            The memory as saved.

        Raises:
            MemoryTooLong: the text is over the (new) limit; nothing changed.
            InvalidMemoryLimit: ``limit`` is out of bounds; nothing changed.
        """
        current = await self.get(space_id)
        if limit is not None and not MIN_LIMIT_TOKENS <= limit <= MAX_LIMIT_TOKENS:
            raise InvalidMemoryLimit(limit)
        new = Memory(space_id, text.strip(), limit or current.limit, now_ms())
        if new.tokens > new.limit:
            raise MemoryTooLong(new.tokens, new.limit)
        await MEMORY.set(
            self.store, {"text": new.text, "limit": new.limit, "updated_at": new.updated_at},
            space_id)
        return new

    async def write(
        self, space_id: str, content: str, mode: Literal["replace", "append"]
    ) -> Memory:
        """Replace the memory with ``content`` or append it on a new line (the tool's write).

        Raises:
            MemoryTooLong: the result would be over the limit; nothing changed.
        """
        current = await self.get(space_id)
        text = content.strip()
        if mode == "append" and current.text:
            text = f"{current.text}\n{text}" if text else current.text
        return await self.set(space_id, text)


class SetContextTool:
    """``set_context``: the model replaces or appends to its space's memory.

    Args:
        memories: where memories live.
    """

    def __init__(self, memories: MemoryStore) -> None:
        self.memories = memories
        self.spec = ToolSpec(
            "set_context",
            "Write to your memory: a short note that persists across all conversations "
            "in this space and is shown to you at the start of each one. Use it for "
            "lasting facts (the user's preferences, names, decisions), not for the task "
            "at hand. mode 'append' adds a line; 'replace' rewrites the whole memory "
            "(use it to reorganize or to drop what is stale). The memory has a token "
            "limit; a write over it is refused. Changes take effect in new conversations "
            "(and after compaction); this conversation keeps the memory it started with.",
            {
                "type": "object",
                "properties": {
                    "key": {
                        "type": "string",
                        "enum": [MEMORY_KEY],
                        "description": "Which block to write; only 'memory' exists.",
                    },
                    "content": {
                        "type": "string",
                        "description": "The text to write (plain text or short Markdown).",
                    },
                    "mode": {
                        "type": "string",
                        "enum": ["replace", "append"],
                        "description": "'append' (default) adds a line; 'replace' overwrites.",
                    },
                },
                "required": ["content"],
                "additionalProperties": False,
            },
        )

    async def run(self, input: Mapping[str, Any], ctx: ToolContext) -> str:
        """Write the memory; return what it now holds and how full it is.

        Raises:
            ToolError: the write would exceed the limit (the memory is unchanged).
        """
        mode: Literal["replace", "append"] = (
            "replace" if input.get("mode") == "replace" else "append"
        )
        try:
            memory = await self.memories.write(ctx.space_id, str(input["content"]), mode)
        except MemoryTooLong as exc:
            raise ToolError(
                f"Refused: the memory would be about {exc.tokens:,} tokens, over its limit "
                f"of {exc.limit:,} tokens. Nothing was changed. Write something shorter, or "
                "use mode 'replace' with a condensed version of the whole memory."
            ) from exc
        verb = "Replaced" if mode == "replace" else "Appended to"
        return (
            f"{verb} the memory of this space ({memory.tokens:,} of {memory.limit:,} tokens "
            f"used). It now reads:\n{memory.text}"
        )

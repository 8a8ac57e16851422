"""Edit an earlier user message: the edit is a new branch, the original stays intact.

Rule: editing an earlier user message and sending it never deletes or rewrites a
turn. The edited message is saved as a *sibling* of the original (same parent, in
the same session: ``Store.edit_turn``) and the path shown now ends at it; the
original and everything that followed it stay stored as another branch, shown as
‹ n/m › on the message (``parley.core.branches``). Nothing is copied. The caller
sends it with ``ChatRunner.retry(session_id, ...)``. The same happens when the
edited message is the last one and only a failed or stopped reply follows it: one
behaviour, nothing lost.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from parley.core.content import (
    Block,
    CompactSummaryBlock,
    DocumentBlock,
    ImageBlock,
    TextBlock,
    ToolResultBlock,
    Turn,
)
from parley.core.errors import ParleyError
from parley.core.store.errors import TurnNotFound, TurnNotInSession

if TYPE_CHECKING:
    from parley.core.store.async_store import AsyncStore


class CannotEditTurn(ParleyError):
    """The turn is not a message the user wrote (a reply, tool results, a summary)."""

    def __init__(self) -> None:
        super().__init__(
            "Only messages you wrote can be edited; this one was written by the model or a "
            "tool. Nothing was changed. To try another reply, use Retry or Fork instead."
        )


class EmptyEdit(ParleyError):
    """The edited message has no text, image or document."""

    def __init__(self) -> None:
        super().__init__(
            "The edited message is empty. Nothing was changed; type something, or press Esc "
            "to keep the message as it was."
        )


def _is_content(block: Block) -> bool:
    if isinstance(block, TextBlock):
        return bool(block.text.strip())
    return isinstance(block, ImageBlock | DocumentBlock)


def _editable(turn: Turn) -> bool:
    """A user turn someone wrote: it holds text, an image or a document, and no summary."""
    if turn.role != "user" or any(isinstance(b, CompactSummaryBlock) for b in turn.blocks):
        return False
    return any(isinstance(b, TextBlock | ImageBlock | DocumentBlock) for b in turn.blocks)


def edited_blocks(original: Turn, new_blocks: Sequence[Block]) -> list[Block]:
    """The edited turn's blocks: the original's tool results (kept, first), then the new blocks.

    Raises:
        EmptyEdit: ``new_blocks`` has no non-blank text, image or document.
    """
    fresh = [b for b in new_blocks if not isinstance(b, ToolResultBlock)]
    if not any(_is_content(b) for b in fresh):
        raise EmptyEdit()
    kept = [b for b in original.blocks if isinstance(b, ToolResultBlock)]
    return kept + fresh


async def edit_message(
    store: AsyncStore, session_id: str, turn_id: str, new_blocks: Sequence[Block]
) -> Turn:
    """Save an edited user message as a new branch beside the original, and show it.

    Args:
        store: an ``AsyncStore``.
        session_id: the session holding the message.
        turn_id: the user turn edited, on the path shown.
        new_blocks: its new content (text, images, documents; tool_result
            blocks of the original turn are kept, before these).

    Returns:
        The new turn: a sibling of ``turn_id`` (same parent; a first message when
        the first message was edited), now the last turn of the path shown. The
        original turn and what followed it stay stored, as a branch (‹ n/m ›). One
        transaction (``AsyncStore.edit_turn``): a failed write leaves the session
        as it was. The cost does not depend on the chat's length.

    Raises:
        SessionNotFound: no such session.
        TurnNotInSession: ``turn_id`` is not a turn of the path shown.
        CannotEditTurn: the turn is a reply, tool results only, or a summary.
        EmptyEdit: nothing to send in ``new_blocks``.
        StoreError: the write failed; nothing was changed.
    """
    await store.get_session(session_id)  # SessionNotFound first, as before
    try:
        original = await store.get_turn(turn_id, hydrate=False)
    except TurnNotFound:
        raise TurnNotInSession(turn_id, session_id) from None
    if not _editable(original):
        raise CannotEditTurn()
    edited: Turn = await store.edit_turn(
        session_id, turn_id, Turn("user", edited_blocks(original, new_blocks)))
    return edited

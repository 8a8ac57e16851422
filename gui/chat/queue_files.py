"""The files of a queued message: taken from the tray when queued, read back to be sent.

A message sent while its chat's reply streams keeps the files attached to it: their
bytes are saved with it (``Store.queue_message``, by sha256 in the attachments store)
so a crash keeps them; its line says how many (:func:`files_note`); they are read back
and recognised again when the message leaves (:func:`blocks_of`) or is edited
(:func:`tray_files`). Nothing here touches a widget.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from typing import TYPE_CHECKING

from parley.core.content import Block, TextBlock
from parley.core.store.queued import NewFile, QueuedFile, QueuedMessage
from parley.gui.composer.attach_work import read_source

if TYPE_CHECKING:
    from parley.core.store.async_store import AsyncStore
    from parley.gui.chat.attach import Pending


def new_files(items: Iterable[Pending]) -> list[NewFile]:
    """The files of tray entries (ready ones), as the store saves them, in order."""
    return [NewFile(p.attachment.name, p.attachment.media_type, p.attachment.data)
            for p in items if p.attachment is not None]


def queued_files(items: Iterable[Pending]) -> tuple[QueuedFile, ...]:
    """The references the store keeps for tray entries (ready ones), in order."""
    return tuple(QueuedFile(p.attachment.name, p.attachment.media_type, p.attachment.sha256)
                 for p in items if p.attachment is not None)


def files_note(message: QueuedMessage) -> str:
    """What a queued message's line says of its files: "" (none), "[photo.png]" (one),
    "[2 files]" (plain characters: no emoji font is needed to read it)."""
    n = len(message.files)
    if not n:
        return ""
    return f"[{message.files[0].name}]" if n == 1 else f"[{n:,} files]"


async def tray_files(store: AsyncStore, message: QueuedMessage) -> list[tuple[str, bytes]]:
    """(name, bytes) of a queued message's files, read from the store, in order.

    Raises:
        AttachmentNotFound: a file's bytes are not stored (cannot happen through the store).
    """
    return [(f.name, await store.queued_file(f.sha256)) for f in message.files]


async def blocks_of(store: AsyncStore, message: QueuedMessage) -> list[Block]:
    """The user turn's blocks of a queued message: its files (recognised again from their
    saved bytes, off the GUI thread) then its text, as a message sent from the box.

    Raises:
        AttachmentNotFound: a file's bytes are not stored.
        AttachmentError: a file is no longer readable as what it was.
    """
    blocks: list[Block] = []
    for name, data in await tray_files(store, message):
        attachment = await asyncio.to_thread(read_source, data, name)
        blocks.append(await asyncio.to_thread(attachment.to_block))
    if message.text.strip():
        blocks.append(TextBlock(message.text))
    return blocks

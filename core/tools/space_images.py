"""A space's images given to its chats: as images at the start of the first message.

A space document that is an image (:mod:`parley.core.attachments.document_text`) has no
text to put in the system prompt, so a chat is given the image itself: when a request
is built (:meth:`parley.core.tools.loop.RunTools.finish`), each image the chat was given
(``Given.images``, frozen with its prompt) goes as an ``ImageBlock`` at the start of the
first user turn on the wire — never saved in the turn. From there the request is
converted like a message's attached images: per provider, a placeholder for a model
without vision, counted in the request's tokens, and inside the prefix Anthropic's
``cache_control`` marks cache (the first turn never changes).

A model that reads no images makes its server refuse the request; it is then sent again
with each of the space's images named in words instead (:func:`as_words`), so a space's
image does not stop its chats from working with such a model.

A chat keeps the images it was given: their bytes are copied when its prompt is frozen
(:func:`keep`, ``parley.core.store.space_images``), so a document replaced later does
not change what an older chat sends.
"""

from __future__ import annotations

import base64
from collections.abc import Sequence
from typing import TYPE_CHECKING

from parley.core.content import Block, ImageBlock, TextBlock, Turn
from parley.core.store.space_documents import SpaceDocument

if TYPE_CHECKING:
    from parley.core.store.async_store import AsyncStore
    from parley.core.store.space_images import KeptImage


def is_image(doc: SpaceDocument) -> bool:
    """True for a space document that is an image (``image/…``)."""
    return doc.media_type.startswith("image/")


def image_shas(documents: Sequence[SpaceDocument]) -> list[str]:
    """The sha256s of the images among ``documents``, in order."""
    return [d.sha256 for d in documents if is_image(d)]


async def keep(store: AsyncStore, images: Sequence[str]) -> None:
    """Keep the bytes of the images a chat is being given (``Given.images``: sha256s),
    before its prompt is saved."""
    if images:
        await store.keep_space_images(images)


def with_images(turns: Sequence[Turn], images: Sequence[KeptImage],
                lost: Sequence[str] = ()) -> list[Turn]:
    """Return ``turns`` with ``images`` put at the start of the first user turn that was
    not cut off (unchanged when there are none, or no such turn).

    The blocks carry the bytes (base64) and ``attachment_id`` (their sha256), as an
    attached image read back from the store and hydrated does. ``lost``: the names of
    images given whose bytes are stored nowhere any more, said in one line after them.
    """
    out = list(turns)
    if not images and not lost:
        return out
    first = next((i for i, t in enumerate(out) if t.role == "user" and not t.aborted), None)
    if first is None:
        return out
    blocks: list[Block] = [
        ImageBlock(k.media_type, data=base64.b64encode(k.data).decode("ascii"),
                   attachment_id=k.sha256)
        for k in images
    ]
    if lost:
        blocks.append(TextBlock(f"[The space's images {', '.join(lost)} given to this "
                                "conversation are no longer stored and cannot be shown.]"))
    out[first] = out[first].with_blocks(blocks + list(out[first].blocks))
    return out


async def for_request(store: AsyncStore, images: Sequence[str], turns: Sequence[Turn],
                      names: dict[str, str] | None = None) -> list[Turn]:
    """The turns to send: the chat's space images (``Given.images``, sha256s as frozen)
    put first; one stored nowhere any more is named in words (``names``: sha256 → name).

    (A kept image's row in ``attachments`` is released, like any, when the last turn or
    queued message holding the same bytes lets go of them; with its document replaced or
    removed too, its bytes are gone: ``parley.core.store.space_images``.)
    """
    if not images:
        return list(turns)
    kept = await store.kept_space_images(images)
    have = {k.sha256 for k in kept}
    lost = [(names or {}).get(s, "an image") for s in images if s not in have]
    return with_images(turns, kept, lost)


def as_words(turns: Sequence[Turn], images: Sequence[str],
             names: dict[str, str]) -> list[Turn] | None:
    """Return ``turns`` with the space's images (sha256s ``images``) at the start of the
    first user turn replaced by a line naming each (``names``: sha256 → document name),
    for a model that reads no images; None when no such image is there."""
    out = list(turns)
    first = next((i for i, t in enumerate(out) if t.role == "user" and not t.aborted), None)
    if first is None:
        return None
    blocks = list(out[first].blocks)
    lead = 0
    while (lead < len(blocks) and isinstance(blocks[lead], ImageBlock)
           and getattr(blocks[lead], "attachment_id", None) in images):
        lead += 1
    if lead == 0:
        return None
    said = ", ".join(names.get(getattr(b, "attachment_id", "") or "", "an image")
                     for b in blocks[:lead])
    words = TextBlock(f"[The space's images ({said}) are not shown: this model does not "
                      "read images.]")
    out[first] = out[first].with_blocks([words, *blocks[lead:]])
    return out

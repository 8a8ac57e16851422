"""Files carried inside an imported file (base64 in its JSON), checked by their bytes.

An Open WebUI export holds its images as ``data:`` URLs; Parley's JSON export and
Anthropic or OpenAI message lists hold images and PDFs as base64 with a declared media
type. The declaration is the file's word, not the bytes': what is imported is what a
model is sent when the chat goes on, and a provider refuses an image whose bytes are
not the type declared. So each file's bytes decide (as for files attached,
``parley.core.attachments.files.sniff``):

* an image whose bytes are another of the four image types gets that media type;
* an image whose bytes are no image, a PDF whose bytes are no PDF, or a text
  document whose bytes are binary is not imported: :func:`by_bytes` says what its
  bytes are, and the import puts a placeholder in its place and says so.

Other declared types (``text/csv`` documents, URL images) are left as they are.
"""

from __future__ import annotations

import base64
import binascii
from dataclasses import replace

from parley.core.attachments.files import IMAGE_TYPES, PDF, decode_text, sniff, what_bytes
from parley.core.content import Block, DocumentBlock, ImageBlock, TextBlock, ToolResultBlock, Turn

__all__ = ["InlineFiles", "by_bytes"]

File = ImageBlock | DocumentBlock


def by_bytes(block: File) -> File | str:
    """``block`` with the media type its bytes say, or what its bytes are instead.

    Args:
        block: an image or document; one without data (a URL, a reference) is returned.

    Returns:
        The block (its ``media_type`` corrected among the image types), or a phrase
        for a refusal ("text", "a program", "damaged base64") when its bytes are not
        the kind it declares.
    """
    if not block.data:
        return block
    try:
        raw = base64.b64decode(block.data, validate=True)
    except (binascii.Error, ValueError):
        return "damaged base64"
    found = sniff(raw)
    if isinstance(block, ImageBlock):
        if found in IMAGE_TYPES:
            return block if found == block.media_type else replace(block, media_type=found)
        return what_bytes(raw)
    if block.media_type == PDF:
        return block if found == PDF else what_bytes(raw)
    if block.media_type == "text/plain":
        return block if found is None and decode_text(raw) is not None else what_bytes(raw)
    return block


def claimed(block: File) -> str:
    """What a file block declares it is: "an image", "a PDF", "text"."""
    if isinstance(block, ImageBlock):
        return "an image"
    return "a PDF" if block.media_type == PDF else "text"


class InlineFiles:
    """Checks every inline file of a history's turns (a worker thread's pass).

    Attributes:
        refused: (name, why) of each file replaced by a placeholder, in order.
    """

    def __init__(self) -> None:
        self.refused: list[tuple[str, str]] = []
        # id(turn) → (turn, checked): a chat's branches share their first turns.
        self._done: dict[int, tuple[Turn, Turn]] = {}

    def turns(self, turns: list[Turn]) -> list[Turn]:
        """``turns`` with each inline file checked (the same list when none holds one)."""
        if not any(_has_data(b) for t in turns for b in t.blocks):
            return turns
        return [self._turn(t) for t in turns]

    def _turn(self, turn: Turn) -> Turn:
        if not any(_has_data(b) for b in turn.blocks):
            return turn
        done = self._done.get(id(turn))
        if done is None:  # the original is kept too, so its id is not reused meanwhile
            done = self._done[id(turn)] = (turn, turn.with_blocks(self._block(b)
                                                                  for b in turn.blocks))
        return done[1]

    def _block(self, block: Block) -> Block:
        if isinstance(block, ImageBlock | DocumentBlock):
            return self._file(block)
        if isinstance(block, ToolResultBlock):
            parts = tuple(self._file(p) if isinstance(p, ImageBlock | DocumentBlock) else p
                          for p in block.content)
            return replace(block, content=parts)
        return block

    def _file(self, block: File) -> File | TextBlock:
        checked = by_bytes(block)
        if not isinstance(checked, str):
            return checked
        kind = "image" if isinstance(block, ImageBlock) else "file"
        name = block.name or f"an inline {kind}"
        self.refused.append((name, f"the export says it is {claimed(block)}, but its bytes "
                                   f"are {checked}"))
        return TextBlock(f"[{kind} not included: {name}]")


def _has_data(block: Block) -> bool:
    if isinstance(block, ImageBlock | DocumentBlock):
        return bool(block.data)
    if isinstance(block, ToolResultBlock):
        return any(isinstance(p, ImageBlock | DocumentBlock) and p.data for p in block.content)
    return False

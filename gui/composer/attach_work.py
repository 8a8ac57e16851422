"""The work behind attaching a file, done off the GUI thread (``asyncio.to_thread``).

Reading and recognising a file or a pasted image (:func:`read_source`), its
tray picture (:func:`thumbnail_png`), the files of a sent message
(:func:`files_of`, for editing it). Nothing here touches a widget.
"""

from __future__ import annotations

import base64
import io
from collections.abc import Iterable
from pathlib import Path

from PySide6.QtCore import QBuffer, QByteArray, QIODevice
from PySide6.QtGui import QImage

from parley.core.attachments.files import Attachment, from_bytes, parse_text_file, read_file
from parley.core.content import Block, DocumentBlock, ImageBlock, TextBlock
from parley.gui.composer.attach_tray import THUMB_PX


def png_bytes(image: QImage) -> bytes:
    """Encode a QImage (a pasted screenshot) as PNG bytes (thread-safe: QImage is reentrant)."""
    data = QByteArray()
    buf = QBuffer(data)
    buf.open(QIODevice.OpenModeFlag.WriteOnly)
    image.save(buf, "PNG")  # type: ignore[call-overload]  # the stubs want bytes, Qt a str
    buf.close()
    return bytes(data.data())


def thumbnail_png(data: bytes, side: int = 2 * THUMB_PX) -> bytes | None:
    """A ``side``×``side`` PNG of the middle square of an image (upright), or None if unreadable.

    Big JPEGs decode at a reduced scale; only the crop is resampled.
    """
    from PIL import Image, ImageOps

    try:
        with Image.open(io.BytesIO(data)) as opened:
            opened.draft("RGB", (side, side))
            im = ImageOps.exif_transpose(opened)
            if im.mode not in ("RGB", "RGBA"):
                im = im.convert("RGBA")
            w, h = im.size
            s = min(w, h)
            box = ((w - s) / 2, (h - s) / 2, (w + s) / 2, (h + s) / 2)
            small = im.resize((side, side), Image.Resampling.LANCZOS, box=box, reducing_gap=2.0)
            out = io.BytesIO()
            small.save(out, "PNG")
            return out.getvalue()
    except (OSError, ValueError, SyntaxError, Image.DecompressionBombError):
        return None


def files_of(blocks: Iterable[Block]) -> list[tuple[str, bytes]]:
    """(name, bytes) of the files attached in a sent message's blocks: images, documents
    and text files (``parley.core.attachments.files.text_file_block``), in order."""
    out: list[tuple[str, bytes]] = []
    for i, block in enumerate(blocks):
        if isinstance(block, TextBlock):
            parsed = parse_text_file(block)
            if parsed is not None:
                out.append((parsed[0], parsed[1].encode("utf-8")))
        elif isinstance(block, ImageBlock | DocumentBlock) and block.data:
            ext = block.media_type.split("/")[-1].replace("jpeg", "jpg")
            name = getattr(block, "name", None) or f"Image {i + 1}.{ext}"
            out.append((name, base64.b64decode(block.data)))
    return out


def read_source(source: Path | bytes | QImage, name: str) -> Attachment:
    """Read and recognise a file (worker thread). Raises AttachmentError."""
    if isinstance(source, Path):
        return read_file(source)
    data = png_bytes(source) if isinstance(source, QImage) else source
    return from_bytes(data, name)


def finish(att: Attachment, *, thumbnail: bool = True) -> tuple[str, bytes | None]:
    """(sha256, tray picture) of a file read (worker thread)."""
    thumb = thumbnail_png(att.data) if thumbnail and att.kind == "image" else None
    return att.sha256, thumb

"""The text of a space document, page by page (what the model reads or searches).

A space document (:mod:`parley.core.store.space_documents`) is recognised by its bytes
like a message attachment (:func:`parley.core.attachments.files.sniff`):

* PDF → the text of each page, read with ``pypdf`` (imported here only, when a PDF
  is added); a page without text (a scan) reads as '';
* text and code → one page holding the whole text (up to
  :data:`~parley.core.attachments.files.MAX_FILE_BYTES`: larger than a message
  attachment may be, since a large document is searched rather than sent);
* PNG, JPEG, GIF and WebP images → one page without text, counted as a message's
  image is (:func:`~parley.core.context.tokens.image_data_tokens`): a chat is given the
  image itself (:mod:`parley.core.tools.space_images`), and search finds nothing in it.
  It is decoded whole first (one damaged or cut short is refused) and must fit every
  provider's limits (:func:`read_image`), since it goes with every message of every chat;
* anything else → :class:`NotADocument`.

Synchronous and possibly slow (a long PDF takes seconds): callers run it off the GUI thread.
"""

from __future__ import annotations

import base64
import io
import logging
from dataclasses import dataclass

from parley.core.attachments.files import (
    IMAGE_TYPES,
    PDF,
    AttachmentError,
    AttachmentTooLarge,
    decode_text,
    decoded_size,
    size_text,
    sniff,
    what_bytes,
)
from parley.core.attachments.limits import ANTHROPIC_LIMITS
from parley.core.context.tokens import image_data_tokens, text_tokens

log = logging.getLogger(__name__)


class NotADocument(AttachmentError):
    """The file cannot be a space document; the space's documents are unchanged."""

    def __init__(self, name: str, what: str, advice: str = "") -> None:
        super().__init__(
            f"“{name}” can't be a space document: it is {what}. A space takes PDF files, "
            f"text or code files and images (PNG, JPEG, GIF, WebP). {advice}"
            "The space's documents were not changed.",
            name=name,
        )


@dataclass(frozen=True, slots=True)
class DocumentText:
    """What a document says.

    Attributes:
        media_type: ``application/pdf``, ``text/plain`` or an image's (``image/png``…).
        pages: the text of each page, in order (one entry for a text file; a
            PDF page without text is ''; an image is one page, '').
        tokens: the estimated tokens of all pages together (``text_tokens``).
    """

    media_type: str
    pages: list[str]
    tokens: int


def pdf_page_texts(data: bytes, name: str) -> list[str]:
    """Return the text of each page of a PDF.

    Raises:
        NotADocument: pypdf cannot read the file (damaged, or encrypted with a password).
    """
    from pypdf import PdfReader
    from pypdf.errors import PdfReadError

    try:
        reader = PdfReader(io.BytesIO(data))
        if reader.is_encrypted and not reader.decrypt(""):
            raise NotADocument(name, "a PDF locked with a password",
                                  "Save an unlocked copy and add that. ")
        return [(page.extract_text() or "").strip() for page in reader.pages]
    except (PdfReadError, ValueError, KeyError, TypeError) as exc:
        log.info("could not read the PDF %s: %s", name, exc)
        raise NotADocument(name, "a PDF that could not be read (damaged?)") from exc


def read_image(data: bytes, name: str, media_type: str) -> DocumentText:
    """Check an image whole and count it (one page without text).

    Raises:
        NotADocument: damaged or cut short, or larger than a provider takes (Anthropic's
            limits, the strictest: 3.75 MB before base64, 8000 px a side).
    """
    try:
        width, height = decoded_size(data, name)
    except AttachmentTooLarge as exc:
        raise NotADocument(name, "an image with too many pixels to open safely",
                           "Save a smaller copy and add that. ") from exc
    except AttachmentError as exc:
        raise NotADocument(name, "a damaged or incomplete image",
                           "Save or export it again from the program that made it. ") from exc
    most, side = ANTHROPIC_LIMITS.raw_image_max() or 0, ANTHROPIC_LIMITS.image_max_side_px or 0
    if len(data) > most or max(width, height) > side:
        raise NotADocument(
            name, f"an image of {size_text(len(data))}, {width}×{height} px: larger than "
            f"every provider takes ({size_text(most)}, {side} px a side)",
            "Save a smaller copy and add that. ")
    return DocumentText(media_type, [""], image_data_tokens(base64.b64encode(data).decode()))


def read_document(data: bytes, name: str) -> DocumentText:
    """Recognise a document's bytes and read its text.

    Args:
        data: the whole file.
        name: its name (for messages only; the bytes decide the kind).

    Returns:
        Its kind, text by page and estimated tokens.

    Raises:
        NotADocument: a binary file other than a PDF or an image, an unreadable PDF,
            a file without text (empty, or a PDF of scans), or an image damaged or too
            large (:func:`read_image`).
    """
    media_type = sniff(data)
    if media_type in IMAGE_TYPES:
        return read_image(data, name, media_type)
    if media_type == PDF:
        pages = pdf_page_texts(data, name)
    else:
        text = decode_text(data)
        if text is None:
            raise NotADocument(name, what_bytes(data))
        media_type, pages = "text/plain", [text]
    if not any(p.strip() for p in pages):
        raise NotADocument(name, "empty (no text in it)" if media_type != PDF else
                           "a PDF without text (scanned pages?)",
                           "" if media_type != PDF else "Add a copy with its text (OCR). ")
    return DocumentText(media_type or PDF, pages, sum(text_tokens(p) for p in pages))

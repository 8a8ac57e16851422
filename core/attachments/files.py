"""Files a person attaches (drag and drop, paste, Ctrl+O) → content blocks.

What a file becomes is decided by its bytes, never its name (magic numbers):

* PNG, JPEG, GIF, WebP → :class:`~parley.core.content.ImageBlock`;
* PDF → :class:`~parley.core.content.DocumentBlock` (for providers that take PDFs);
* text and code (UTF-8, UTF-16 with a BOM, or 8-bit legacy text) →
  :class:`~parley.core.content.TextBlock`: ``File: <name>`` then the text fenced,
  with a language hint from the name (:func:`text_file_block`);
* anything else → :class:`UnsupportedFile`, saying what the file is.

:func:`read_file` / :func:`from_bytes` give an :class:`Attachment` (bytes,
kind, image size, PDF pages); :mod:`parley.core.attachments.limits` checks it against
a provider's limits and downscales images; :meth:`Attachment.to_block` gives
the block. Once sent, the store keeps the bytes once, by content
(:mod:`parley.core.store.attachments`).

Every function here is synchronous and may take a while (reading, decoding):
the GUI calls them off its thread (``asyncio.to_thread``).
"""

from __future__ import annotations

import base64
import hashlib
import io
import re
import warnings
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from PIL import Image, UnidentifiedImageError

from parley.core.content import Block, DocumentBlock, ImageBlock, TextBlock
from parley.core.errors import ParleyError

MB = 1024 * 1024
#: Files above this size are refused before being read (bytes).
MAX_FILE_BYTES = 64 * MB
#: Text and code files above this size are refused (bytes, ~130k tokens).
TEXT_MAX_BYTES = 512 * 1024
IMAGE_TYPES = ("image/png", "image/jpeg", "image/gif", "image/webp")
PDF = "application/pdf"
TEXT_HEADER = "File: "
Kind = Literal["image", "document", "text"]


# --- errors -------------------------------------------------------------------


class AttachmentError(ParleyError):
    """A file cannot be attached as it is; nothing was added to the message.

    Attributes:
        name: the file's name.
    """

    def __init__(self, message: str, *, name: str) -> None:
        super().__init__(message)
        self.name = name


class UnsupportedFile(AttachmentError):
    """The file is of a kind Parley cannot send (its bytes say what it is)."""

    def __init__(self, name: str, what: str, advice: str = "") -> None:
        super().__init__(
            f"“{name}” can't be attached: it is {what}. Parley attaches images (PNG, JPEG, "
            f"GIF, WebP), PDF files and text or code files. {advice}Nothing was added to "
            "your message.",
            name=name,
        )
        self.what = what


class FileUnreadable(AttachmentError):
    """The file could not be read (missing, a folder, no permission)."""

    def __init__(self, name: str, reason: str) -> None:
        super().__init__(
            f"“{name}” could not be read ({reason}). Nothing was added to your message; "
            "check the file and try again.",
            name=name,
        )


#: The end of a message about a file being attached (nothing happened yet).
NOT_ADDED = "Nothing was added to your message."


class EmptyFile(AttachmentError):
    """The file holds no text (0 bytes, or only spaces and line breaks): refused, as
    Claude and ChatGPT refuse empty files and as a space's documents do."""

    def __init__(self, name: str, size: int) -> None:
        what = "empty (0 bytes)" if size == 0 else "empty (only spaces or line breaks)"
        super().__init__(f"“{name}” can't be attached: it is {what}, so there is nothing in "
                         f"it to send. {NOT_ADDED}", name=name)


class AttachmentTooLarge(AttachmentError):
    """The file exceeds a limit of the provider (or of Parley).

    Attributes:
        problem: what is over which limit, e.g. "9000×600 px; Anthropic takes …".
        can_downscale: True for an image that ``parley.core.attachments.limits.fit``
            can shrink to fit (the GUI offers "Downscale").
    """

    def __init__(
        self,
        name: str,
        problem: str,
        *,
        can_downscale: bool,
        advice: str,
        outcome: str = NOT_ADDED,
    ) -> None:
        offer = "Downscale it to fit, or attach a smaller one. " if can_downscale else advice
        super().__init__(f"“{name}” is too large: {problem}. {offer}{outcome}", name=name)
        self.problem = problem
        self.can_downscale = can_downscale


class MediaNotAccepted(AttachmentError):
    """The provider takes no files of this kind (e.g. PDFs on an OpenAI-compatible server)."""

    def __init__(self, name: str, provider: str, what: str, outcome: str = NOT_ADDED) -> None:
        super().__init__(
            f"“{name}” can't be sent to {provider}: it takes no {what}. Pick an Anthropic or "
            f"OpenAI model, or paste the text you need. {outcome}",
            name=name,
        )
        self.provider = provider
        self.what = what


# --- sniffing -----------------------------------------------------------------

_MAGIC = (
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"GIF87a", "image/gif"),
    (b"GIF89a", "image/gif"),
)
_IMAGE_ADVICE = "Convert it to PNG or JPEG first. "
_OTHER = (  # (magic, what it is, advice)
    (b"II*\x00", "a TIFF image", _IMAGE_ADVICE),
    (b"MM\x00*", "a TIFF image", _IMAGE_ADVICE),
    (b"\x00\x00\x01\x00", "an icon (ICO)", _IMAGE_ADVICE),
    (b"8BPS", "a Photoshop image", _IMAGE_ADVICE),
    (b"PK\x03\x04", "a ZIP archive or an Office document", "Save documents as PDF first. "),
    (b"\x1f\x8b", "a compressed (gzip) file", ""),
    (b"7z\xbc\xaf\x27\x1c", "a 7-Zip archive", ""),
    (b"Rar!", "a RAR archive", ""),
    (b"\x7fELF", "a program", ""),
    (b"MZ", "a Windows program", ""),
    (b"SQLite format 3\x00", "an SQLite database", ""),
    (b"ID3", "audio (MP3)", ""),
    (b"OggS", "audio or video (Ogg)", ""),
    (b"fLaC", "audio (FLAC)", ""),
    (b"\x1aE\xdf\xa3", "a video (Matroska/WebM)", ""),
)
_FTYP = {b"heic": "a HEIC image", b"heix": "a HEIC image", b"mif1": "a HEIF image",
         b"avif": "an AVIF image"}  # fmt: skip


def sniff(data: bytes) -> str | None:
    """Return the media type of an image or PDF Parley sends, from its first bytes, else None."""
    for magic, media_type in _MAGIC:
        if data.startswith(magic):
            return media_type
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    if b"%PDF-" in data[:1024]:  # the header may follow some junk (PDF 1.7, 7.5.2)
        return PDF
    return None


def _what_binary(data: bytes) -> tuple[str, str]:
    """(what a file Parley does not send is, advice) from its first bytes."""
    for magic, what, advice in _OTHER:
        if data.startswith(magic):
            return what, advice
    if data[4:8] == b"ftyp":
        brand = data[8:12]
        return _FTYP.get(brand, "a video or audio file (MP4/MOV)"), (
            _IMAGE_ADVICE if brand in _FTYP else ""
        )
    if data[:2] == b"BM" and data[14:15] in (b"\x0c", b"(", b"4", b"8", b"l", b"|"):
        return "a BMP image", _IMAGE_ADVICE
    if data[:4] == b"RIFF":
        return "audio or video (RIFF)", ""
    return "a binary file", ""


def what_bytes(data: bytes) -> str:
    """What a file's bytes are, for messages: "a PNG image", "a PDF", "text", "a program"…"""
    media_type = sniff(data)
    if media_type == PDF:
        return "a PDF"
    if media_type is not None:
        return f"a {media_type.split('/')[1].upper()} image"
    return "text" if decode_text(data[:65536]) is not None else _what_binary(data)[0]


def decode_text(data: bytes) -> str | None:
    """Return the text of a text file, or None when the bytes are binary.

    UTF-8 (with or without BOM), UTF-16 with a BOM, else legacy 8-bit text
    read as Windows-1252 when it holds no NUL and almost no control
    characters (under 1 %; tab, newlines, form feed and escape allowed).
    """
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        try:
            return data.decode("utf-16")
        except UnicodeDecodeError:
            return None
    if b"\x00" in data:
        return None
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        text = data.decode("cp1252", errors="replace")
        if text.count("\ufffd") > len(text) // 100:
            return None
    controls = sum(1 for ch in text if ord(ch) < 32 and ch not in "\t\n\r\f\x1b")
    return None if controls > len(text) // 100 else text


# --- attachments ------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Attachment:
    """A file read and recognised, not yet a block.

    Attributes:
        name: the file name shown (no folders).
        media_type: ``image/png`` … ``application/pdf``, or ``text/plain`` for text.
        data: the bytes (for text, the UTF-8 encoding of ``text``).
        text: the decoded text of a text file, else None.
        width / height: an image's size in pixels.
        pages: a PDF's page count when it could be read, else None.
        note: what Parley changed, e.g. "downscaled from 9000×6000 to 8000×5333 px to fit
            Anthropic's limits: 20.1 MB → 3.2 MB" (``limits.change_note``).
    """

    name: str
    media_type: str
    data: bytes
    text: str | None = None
    width: int | None = None
    height: int | None = None
    pages: int | None = None
    note: str = ""

    @property
    def kind(self) -> Kind:
        if self.text is not None:
            return "text"
        return "document" if self.media_type == PDF else "image"

    @property
    def sha256(self) -> str:
        """The id the store keeps the bytes under (``parley.core.store.attachments``)."""
        return hashlib.sha256(self.data).hexdigest()

    def to_block(self) -> Block:
        """The content block to send: image, document, or text with the file name."""
        if self.text is not None:
            return text_file_block(self.name, self.text)
        b64 = base64.b64encode(self.data).decode("ascii")
        if self.kind == "document":
            return DocumentBlock(self.media_type, b64, self.name)
        return ImageBlock(self.media_type, b64, name=self.name)


def read_file(path: Path | str) -> Attachment:
    """Read a file from disk and recognise it (see :func:`from_bytes`).

    Raises:
        FileUnreadable: missing, a folder, or not readable.
        AttachmentTooLarge: over :data:`MAX_FILE_BYTES` (checked before reading).
        UnsupportedFile: see :func:`from_bytes`.
    """
    path = Path(path)
    try:
        size = path.stat().st_size
        if path.is_dir():
            raise FileUnreadable(path.name, "it is a folder")
        if size > MAX_FILE_BYTES:
            most = size_text(MAX_FILE_BYTES)
            problem = f"{size_text(size)}; Parley attaches files of up to {most}"
            raise AttachmentTooLarge(path.name, problem, can_downscale=False, advice="")
        data = path.read_bytes()
    except OSError as exc:
        raise FileUnreadable(path.name, exc.strerror or str(exc)) from exc
    return from_bytes(data, path.name)


def from_bytes(data: bytes, name: str) -> Attachment:
    """Recognise a file's bytes (a dropped or pasted file, or one read from disk).

    Args:
        data: the whole file.
        name: its name (shown, and the language hint of code); never used to
            decide the type.

    Returns:
        An image (with its size), a PDF (with its page count when readable) or
        a text attachment.

    Raises:
        UnsupportedFile: binary and not one of the four image types or a PDF;
            or an image Pillow cannot decode whole (damaged or cut short).
        AttachmentTooLarge: a text file over :data:`TEXT_MAX_BYTES`.
        EmptyFile: no bytes, or text of only whitespace.
    """
    media_type = sniff(data)
    if media_type == PDF:
        return Attachment(name, PDF, data, pages=pdf_pages(data))
    if media_type is not None:
        width, height = decoded_size(data, name)
        return Attachment(name, media_type, data, width=width, height=height)
    text = decode_text(data)
    if text is None:
        raise UnsupportedFile(name, *_what_binary(data))
    if not text.strip():
        raise EmptyFile(name, len(data))
    if len(data) > TEXT_MAX_BYTES:
        raise AttachmentTooLarge(
            name, f"{size_text(len(data))} of text; Parley attaches text files of up to "
            f"{size_text(TEXT_MAX_BYTES)}", can_downscale=False,
            advice="Attach the part you need, or paste it. ",
        )  # fmt: skip
    return Attachment(name, "text/plain", text.encode("utf-8"), text=text)


def size_text(n: int) -> str:
    """A size for messages: "5.3 MB" (MB = 1024² bytes, as the APIs count), "12 KB" or
    "56 B"."""
    if n < 1024:
        return f"{n} B"
    return f"{n / MB:.1f} MB" if n >= MB // 10 else f"{round(n / 1024)} KB"


# --- text files -------------------------------------------------------------

_TEXT_FILE = re.compile(r"\AFile: ([^\n]+)\n(`{3,})([^\n`]*)\n(.*)\n\2\Z", re.DOTALL)


def _language(name: str) -> str:
    try:
        from pygments.lexers import find_lexer_class_for_filename
        from pygments.util import ClassNotFound
    except ImportError:  # pragma: no cover - Pygments is a dependency
        return ""
    try:
        cls = find_lexer_class_for_filename(name)
    except ClassNotFound:
        return ""
    alias = cls.aliases[0] if cls is not None and cls.aliases else ""
    return "" if alias == "text" else alias


def text_file_block(name: str, text: str) -> TextBlock:
    """Return a text file as one text block: ``File: <name>`` then the text in a code fence.

    The fence is longer than any run of backticks in the text, so it always
    closes where the file ends; its language comes from the name (Pygments).
    :func:`parse_text_file` reads it back.
    """
    fence = "```"
    while fence in text:
        fence += "`"
    body = text if text.endswith("\n") else text + "\n"
    return TextBlock(f"{TEXT_HEADER}{name}\n{fence}{_language(name)}\n{body}{fence}")


def parse_text_file(block: TextBlock) -> tuple[str, str] | None:
    """Return ``(file name, text)`` of a block made by :func:`text_file_block`, else None.

    The text ends with a newline (one is added to a file that had none).
    """
    m = _TEXT_FILE.match(block.text)
    return None if m is None else (m.group(1), m.group(4) + "\n")


# --- images -----------------------------------------------------------------


_DAMAGED = "a damaged or incomplete image"
_DAMAGED_ADVICE = "Save or export it again from the program that made it. "


def open_image(data: bytes, name: str) -> Image.Image:
    """Open an image with Pillow (header read only; pixels decode on first use).

    Raises:
        AttachmentTooLarge: more pixels than Pillow's decompression-bomb guard allows.
        UnsupportedFile: Pillow cannot read it (damaged).
    """
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", Image.DecompressionBombWarning)
            return Image.open(io.BytesIO(data))
    except Image.DecompressionBombError as exc:
        raise AttachmentTooLarge(
            name, "it has too many pixels to open safely", can_downscale=False,
            advice="Shrink it with an image editor first. ",
        ) from exc  # fmt: skip
    except (UnidentifiedImageError, OSError, SyntaxError, ValueError) as exc:
        raise UnsupportedFile(name, _DAMAGED, _DAMAGED_ADVICE) from exc


def decoded_size(data: bytes, name: str) -> tuple[int, int]:
    """Decode every frame of an image and return its ``(width, height)`` in pixels.

    What is attached is checked whole, not only its header: a PNG or JPEG cut short
    (a copy interrupted, a download stopped) opens with its size intact, and would be
    sent to a provider that refuses it (or shows half a picture). Pillow refuses the
    missing bytes (``ImageFile.LOAD_TRUNCATED_IMAGES`` stays False) and bad PNG checksums.

    Raises:
        AttachmentTooLarge: see :func:`open_image`.
        UnsupportedFile: it cannot be decoded whole ("a damaged or incomplete image").
    """
    with open_image(data, name) as im:
        size = im.size
        try:
            if im.format == "JPEG":  # every block is still read, at 1/8 of the memory
                im.draft(im.mode, (max(1, size[0] // 8), max(1, size[1] // 8)))
            for frame in range(getattr(im, "n_frames", 1)):
                im.seek(frame)
                im.load()
        except (OSError, SyntaxError, ValueError, EOFError, zlib.error) as exc:
            raise UnsupportedFile(name, _DAMAGED, _DAMAGED_ADVICE) from exc
        return size


def image_size(data: bytes, name: str) -> tuple[int, int]:
    """Return an image's ``(width, height)`` in pixels (see :func:`open_image` for errors)."""
    with open_image(data, name) as im:
        return im.size


# --- PDFs -------------------------------------------------------------------

_PAGE = re.compile(rb"/Type\s*/Page(?![A-Za-z])")
_OBJSTM = re.compile(rb"/Type\s*/ObjStm\b[^>]*(?:>>)?\s*stream\r?\n", re.DOTALL)
_INFLATE_MAX = 64 * MB


def pdf_pages(data: bytes) -> int | None:
    """Count a PDF's pages (``/Type /Page`` objects), inside object streams too.

    Returns:
        The count, or None when none was found (an encrypted or unusual file;
        the provider then judges).
    """
    count = len(_PAGE.findall(data))
    budget = _INFLATE_MAX
    view = memoryview(data)
    for m in _OBJSTM.finditer(data):
        end = data.find(b"endstream", m.end())
        try:  # a slice of a memoryview copies nothing
            text = zlib.decompressobj().decompress(view[m.end() : end if end > 0 else None], budget)
        except zlib.error:
            continue
        budget -= len(text)
        count += len(_PAGE.findall(text))
        if budget <= 0:
            break
    return count or None

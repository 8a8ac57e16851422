"""A fast local estimate of how many input tokens a request costs.

Used for the context meter and to decide when to compact; the provider's own
count (``count_tokens``, or the usage of the last reply) is the truth when it
is there. Budget: 20 ms for a 200k-token history on a 2-core machine;
``python -m tests.benchmarks.bench_tokens`` measures it.

Heuristics (all counts are tokens):

* text: ASCII ~ 4 characters per token, plus a quarter token for each code
  punctuation mark (``{}()[];=<>``), which BPE tokenizers rarely merge; 2-byte
  UTF-8 characters (Cyrillic, Greek, accented Latin) ~ 2 per token; 3- and
  4-byte ones (CJK, emoji) ~ 1 token each. Counted with C-speed string
  methods only.
* images: Anthropic's formula ``width * height / 750`` after scaling the long
  edge down to 1568 px, at most 1600, when the size can be read from the
  first bytes of the base64 data (PNG, GIF, JPEG, WebP); otherwise
  :data:`IMAGE_FLAT`.
* documents: PDFs :data:`PDF_PAGE` per page (Anthropic: 1,500-3,000 per page,
  text plus page image), pages counted once per document and cached; text
  documents as text.
* tool_use: name and JSON input; tool_result: its parts; thinking: its text;
  a compaction summary: its text; unknown blocks: their JSON.
* per turn :data:`TURN_OVERHEAD`, per block :data:`BLOCK_OVERHEAD`; tool
  definitions as JSON plus :data:`TOOLS_OVERHEAD` (Anthropic's tool-use
  system prompt is 300-350 tokens).
"""

from __future__ import annotations

import base64
import binascii
import json
import math
import re
import struct
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from parley.core.content import (
    Block,
    CompactSummaryBlock,
    DocumentBlock,
    ImageBlock,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolResultPart,
    ToolUseBlock,
    Turn,
    UnknownBlock,
)

__all__ = ["estimate_tokens", "image_size", "text_tokens"]

TURN_OVERHEAD = 4
BLOCK_OVERHEAD = 3
TOOLS_OVERHEAD = 350
IMAGE_FLAT = 1600
IMAGE_MAX = 1600
IMAGE_LONG_EDGE = 1568
PDF_PAGE = 2000
MEDIA_FLAT = 1000  # audio or video in a tool result: sent to no API as media today
_CODE_MARKS = b"{}()[];=<>"
_HIGH_BYTES = bytes(range(0x80, 0x100))
_PDF_PAGE = re.compile(rb"/Type\s*/Page(?![a-zA-Z])")
_MEDIA_CACHE_MAX = 512
_media_cache: dict[str, int] = {}


def text_tokens(text: str) -> int:
    """Estimate the tokens of a text (see the module docstring for the rule)."""
    if not text:
        return 0
    raw = text.encode("utf-8", "surrogatepass")
    marks = len(raw) - len(raw.translate(None, _CODE_MARKS))
    if len(raw) == len(text):
        return math.ceil((len(raw) + marks) / 4)
    ascii_chars = len(raw.translate(None, _HIGH_BYTES))
    wide_chars = len(text) - ascii_chars
    wide_bytes = len(raw) - ascii_chars
    # wide_bytes = 2*two + 3*three (4-byte characters counted as 3-byte ones)
    three = min(wide_chars, max(0, wide_bytes - 2 * wide_chars))
    two = wide_chars - three
    return math.ceil((ascii_chars + marks) / 4 + two / 2 + three)


def _head_bytes(data: str, n_chars: int) -> bytes:
    head = data[: n_chars - n_chars % 4]
    try:
        return base64.b64decode(head, validate=False)
    except (binascii.Error, ValueError):
        return b""


def _jpeg_size(raw: bytes) -> tuple[int, int] | None:
    i = 2
    while i + 9 < len(raw):
        if raw[i] != 0xFF:
            i += 1
            continue
        marker = raw[i + 1]
        if marker in (0xD8, 0x01) or 0xD0 <= marker <= 0xD7 or marker == 0xFF:
            i += 1 if marker == 0xFF else 2
            continue
        length = struct.unpack(">H", raw[i + 2 : i + 4])[0]
        if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):
            height, width = struct.unpack(">HH", raw[i + 5 : i + 9])
            return width, height
        i += 2 + length
    return None


def image_size(data: str) -> tuple[int, int] | None:
    """Read an image's (width, height) in pixels from the start of its base64 data.

    Supports PNG, GIF, WebP (VP8, VP8L, VP8X) and JPEG (SOF marker within the
    first 64 KiB). Returns None when the size cannot be read there.
    """
    raw = _head_bytes(data, 64)
    if raw[:8] == b"\x89PNG\r\n\x1a\n" and len(raw) >= 24:
        return struct.unpack(">II", raw[16:24])
    if raw[:6] in (b"GIF87a", b"GIF89a") and len(raw) >= 10:
        return struct.unpack("<HH", raw[6:10])
    if raw[:4] == b"RIFF" and raw[8:12] == b"WEBP" and len(raw) >= 30:
        chunk = raw[12:16]
        if chunk == b"VP8X":
            w = int.from_bytes(raw[24:27], "little") + 1
            h = int.from_bytes(raw[27:30], "little") + 1
            return w, h
        if chunk == b"VP8L":
            bits = int.from_bytes(raw[21:25], "little")
            return (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1
        if chunk == b"VP8 ":
            w, h = struct.unpack("<HH", raw[26:30])
            return w & 0x3FFF, h & 0x3FFF
    if raw[:2] == b"\xff\xd8":
        # The SOF marker usually sits in the first few KiB; EXIF thumbnails push it further.
        return _jpeg_size(_head_bytes(data, 5464)) or _jpeg_size(_head_bytes(data, 87384))
    return None


def _cached(data: str, compute: Callable[[str], int]) -> int:
    # Keyed by the base64 string itself: its hash is computed once and cached by
    # Python, so a lookup costs O(1) however large the image or PDF.
    value = _media_cache.get(data)
    if value is None:
        value = compute(data)
        if len(_media_cache) >= _MEDIA_CACHE_MAX:
            _media_cache.clear()
        _media_cache[data] = value
    return value


def image_data_tokens(data: str) -> int:
    """Estimate the tokens of an image from its base64 ``data`` (its pixels scaled to a
    long edge of IMAGE_LONG_EDGE, / 750; IMAGE_FLAT when its size cannot be read)."""
    size = image_size(data)
    if size is None:
        return IMAGE_FLAT
    w, h = size
    long_edge = max(w, h)
    if long_edge > IMAGE_LONG_EDGE:
        scale = IMAGE_LONG_EDGE / long_edge
        w, h = int(w * scale), int(h * scale)
    return max(1, min(IMAGE_MAX, math.ceil(w * h / 750)))


def _image_tokens(block: ImageBlock) -> int:
    return _cached(block.data, image_data_tokens) if block.data else IMAGE_FLAT


def _pdf_tokens(data: str) -> int:
    try:
        raw = base64.b64decode(data, validate=False)
    except (binascii.Error, ValueError):
        raw = b""
    return PDF_PAGE * max(1, len(_PDF_PAGE.findall(raw)))


def _document_tokens(block: DocumentBlock) -> int:
    if block.media_type == "application/pdf":
        return _cached(block.data, _pdf_tokens)
    # Text and other documents: their decoded size read as ASCII text.
    return math.ceil(len(block.data) * 3 / 4 / 4)


def _part_tokens(part: ToolResultPart) -> int:
    if isinstance(part, TextBlock):
        return text_tokens(part.text)
    if isinstance(part, ImageBlock):
        return _image_tokens(part)
    if isinstance(part, DocumentBlock):
        return _document_tokens(part)
    return MEDIA_FLAT


def _json_tokens(value: Any) -> int:
    return text_tokens(json.dumps(value, ensure_ascii=False, default=str))


def _block_tokens(block: Block) -> int:
    if isinstance(block, TextBlock):
        return text_tokens(block.text)
    if isinstance(block, ToolResultBlock):
        return sum(_part_tokens(p) + BLOCK_OVERHEAD for p in block.content)
    if isinstance(block, ToolUseBlock):
        return text_tokens(block.name) + _json_tokens(dict(block.input))
    if isinstance(block, ImageBlock):
        return _image_tokens(block)
    if isinstance(block, DocumentBlock):
        return _document_tokens(block)
    if isinstance(block, ThinkingBlock):
        return text_tokens(block.thinking)
    if isinstance(block, CompactSummaryBlock):
        return text_tokens(block.summary)
    if isinstance(block, UnknownBlock):
        return _json_tokens(block.raw if isinstance(block.raw, Mapping) else {})
    return 0


def estimate_tokens(
    turns: Sequence[Turn],
    *,
    system: str | None = None,
    tools: Sequence[dict[str, Any]] | None = None,
) -> int:
    """Estimate the input tokens of a request.

    Args:
        turns: the turns as sent: pass ``parley.core.wire.to_messages(...)`` output to
            estimate the model context (every turn given is counted, aborted
            or summary turns included).
        system: the system prompt.
        tools: the tool definitions (JSON schemas) sent with the request.

    Returns:
        The estimated number of input tokens (>= 0). Typically within ~15% of
        the provider's count for prose and code; images and PDFs are coarser.
    """
    total = text_tokens(system) if system else 0
    if tools:
        total += TOOLS_OVERHEAD + _json_tokens(list(tools))
    for turn in turns:
        total += TURN_OVERHEAD
        for block in turn.blocks:
            total += BLOCK_OVERHEAD + _block_tokens(block)
    return total

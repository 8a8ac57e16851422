"""The local token estimate (core/context/tokens.py) of what goes on the wire."""

from __future__ import annotations

import base64
import struct
import zlib

import pytest

from parley.core.content import (
    CompactSummaryBlock,
    DocumentBlock,
    ImageBlock,
    MediaPart,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    Turn,
    UnknownBlock,
)
from parley.core.context import tokens
from parley.core.context.tokens import estimate_tokens, image_size, text_tokens


def b64(raw: bytes) -> str:
    return base64.b64encode(raw).decode()


def png(w: int, h: int) -> str:
    ihdr = struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0)
    body = b"IHDR" + ihdr
    chunk = struct.pack(">I", len(ihdr)) + body + struct.pack(">I", zlib.crc32(body))
    return b64(b"\x89PNG\r\n\x1a\n" + chunk + b"\0" * 40)


def jpeg(w: int, h: int, exif: int = 0) -> str:
    app0 = b"\xff\xe0" + struct.pack(">H", 16) + b"JFIF\0\x01\x01\0\0\x01\0\x01\0\0"
    app1 = b"\xff\xe1" + struct.pack(">H", exif + 2) + b"\0" * exif if exif else b""
    sof = b"\xff\xc0" + struct.pack(">HBHHB", 17, 8, h, w, 3) + b"\0" * 9
    return b64(b"\xff\xd8" + app0 + app1 + sof + b"\xff\xd9")


def gif(w: int, h: int) -> str:
    return b64(b"GIF89a" + struct.pack("<HH", w, h) + b"\0" * 20)


def webp_vp8x(w: int, h: int) -> str:
    body = b"VP8X" + struct.pack("<I", 10) + b"\0" * 4
    body += (w - 1).to_bytes(3, "little") + (h - 1).to_bytes(3, "little")
    return b64(b"RIFF" + struct.pack("<I", len(body) + 4) + b"WEBP" + body)


def webp_vp8l(w: int, h: int) -> str:
    bits = (w - 1) | ((h - 1) << 14)
    body = b"VP8L" + struct.pack("<I", 5) + b"\x2f" + bits.to_bytes(4, "little") + b"\0" * 8
    return b64(b"RIFF" + struct.pack("<I", len(body) + 4) + b"WEBP" + body)


@pytest.mark.parametrize(
    ("data", "size"),
    [
        (png(800, 600), (800, 600)),
        (jpeg(1024, 768), (1024, 768)),
        (jpeg(640, 480, exif=20_000), (640, 480)),
        (gif(320, 200), (320, 200)),
        (webp_vp8x(3000, 2000), (3000, 2000)),
        (webp_vp8l(100, 50), (100, 50)),
        (b64(b"not an image at all, sorry"), None),
        ("!!!!", None),
    ],
)
def test_image_sizes_are_read_from_the_header(data, size):
    assert image_size(data) == size


def test_images_follow_the_anthropic_formula_with_a_cap():
    small = estimate_tokens([Turn("user", [ImageBlock("image/png", png(750, 100))])])
    empty = estimate_tokens([Turn("user", [])])
    assert small - empty - tokens.BLOCK_OVERHEAD == 100  # 750 * 100 / 750
    huge = estimate_tokens([Turn("user", [ImageBlock("image/png", png(8000, 8000))])])
    assert huge - empty - tokens.BLOCK_OVERHEAD == tokens.IMAGE_MAX
    wide = estimate_tokens([Turn("user", [ImageBlock("image/png", png(3136, 200))])])
    assert wide - empty - tokens.BLOCK_OVERHEAD == 210  # scaled to 1568 x 100: 209.07, up
    by_url = estimate_tokens([Turn("user", [ImageBlock("image/png", url="https://x.test/a.png")])])
    assert by_url - empty - tokens.BLOCK_OVERHEAD == tokens.IMAGE_FLAT


def test_text_heuristics_for_prose_cjk_and_code():
    prose = "The quick brown fox jumps over the lazy dog. " * 20
    assert text_tokens(prose) == pytest.approx(len(prose) / 4, rel=0.05)
    cjk = "日本語の文章です" * 50
    assert text_tokens(cjk) == len(cjk)  # about one token per CJK character
    code = "if (a[i] == b) { x = f(y); }\n" * 30
    assert text_tokens(code) > len(code) / 4 * 1.3  # punctuation-heavy text costs more
    assert text_tokens("Привет мир") == 5  # 9 two-byte letters ~ 2 per token, 1 space
    assert text_tokens("") == 0


def test_pdfs_count_pages():
    three = b"%PDF-1.4\n1 0 obj <</Type /Pages /Count 3>>\n" + b"<< /Type /Page >>\n" * 3
    doc = DocumentBlock("application/pdf", b64(three), "a.pdf")
    got = estimate_tokens([Turn("user", [doc])]) - estimate_tokens([Turn("user", [])])
    assert got == 3 * tokens.PDF_PAGE + tokens.BLOCK_OVERHEAD


def test_every_block_kind_counts():
    base = estimate_tokens([Turn("assistant", [])])
    kinds = [
        TextBlock("hello there"),
        ToolUseBlock("t1", "search", {"query": "weather in Oslo tomorrow"}),
        ToolResultBlock("t1", (TextBlock("rain"), MediaPart("audio", "audio/wav", "UklG"))),
        ThinkingBlock("let me think about this carefully", "sig"),
        CompactSummaryBlock("they discussed the weather at length"),
        UnknownBlock({"type": "redacted_thinking", "data": "x" * 100}),
        DocumentBlock("text/plain", b64(b"some notes " * 40)),
    ]
    for block in kinds:
        assert estimate_tokens([Turn("assistant", [block])]) > base + tokens.BLOCK_OVERHEAD, block


def test_bigger_tool_input_costs_more():
    small = ToolUseBlock("t", "f", {"q": "a"})
    big = ToolUseBlock("t", "f", {"q": "a" * 400, "opts": list(range(50))})
    assert (
        estimate_tokens([Turn("assistant", [big])])
        > estimate_tokens([Turn("assistant", [small])]) + 100
    )


def test_system_prompt_and_tools_are_counted():
    turns = [Turn("user", [TextBlock("hi")])]
    plain = estimate_tokens(turns)
    assert estimate_tokens(turns, system="You are a helpful assistant. " * 10) > plain + 50
    tool = {
        "name": "search",
        "description": "Search the web for a query and return the top results.",
        "input_schema": {"type": "object", "properties": {"q": {"type": "string"}}},
    }
    with_tools = estimate_tokens(turns, tools=[tool])
    assert with_tools > plain + tokens.TOOLS_OVERHEAD


def test_the_estimate_grows_with_every_turn():
    turns: list[Turn] = []
    last = estimate_tokens(turns)
    assert last == 0
    for i in range(5):
        turns.append(Turn("user" if i % 2 == 0 else "assistant", [TextBlock(f"message {i}")]))
        now = estimate_tokens(turns)
        assert now > last
        last = now

"""Benchmark: estimate the context tokens of a 200k-token history.

Budget: <= 20 ms on a 2-core machine. Run with
``python -m tests.benchmarks.bench_tokens``; prints the estimate, the first
(cold) call and the median / p95 of warm calls, with and without the wire rules.
"""

from __future__ import annotations

import base64
import random
import statistics
import struct
import time
import zlib

from parley.core.content import (
    Block,
    DocumentBlock,
    ImageBlock,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    Turn,
)
from parley.core.context import tokens
from parley.core.context.tokens import estimate_tokens
from parley.core.providers.capabilities import ANTHROPIC
from parley.core.wire import to_messages

BUDGET_MS = 20.0
TARGET_TOKENS = 200_000

_SENTENCE = (
    "the model reads every turn of the conversation and answers with care while the user "
    "asks about parsing files databases network errors and the meaning of life"
)
_WORDS = _SENTENCE.split()
_CODE = (
    "def handler(request):\n    data = json.loads(request.body)\n"
    "    if not data.get('id'):\n        return {'error': 'missing id'}\n"
    "    rows = [r for r in db.query(Item).filter(Item.id == data['id'])]\n"
    "    return {'items': [row.to_dict() for row in rows]}\n"
)
_CJK = "これは日本語の文章です。模型会阅读每一轮对话。"


def _png(width: int, height: int) -> str:
    def chunk(kind: bytes, body: bytes) -> bytes:
        crc = struct.pack(">I", zlib.crc32(kind + body))
        return struct.pack(">I", len(body)) + kind + body + crc

    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    raw = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", zlib.compress(b"\0" * 64))
    return base64.b64encode(raw + b"\0" * 30_000).decode()


def _prose(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(_WORDS) for _ in range(words))


def build_history(target: int = TARGET_TOKENS, seed: int = 7) -> list[Turn]:
    """A mixed history (prose, code, CJK, tools, thinking, images, PDFs) of ~`target` tokens."""
    rng = random.Random(seed)
    image = ImageBlock("image/png", _png(1200, 900))
    pdf = DocumentBlock("application/pdf", base64.b64encode(b"%PDF-1.4 /Type /Page " * 3).decode())
    turns: list[Turn] = []
    n = total = 0
    while total < target:
        n += 1
        start = len(turns)
        user: list[Block] = [TextBlock(_prose(rng, rng.randint(10, 120)))]
        if n % 40 == 0:
            user.append(image)
        if n % 97 == 0:
            user.append(pdf)
        if n % 7 == 0:
            user.append(TextBlock(_CJK * rng.randint(1, 10)))
        turns.append(Turn("user", user))
        reply: list[Block] = [ThinkingBlock(_prose(rng, 60), "sig")] if n % 5 == 0 else []
        prose = _prose(rng, rng.randint(40, 300))
        reply.append(TextBlock(prose + "\n```python\n" + _CODE + "```"))
        if n % 3 == 0:
            args = {"path": f"/src/mod{n}.py", "lines": [1, 80]}
            call = ToolUseBlock(f"toolu_{n}", "read_file", args)
            reply.append(call)
            turns.append(Turn("assistant", reply))
            output = TextBlock(_CODE * rng.randint(2, 12))
            turns.append(Turn("user", [ToolResultBlock(call.id, (output,))]))
            turns.append(Turn("assistant", [TextBlock(_prose(rng, 50))]))
        else:
            turns.append(Turn("assistant", reply))
        total += estimate_tokens(turns[start:])
    return turns


def _time_ms(fn, repeat: int) -> list[float]:
    out = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        out.append((time.perf_counter() - t0) * 1000)
    return out


def main() -> None:
    turns = build_history()
    blocks = sum(len(t.blocks) for t in turns)
    chars = sum(len(b.text) for t in turns for b in t.blocks if isinstance(b, TextBlock))
    tokens._media_cache.clear()  # first call: image sizes and PDF pages not known yet
    cold = _time_ms(lambda: estimate_tokens(turns), 1)[0]
    warm = _time_ms(lambda: estimate_tokens(turns), 50)
    wire = _time_ms(lambda: estimate_tokens(to_messages(turns, ANTHROPIC)), 20)
    p95 = sorted(warm)[int(len(warm) * 0.95) - 1]
    print(f"history: {len(turns)} turns, {blocks} blocks, {chars:,} text chars")
    print(f"estimate: {estimate_tokens(turns):,} tokens")
    print(
        f"estimate_tokens: cold {cold:.2f} ms, warm median {statistics.median(warm):.2f} ms, "
        f"p95 {p95:.2f} ms (budget {BUDGET_MS:.0f} ms)"
    )
    print(f"to_messages + estimate_tokens: median {statistics.median(wire):.2f} ms")
    verdict = "OK" if statistics.median(warm) <= BUDGET_MS and cold <= BUDGET_MS else "OVER BUDGET"
    print(verdict)


if __name__ == "__main__":
    main()

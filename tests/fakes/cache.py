"""Token estimates and a simulated prompt cache for the fake provider server.

Tokens are estimated as ``ceil(bytes / 4)`` of each prompt element's canonical
JSON, so counts are deterministic and a prefix's count is the sum of its
elements.

Anthropic (explicit caching): the prompt is the ordered list tools → system
blocks → message content blocks. A block carrying ``cache_control`` is a
breakpoint (a top-level ``cache_control`` marks the last block). A request
reads from the cache the longest prefix, ending at or before its last
breakpoint, that an earlier request wrote at one of its breakpoints with
identical content (cache_control itself excluded); the rest up to the last
breakpoint is written (cache_creation); what follows it is plain input. Each
breakpoint's prefix is stored with the TTL (5 minutes, or 1 hour for
``ttl: "1h"``), refreshed on a hit.

OpenAI (automatic caching): every prefix of tools → messages is stored; the
longest stored prefix of a new request counts as ``cached_tokens`` once it
reaches ``openai_min_tokens`` (the real API: 1024; default 0 here so short
test conversations show it).
"""

from __future__ import annotations

import hashlib
import json
import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


def canonical(value: Any) -> bytes:
    """Return the canonical JSON bytes of a value (sorted keys, no spaces, UTF-8)."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def estimate_tokens(data: bytes | str) -> int:
    """Return the fake tokenizer's count: ceil(bytes / 4), at least 1 for non-empty."""
    n = len(data.encode() if isinstance(data, str) else data)
    return math.ceil(n / 4)


#: The most tokens an image counts: the real APIs count an image by its pixels, not its
#: bytes (Anthropic: width × height / 750, about 1,600 at most, as images are scaled down
#: to about 1.15 megapixels). Smaller images still count by their base64, as before.
IMAGE_TOKENS_MAX = 1_600


def _image_tokens(b64: str) -> int:
    return min(IMAGE_TOKENS_MAX, estimate_tokens(b64))


def _stand_in(media_type: str, b64: str) -> str:
    """What a file's base64 weighs as: an image's digest (prefixes of different images
    differ) padded to 4 bytes per token of :func:`_image_tokens`; other files as they are."""
    if not media_type.startswith("image/"):
        return b64
    digest = hashlib.sha256(b64.encode()).hexdigest()[:16]
    return digest + "." * max(0, 4 * _image_tokens(b64) - len(digest))


def weighed(value: Any) -> Any:
    """``value`` (a request's block or message) with each image's base64 — an Anthropic
    ``base64`` source, an OpenAI ``data:`` URL — replaced by :func:`_stand_in`, so the fake
    counts images as the APIs do (by size, not by their encoded bytes)."""
    if isinstance(value, list):
        return [weighed(v) for v in value]
    if not isinstance(value, dict):
        return value
    out = {k: weighed(v) for k, v in value.items()}
    if value.get("type") == "base64" and isinstance(value.get("data"), str):
        out["data"] = _stand_in(str(value.get("media_type", "")), value["data"])
    for key in ("url", "file_data"):
        url = value.get(key)
        if isinstance(url, str) and url.startswith("data:") and ";base64," in url:
            head, data = url.split(";base64,", 1)
            out[key] = _stand_in(head[5:], data)
    return out


def _strip(block: Any) -> Any:
    if isinstance(block, dict):
        return weighed({k: v for k, v in block.items() if k != "cache_control"})
    return block


def anthropic_elements(body: dict[str, Any]) -> tuple[list[bytes], list[int]]:
    """Split an Anthropic request into prompt elements and breakpoint indexes.

    Returns:
        (canonical bytes of each element in cache order, indexes of the
        elements that carry ``cache_control``).
    """
    elements: list[bytes] = []
    breakpoints: list[int] = []

    def add(block: Any, marked: bool, role: str | None = None) -> None:
        item = _strip(block)
        if role is not None and isinstance(item, dict):
            item = {"role": role, **item}
        elements.append(canonical(item))
        if marked:
            breakpoints.append(len(elements) - 1)

    for tool in body.get("tools") or []:
        add(tool, isinstance(tool, dict) and "cache_control" in tool)
    system = body.get("system")
    if isinstance(system, str) and system:
        add({"type": "text", "text": system}, False)
    elif isinstance(system, list):
        for block in system:
            add(block, isinstance(block, dict) and "cache_control" in block)
    for msg in body.get("messages") or []:
        role = msg.get("role") if isinstance(msg, dict) else None
        content = msg.get("content") if isinstance(msg, dict) else msg
        if isinstance(content, str):
            add({"type": "text", "text": content}, False, role)
        elif isinstance(content, list):
            for block in content:
                add(block, isinstance(block, dict) and "cache_control" in block, role)
    if body.get("cache_control") and elements:
        breakpoints.append(len(elements) - 1)
    return elements, sorted(set(breakpoints))


def openai_elements(body: dict[str, Any]) -> list[bytes]:
    """Split an OpenAI Chat Completions request into prompt elements (tools, then messages)."""
    out = [canonical(t) for t in body.get("tools") or []]
    out.extend(canonical(weighed(m)) for m in body.get("messages") or [])
    return out


@dataclass(frozen=True)
class CacheUsage:
    """Token split of one request's input.

    Attributes:
        input_tokens: uncached input tokens.
        cache_read: tokens read from the cache.
        cache_write: tokens written to the cache (Anthropic only).
    """

    input_tokens: int
    cache_read: int
    cache_write: int

    @property
    def total(self) -> int:
        return self.input_tokens + self.cache_read + self.cache_write


class PromptCache:
    """A thread-safe in-memory prompt cache keyed by (model, prefix hash).

    Args:
        clock: returns seconds (monotonic); injectable for TTL tests.
        anthropic_min_tokens: prefixes shorter than this are neither written nor read.
        openai_min_tokens: shortest prefix OpenAI reports as cached.
    """

    def __init__(
        self,
        clock: Callable[[], float] = time.monotonic,
        anthropic_min_tokens: int = 0,
        openai_min_tokens: int = 0,
    ) -> None:
        self._clock = clock
        self._lock = threading.Lock()
        self._store: dict[tuple[str, str, bytes], float] = {}
        self.anthropic_min_tokens = anthropic_min_tokens
        self.openai_min_tokens = openai_min_tokens

    def clear(self) -> None:
        """Forget every cached prefix."""
        with self._lock:
            self._store.clear()

    @staticmethod
    def _prefixes(elements: list[bytes]) -> tuple[list[bytes], list[int]]:
        hashes: list[bytes] = []
        cumulative: list[int] = []
        h = hashlib.sha256()
        total = 0
        for el in elements:
            h.update(len(el).to_bytes(8, "big"))
            h.update(el)
            hashes.append(h.copy().digest())
            total += estimate_tokens(el)
            cumulative.append(total)
        return hashes, cumulative

    def _alive(self, key: tuple[str, str, bytes], now: float) -> bool:
        expiry = self._store.get(key)
        return expiry is not None and expiry > now

    def anthropic(self, body: dict[str, Any]) -> CacheUsage:
        """Compute an Anthropic request's usage split and update the cache."""
        model = str(body.get("model"))
        elements, breakpoints = anthropic_elements(body)
        hashes, cum = self._prefixes(elements)
        total = cum[-1] if cum else 0
        if not breakpoints:
            return CacheUsage(total, 0, 0)
        last = breakpoints[-1]
        ttl = 3600.0 if _wants_hour(body) else 300.0
        now = self._clock()
        with self._lock:
            read_upto = -1
            for i in range(last, -1, -1):
                if self._alive(("anthropic", model, hashes[i]), now):
                    read_upto = i
                    break
            read = cum[read_upto] if read_upto >= 0 else 0
            if cum[last] < self.anthropic_min_tokens:
                return CacheUsage(total, 0, 0)
            for bp in breakpoints:
                if cum[bp] >= self.anthropic_min_tokens:
                    self._store[("anthropic", model, hashes[bp])] = now + ttl
        return CacheUsage(total - cum[last], read, cum[last] - read)

    def openai(self, body: dict[str, Any]) -> CacheUsage:
        """Compute an OpenAI request's usage split (no writes are billed) and update the cache."""
        model = str(body.get("model"))
        hashes, cum = self._prefixes(openai_elements(body))
        total = cum[-1] if cum else 0
        now = self._clock()
        with self._lock:
            read = 0
            for i in range(len(hashes) - 1, -1, -1):
                if self._alive(("openai", model, hashes[i]), now):
                    read = cum[i]
                    break
            for h in hashes:
                self._store[("openai", model, h)] = now + 600.0
        if read < max(self.openai_min_tokens, 1):
            read = 0
        return CacheUsage(total - read, read, 0)


def _wants_hour(body: dict[str, Any]) -> bool:
    return b'"ttl":"1h"' in canonical(body)


def count_anthropic_tokens(body: dict[str, Any]) -> int:
    """Return the fake count of an Anthropic request's input tokens (count_tokens endpoint)."""
    elements, _ = anthropic_elements(body)
    return sum(estimate_tokens(e) for e in elements)

"""Helpers shared by the format converters."""

from __future__ import annotations

import base64
import binascii
import hashlib
import mimetypes
from collections.abc import Sequence

from parley.core.content import Turn, now_ms
from parley.core.convert._lost import LostLog

LOST_ORIGIN = "{n} text block(s) lost where they came from (source, sender); their text was kept."
LOST_RECOVERED = "{n} text block(s) lost their 'recovered from a damaged file' mark."
LOST_ABORTED = "{n} reply(ies) cut off before they finished were exported as ordinary replies."
LOST_MODEL = "Which model wrote {n} reply(ies), and their token usage, were left out."
LOST_SUMMARY = (
    "{n} compaction summary(ies) were written as ordinary text; the turns they replaced "
    "are not linked to them any more."
)


def turn_metadata_losses(turns: Sequence[Turn], log: LostLog) -> None:
    """Record what of the turns' own fields (not blocks) a message format cannot hold."""
    for t in turns:
        if t.aborted:
            log.add(LOST_ABORTED)
        if t.model is not None or t.usage is not None:
            log.add(LOST_MODEL)


def timestamps(count: int) -> list[int]:
    """Creation times for `count` imported turns: increasing by 1 ms, the last one now."""
    base = now_ms() - count
    return [base + i + 1 for i in range(count)]


def guess_media_type(url: str, default: str) -> str:
    """The media type a URL's file name suggests, or `default`."""
    guessed, _ = mimetypes.guess_type(url.split("?", 1)[0])
    return guessed or default


def parse_data_url(url: str) -> tuple[str, str] | None:
    """Split ``data:<media type>;base64,<data>`` into (media type, data); None otherwise."""
    if not url.startswith("data:"):
        return None
    head, sep, data = url[5:].partition(",")
    if not sep or not head.endswith(";base64"):
        return None
    return head[: -len(";base64")] or "application/octet-stream", data


def data_url(media_type: str, data: str) -> str:
    """Return ``data:<media type>;base64,<data>``."""
    return f"data:{media_type};base64,{data}"


def b64_to_text(data: str) -> str | None:
    """Decode base64 `data` to UTF-8 text; None if it is not valid base64 UTF-8."""
    try:
        return base64.b64decode(data, validate=False).decode("utf-8")
    except (binascii.Error, ValueError):
        return None


def text_to_b64(text: str) -> str:
    """Encode `text` as UTF-8 base64."""
    return base64.b64encode(text.encode("utf-8")).decode("ascii")


def short_hash(value: str) -> str:
    """Eight hex characters that identify `value` (for rewritten ids)."""
    return hashlib.sha1(value.encode("utf-8")).hexdigest()[:8]

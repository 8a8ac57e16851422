"""An MCP tool result as Parley's tool_result block.

``CallToolResult.content`` parts become tool_result parts:

* text → a text part;
* an image → an image part (sent to the model as the provider takes images in
  tool results, like an attached picture);
* an embedded resource → its text, headed by its URI; a binary one → an image
  part when it is an image, else a line naming it (its bytes are not sent);
* a resource link → a line naming it;
* audio → a line saying audio was returned (not sent);
* no content but ``structured_content`` → that value as JSON text.

``is_error`` carries over. Text is cut at :data:`MAX_TEXT_CHARS` in all (a
server that returns megabytes must not fill the model's context); the cut is
said in the text.
"""

from __future__ import annotations

import base64
import json
from typing import Any

from parley.core.content import ImageBlock, TextBlock, ToolResultBlock, ToolResultPart

#: At most this many characters of text go back to the model from one call.
MAX_TEXT_CHARS = 100_000
#: Images larger than this (decoded bytes) are described instead of sent.
MAX_IMAGE_BYTES = 5 * 1024 * 1024
IMAGE_TYPES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})


def _image(data: str, media_type: str, what: str) -> ToolResultPart:
    size = len(data) * 3 // 4
    if media_type not in IMAGE_TYPES:
        return TextBlock(f"[{what}: an image of type {media_type}, which cannot be shown]")
    if size > MAX_IMAGE_BYTES:
        return TextBlock(f"[{what}: an image of {size / 1e6:.1f} MB, too large to send]")
    try:
        base64.b64decode(data, validate=True)
    except ValueError:
        return TextBlock(f"[{what}: an image whose data is not valid base64]")
    return ImageBlock(media_type=media_type, data=data)


def _part(item: Any) -> ToolResultPart:
    kind = getattr(item, "type", None)
    if kind == "text":
        return TextBlock(item.text)
    if kind == "image":
        return _image(item.data, item.mime_type, "image")
    if kind == "audio":
        return TextBlock(f"[audio of type {item.mime_type} returned; it is not sent to you]")
    if kind == "resource":
        res = item.resource
        if getattr(res, "text", None) is not None:
            return TextBlock(f"[resource {res.uri}]\n{res.text}")
        mime = res.mime_type or "application/octet-stream"
        if mime in IMAGE_TYPES:
            return _image(res.blob, mime, f"resource {res.uri}")
        return TextBlock(f"[resource {res.uri}: binary data of type {mime}, not sent]")
    if kind == "resource_link":
        desc = f" — {item.description}" if getattr(item, "description", None) else ""
        return TextBlock(f"[resource link {item.uri} ({item.name}){desc}]")
    return TextBlock(f"[a result part of unknown type {kind!r}]")


def _cut(parts: list[ToolResultPart]) -> list[ToolResultPart]:
    budget = MAX_TEXT_CHARS
    out: list[ToolResultPart] = []
    total = sum(len(p.text) for p in parts if isinstance(p, TextBlock))
    for p in parts:
        if isinstance(p, TextBlock):
            if budget <= 0:
                continue
            if len(p.text) > budget:
                p = TextBlock(p.text[:budget])
            budget -= len(p.text)
        out.append(p)
    if total > MAX_TEXT_CHARS:
        out.append(TextBlock(f"\n[output cut: the tool returned {total:,} characters; "
                             f"the first {MAX_TEXT_CHARS:,} are shown]"))
    return out


def to_tool_result(tool_use_id: str, result: Any) -> ToolResultBlock:
    """Convert an ``mcp.types.CallToolResult`` to the tool_result answering ``tool_use_id``."""
    parts = [_part(item) for item in result.content or []]
    if not parts and getattr(result, "structured_content", None) is not None:
        parts = [TextBlock(json.dumps(result.structured_content, ensure_ascii=False))]
    if not parts:
        parts = [TextBlock("(the tool returned nothing)")]
    return ToolResultBlock(tool_use_id, tuple(_cut(parts)), is_error=bool(result.is_error))

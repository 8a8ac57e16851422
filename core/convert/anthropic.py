"""Parley turns to and from the Anthropic Messages API ``messages`` parameter.

Source: the Messages API request shapes of the official ``anthropic`` SDK
(``anthropic.types.*BlockParam``): text, image (base64 / url / file source),
document (base64 PDF / plain text / url / content / file source), tool_use,
tool_result (text, image, document parts), thinking (with ``signature``),
redacted_thinking and the server-tool blocks.

Turn ids, creation times and the ``system`` prompt are not part of
``messages``: the importer makes new ids and times, and the system prompt is
passed separately by whoever builds the request.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
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
from parley.core.convert._common import (
    LOST_ORIGIN,
    LOST_RECOVERED,
    LOST_SUMMARY,
    b64_to_text,
    guess_media_type,
    short_hash,
    text_to_b64,
    timestamps,
    turn_metadata_losses,
)
from parley.core.convert._lost import LostLog
from parley.core.convert.errors import NotAConversation
from parley.core.wire import render_summary

__all__ = ["ANTHROPIC_PASSTHROUGH_TYPES", "anthropic_tool_id", "from_anthropic", "to_anthropic"]

IMAGE_MEDIA_TYPES = frozenset({"image/jpeg", "image/png", "image/gif", "image/webp"})
# Anthropic block types Parley has no block for: kept as UnknownBlock on import
# and sent back unchanged to Anthropic (and to no other provider).
ANTHROPIC_PASSTHROUGH_TYPES = frozenset(
    {
        "redacted_thinking",
        "search_result",
        "server_tool_use",
        "web_search_tool_result",
        "web_fetch_tool_result",
        "code_execution_tool_result",
        "bash_code_execution_tool_result",
        "text_editor_code_execution_tool_result",
        "tool_search_tool_result",
        "container_upload",
        "mcp_tool_use",
        "mcp_tool_result",
    }
)
_PARLEY_TYPES = frozenset(
    {"text", "image", "document", "tool_use", "tool_result", "thinking", "compact_summary"}
)
_ID_OK = re.compile(r"^[a-zA-Z0-9_-]+$")
_ID_BAD_CHAR = re.compile(r"[^a-zA-Z0-9_-]")

LOST_UNSIGNED = (
    "{n} thinking block(s) had no signature, which Anthropic requires, and were left out."
)
LOST_IMAGE_TYPE = (
    "{n} image(s) in a format Anthropic does not accept (only JPEG, PNG, GIF and WebP) "
    "were replaced by a placeholder."
)
LOST_DOC_TYPE = (
    "{n} document(s) of a type Anthropic does not accept (only PDF and plain text) "
    "were replaced by a placeholder."
)
LOST_TEXT_DOC_TYPE = "{n} text document(s) were sent as plain text; their exact type was lost."
LOST_MEDIA_PART = (
    "{n} audio or video output(s) of tools were replaced by a placeholder: Anthropic tool "
    "results hold only text, images and documents."
)
LOST_UNKNOWN = "{n} block(s) of a kind Anthropic does not know were left out."
LOST_EMPTY = "{n} message(s) left with no content were left out."
LOST_CITATIONS = "{n} text block(s) lost their citations."
LOST_SOURCE = (
    "{n} image(s) or document(s) given by an Anthropic file id or a link were replaced by "
    "a placeholder: Parley keeps documents only as data."
)
LOST_PART = "{n} tool result part(s) of a kind Parley does not keep were replaced by a placeholder."


def anthropic_tool_id(tool_id: str) -> str:
    """Return a tool_use id Anthropic accepts (``^[a-zA-Z0-9_-]+$``).

    Ids that already match are returned unchanged. Others get their bad
    characters replaced by ``_`` plus an 8-hex hash of the original, so two
    different ids never map to one; the tool_use and its tool_result get the
    same new id.
    """
    if _ID_OK.match(tool_id):
        return tool_id
    return f"{_ID_BAD_CHAR.sub('_', tool_id)}_{short_hash(tool_id)}"


# --- Parley -> Anthropic ----------------------------------------------------


def _text_out(block: TextBlock, log: LostLog) -> dict[str, Any]:
    if block.origin is not None:
        log.add(LOST_ORIGIN)
    if block.recovered:
        log.add(LOST_RECOVERED)
    return {"type": "text", "text": block.text}


def _image_out(block: ImageBlock, log: LostLog) -> dict[str, Any]:
    if block.data is not None and block.media_type in IMAGE_MEDIA_TYPES:
        source = {"type": "base64", "media_type": block.media_type, "data": block.data}
        return {"type": "image", "source": source}
    if block.data is None and block.url is not None:
        return {"type": "image", "source": {"type": "url", "url": block.url}}
    log.add(LOST_IMAGE_TYPE)
    return {"type": "text", "text": f"[image: {block.media_type}]"}


def _document_out(block: DocumentBlock, log: LostLog) -> dict[str, Any]:
    source: dict[str, Any] | None = None
    if block.media_type == "application/pdf":
        source = {"type": "base64", "media_type": "application/pdf", "data": block.data}
    elif block.media_type.startswith("text/"):
        text = b64_to_text(block.data)
        if text is not None:
            if block.media_type != "text/plain":
                log.add(LOST_TEXT_DOC_TYPE)
            source = {"type": "text", "media_type": "text/plain", "data": text}
    if source is None:
        log.add(LOST_DOC_TYPE)
        return {"type": "text", "text": f"[document: {block.name or block.media_type}]"}
    out: dict[str, Any] = {"type": "document", "source": source}
    if block.name is not None:
        out["title"] = block.name
    return out


def _part_out(part: ToolResultPart, log: LostLog) -> dict[str, Any] | None:
    if isinstance(part, TextBlock):
        return _text_out(part, log) if part.text else None
    if isinstance(part, ImageBlock):
        return _image_out(part, log)
    if isinstance(part, DocumentBlock):
        return _document_out(part, log)
    log.add(LOST_MEDIA_PART)
    return {"type": "text", "text": f"[{part.kind}: {part.media_type}]"}


def _tool_result_out(block: ToolResultBlock, log: LostLog) -> dict[str, Any]:
    tool_use_id = anthropic_tool_id(block.tool_use_id)
    out: dict[str, Any] = {"type": "tool_result", "tool_use_id": tool_use_id}
    parts = [p for p in (_part_out(part, log) for part in block.content) if p is not None]
    if parts:
        out["content"] = parts
    if block.is_error:
        out["is_error"] = True
    return out


def _block_out(block: Block, log: LostLog) -> dict[str, Any] | None:
    if isinstance(block, TextBlock):
        return _text_out(block, log)
    if isinstance(block, ImageBlock):
        return _image_out(block, log)
    if isinstance(block, DocumentBlock):
        return _document_out(block, log)
    if isinstance(block, ToolUseBlock):
        return {
            "type": "tool_use",
            "id": anthropic_tool_id(block.id),
            "name": block.name,
            "input": dict(block.input),
        }
    if isinstance(block, ToolResultBlock):
        return _tool_result_out(block, log)
    if isinstance(block, ThinkingBlock):
        if not block.signature:
            log.add(LOST_UNSIGNED)
            return None
        return {"type": "thinking", "thinking": block.thinking, "signature": block.signature}
    if isinstance(block, CompactSummaryBlock):
        log.add(LOST_SUMMARY)
        return {"type": "text", "text": render_summary(block)}
    if isinstance(block, UnknownBlock) and block.type in ANTHROPIC_PASSTHROUGH_TYPES:
        return dict(block.raw)
    log.add(LOST_UNKNOWN)
    return None


def to_anthropic(turns: Sequence[Turn], *, lost: list[str] | None = None) -> list[dict[str, Any]]:
    """Convert turns to the Messages API ``messages`` parameter.

    The conversion is literal: roles, order and pairing are kept as given (use
    ``parley.core.wire.to_messages`` first to build a valid request).

    Args:
        turns: the turns, in order. Not modified.
        lost: if given, one sentence is appended for each kind of thing the
            format cannot hold (thinking without signature, audio in tool
            results, block kinds Anthropic lacks, model names and usage, ...).
            Turn ids and times are never kept and not reported.

    Returns:
        A list of ``{"role": "user" | "assistant", "content": [block, ...]}``
        dicts, one per turn; a turn left with no content is left out.
    """
    log = LostLog()
    turn_metadata_losses(turns, log)
    out: list[dict[str, Any]] = []
    for turn in turns:
        content = [c for c in (_block_out(b, log) for b in turn.blocks) if c is not None]
        if content:
            out.append({"role": turn.role, "content": content})
        else:
            log.add(LOST_EMPTY)
    log.flush(lost)
    return out


# --- Anthropic -> Parley ----------------------------------------------------


def _source_in(kind: str, block: dict[str, Any]) -> ImageBlock | DocumentBlock | None:
    source = block.get("source")
    if not isinstance(source, dict):
        return None
    stype = source.get("type")
    data = source.get("data")
    if kind == "image":
        if stype == "base64" and isinstance(data, str):
            return ImageBlock(str(source.get("media_type") or "image/png"), data)
        if stype == "url" and isinstance(source.get("url"), str):
            return ImageBlock(guess_media_type(source["url"], "image/*"), url=source["url"])
        return None
    title = block.get("title") if isinstance(block.get("title"), str) else None
    if stype == "base64" and isinstance(data, str):
        return DocumentBlock(str(source.get("media_type") or "application/pdf"), data, title)
    if stype == "text" and isinstance(data, str):
        return DocumentBlock("text/plain", text_to_b64(data), title)
    if stype == "content" and isinstance(source.get("content"), list | str):
        content = source["content"]
        text = (
            content
            if isinstance(content, str)
            else "\n".join(p.get("text", "") for p in content if isinstance(p, dict))
        )
        return DocumentBlock("text/plain", text_to_b64(text), title)
    return None


def _media_in(
    kind: str, block: dict[str, Any], log: LostLog
) -> TextBlock | ImageBlock | DocumentBlock:
    media = _source_in(kind, block)
    if media is not None:
        return media
    log.add(LOST_SOURCE)
    source = block.get("source")
    where = ""
    if isinstance(source, dict):
        where = str(source.get("url") or source.get("file_id") or "")
    return TextBlock(f"[{kind}: {where}]" if where else f"[{kind}]")


def _text_in(block: dict[str, Any], where: str, log: LostLog) -> TextBlock:
    text = block.get("text")
    if not isinstance(text, str):
        raise NotAConversation(f"{where} is a text block without text")
    if block.get("citations"):
        log.add(LOST_CITATIONS)
    return TextBlock(text)


def _parts_in(content: Any, where: str, log: LostLog) -> tuple[ToolResultPart, ...]:
    if content is None:
        return ()
    if isinstance(content, str):
        return (TextBlock(content),) if content else ()
    if not isinstance(content, list):
        raise NotAConversation(f"{where} has content that is neither text nor a list")
    parts: list[ToolResultPart] = []
    block = where.rstrip(",")  # "message 2, block 1," when inside a tool_result block
    for k, part in enumerate(content, start=1):  # counted from 1, for people
        if not isinstance(part, dict):
            raise NotAConversation(f"{block}, part {k}, is not an object")
        kind = part.get("type")
        if kind == "text":
            parts.append(_text_in(part, f"{block}, part {k},", log))
        elif kind in ("image", "document"):
            parts.append(_media_in(str(kind), part, log))
        else:
            log.add(LOST_PART)
            parts.append(TextBlock(f"[{kind}]"))
    return tuple(parts)


def _block_in(block: Any, where: str, log: LostLog) -> Block | None:
    if not isinstance(block, dict):
        raise NotAConversation(f"{where} is not an object")
    kind = block.get("type")
    if kind == "text":
        return _text_in(block, where, log)
    if kind in ("image", "document"):
        return _media_in(str(kind), block, log)
    if kind == "tool_use":
        if not isinstance(block.get("id"), str) or not isinstance(block.get("name"), str):
            raise NotAConversation(f"{where} is a tool_use without an id or a name")
        tool_input = block.get("input")
        tool_input = tool_input if isinstance(tool_input, dict) else {}
        return ToolUseBlock(block["id"], block["name"], tool_input)
    if kind == "tool_result":
        if not isinstance(block.get("tool_use_id"), str):
            raise NotAConversation(f"{where} is a tool_result without a tool_use_id")
        parts = _parts_in(block.get("content"), where, log)
        return ToolResultBlock(block["tool_use_id"], parts, bool(block.get("is_error", False)))
    if kind == "thinking":
        signature = block.get("signature")
        signature = signature if isinstance(signature, str) else None
        return ThinkingBlock(str(block.get("thinking") or ""), signature)
    if not isinstance(kind, str):
        raise NotAConversation(f"{where} has no 'type'")
    if kind in _PARLEY_TYPES:
        log.add(LOST_UNKNOWN)
        return None
    return UnknownBlock(dict(block))


def from_anthropic(messages: list[dict[str, Any]], *, lost: list[str] | None = None) -> list[Turn]:
    """Convert a Messages API ``messages`` list to Parley turns.

    Args:
        messages: ``[{"role": "user" | "assistant", "content": str | [block]}]``.
            String content becomes one text block (none if empty).
        lost: if given, one sentence is appended for each kind of thing
            Parley did not keep (citations, file-id or URL documents, ...).

    Returns:
        One new turn per message, with new ids and creation times increasing
        by 1 ms up to now. Block kinds Parley lacks (redacted_thinking,
        server tools, ...) are kept as unknown blocks.

    Raises:
        NotAConversation: `messages` is not a list of such messages (the
            reason names the first bad message).
    """
    if not isinstance(messages, list):
        raise NotAConversation("the messages are not a list")
    log = LostLog()
    times = timestamps(len(messages))
    turns: list[Turn] = []
    for i, msg in enumerate(messages):
        where = f"message {i + 1}"  # counted from 1, for people
        if not isinstance(msg, dict):
            raise NotAConversation(f"{where} is not an object")
        role = msg.get("role")
        if role not in ("user", "assistant"):
            raise NotAConversation(f"{where} has role {role!r}, not 'user' or 'assistant'")
        content = msg.get("content")
        if isinstance(content, str):
            blocks: list[Block] = [TextBlock(content)] if content else []
        elif isinstance(content, list):
            found = (_block_in(b, f"{where}, block {j},", log)
                     for j, b in enumerate(content, start=1))
            blocks = [b for b in found if b is not None]
        else:
            raise NotAConversation(f"{where} has content that is neither text nor a list")
        turns.append(Turn(role, blocks, created_at=times[i]))
    log.flush(lost)
    return turns

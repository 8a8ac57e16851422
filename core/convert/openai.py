"""Parley turns to and from OpenAI Chat Completions ``messages``.

Source: the request shapes of the official ``openai`` SDK
(``openai.types.chat.ChatCompletion*MessageParam``): system / developer,
user (text, ``image_url``, ``input_audio``, ``file`` parts), assistant
(content, ``tool_calls`` with JSON-string ``arguments``, legacy
``function_call``), tool (``tool_call_id``, text) and legacy function messages.

A Parley user turn holding tool results becomes one ``role: "tool"`` message
per tool_result, right after the assistant message, then one user message with
the turn's other blocks; the importer folds them back into one user turn.
Tool messages carry text only: a tool result's images and documents become
placeholders here (``parley.core.wire.to_messages`` moves them to the user message
first, for requests).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from parley.core.content import (
    Block,
    CompactSummaryBlock,
    DocumentBlock,
    ImageBlock,
    Role,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    Turn,
    UnknownBlock,
    tool_result_to_text,
)
from parley.core.convert._common import (
    LOST_ORIGIN,
    LOST_RECOVERED,
    LOST_SUMMARY,
    b64_to_text,
    data_url,
    guess_media_type,
    parse_data_url,
    short_hash,
    timestamps,
    turn_metadata_losses,
)
from parley.core.convert._lost import LostLog
from parley.core.convert.errors import NotAConversation
from parley.core.wire import render_summary

__all__ = ["OPENAI_PASSTHROUGH_PARTS", "from_openai", "openai_tool_id", "to_openai"]

MAX_TOOL_CALL_ID = 40  # "Expected a string with maximum length 40"
ERROR_PREFIX = "Error: "  # what tool_result_to_text puts before an error result
# User content parts Parley has no block for: kept as UnknownBlock, sent back as is.
OPENAI_PASSTHROUGH_PARTS = frozenset({"input_audio", "file"})
_PARLEY_TYPES = frozenset(
    {"text", "image", "document", "tool_use", "tool_result", "thinking", "compact_summary"}
)

LOST_THINKING = "{n} thinking block(s) were left out: Chat Completions takes no thinking input."
LOST_RESULT_MEDIA = (
    "{n} image(s), document(s), audio or video in tool results were replaced by a "
    "placeholder: OpenAI tool messages hold only text."
)
LOST_ASSISTANT_MEDIA = (
    "{n} image(s) or document(s) in replies were replaced by a placeholder: OpenAI "
    "assistant messages hold only text."
)
LOST_DOC_TYPE = (
    "{n} document(s) other than PDF were sent as text or, if not text, replaced by a placeholder."
)
LOST_UNKNOWN = "{n} block(s) of a kind OpenAI does not know were left out."
LOST_MISPLACED = "{n} tool call(s) or tool result(s) in the wrong role were left out."
LOST_ARGUMENTS = (
    "{n} tool call(s) had arguments that are not a JSON object; they were kept as text "
    "under the key 'arguments'."
)
LOST_SYSTEM_MOVED = (
    "{n} system message(s) in the middle of the conversation were moved to the system prompt."
)
LOST_REFUSAL = "{n} refusal(s) were kept as ordinary text."


def openai_tool_id(tool_id: str) -> str:
    """Return a tool call id OpenAI accepts (at most 40 characters).

    Longer ids keep their first 31 characters plus ``_`` and an 8-hex hash of
    the whole id, so two ids never map to one; calls and results match.
    """
    if len(tool_id) <= MAX_TOOL_CALL_ID:
        return tool_id
    return f"{tool_id[:31]}_{short_hash(tool_id)}"


# --- Parley -> OpenAI -------------------------------------------------------


def _text(block: TextBlock, log: LostLog) -> str:
    if block.origin is not None:
        log.add(LOST_ORIGIN)
    if block.recovered:
        log.add(LOST_RECOVERED)
    return block.text


def _document_part(block: DocumentBlock, log: LostLog) -> dict[str, Any]:
    name = block.name or "document"
    if block.media_type == "application/pdf":
        file = {"filename": name, "file_data": data_url(block.media_type, block.data)}
        return {"type": "file", "file": file}
    log.add(LOST_DOC_TYPE)
    text = b64_to_text(block.data) if block.media_type.startswith("text/") else None
    if text is None:
        return {"type": "text", "text": f"[document: {name}]"}
    return {"type": "text", "text": f"[document: {name}]\n{text}"}


def _user_part(block: Block, log: LostLog) -> dict[str, Any] | None:
    if isinstance(block, TextBlock):
        return {"type": "text", "text": _text(block, log)}
    if isinstance(block, ImageBlock):
        url = block.url if block.data is None else data_url(block.media_type, block.data)
        return {"type": "image_url", "image_url": {"url": url}}
    if isinstance(block, DocumentBlock):
        return _document_part(block, log)
    if isinstance(block, CompactSummaryBlock):
        log.add(LOST_SUMMARY)
        return {"type": "text", "text": render_summary(block)}
    if isinstance(block, UnknownBlock) and block.type in OPENAI_PASSTHROUGH_PARTS:
        return dict(block.raw)
    if isinstance(block, ThinkingBlock):
        log.add(LOST_THINKING)
    elif isinstance(block, ToolUseBlock):
        log.add(LOST_MISPLACED)
    else:
        log.add(LOST_UNKNOWN)
    return None


def _content(parts: list[dict[str, Any]]) -> str | list[dict[str, Any]]:
    """One text part becomes a plain string; anything else stays a list of parts."""
    if len(parts) == 1 and parts[0]["type"] == "text":
        return str(parts[0]["text"])
    return parts


def _tool_message(block: ToolResultBlock, log: LostLog) -> dict[str, Any]:
    dropped = sum(not isinstance(p, TextBlock) for p in block.content)
    if dropped:
        log.add(LOST_RESULT_MEDIA, dropped)
    for p in block.content:
        if isinstance(p, TextBlock):
            _text(p, log)
    return {
        "role": "tool",
        "tool_call_id": openai_tool_id(block.tool_use_id),
        "content": tool_result_to_text(block),
    }


def _user_messages(turn: Turn, log: LostLog) -> list[dict[str, Any]]:
    out = [_tool_message(b, log) for b in turn.blocks if isinstance(b, ToolResultBlock)]
    others = (_user_part(b, log) for b in turn.blocks if not isinstance(b, ToolResultBlock))
    parts = [p for p in others if p is not None]
    if parts:
        out.append({"role": "user", "content": _content(parts)})
    return out


def _assistant_message(turn: Turn, log: LostLog) -> dict[str, Any]:
    texts: list[dict[str, Any]] = []
    calls: list[dict[str, Any]] = []
    for b in turn.blocks:
        if isinstance(b, TextBlock):
            texts.append({"type": "text", "text": _text(b, log)})
        elif isinstance(b, ToolUseBlock):
            arguments = json.dumps(dict(b.input), ensure_ascii=False)
            function = {"name": b.name, "arguments": arguments}
            calls.append({"id": openai_tool_id(b.id), "type": "function", "function": function})
        elif isinstance(b, CompactSummaryBlock):
            log.add(LOST_SUMMARY)
            texts.append({"type": "text", "text": render_summary(b)})
        elif isinstance(b, ImageBlock | DocumentBlock):
            log.add(LOST_ASSISTANT_MEDIA)
            name = b.media_type if isinstance(b, ImageBlock) else (b.name or b.media_type)
            kind = "image" if isinstance(b, ImageBlock) else "document"
            texts.append({"type": "text", "text": f"[{kind}: {name}]"})
        elif isinstance(b, ThinkingBlock):
            log.add(LOST_THINKING)
        elif isinstance(b, ToolResultBlock):
            log.add(LOST_MISPLACED)
        else:
            log.add(LOST_UNKNOWN)
    msg: dict[str, Any] = {"role": "assistant", "content": _content(texts) if texts else None}
    if calls:
        msg["tool_calls"] = calls
    elif not texts:
        msg["content"] = ""
    return msg


def to_openai(
    turns: Sequence[Turn], *, system: str | None = None, lost: list[str] | None = None
) -> list[dict[str, Any]]:
    """Convert turns to Chat Completions ``messages``.

    The conversion is literal: roles, order and pairing are kept as given (use
    ``parley.core.wire.to_messages`` first to build a valid request).

    Args:
        turns: the turns, in order. Not modified.
        system: the system prompt; when given (non-empty) it is the first message.
        lost: if given, one sentence is appended for each kind of thing the
            format cannot hold (thinking, media in tool results, ...). Turn ids
            and times are never kept and not reported.

    Returns:
        Message dicts: an assistant turn becomes one assistant message (text
        as a string, or a list of text parts when there are several; tool_use
        blocks as ``tool_calls`` with JSON-string ``arguments``); a user turn
        becomes one ``tool`` message per tool_result (text via
        ``tool_result_to_text``, errors prefixed ``Error: ``) followed by one
        user message with its other blocks (images as ``image_url`` data URLs,
        PDFs as ``file`` parts). Tool ids longer than 40 characters are
        shortened (:func:`openai_tool_id`).
    """
    log = LostLog()
    turn_metadata_losses(turns, log)
    out: list[dict[str, Any]] = []
    if system:
        out.append({"role": "system", "content": system})
    for turn in turns:
        if turn.role == "assistant":
            out.append(_assistant_message(turn, log))
        else:
            out.extend(_user_messages(turn, log))
    log.flush(lost)
    return out


# --- OpenAI -> Parley -------------------------------------------------------


def _text_of(content: Any, where: str, log: LostLog) -> list[str]:
    """The texts of a system/assistant/tool content (string or text/refusal parts)."""
    if content is None:
        return []
    if isinstance(content, str):
        return [content] if content else []
    if not isinstance(content, list):
        raise NotAConversation(f"{where} has content that is neither text nor a list")
    texts: list[str] = []
    for k, part in enumerate(content):
        if not isinstance(part, dict):
            raise NotAConversation(f"{where}, part {k + 1}, is not an object")
        if part.get("type") == "refusal":
            log.add(LOST_REFUSAL)
            texts.append(str(part.get("refusal", "")))
        elif isinstance(part.get("text"), str):
            texts.append(part["text"])
        else:
            log.add(LOST_UNKNOWN)
    return texts


def _user_part_in(part: Any, where: str) -> Block:
    if not isinstance(part, dict):
        raise NotAConversation(f"{where} is not an object")
    kind = part.get("type")
    if kind == "text" and isinstance(part.get("text"), str):
        return TextBlock(part["text"])
    if kind == "image_url":
        image = part.get("image_url")
        url = image.get("url") if isinstance(image, dict) else image
        if not isinstance(url, str):
            raise NotAConversation(f"{where} is an image without a url")
        parsed = parse_data_url(url)
        if parsed is not None:
            return ImageBlock(parsed[0], parsed[1])
        return ImageBlock(guess_media_type(url, "image/*"), url=url)
    if kind == "file" and isinstance(part.get("file"), dict):
        file = part["file"]
        name = file.get("filename") if isinstance(file.get("filename"), str) else None
        file_data = file.get("file_data")
        if isinstance(file_data, str):
            media_type, data = parse_data_url(file_data) or ("application/pdf", file_data)
            return DocumentBlock(media_type, data, name)
        return UnknownBlock(dict(part))
    if not isinstance(kind, str) or kind in _PARLEY_TYPES:
        raise NotAConversation(f"{where} is not a content part OpenAI knows")
    return UnknownBlock(dict(part))


def _user_blocks(content: Any, where: str) -> list[Block]:
    if content is None:
        return []
    if isinstance(content, str):
        return [TextBlock(content)] if content else []
    if not isinstance(content, list):
        raise NotAConversation(f"{where} has content that is neither text nor a list")
    return [_user_part_in(p, f"{where}, part {k},") for k, p in enumerate(content, start=1)]


def _arguments(raw: Any, log: LostLog) -> dict[str, Any]:
    if isinstance(raw, dict):
        return raw
    try:
        parsed = json.loads(raw) if isinstance(raw, str) and raw.strip() else {}
    except json.JSONDecodeError:
        parsed = None
    if isinstance(parsed, dict):
        return parsed
    log.add(LOST_ARGUMENTS)
    return {"arguments": raw}


def _tool_calls_in(
    msg: dict[str, Any], i: int, where: str, log: LostLog
) -> tuple[list[Block], ToolUseBlock | None]:
    """The tool_use blocks of an assistant message, and its legacy ``function_call`` one."""
    calls = msg.get("tool_calls") or []
    if not isinstance(calls, list):
        raise NotAConversation(f"{where} has 'tool_calls' that are not a list")
    blocks: list[Block] = []
    for k, call in enumerate(calls):
        fn = call.get("function") if isinstance(call, dict) else None
        if not isinstance(fn, dict) or not isinstance(fn.get("name"), str):
            raise NotAConversation(f"{where}, tool call {k + 1}, has no function name")
        call_id = call.get("id") if isinstance(call.get("id"), str) else f"call_{i}_{k}"
        blocks.append(ToolUseBlock(call_id, fn["name"], _arguments(fn.get("arguments"), log)))
    legacy = msg.get("function_call")
    if isinstance(legacy, dict) and isinstance(legacy.get("name"), str):
        arguments = _arguments(legacy.get("arguments"), log)
        return blocks, ToolUseBlock(f"call_{i}", legacy["name"], arguments)
    return blocks, None


def _tool_result_in(text: str, tool_use_id: str) -> ToolResultBlock:
    is_error = text.startswith(ERROR_PREFIX)
    if is_error:
        text = text[len(ERROR_PREFIX) :]
    return ToolResultBlock(tool_use_id, (TextBlock(text),) if text else (), is_error)


class _Reader:
    """Folds Chat Completions messages into turns (state of one conversion)."""

    def __init__(self, log: LostLog) -> None:
        self.log = log
        self.turns: list[tuple[Role, list[Block]]] = []
        self.system: list[str] = []
        self.tool_turn_open = False  # the last message read was a tool/function result
        self.legacy_calls: dict[str, str] = {}  # function name -> synthetic call id

    def user_turn(self) -> list[Block]:
        if self.tool_turn_open:
            return self.turns[-1][1]
        self.turns.append(("user", []))
        return self.turns[-1][1]

    def read(self, i: int, msg: Any) -> None:
        where = f"message {i + 1}"  # counted from 1, for people
        if not isinstance(msg, dict):
            raise NotAConversation(f"{where} is not an object")
        role = msg.get("role")
        content = msg.get("content")
        if role in ("system", "developer"):
            if self.turns:
                self.log.add(LOST_SYSTEM_MOVED)
            self.system.extend(_text_of(content, where, self.log))
            return
        if role in ("tool", "function"):
            call_id = (
                msg.get("tool_call_id")
                if role == "tool"
                else self.legacy_calls.get(str(msg.get("name")), f"call_{i}")
            )
            if not isinstance(call_id, str):
                raise NotAConversation(f"{where} is a tool message without a tool_call_id")
            text = "\n".join(_text_of(content, where, self.log))
            self.user_turn().append(_tool_result_in(text, call_id))
            self.tool_turn_open = True
            return
        if role == "user":
            self.user_turn().extend(_user_blocks(content, where))
        elif role == "assistant":
            blocks: list[Block] = [TextBlock(t) for t in _text_of(content, where, self.log)]
            if isinstance(msg.get("refusal"), str) and msg["refusal"]:
                self.log.add(LOST_REFUSAL)
                blocks.append(TextBlock(msg["refusal"]))
            calls, legacy = _tool_calls_in(msg, i, where, self.log)
            if legacy is not None:
                self.legacy_calls[legacy.name] = legacy.id
                calls.append(legacy)
            self.turns.append(("assistant", blocks + calls))
        else:
            raise NotAConversation(f"{where} has role {role!r}, which OpenAI does not know")
        self.tool_turn_open = False


def from_openai(
    messages: list[dict[str, Any]], *, lost: list[str] | None = None
) -> tuple[list[Turn], str | None]:
    """Convert Chat Completions ``messages`` to Parley turns and a system prompt.

    Args:
        messages: message dicts as sent to ``/v1/chat/completions``.
        lost: if given, one sentence is appended for each kind of thing
            Parley did not keep (refusal marks, unparsable arguments, ...).

    Returns:
        ``(turns, system)``: one turn per user or assistant message, except
        that a run of tool messages and the user message right after it form
        one user turn (tool_result blocks first); tool-call ``arguments`` are
        parsed from JSON; a tool message starting with ``Error: `` becomes an
        error result. ``system`` joins all system and developer messages
        with blank lines (None if there are none). Turns get new ids and
        creation times increasing by 1 ms up to now.

    Raises:
        NotAConversation: `messages` is not a list of such messages (the
            reason names the first bad message).
    """
    if not isinstance(messages, list):
        raise NotAConversation("the messages are not a list")
    log = LostLog()
    reader = _Reader(log)
    for i, msg in enumerate(messages):
        reader.read(i, msg)
    times = timestamps(len(reader.turns))
    turns = [
        Turn(role, blocks, created_at=times[k]) for k, (role, blocks) in enumerate(reader.turns)
    ]
    log.flush(lost)
    system = "\n\n".join(reader.system) if reader.system else None
    return turns, system

"""Claude.ai's data export (``conversations.json``) as Parley chats.

The file is a list of conversations::

    {"uuid", "name", "created_at", "updated_at" (ISO 8601), "summary"?,
     "chat_messages": [{"uuid", "sender": "human" | "assistant", "text",
                        "content": [{"type": "text", "text"} | {"type": "thinking", "thinking"}
                                    | {"type": "tool_use", "id"?, "name", "input"}
                                    | {"type": "tool_result", "tool_use_id"?, "name"?,
                                       "content": [...], "is_error"?} | ...],
                        "created_at", "attachments": [{"file_name", "file_type"?,
                                                       "extracted_content"}],
                        "files": [{"file_name"}], "parent_message_uuid"?}]}

Messages are read in order; when they carry ``parent_message_uuid`` (newer
exports keep every branch), the tree is followed as for ChatGPT: the branch
of the newest message is the path the chat shows, the others are branches of
its tree. ``content`` wins over ``text`` when it has blocks. A tool call and its
result both sit in the assistant's message: the result goes to a user turn of
its own between them.
An attachment's extracted text becomes a text document of the message;
``files`` (images, PDFs) are not in the export and become a note.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from parley.core.content import Block, DocumentBlock, TextBlock, ThinkingBlock, ToolResultPart
from parley.core.convert._common import text_to_b64
from parley.core.convert.history import (
    HistoryChat,
    ImportedHistory,
    Notes,
    Piece,
    Result,
    chat_from_tree,
    seconds_to_ms,
    text_parts,
    tool_call,
)

__all__ = ["from_claude_ai", "looks_like_claude_ai"]

LOST_BLOCK = "{n} content block(s) of a kind Parley does not know were left out."
_ROOT = "00000000-0000-4000-8000-000000000000"  # Claude.ai's parent of a first message


def looks_like_claude_ai(item: Any) -> bool:
    """True for one conversation of a Claude.ai export (it has ``chat_messages``)."""
    return isinstance(item, Mapping) and isinstance(item.get("chat_messages"), list)


def from_claude_ai(data: Sequence[Any]) -> ImportedHistory:
    """Read a Claude.ai export.

    Args:
        data: the parsed ``conversations.json`` (a list of conversations).

    Returns:
        The chats (with their branches when the export keeps them) and what could
        not be carried. A conversation with no message is left out (``empty``).
    """
    notes = Notes()
    chats: list[HistoryChat] = []
    empty = 0
    for conv in data:
        chat = _conversation(conv, notes) if looks_like_claude_ai(conv) else None
        if chat is not None and chat.turns:
            chats.append(chat)
        else:
            empty += 1
    return ImportedHistory("claude.ai", chats, notes.sentences(), notes.missing_files, empty)


def _conversation(conv: Mapping[str, Any], notes: Notes) -> HistoryChat:
    messages = [m for m in conv["chat_messages"] if isinstance(m, Mapping)]
    ids = [str(m.get("uuid") or f"#{i}") for i, m in enumerate(messages)]
    by_id = dict(zip(ids, messages, strict=True))
    tree = any("parent_message_uuid" in m for m in messages)
    parents: dict[str, str | None] = {}
    for i, (key, m) in enumerate(zip(ids, messages, strict=True)):
        if tree:
            parent = m.get("parent_message_uuid")
            parents[key] = str(parent) if parent and parent != _ROOT else None
        else:
            parents[key] = ids[i - 1] if i else None
    order = sorted(ids, key=lambda k: (seconds_to_ms(by_id[k].get("created_at")) or 0))
    cache: dict[str, Piece | None] = {}

    def pieces(path: Sequence[str]) -> list[Piece]:
        out: list[Piece] = []
        for key in path:
            if key not in cache:
                cache[key] = _message(key, by_id[key], notes)
            piece = cache[key]
            if piece is not None:
                out.extend(_split(piece))
        return out

    turns, others = chat_from_tree(parents, None, order if tree else ids, pieces)
    name = conv.get("name")
    source = conv.get("uuid")
    return HistoryChat(
        source_id=str(source) if source else None,
        title=name if isinstance(name, str) and name.strip() else None,
        created_at=seconds_to_ms(conv.get("created_at")),
        updated_at=seconds_to_ms(conv.get("updated_at")),
        turns=turns,
        branches=others,
    )


def _message(key: str, m: Mapping[str, Any], notes: Notes) -> Piece | None:
    side: Literal["user", "assistant"] = "user" if m.get("sender") == "human" else "assistant"
    blocks: list[Block | Result] = []
    content = m.get("content")
    if isinstance(content, list) and content:
        for i, block in enumerate(content):
            if isinstance(block, Mapping):
                blocks.extend(_block(f"{key}/{i}", block, notes))
    else:
        text = m.get("text")
        if isinstance(text, str) and text.strip():
            blocks.append(TextBlock(text))
    for att in m.get("attachments") or []:
        if isinstance(att, Mapping):
            blocks.extend(_attachment(att, notes))
    for f in m.get("files") or m.get("files_v2") or []:
        if isinstance(f, Mapping):
            name = str(f.get("file_name") or "a file")
            kind = "image" if f.get("file_kind") == "image" or _is_image(name) else "file"
            notes.missing(name, kind)
            blocks.append(TextBlock(f"[{kind} not included: {name}]"))
    if not blocks:
        return None
    return Piece(side, tuple(blocks), seconds_to_ms(m.get("created_at")))


def _is_image(name: str) -> bool:
    return name.lower().rsplit(".", 1)[-1] in ("png", "jpg", "jpeg", "gif", "webp")


def _block(key: str, block: Mapping[str, Any], notes: Notes) -> list[Block | Result]:
    kind = block.get("type")
    if kind == "text":
        text = block.get("text")
        return [TextBlock(text)] if isinstance(text, str) and text.strip() else []
    if kind == "thinking":
        text = block.get("thinking")
        return [ThinkingBlock(text)] if isinstance(text, str) and text.strip() else []
    if kind == "tool_use":
        arguments = block.get("input")
        call = tool_call(key, str(block.get("name") or "tool"),
                         arguments if isinstance(arguments, Mapping) else {"input": arguments})
        given = block.get("id")
        if isinstance(given, str) and given:
            call = type(call)(given, call.name, call.input)
        return [call]
    if kind == "tool_result":
        name = block.get("name")
        call_id = block.get("tool_use_id")
        return [Result(name if isinstance(name, str) else None, _result_parts(block.get("content")),
                       bool(block.get("is_error")),
                       call_id if isinstance(call_id, str) and call_id else None)]
    notes.add(LOST_BLOCK)
    return []


def _result_parts(content: Any) -> tuple[ToolResultPart, ...]:
    if isinstance(content, str):
        return text_parts(content)
    texts: list[str] = []
    for part in content if isinstance(content, list) else []:
        if isinstance(part, Mapping) and isinstance(part.get("text"), str):
            texts.append(part["text"])
        elif part is not None:
            texts.append(json.dumps(part, ensure_ascii=False))
    return text_parts("\n\n".join(t for t in texts if t))


def _attachment(att: Mapping[str, Any], notes: Notes) -> list[Block | Result]:
    name = str(att.get("file_name") or "attachment.txt")
    text = att.get("extracted_content")
    if not isinstance(text, str) or not text:
        notes.missing(name)
        return [TextBlock(f"[file not included: {name}]")]
    return [DocumentBlock("text/plain", text_to_b64(text), name=name)]


def _split(piece: Piece) -> list[Piece]:
    """An assistant message holding tool results: its results as user pieces of their own."""
    if piece.role != "assistant" or not any(isinstance(b, Result) for b in piece.blocks):
        return [piece]
    out: list[Piece] = []
    run: list[Block | Result] = []
    side = "assistant"
    for b in piece.blocks:
        this = "user" if isinstance(b, Result) else "assistant"
        if this != side and run:
            out.append(Piece(side, tuple(run), piece.created_at, piece.model))  # type: ignore[arg-type]
            run = []
        side = this
        run.append(b)
    if run:
        out.append(Piece(side, tuple(run), piece.created_at, piece.model))  # type: ignore[arg-type]
    return out

"""Open WebUI's chat export (``chat-export-….json``) as Parley chats.

The file is a list of chats (a single chat object is accepted too)::

    {"id", "title", "created_at", "updated_at" (epoch seconds),
     "chat": {"title", "models": [...],
              "history": {"currentId": id,
                          "messages": {id: {"id", "parentId", "childrenIds", "role",
                                            "content", "timestamp", "model",
                                            "files": [{"type": "image", "url"}]}}},
              "messages": [...]}}   # the shown branch, the same messages as a list

The branch ending at ``history.currentId`` is the path the chat shows, every
other branch (edits, regenerations) a branch of its tree, as for ChatGPT. Without a ``history`` the
``messages`` list is read as the one branch. Images given as ``data:`` URLs are
kept; images by link are kept as links; other files become a note.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

from parley.core.content import Block, ImageBlock, TextBlock
from parley.core.convert._common import guess_media_type, parse_data_url
from parley.core.convert.history import (
    HistoryChat,
    ImportedHistory,
    Notes,
    Piece,
    chat_from_tree,
    seconds_to_ms,
)

__all__ = ["from_open_webui", "looks_like_open_webui"]


def _chat_body(item: Any) -> Mapping[str, Any] | None:
    if not isinstance(item, Mapping):
        return None
    body = item.get("chat")
    if isinstance(body, Mapping) and (
        isinstance(body.get("history"), Mapping) or isinstance(body.get("messages"), list)
    ):
        return body
    return None


def looks_like_open_webui(item: Any) -> bool:
    """True for one chat of an Open WebUI export (a ``chat`` with ``history`` or ``messages``)."""
    return _chat_body(item) is not None


def from_open_webui(data: Sequence[Any]) -> ImportedHistory:
    """Read an Open WebUI export.

    Args:
        data: the parsed export (a list of chats).

    Returns:
        The chats (with their branches) and what could not be carried; chats with no
        message are left out (``empty``).
    """
    notes = Notes()
    chats: list[HistoryChat] = []
    empty = 0
    for item in data:
        body = _chat_body(item)
        chat = _chat(item, body, notes) if body is not None else None
        if chat is not None and chat.turns:
            chats.append(chat)
        else:
            empty += 1
    return ImportedHistory("open-webui", chats, notes.sentences(), notes.missing_files, empty)


def _chat(item: Mapping[str, Any], body: Mapping[str, Any], notes: Notes) -> HistoryChat:
    raw_history = body.get("history")
    history: Mapping[str, Any] = raw_history if isinstance(raw_history, Mapping) else {}
    raw = history.get("messages")
    messages: dict[str, Mapping[str, Any]] = {}
    if isinstance(raw, Mapping) and raw:
        for key, m in raw.items():
            if isinstance(m, Mapping):
                messages[str(m.get("id") or key)] = m
        parents = {k: (str(m["parentId"]) if m.get("parentId") else None)
                   for k, m in messages.items()}
        current = history.get("currentId")
    else:  # the shown branch only
        given = body.get("messages")
        listed = [m for m in given if isinstance(m, Mapping)] if isinstance(given, list) else []
        keys = [str(m.get("id") or f"#{i}") for i, m in enumerate(listed)]
        messages = dict(zip(keys, listed, strict=True))
        parents = {k: (keys[i - 1] if i else None) for i, k in enumerate(keys)}
        current = keys[-1] if keys else None
    order = sorted(messages, key=lambda k: seconds_to_ms(messages[k].get("timestamp")) or 0)
    system: list[str] = []
    cache: dict[str, Piece | None] = {}

    def pieces(path: Sequence[str]) -> list[Piece]:
        out: list[Piece] = []
        for key in path:
            if key not in cache:
                cache[key] = _message(messages[key], notes, system)
            piece = cache[key]
            if piece is not None:
                out.append(piece)
        return out

    turns, others = chat_from_tree(parents, current if isinstance(current, str) else None,
                                  order, pieces)
    title = item.get("title") or body.get("title")
    return HistoryChat(
        source_id=str(item["id"]) if item.get("id") else None,
        title=title if isinstance(title, str) and title.strip() else None,
        created_at=seconds_to_ms(item.get("created_at")),
        updated_at=seconds_to_ms(item.get("updated_at")),
        turns=turns,
        branches=others,
        system=system[0] if system else None,
    )


def _message(m: Mapping[str, Any], notes: Notes, system: list[str]) -> Piece | None:
    role = m.get("role")
    content = m.get("content")
    text = content if isinstance(content, str) else ""
    if role == "system":
        if text.strip() and not system:
            system.append(text)
        return None
    blocks: list[Block] = [TextBlock(text)] if text.strip() else []
    for f in m.get("files") or []:
        if isinstance(f, Mapping):
            blocks.append(_file(f, notes))
    if not blocks:
        return None
    side: Literal["user", "assistant"] = "assistant" if role == "assistant" else "user"
    model = m.get("model")
    named = side == "assistant" and isinstance(model, str) and model
    ref = f"open-webui:{model}" if named else None
    return Piece(side, tuple(blocks), seconds_to_ms(m.get("timestamp")), ref,
                 side == "assistant" and m.get("done") is False)


def _file(f: Mapping[str, Any], notes: Notes) -> Block:
    url = f.get("url")
    inner = f.get("file")
    name = f.get("name") or (inner.get("filename") if isinstance(inner, Mapping) else None)
    image = f.get("type") == "image"
    if image and isinstance(url, str):
        data = parse_data_url(url)
        if data is not None:
            return ImageBlock(data[0], data=data[1], name=name if isinstance(name, str) else None)
        if url.startswith(("http://", "https://")):
            return ImageBlock(guess_media_type(url, "image/png"), url=url)
    shown = str(name or url or "a file")
    notes.missing(shown, "image" if image else "file")
    return TextBlock(f"[{'image' if image else 'file'} not included: {shown}]")

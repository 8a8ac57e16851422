"""ChatGPT's data export (``conversations.json``) as Parley chats.

The file is a list of conversations::

    {"title", "create_time", "update_time" (epoch seconds), "conversation_id" / "id",
     "current_node": node id,
     "mapping": {node id: {"id", "parent": id | null, "children": [ids],
                           "message": null | {"id", "author": {"role", "name"},
                               "create_time", "recipient", "status",
                               "content": {"content_type", "parts" | "text" | ...},
                               "metadata": {"model_slug", "is_visually_hidden_from_conversation",
                                            "finish_details", ...}}}}}

The branch ending at ``current_node`` (what ChatGPT showed last) is the path
the chat shows; every other branch of the tree (an edited question, a
regenerated answer, a branch of a branch) is a branch of the chat's tree, each
message once below its parent (``parley.core.convert.history.chat_from_tree``).
Hidden messages (the empty system root, custom instructions, memory context)
are left out; a visible system message is the chat's system
prompt. An assistant message addressed to a tool (``recipient`` other than
``all``: code for ``python``, a ``dalle.text2im`` prompt, a search) is a tool
call, and the tool's message (``execution_output``, ``tether_quote``,
browsing results, images) its result. Images (``image_asset_pointer``) are
taken from the export's folder when the file is there (``find_file``); else
they become a ``[image not included: …]`` note; other uploaded files
(``metadata.attachments``) come as documents when they are PDFs or text, else
as a ``[file not included: …]`` note. Reasoning (``thoughts``)
becomes thinking blocks; anything else with no text is counted as left out.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from parley.core.content import (
    Block,
    DocumentBlock,
    ImageBlock,
    TextBlock,
    ThinkingBlock,
    ToolResultPart,
)
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

__all__ = ["Claim", "ExportFile", "FileFinder", "FileRefused", "from_chatgpt",
           "looks_like_chatgpt"]



@dataclass(frozen=True, slots=True)
class ExportFile:
    """A file of the export, read and recognised by its bytes.

    Attributes:
        media_type: ``image/png`` | ``image/jpeg`` | ``image/gif`` | ``image/webp`` |
            ``application/pdf`` | ``text/plain`` (decided from the bytes).
        data: the bytes as base64 (text: its UTF-8 encoding).
    """

    media_type: str
    data: str


@dataclass(frozen=True, slots=True)
class FileRefused:
    """A file of the export that was found but not read, and why.

    Attributes:
        name: its name in the export's folder.
        why: what is wrong, for people ("it is a link to another file, …").
    """

    name: str
    why: str


#: What the export says a file is: ``image`` | ``document`` (a PDF) | ``text`` | ``""``
#: (it does not say) — the kinds of ``parley.core.attachments.files.Attachment``.
Claim = Literal["image", "document", "text", ""]
#: Finds an export's file by its asset id and what the export says it is: the file, a
#: refusal, or None when the export does not hold it (or holds a kind Parley does not
#: attach, such as a spreadsheet).
FileFinder = Callable[[str, Claim], ExportFile | FileRefused | None]

LOST_KIND = "{n} message(s) of a kind Parley cannot show (e.g. audio) were left out."
LOST_AUDIO = "{n} voice recording(s) were left out (their transcripts were kept)."
HIDDEN_CONTENT = frozenset({"user_editable_context", "model_editable_context",
                            "reasoning_recap", "app_pairing_content"})


def looks_like_chatgpt(item: Any) -> bool:
    """True for one conversation of a ChatGPT export (it has a ``mapping`` tree)."""
    return isinstance(item, Mapping) and isinstance(item.get("mapping"), Mapping)


def from_chatgpt(data: Sequence[Any], find_file: FileFinder | None = None) -> ImportedHistory:
    """Read a ChatGPT export.

    Args:
        data: the parsed ``conversations.json`` (a list of conversations).
        find_file: looks a file up in the export's folder by its asset id.

    Returns:
        The chats (with their branches) and what could not be carried. A conversation
        with no message is left out (counted in ``empty``).
    """
    notes = Notes()
    chats: list[HistoryChat] = []
    empty = 0
    for conv in data:
        if not looks_like_chatgpt(conv):
            empty += 1
            continue
        chat = _conversation(conv, notes, find_file)
        if chat.turns:
            chats.append(chat)
        else:
            empty += 1
    return ImportedHistory("chatgpt", chats, notes.sentences(), notes.missing_files, empty,
                           notes.refused_files)


def _conversation(conv: Mapping[str, Any], notes: Notes,
                  find_file: FileFinder | None) -> HistoryChat:
    mapping: Mapping[str, Any] = conv["mapping"]
    parents: dict[str, str | None] = {}
    for key, node in mapping.items():
        if isinstance(node, Mapping):
            parent = node.get("parent")
            parents[str(key)] = str(parent) if isinstance(parent, str) else None
    order = sorted(parents, key=lambda k: _node_time(mapping[k]))
    current = conv.get("current_node")
    reader = _Reader(mapping, find_file, notes)
    turns, others = chat_from_tree(parents, current if isinstance(current, str) else None,
                                  order, reader.pieces)
    source = conv.get("conversation_id") or conv.get("id")
    title = conv.get("title")
    return HistoryChat(
        source_id=str(source) if source else None,
        title=title if isinstance(title, str) else None,
        created_at=seconds_to_ms(conv.get("create_time")),
        updated_at=seconds_to_ms(conv.get("update_time")),
        turns=turns,
        branches=others,
        system=reader.system,
    )


def _node_time(node: Any) -> float:
    message = node.get("message") if isinstance(node, Mapping) else None
    when = message.get("create_time") if isinstance(message, Mapping) else None
    return float(when) if isinstance(when, int | float) and not isinstance(when, bool) else 0.0


class _Reader:
    """Converts nodes to pieces, once per node (branches share their start)."""

    def __init__(self, mapping: Mapping[str, Any], find_file: FileFinder | None,
                 notes: Notes) -> None:
        self.mapping = mapping
        self.find_file = find_file
        self.cache: dict[str, list[Piece]] = {}
        self.system: str | None = None
        self.notes = notes

    def pieces(self, path: Sequence[str]) -> list[Piece]:
        out: list[Piece] = []
        for node_id in path:
            if node_id not in self.cache:
                self.cache[node_id] = self._node(node_id)
            out.extend(self.cache[node_id])
        return out

    def _node(self, node_id: str) -> list[Piece]:
        node = self.mapping.get(node_id)
        message = node.get("message") if isinstance(node, Mapping) else None
        if not isinstance(message, Mapping):
            return []
        meta = _obj(message.get("metadata"))
        content = _obj(message.get("content"))
        kind = content.get("content_type")
        if meta.get("is_visually_hidden_from_conversation") or kind in HIDDEN_CONTENT:
            return []
        author = _obj(message.get("author"))
        role = author.get("role")
        when = seconds_to_ms(message.get("create_time"))
        slug = meta.get("model_slug")
        model = f"openai:{slug}" if isinstance(slug, str) and slug else None
        aborted = _aborted(message, meta)
        msg_id = str(message.get("id") or node_id)
        if role == "system":
            text = _text(content, self)
            if text.strip() and self.system is None:
                self.system = text
            return []
        if role == "tool":
            result = self._tool_output(content, author.get("name"), kind)
            return [Piece("user", (result,), when)] if result is not None else []
        blocks = self._blocks(content, kind, msg_id)
        if role == "user":
            blocks.extend(self._attachments(meta))
        if not blocks:
            return []
        recipient = message.get("recipient")
        if role == "assistant" and isinstance(recipient, str) and recipient not in ("all", ""):
            return [Piece("assistant", (_call(msg_id, recipient, content, blocks),), when, model)]
        side: Literal["user", "assistant"] = "assistant" if role == "assistant" else "user"
        return [Piece(side, tuple(blocks), when, model if side == "assistant" else None,
                      aborted and side == "assistant")]

    def _blocks(self, content: Mapping[str, Any], kind: Any, msg_id: str) -> list[Block]:
        if kind == "thoughts":
            thoughts = content.get("thoughts")
            items = thoughts if isinstance(thoughts, list) else []
            texts = [f"{t.get('summary', '')}\n\n{t.get('content', '')}".strip()
                     for t in items if isinstance(t, Mapping)]
            joined = "\n\n".join(t for t in texts if t)
            return [ThinkingBlock(joined)] if joined else []
        if kind == "code":
            text = content.get("text")
            lang = content.get("language") if isinstance(content.get("language"), str) else ""
            if isinstance(text, str) and text.strip():
                lang = "" if lang == "unknown" else lang
                return [TextBlock(f"```{lang}\n{text.rstrip()}\n```")]
            return []
        blocks: list[Block] = []
        for part in self._parts(content, kind):
            blocks.append(part)  # type: ignore[arg-type]
        return blocks

    def _parts(self, content: Mapping[str, Any], kind: Any) -> list[ToolResultPart]:
        """Text and images of a message's content, in order."""
        out: list[ToolResultPart] = []
        parts = content.get("parts")
        if isinstance(parts, list):
            for part in parts:
                if isinstance(part, str):
                    if part.strip():
                        out.append(TextBlock(part))
                elif isinstance(part, Mapping):
                    out.extend(self._part(part))
            return out
        text = _text(content, self)
        if text.strip():
            return [TextBlock(text)]
        if kind not in (None, "text", "multimodal_text"):
            self.notes.add(LOST_KIND)
        return out

    def _part(self, part: Mapping[str, Any]) -> list[ToolResultPart]:
        kind = part.get("content_type")
        if kind == "image_asset_pointer":
            return [self._image(part)]
        if kind == "audio_transcription":
            text = part.get("text")
            return [TextBlock(text)] if isinstance(text, str) and text.strip() else []
        if kind in ("audio_asset_pointer", "real_time_user_audio_video_asset_pointer"):
            self.notes.add(LOST_AUDIO)
            return []
        text = part.get("text")
        if isinstance(text, str) and text.strip():
            return [TextBlock(text)]
        self.notes.add(LOST_KIND)
        return []

    def _image(self, part: Mapping[str, Any]) -> ToolResultPart:
        pointer = str(part.get("asset_pointer") or "")
        asset = pointer.split("://", 1)[-1] or "an image"
        found = self.find_file(asset, "image") if self.find_file and pointer else None
        if isinstance(found, ExportFile) and found.media_type.startswith("image/"):
            return ImageBlock(found.media_type, data=found.data, name=asset)
        if isinstance(found, FileRefused):
            self.notes.refused(found.name, found.why)
        else:
            self.notes.missing(asset, "image")
        return TextBlock(f"[image not included: {asset}]")

    def _attachments(self, meta: Mapping[str, Any]) -> list[Block]:
        """A user message's uploaded files other than images (those are image parts):
        PDFs and text files from the export's folder as documents, others named."""
        out: list[Block] = []
        items = meta.get("attachments")
        for item in items if isinstance(items, list) else []:
            if not isinstance(item, Mapping) or not isinstance(item.get("id"), str):
                continue
            mime = str(item.get("mimeType") or item.get("mime_type") or "")
            if mime.startswith("image/"):
                continue
            name = str(item.get("name") or item["id"])
            found = self.find_file(item["id"], _claim(mime, name)) if self.find_file else None
            media = found.media_type if isinstance(found, ExportFile) else ""
            if isinstance(found, ExportFile) and media in ("application/pdf", "text/plain"):
                out.append(DocumentBlock(media, found.data, name=name))
                continue
            if isinstance(found, FileRefused):
                self.notes.refused(found.name, found.why)
            else:
                self.notes.missing(name, "file")
            out.append(TextBlock(f"[file not included: {name}]"))
        return out

    def _tool_output(self, content: Mapping[str, Any], name: Any, kind: Any) -> Result | None:
        tool = name if isinstance(name, str) else None
        if kind == "system_error":
            text = f"{content.get('name') or 'Error'}: {content.get('text') or ''}".strip()
            return Result(tool, text_parts(text), is_error=True)
        if kind == "tether_quote":
            head = " — ".join(str(content.get(k)) for k in ("title", "url") if content.get(k))
            body = str(content.get("text") or "")
            return Result(tool, text_parts(f"{head}\n\n{body}".strip()))
        if kind == "tether_browsing_display":
            text = str(content.get("result") or content.get("summary") or "")
            return Result(tool, text_parts(text))
        parts = tuple(self._parts(content, kind))
        if not parts:
            return None
        return Result(tool, parts)


_TEXT_TYPES = ("application/json", "application/xml", "application/x-yaml", "application/csv")
_TEXT_ENDINGS = (".txt", ".md", ".csv", ".json", ".py", ".js", ".ts", ".html", ".xml", ".yaml",
                 ".yml", ".toml", ".ini", ".log", ".sql", ".sh", ".c", ".h", ".cpp", ".java",
                 ".rs", ".go", ".rb", ".tex")


def _claim(mime: str, name: str) -> Claim:
    """What an uploaded file's declared media type (or else its name) says it is."""
    if mime == "application/pdf" or (not mime and name.lower().endswith(".pdf")):
        return "document"
    if mime.startswith("image/"):
        return "image"
    return "text" if _is_text(mime, name) else ""


def _is_text(media: str, name: str) -> bool:
    return (media.startswith("text/") or media in _TEXT_TYPES
            or name.lower().endswith(_TEXT_ENDINGS))


def _obj(value: Any) -> Mapping[str, Any]:
    """``value`` when it is a JSON object, else an empty one."""
    return value if isinstance(value, Mapping) else {}


def _text(content: Mapping[str, Any], reader: _Reader) -> str:
    parts = content.get("parts")
    if isinstance(parts, list):
        return "\n\n".join(p for p in parts if isinstance(p, str) and p.strip())
    for key in ("text", "result"):
        value = content.get(key)
        if isinstance(value, str):
            return value
    return ""


def _aborted(message: Mapping[str, Any], meta: Mapping[str, Any]) -> bool:
    finish = meta.get("finish_details")
    if isinstance(finish, Mapping) and finish.get("type") == "interrupted":
        return True
    return message.get("status") == "in_progress"


def _call(msg_id: str, recipient: str, content: Mapping[str, Any],
          blocks: list[Block]) -> Block:
    """An assistant message to a tool as a tool call (JSON text as its arguments)."""
    text = content.get("text") if content.get("content_type") == "code" else None
    if not isinstance(text, str):
        text = "\n\n".join(b.text for b in blocks if isinstance(b, TextBlock))
    arguments: dict[str, Any]
    try:
        parsed = json.loads(text)
    except ValueError:
        parsed = None
    if isinstance(parsed, dict):
        arguments = parsed
    else:
        arguments = {"code" if recipient == "python" else "input": text}
    return tool_call(msg_id, recipient, arguments)

"""Import a conversation whatever format it is in.

Recognised, in this order:

* a Parley export (``{"format": "parley", ...}``, see ``core.convert.parley``);
* a bare list of Parley turns (objects with ``role`` and ``blocks``);
* OpenAI Chat Completions messages: a list, or ``{"messages": [...]}``, with a
  system / developer / tool / function role, ``tool_calls``, ``tool_call_id``
  or an OpenAI content part (``image_url``, ``input_audio``, ``file``);
* Anthropic Messages: a list, or ``{"messages": [...], "system": ...}``, with
  an Anthropic block (``tool_use``, ``tool_result``, ``thinking``, an image or
  document with a ``source``), or a top-level ``system`` field;
* plain ``{"role", "content": "text"}`` lists, which both APIs read the same
  way, are reported as ``openai`` (the common chat format).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias

from core.content import ContentError, Turn
from core.convert.anthropic import from_anthropic
from core.convert.errors import NotAConversation
from core.convert.openai import from_openai
from core.convert.parley import FORMAT, import_parley

__all__ = ["ImportedConversation", "SourceFormat", "auto_detect_and_convert"]

SourceFormat: TypeAlias = Literal["parley", "anthropic", "openai"]

_OPENAI_ROLES = frozenset({"system", "developer", "tool", "function"})
_OPENAI_PARTS = frozenset({"image_url", "input_audio", "file", "refusal"})
_ANTHROPIC_BLOCKS = frozenset(
    {"tool_use", "tool_result", "thinking", "redacted_thinking", "server_tool_use"}
)


@dataclass(slots=True)
class ImportedConversation:
    """The result of :func:`auto_detect_and_convert`.

    Attributes:
        turns: the conversation as Parley turns.
        system: the system prompt, if the data had one.
        title: the title, if the data had one (Parley exports only).
        source_format: which format was recognised.
        lost: one sentence per kind of thing that could not be imported.
    """

    turns: list[Turn]
    system: str | None
    title: str | None
    source_format: SourceFormat
    lost: list[str] = field(default_factory=list)


def _message_signals(msg: Mapping[str, Any]) -> tuple[bool, bool]:
    """(looks OpenAI, looks Anthropic) for one message."""
    openai = msg.get("role") in _OPENAI_ROLES or "tool_calls" in msg or "tool_call_id" in msg
    anthropic = False
    content = msg.get("content")
    if isinstance(content, list):
        for part in content:
            if not isinstance(part, Mapping):
                continue
            kind = part.get("type")
            openai = openai or kind in _OPENAI_PARTS
            anthropic = (
                anthropic
                or kind in _ANTHROPIC_BLOCKS
                or (kind in ("image", "document") and "source" in part)
            )
    return openai, anthropic


def _check_messages(messages: list[Any]) -> None:
    if not messages:
        raise NotAConversation("the list of messages is empty")
    for i, msg in enumerate(messages, start=1):  # counted from 1, for people
        if not isinstance(msg, Mapping):
            raise NotAConversation(f"item {i} of the list is not a message object")
        if not isinstance(msg.get("role"), str):
            raise NotAConversation(f"message {i} has no 'role'")
        if "content" not in msg and "tool_calls" not in msg and "function_call" not in msg:
            raise NotAConversation(f"message {i} has no 'content'")


def _system_text(system: Any) -> str | None:
    if system is None or isinstance(system, str):
        return system or None
    if isinstance(system, list):
        texts = [b.get("text", "") for b in system if isinstance(b, Mapping)]
        return "\n\n".join(t for t in texts if t) or None
    raise NotAConversation("its 'system' is neither text nor a list of text blocks")


def _from_messages(messages: list[Any], system: Any, has_system_key: bool) -> ImportedConversation:
    _check_messages(messages)
    openai = anthropic = False
    for msg in messages:
        o, a = _message_signals(msg)
        openai, anthropic = openai or o, anthropic or a
    if openai and anthropic:
        raise NotAConversation("its messages mix the OpenAI and Anthropic formats")
    lost: list[str] = []
    if anthropic or (has_system_key and not openai):
        turns = from_anthropic(messages, lost=lost)
        return ImportedConversation(turns, _system_text(system), None, "anthropic", lost)
    turns, found_system = from_openai(messages, lost=lost)
    extra = _system_text(system)
    joined = "\n\n".join(s for s in (extra, found_system) if s) or None
    return ImportedConversation(turns, joined, None, "openai", lost)


def _from_parley_turns(items: list[Any]) -> ImportedConversation:
    turns: list[Turn] = []
    for i, raw in enumerate(items, start=1):  # counted from 1, for people
        try:
            turns.append(Turn.from_json(raw))
        except ContentError as exc:
            raise NotAConversation(f"turn {i} cannot be read ({exc})") from exc
    return ImportedConversation(turns, None, None, "parley", [])


def _parse(data: Any) -> Any:
    if isinstance(data, bytes | bytearray):
        try:
            data = data.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise NotAConversation("it is not UTF-8 text") from exc
    if isinstance(data, str):
        try:
            return json.loads(data)
        except json.JSONDecodeError as exc:
            raise NotAConversation(f"it is not valid JSON ({exc.msg}, line {exc.lineno})") from exc
    return data


def auto_detect_and_convert(data: Any) -> ImportedConversation:
    """Recognise a conversation's format and convert it to Parley turns.

    Args:
        data: parsed JSON (a dict or a list), or JSON text (str or bytes).

    Returns:
        The turns, system prompt, title, the format found and what was lost.

    Raises:
        NotAConversation: `data` is none of the formats above: not JSON, an
            empty list, a list of non-messages, messages without roles or
            content, a mix of formats, or a Parley export this version cannot
            read. The reason says which.
    """
    data = _parse(data)
    if isinstance(data, Mapping):
        if data.get("format") == FORMAT:
            doc = import_parley(data)
            title = doc.session.get("title")
            system = doc.session.get("system")
            return ImportedConversation(
                doc.turns,
                system if isinstance(system, str) else None,
                title if isinstance(title, str) else None,
                "parley",
                [],
            )
        messages = data.get("messages")
        if not isinstance(messages, list):
            raise NotAConversation("it is an object without a list of 'messages'")
        return _from_messages(messages, data.get("system"), "system" in data)
    if isinstance(data, list):
        if data and all(isinstance(m, Mapping) and "blocks" in m for m in data):
            return _from_parley_turns(data)
        return _from_messages(data, None, False)
    raise NotAConversation(f"it is a JSON {type(data).__name__}, not a list of messages")

"""Import a conversation whatever format it is in.

Recognised, in this order:

* a Parley export (``{"format": "parley", ...}``, see ``parley.core.convert.parley``);
* a bare list of Parley turns (objects with ``role`` and ``blocks``);
* OpenAI Chat Completions messages: a list, or ``{"messages": [...]}``, with a
  system / developer / tool / function role, ``tool_calls``, ``tool_call_id``
  or an OpenAI content part (``image_url``, ``input_audio``, ``file``);
* Anthropic Messages: a list, or ``{"messages": [...], "system": ...}``, with
  an Anthropic block (``tool_use``, ``tool_result``, ``thinking``, an image or
  document with a ``source``), or a top-level ``system`` field;
* plain ``{"role", "content": "text"}`` lists, which both APIs read the same
  way, are reported as ``openai`` (the common chat format) — unless they come
  in a request body that is Anthropic's (a ``claude-…`` model, Anthropic-only
  keys such as ``stop_sequences``/``top_k``/``anthropic_version``, or tools with
  an ``input_schema``);
* Parley's Markdown export (``parley.core.convert.markdown``).

A request body's ``model`` is kept (``provider:model``); every other field of
it (``tools``, ``temperature``, ``max_tokens``…) is named in ``lost``. Chat
history exports (many conversations) are read by ``parley.core.convert.histories``;
anything else is refused with what was found and what Parley imports.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias

from parley.core.content import ContentError, Turn
from parley.core.convert.anthropic import from_anthropic
from parley.core.convert.errors import NotAConversation
from parley.core.convert.histories import describe
from parley.core.convert.markdown import from_markdown, looks_like_markdown
from parley.core.convert.openai import from_openai
from parley.core.convert.parley import FORMAT, import_parley

__all__ = ["ImportedConversation", "SourceFormat", "auto_detect_and_convert"]

SourceFormat: TypeAlias = Literal["parley", "anthropic", "openai", "markdown"]

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
        model: ``provider:model`` of a request body's ``model``, else None.
        parents: for a Parley export of a chat with branches, each turn's parent id
            (None: a first message; ``turns`` then holds every branch's turns, each
            after its parent); None: ``turns`` are one line.
        path: with ``parents``, the ids of the turns the chat shows, in order.
    """

    turns: list[Turn]
    system: str | None
    title: str | None
    source_format: SourceFormat
    lost: list[str] = field(default_factory=list)
    model: str | None = None
    parents: dict[str, str | None] | None = None
    path: list[str] | None = None


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
    if all(isinstance(m, Mapping) and "role" not in m for m in messages):
        raise NotAConversation(
            f"it is {describe(messages)}; its items have no 'role', so it is neither a chat "
            "history export nor a list of messages")
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


_ANTHROPIC_KEYS = frozenset({"anthropic_version", "anthropic_beta", "stop_sequences", "top_k",
                             "thinking", "mcp_servers", "container", "service_tier_anthropic"})
_OPENAI_KEYS = frozenset({"max_completion_tokens", "frequency_penalty", "presence_penalty",
                          "response_format", "n", "logprobs", "top_logprobs", "seed", "stop",
                          "reasoning_effort", "parallel_tool_calls", "stream_options",
                          "functions", "function_call", "logit_bias", "modalities", "audio"})
_OPENAI_MODELS = ("gpt-", "chatgpt", "o1", "o3", "o4", "text-", "davinci")


def _body_signals(body: Mapping[str, Any]) -> tuple[bool, bool]:
    """(looks OpenAI, looks Anthropic) for a request body's own fields."""
    model = body.get("model")
    name = model.lower() if isinstance(model, str) else ""
    given = body.get("tools")
    tools: list[Any] = given if isinstance(given, list) else []
    anthropic = (
        name.startswith("claude")
        or any(k in body for k in _ANTHROPIC_KEYS)
        or any(isinstance(t, Mapping) and "input_schema" in t for t in tools)
    )
    openai = (
        name.startswith(_OPENAI_MODELS)
        or any(k in body for k in _OPENAI_KEYS)
        or any(isinstance(t, Mapping) and t.get("type") == "function" for t in tools)
    )
    return openai, anthropic


def _left_out(body: Mapping[str, Any]) -> list[str]:
    """One sentence naming a request body's fields that are not kept."""
    names = []
    for key, value in body.items():
        if key in ("messages", "system", "model"):
            continue
        if isinstance(value, list) and value:
            names.append(f"{key} ({len(value)})")
        else:
            names.append(str(key))
    if not names:
        return []
    return [f"The request's {', '.join(names)} were left out: Parley keeps the conversation "
            "and its model; your settings apply when you continue it."]


def _from_messages(messages: list[Any], system: Any, has_system_key: bool,
                   body: Mapping[str, Any] | None = None) -> ImportedConversation:
    _check_messages(messages)
    openai = anthropic = False
    for msg in messages:
        o, a = _message_signals(msg)
        openai, anthropic = openai or o, anthropic or a
    if openai and anthropic:
        raise NotAConversation("its messages mix the OpenAI and Anthropic formats")
    if body is not None and not openai and not anthropic:
        openai, anthropic = _body_signals(body)
        if openai and anthropic:  # a claude model at an OpenAI-style endpoint, say
            anthropic = not any(k in body for k in _OPENAI_KEYS)
            openai = not anthropic
    lost: list[str] = _left_out(body) if body is not None else []
    model = body.get("model") if body is not None else None
    model = model.strip() if isinstance(model, str) and model.strip() else None
    if anthropic or (has_system_key and not openai):
        turns = from_anthropic(messages, lost=lost)
        return ImportedConversation(turns, _system_text(system), None, "anthropic", lost,
                                    f"anthropic:{model}" if model else None)
    turns, found_system = from_openai(messages, lost=lost)
    extra = _system_text(system)
    joined = "\n\n".join(s for s in (extra, found_system) if s) or None
    return ImportedConversation(turns, joined, None, "openai", lost,
                                f"openai:{model}" if model else None)


def _from_parley_turns(items: list[Any]) -> ImportedConversation:
    turns: list[Turn] = []
    for i, raw in enumerate(items, start=1):  # counted from 1, for people
        try:
            turns.append(Turn.from_json(raw))
        except ContentError as exc:
            raise NotAConversation(f"turn {i} cannot be read ({exc})") from exc
    return ImportedConversation(turns, None, None, "parley", [])


def decode(data: bytes | bytearray | str) -> str:
    """UTF-8 bytes (a BOM is accepted) as text. Raises NotAConversation."""
    if isinstance(data, str):
        return data
    try:
        return bytes(data).decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise NotAConversation("it is not UTF-8 text") from exc


def parse_json(text: str) -> Any:
    """Parse JSON text, refusing what is not JSON with a reason a person reads.

    Raises:
        NotAConversation: not JSON (Markdown other than Parley's export is named as such).
    """
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        if text.lstrip("\ufeff \t\r\n").startswith("#"):
            raise NotAConversation(
                "it is Markdown (or other text) but not a Markdown file exported by Parley "
                "(it has no '- Exported from Parley on' line)") from exc
        if exc.msg.startswith("Unterminated") or exc.pos >= len(text.rstrip()):
            # The parser met the end of the text inside a value: the file was cut short.
            raise NotAConversation(
                f"it looks cut off: its JSON stops in the middle (line {exc.lineno}, column "
                f"{exc.colno}); download or export it again") from exc
        raise NotAConversation(
            f"it is not valid JSON ({exc.msg.lower()} at line {exc.lineno}, column "
            f"{exc.colno})") from exc


def _from_markdown(text: str) -> ImportedConversation:
    chat = from_markdown(text)
    return ImportedConversation(chat.turns, chat.system, chat.title, "markdown", chat.lost)


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
    if isinstance(data, bytes | bytearray | str):
        text = decode(data)
        if looks_like_markdown(text):
            return _from_markdown(text)
        data = parse_json(text)
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
                parents=doc.parents,
                path=doc.path,
            )
        messages = data.get("messages")
        if not isinstance(messages, list):
            raise NotAConversation(f"it is {describe(data)}, without a list of 'messages'")
        return _from_messages(messages, data.get("system"), "system" in data, data)
    if isinstance(data, list):
        if data and all(isinstance(m, Mapping) and "blocks" in m for m in data):
            return _from_parley_turns(data)
        return _from_messages(data, None, False)
    raise NotAConversation(f"it is a JSON {type(data).__name__}, not a list of messages")

"""Request validation as the real provider APIs do it, for the fake provider server.

Each validator takes a request body as the real API receives it (the parsed
JSON of ``POST /v1/messages`` or ``POST /v1/chat/completions``) and returns the
error message the real API answers with HTTP 400 (``invalid_request_error``),
or ``None`` when the body is valid.

Only the message history is checked (roles, content shapes, tool pairing):
that is what Parley's wire rules (``core/wire.py``) must get right. Model
names, ``max_tokens``, tools and sampling parameters are left to the server.

The texts are copied from errors the real APIs returned, as reported in public
bug trackers (2024-2026); where none was found, the text follows the API's
usual pydantic-style wording and says so in a comment. Where the real API has
grown more lenient (Anthropic now merges consecutive same-role messages and
accepts a leading assistant message on its first-party endpoint, while Bedrock
and Vertex still reject both), these validators keep the strict rule: Parley's
requests must pass everywhere.
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["validate_anthropic", "validate_openai"]

# --- Anthropic Messages API -------------------------------------------------

_ANTHROPIC_ID = re.compile(r"^[a-zA-Z0-9_-]+$")
_ANTHROPIC_IMAGE_TYPES = ("image/jpeg", "image/png", "image/gif", "image/webp")
_ANTHROPIC_BLOCK_TYPES = (
    "text",
    "image",
    "document",
    "search_result",
    "thinking",
    "redacted_thinking",
    "tool_use",
    "tool_result",
    "server_tool_use",
    "web_search_tool_result",
    "web_fetch_tool_result",
    "code_execution_tool_result",
    "bash_code_execution_tool_result",
    "text_editor_code_execution_tool_result",
    "tool_search_tool_result",
    "container_upload",
)
_ASSISTANT_ONLY = {"thinking", "redacted_thinking", "tool_use", "server_tool_use"}
_USER_ONLY = {"tool_result", "image", "document", "search_result"}
_TOOL_RESULT_PART_TYPES = ("text", "image", "search_result", "document")


def _quoted_list(values: tuple[str, ...]) -> str:
    quoted = [f"'{v}'" for v in values]
    return ", ".join(quoted[:-1]) + " or " + quoted[-1]


def _tag_error(loc: str, tag: Any, allowed: tuple[str, ...]) -> str:
    # pydantic discriminated-union wording, as the API prints it.
    expected = ", ".join(f"'{t}'" for t in allowed)
    return (
        f"{loc}: Input tag '{tag}' found using 'type' does not match any of the "
        f"expected tags: {expected}"
    )


def _check_text(loc: str, block: dict[str, Any]) -> str | None:
    text = block.get("text")
    if not isinstance(text, str):
        return (
            f"{loc}.text: Field required"
            if text is None
            else (f"{loc}.text: Input should be a valid string")
        )
    if text == "":
        return "messages: text content blocks must be non-empty"
    if not text.strip():
        return "messages: text content blocks must contain non-whitespace text"
    return None


def _check_image(loc: str, block: dict[str, Any]) -> str | None:
    source = block.get("source")
    if not isinstance(source, dict):
        return f"{loc}.source: Field required"
    kind = source.get("type")
    if kind == "base64":
        if source.get("media_type") not in _ANTHROPIC_IMAGE_TYPES:
            return (
                f"{loc}.source.base64.media_type: Input should be "
                f"{_quoted_list(_ANTHROPIC_IMAGE_TYPES)}"
            )
        if not isinstance(source.get("data"), str) or not source["data"]:
            return f"{loc}.source.base64.data: Field required"
        return None
    if kind == "url":
        if isinstance(source.get("url"), str):
            return None
        return f"{loc}.source.url.url: Field required"
    if kind == "file":
        return (
            None
            if isinstance(source.get("file_id"), str)
            else (f"{loc}.source.file.file_id: Field required")
        )
    return _tag_error(f"{loc}.source", kind, ("base64", "url", "file"))


def _check_document(loc: str, block: dict[str, Any]) -> str | None:
    source = block.get("source")
    if not isinstance(source, dict):
        return f"{loc}.source: Field required"
    kind = source.get("type")
    if kind == "base64":
        if source.get("media_type") != "application/pdf":
            return f"{loc}.source.base64.media_type: Input should be 'application/pdf'"
        return (
            None
            if isinstance(source.get("data"), str)
            else (f"{loc}.source.base64.data: Field required")
        )
    if kind == "text":
        if source.get("media_type") != "text/plain":
            return f"{loc}.source.text.media_type: Input should be 'text/plain'"
        return (
            None
            if isinstance(source.get("data"), str)
            else (f"{loc}.source.text.data: Field required")
        )
    if kind in ("url", "content", "file"):
        return None
    return _tag_error(f"{loc}.source", kind, ("base64", "text", "content", "url", "file"))


def _check_tool_result(loc: str, block: dict[str, Any]) -> str | None:
    tool_use_id = block.get("tool_use_id")
    if not isinstance(tool_use_id, str):
        return f"{loc}.tool_use_id: Field required"
    if not _ANTHROPIC_ID.match(tool_use_id):
        return f"{loc}.tool_result.tool_use_id: String should match pattern '^[a-zA-Z0-9_-]+$'"
    content = block.get("content", "")
    if isinstance(content, str):
        return None
    if not isinstance(content, list):
        return f"{loc}.content: Input should be a valid list"
    for k, part in enumerate(content):
        ploc = f"{loc}.content.{k}"
        if not isinstance(part, dict):
            return f"{ploc}: Input should be a valid dictionary or object to extract fields from"
        kind = part.get("type")
        if kind not in _TOOL_RESULT_PART_TYPES:
            return _tag_error(ploc, kind, _TOOL_RESULT_PART_TYPES)
        err = {"text": _check_text, "image": _check_image, "document": _check_document}.get(
            kind, lambda _loc, _b: None
        )(ploc, part)
        if err:
            return err
    return None


def _check_anthropic_block(loc: str, role: str, block: Any) -> str | None:
    if not isinstance(block, dict):
        return f"{loc}: Input should be a valid dictionary or object to extract fields from"
    kind = block.get("type")
    if kind not in _ANTHROPIC_BLOCK_TYPES:
        return _tag_error(loc, kind, _ANTHROPIC_BLOCK_TYPES)
    # No real text found for a block in the wrong role; worded like the API's other errors.
    if role == "user" and kind in _ASSISTANT_ONLY:
        return f"{loc}: `{kind}` blocks can only be in `assistant` messages"
    if role == "assistant" and kind in _USER_ONLY:
        return f"{loc}: `{kind}` blocks can only be in `user` messages"
    if kind == "text":
        return _check_text(loc, block)
    if kind == "image":
        return _check_image(loc, block)
    if kind == "document":
        return _check_document(loc, block)
    if kind == "thinking":
        if not isinstance(block.get("thinking"), str):
            return f"{loc}.thinking.thinking: Field required"
        if not isinstance(block.get("signature"), str):
            return f"{loc}.thinking.signature: Field required"
    if kind == "tool_use":
        if not isinstance(block.get("id"), str):
            return f"{loc}.tool_use.id: Field required"
        if not _ANTHROPIC_ID.match(block["id"]):
            return f"{loc}.tool_use.id: String should match pattern '^[a-zA-Z0-9_-]+$'"
        if not isinstance(block.get("name"), str):
            return f"{loc}.tool_use.name: Field required"
        if not isinstance(block.get("input"), dict):
            return f"{loc}.tool_use.input: Input should be a valid dictionary"
    if kind == "tool_result":
        return _check_tool_result(loc, block)
    return None


def _anthropic_message_shape(i: int, msg: Any, last: bool) -> str | None:
    if not isinstance(msg, dict):
        return f"messages.{i}: Input should be a valid dictionary or object to extract fields from"
    role = msg.get("role")
    if role not in ("user", "assistant"):
        return f"messages.{i}.role: Input should be 'user' or 'assistant'"
    content = msg.get("content")
    if content is None:
        return f"messages.{i}.content: Field required"
    if not isinstance(content, str | list):
        return f"messages.{i}.content: Input should be a valid list"
    if not content and not (last and role == "assistant"):
        return (
            f"messages.{i}: all messages must have non-empty content except for the "
            "optional final assistant message"
        )
    if isinstance(content, str):
        return None
    for j, block in enumerate(content):
        err = _check_anthropic_block(f"messages.{i}.content.{j}", role, block)
        if err:
            return err
    final = content[-1] if content else None
    if (
        role == "assistant"
        and isinstance(final, dict)
        and final.get("type")
        in (
            "thinking",
            "redacted_thinking",
        )
    ):
        return (
            f"messages.{i}.content.{len(content) - 1}: The final block in an assistant "
            "message cannot be `thinking`."
        )
    return None


def _blocks(msg: dict[str, Any]) -> list[dict[str, Any]]:
    content = msg["content"]
    return [] if isinstance(content, str) else content


def _anthropic_pairing(messages: list[dict[str, Any]]) -> str | None:
    seen_ids: set[str] = set()
    for i, msg in enumerate(messages):
        blocks = _blocks(msg)
        if msg["role"] == "assistant":
            use_ids: list[str] = []
            for j, b in enumerate(blocks):
                if b.get("type") == "tool_use":
                    if b["id"] in seen_ids:
                        return f"messages.{i}.content.{j}: `tool_use` ids must be unique"
                    seen_ids.add(b["id"])
                    use_ids.append(b["id"])
            if not use_ids:
                continue
            answered: set[str] = set()
            if i + 1 < len(messages) and messages[i + 1]["role"] == "user":
                # Only the leading run of tool_result blocks counts ("immediately after").
                for b in _blocks(messages[i + 1]):
                    if b.get("type") != "tool_result":
                        break
                    answered.add(b["tool_use_id"])
            missing = [u for u in use_ids if u not in answered]
            if missing:
                return (
                    f"messages.{i}: `tool_use` ids were found without `tool_result` blocks "
                    f"immediately after: {', '.join(missing)}. Each `tool_use` block must have "
                    "a corresponding `tool_result` block in the next message."
                )
        else:
            prev = messages[i - 1] if i > 0 else None
            prev_ids = (
                {b["id"] for b in _blocks(prev) if b.get("type") == "tool_use"}
                if prev is not None and prev["role"] == "assistant"
                else set()
            )
            for j, b in enumerate(blocks):
                if b.get("type") == "tool_result" and b["tool_use_id"] not in prev_ids:
                    return (
                        f"messages.{i}.content.{j}: unexpected `tool_use_id` found in "
                        f"`tool_result` blocks: {b['tool_use_id']}. Each `tool_result` block "
                        "must have a corresponding `tool_use` block in the previous message."
                    )
    return None


def _check_system(system: Any) -> str | None:
    if system is None or isinstance(system, str):
        return None
    if not isinstance(system, list):
        return "system: Input should be a valid list"
    for j, block in enumerate(system):
        loc = f"system.{j}"
        if not isinstance(block, dict) or block.get("type") != "text":
            return _tag_error(
                loc, block.get("type") if isinstance(block, dict) else None, ("text",)
            )
        err = _check_text(loc, block)
        if err:
            return err
    return None


def validate_anthropic(body: dict[str, Any]) -> str | None:
    """Check a Messages API request body as ``POST /v1/messages`` does.

    Args:
        body: the request JSON (``messages``, optional ``system``, ...).

    Returns:
        The message of the HTTP 400 ``invalid_request_error`` the real API
        would answer (the first problem found, in the API's order: shapes,
        then role order, then tool pairing), or None if the body is valid.
    """
    if not isinstance(body, dict):
        return "Input should be a valid dictionary or object to extract fields from"
    err = _check_system(body.get("system"))
    if err:
        return err
    messages = body.get("messages")
    if messages is None:
        return "messages: Field required"
    if not isinstance(messages, list):
        return "messages: Input should be a valid list"
    if not messages:
        return "messages: at least one message is required"
    for i, msg in enumerate(messages):
        err = _anthropic_message_shape(i, msg, i == len(messages) - 1)
        if err:
            return err
    if messages[0]["role"] != "user":
        return 'messages: first message must use the "user" role'
    for prev, msg in zip(messages, messages[1:], strict=False):
        if prev["role"] == msg["role"]:
            role = msg["role"]
            return (
                f'messages: roles must alternate between "user" and "assistant", '
                f'but found multiple "{role}" roles in a row'
            )
    last = messages[-1]
    thinking = body.get("thinking")
    thinking_on = isinstance(thinking, dict) and thinking.get("type") in ("enabled", "adaptive")
    final_blocks = last["content"] if isinstance(last["content"], list) else []
    final_thinks = any(b.get("type") in ("thinking", "redacted_thinking") for b in final_blocks)
    if last["role"] == "assistant" and not thinking_on and final_thinks:
        return (
            "When thinking is disabled, an 'assistant' message in the final position "
            "cannot contain 'thinking'. To use thinking blocks, enable 'thinking' in "
            "your request."
        )
    if last["role"] == "assistant":
        content = last["content"]
        tail = (
            content
            if isinstance(content, str)
            else (
                content[-1].get("text", "x")
                if content and content[-1].get("type") == "text"
                else "x"
            )
        )
        if tail and tail != tail.rstrip():
            return "final assistant content cannot end with trailing whitespace"
    return _anthropic_pairing(messages)


# --- OpenAI Chat Completions ------------------------------------------------

_OPENAI_ROLES = ("system", "assistant", "user", "function", "tool", "developer")
_OPENAI_USER_PARTS = ("text", "image_url", "input_audio", "file")
_OPENAI_MAX_TOOL_CALL_ID = 40


def _openai_parts(i: int, role: str, content: list[Any]) -> str | None:
    if not content:
        return (
            f"Invalid 'messages[{i}].content': empty array. Expected an array with minimum "
            "length 1, but got an empty array instead."
        )
    allowed = _OPENAI_USER_PARTS if role == "user" else ("text", "refusal", "image_url")
    for k, part in enumerate(content):
        kind = part.get("type") if isinstance(part, dict) else None
        if kind not in allowed:
            values = ", ".join(f"'{a}'" for a in allowed[:-1]) + f", and '{allowed[-1]}'"
            return (
                f"Invalid value: '{kind}'. Supported values are: {values}. "
                f"(param: messages[{i}].content[{k}].type)"
            )
        if kind == "image_url" and role != "user":
            return (
                f"Invalid 'messages[{i}]'. Image URLs are only allowed for messages with role "
                f"'user', but this message with role '{role}' contains an image URL."
            )
        if kind == "image_url":
            image = part.get("image_url")
            if not isinstance(image, dict) or not isinstance(image.get("url"), str):
                return f"Missing required parameter: 'messages[{i}].content[{k}].image_url.url'."
        if kind == "text" and not isinstance(part.get("text"), str):
            return f"Missing required parameter: 'messages[{i}].content[{k}].text'."
        if kind == "file":
            file = part.get("file")
            if not isinstance(file, dict) or not (file.get("file_data") or file.get("file_id")):
                return f"Missing required parameter: 'messages[{i}].content[{k}].file'."
    return None


def _openai_tool_calls(i: int, calls: Any) -> str | None:
    if not isinstance(calls, list):
        return f"Invalid type for 'messages[{i}].tool_calls': expected an array."
    if not calls:
        return (
            f"Invalid 'messages[{i}].tool_calls': empty array. Expected an array with minimum "
            "length 1, but got an empty array instead."
        )
    for k, call in enumerate(calls):
        loc = f"messages[{i}].tool_calls[{k}]"
        if not isinstance(call, dict) or not isinstance(call.get("id"), str):
            return f"Missing required parameter: '{loc}.id'."
        if len(call["id"]) > _OPENAI_MAX_TOOL_CALL_ID:
            return (
                f"Invalid '{loc}.id': string too long. Expected a string with maximum length "
                f"{_OPENAI_MAX_TOOL_CALL_ID}, but got a string with length {len(call['id'])} "
                "instead."
            )
        if call.get("type") != "function":
            return f"Missing required parameter: '{loc}.type'."
        fn = call.get("function")
        if not isinstance(fn, dict) or not isinstance(fn.get("name"), str):
            return f"Missing required parameter: '{loc}.function.name'."
        args = fn.get("arguments")
        if not isinstance(args, str):
            got = "an object" if isinstance(args, dict) else "null" if args is None else "a value"
            return (
                f"Invalid type for '{loc}.function.arguments': expected a string, "
                f"but got {got} instead."
            )
    return None


def _openai_message_shape(i: int, msg: Any) -> str | None:
    if not isinstance(msg, dict):
        return f"Invalid type for 'messages[{i}]': expected an object."
    role = msg.get("role")
    if role not in _OPENAI_ROLES:
        return (
            f"Invalid value: '{role}'. Supported values are: 'system', 'assistant', 'user', "
            "'function', 'tool', and 'developer'."
        )
    content = msg.get("content")
    if role == "assistant":
        if "tool_calls" in msg:
            err = _openai_tool_calls(i, msg["tool_calls"])
            if err:
                return err
        elif content is None and msg.get("function_call") is None:
            return "Invalid value for 'content': expected a string, got null."
    elif content is None:
        return "Invalid value for 'content': expected a string, got null."
    if role == "tool" and not isinstance(msg.get("tool_call_id"), str):
        return f"Missing required parameter: 'messages[{i}].tool_call_id'."
    if content is None or isinstance(content, str):
        return None
    if not isinstance(content, list):
        return f"Invalid type for 'messages[{i}].content': expected one of a string or array."
    if role in ("tool", "system", "developer"):
        for k, part in enumerate(content):
            if isinstance(part, dict) and part.get("type") == "image_url":
                return (
                    f"Invalid 'messages[{i}]'. Image URLs are only allowed for messages with "
                    f"role 'user', but this message with role '{role}' contains an image URL."
                )
            if not isinstance(part, dict) or part.get("type") != "text":
                return (
                    f"Invalid value: '{part.get('type') if isinstance(part, dict) else None}'. "
                    f"Supported values are: 'text'. (param: messages[{i}].content[{k}].type)"
                )
        return None
    return _openai_parts(i, role, content)


def _openai_pairing(messages: list[dict[str, Any]]) -> str | None:
    i = 0
    while i < len(messages):
        msg = messages[i]
        if msg["role"] == "tool":
            # A tool message not inside the run right after an assistant's tool_calls.
            return (
                "Invalid parameter: messages with role 'tool' must be a response to a "
                "preceeding message with 'tool_calls'."
            )
        if msg["role"] != "assistant" or not msg.get("tool_calls"):
            i += 1
            continue
        pending = [c["id"] for c in msg["tool_calls"]]
        j = i + 1
        while j < len(messages) and messages[j]["role"] == "tool":
            call_id = messages[j]["tool_call_id"]
            if call_id not in pending and call_id not in {c["id"] for c in msg["tool_calls"]}:
                return (
                    f"Invalid parameter: 'tool_call_id' of '{call_id}' not found in "
                    "'tool_calls' of previous message."
                )
            if call_id in pending:
                pending.remove(call_id)
            j += 1
        if pending:
            return (
                "An assistant message with 'tool_calls' must be followed by tool messages "
                "responding to each 'tool_call_id'. The following tool_call_ids did not have "
                f"response messages: {', '.join(pending)}"
            )
        i = j
    return None


def validate_openai(body: dict[str, Any]) -> str | None:
    """Check a Chat Completions request body as ``POST /v1/chat/completions`` does.

    Args:
        body: the request JSON (``messages``, ...).

    Returns:
        The message of the HTTP 400 ``invalid_request_error`` the real API
        would answer (the first problem found: shapes first, then tool
        pairing), or None if the body is valid. OpenAI does not require
        alternating roles nor a leading user message, so neither is checked.
    """
    if not isinstance(body, dict):
        return "Invalid type for body: expected an object."
    messages = body.get("messages")
    if messages is None:
        return "Missing required parameter: 'messages'."
    if not isinstance(messages, list):
        return "Invalid type for 'messages': expected an array."
    if not messages:
        return "[] is too short - 'messages'"
    for i, msg in enumerate(messages):
        err = _openai_message_shape(i, msg)
        if err:
            return err
    return _openai_pairing(messages)

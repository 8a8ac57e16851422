"""Prompt-cache breakpoints for the Anthropic Messages API.

Anthropic caches the prompt prefix (tools → system → messages) up to a block
marked ``cache_control`` (at most 4 marks per request). A later request reads
that prefix from the cache when its bytes up to a mark are identical, and the
lookup walks back at most about 20 blocks from each mark. Parley marks:

1. the system prompt (covering the tools before it), or the last tool when
   there is no system prompt;
2. the last cacheable block of the last message — the moving end, so the
   next request can read everything sent so far;
3. the last cacheable block of the user message before the last assistant
   message — where the *previous* request's moving end was, so its prefix is
   byte-identical (mark included) in this request and is read from the cache
   however many blocks a tool loop added since.

Thinking blocks, redacted thinking and empty text cannot carry a mark; the
mark goes on the nearest block before them.
"""

from __future__ import annotations

from typing import Any

_UNMARKABLE = {"thinking", "redacted_thinking"}


def cache_control(ttl_s: int) -> dict[str, str]:
    """Return the ``cache_control`` value for a TTL (3600 → ``"1h"``, else the 5-minute default)."""
    if ttl_s >= 3600:
        return {"type": "ephemeral", "ttl": "1h"}
    return {"type": "ephemeral"}


def _markable(block: Any) -> bool:
    if not isinstance(block, dict) or block.get("type") in _UNMARKABLE:
        return False
    return not (block.get("type") == "text" and not str(block.get("text", "")).strip())


def _mark_message(message: dict[str, Any], mark: dict[str, str]) -> bool:
    content = message.get("content")
    if isinstance(content, str):
        if not content.strip():
            return False
        message["content"] = [{"type": "text", "text": content, "cache_control": dict(mark)}]
        return True
    if not isinstance(content, list):
        return False
    for block in reversed(content):
        if _markable(block):
            block["cache_control"] = dict(mark)
            return True
    return False


def _previous_end(messages: list[dict[str, Any]]) -> int | None:
    """Index of the user message just before the last assistant message, if any."""
    last_assistant = None
    for i in range(len(messages) - 1, -1, -1):
        if messages[i].get("role") == "assistant":
            last_assistant = i
            break
    if last_assistant is None:
        return None
    for i in range(last_assistant - 1, -1, -1):
        if messages[i].get("role") == "user":
            return i
    return None


def mark_messages(messages: list[dict[str, Any]], ttl_s: int = 300) -> list[dict[str, Any]]:
    """Return a copy of ``messages`` with breakpoints 2 and 3 (see the module doc) set.

    Args:
        messages: Messages API messages (as ``parley.core.convert.anthropic.to_anthropic``
            returns them); not modified.
        ttl_s: the cache TTL in seconds (300 or 3600).

    Returns:
        A new list; existing ``cache_control`` marks are removed first, so at most two
        marks are in the result. Only the messages that change (a mark removed or set)
        are copied, with their content list and blocks; the others are the given dicts,
        so a long request costs two copies, not one of the whole history.
    """
    out = [_unmarked(message) for message in messages]
    mark = cache_control(ttl_s)
    if out:
        out[-1] = _own(out[-1], messages[-1])
        _mark_message(out[-1], mark)
    previous = _previous_end(out)
    if previous is not None:
        out[previous] = _own(out[previous], messages[previous])
        _mark_message(out[previous], mark)
    return out


def _copied(message: dict[str, Any]) -> dict[str, Any]:
    """``message`` with its own content list and block dicts (the values inside shared)."""
    content = message.get("content")
    if not isinstance(content, list):
        return dict(message)
    blocks = [dict(b) if isinstance(b, dict) else b for b in content]
    return {**message, "content": blocks}


def _own(message: dict[str, Any], given: dict[str, Any]) -> dict[str, Any]:
    """``message`` safe to change: copied unless :func:`_unmarked` copied it already."""
    return _copied(message) if message is given else message


def _unmarked(message: dict[str, Any]) -> dict[str, Any]:
    """``message`` without ``cache_control`` marks: itself when it has none, else a copy."""
    content = message.get("content")
    if not isinstance(content, list) or not any(
            isinstance(b, dict) and "cache_control" in b for b in content):
        return message
    out = _copied(message)
    for block in out["content"]:
        if isinstance(block, dict):
            block.pop("cache_control", None)
    return out


def system_blocks(system: str, ttl_s: int = 300, cache: bool = True) -> list[dict[str, Any]]:
    """Return the ``system`` parameter as one text block, marked when ``cache``."""
    block: dict[str, Any] = {"type": "text", "text": system}
    if cache:
        block["cache_control"] = cache_control(ttl_s)
    return [block]


def mark_last_tool(tools: list[dict[str, Any]], ttl_s: int = 300) -> list[dict[str, Any]]:
    """Return a copy of ``tools`` whose last tool carries a breakpoint (no system prompt case)."""
    out = [dict(t) for t in tools]
    if out:
        out[-1]["cache_control"] = cache_control(ttl_s)
    return out

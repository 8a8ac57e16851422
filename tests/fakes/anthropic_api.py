"""The Anthropic Messages API as the fake server speaks it: bodies and SSE events.

Shapes follow the public API reference (Messages, streaming, errors): an error
is ``{"type": "error", "error": {"type": ..., "message": ...}, "request_id": ...}``;
a stream is ``message_start``, ``ping``, per block ``content_block_start`` /
``content_block_delta`` (``text_delta``, ``thinking_delta``, ``signature_delta``,
``input_json_delta``) / ``content_block_stop``, then ``message_delta`` (stop
reason and cumulative usage) and ``message_stop``.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass
from typing import Any

from tests.fakes.cache import CacheUsage
from tests.fakes.script import Failure, Reply, ToolCall

#: (status, error.type, message) of each status failure.
STATUS_ERRORS: dict[str, tuple[int, str, str]] = {
    "auth": (401, "authentication_error", "invalid x-api-key"),
    "permission": (
        403,
        "permission_error",
        "Your API key does not have permission to use the specified resource.",
    ),
    "not_found": (404, "not_found_error", "model: {model}"),
    "rate_limit": (
        429,
        "rate_limit_error",
        "This request would exceed the rate limit for your organization of 50 requests per "
        "minute. For details, refer to: https://docs.claude.com/en/api/rate-limits.",
    ),
    "overloaded": (529, "overloaded_error", "Overloaded"),
    "server_error": (500, "api_error", "Internal server error"),
    "bad_request": (400, "invalid_request_error", "Invalid request"),
}


def request_id() -> str:
    """Return a fresh ``req_…`` id like the API's ``request-id`` header."""
    return "req_" + uuid.uuid4().hex[:24]


def error_body(error_type: str, message: str) -> dict[str, Any]:
    """Return the API's error body for an ``error.type`` and message."""
    return {
        "type": "error",
        "error": {"type": error_type, "message": message},
        "request_id": request_id(),
    }


def failure_body(failure: Failure, model: str, prompt_tokens: int) -> tuple[int, dict[str, Any]]:
    """Return (HTTP status, body) of a scripted status failure."""
    if failure.kind == "prompt_too_long":
        tokens = failure.tokens if failure.tokens is not None else failure.maximum + prompt_tokens
        message = (
            failure.message or f"prompt is too long: {tokens} tokens > {failure.maximum} maximum"
        )
        return 400, error_body("invalid_request_error", message)
    status, error_type, message = STATUS_ERRORS[failure.kind]
    return status, error_body(error_type, (failure.message or message).format(model=model))


def sse(event: str, data: dict[str, Any]) -> bytes:
    """Return one server-sent event as bytes."""
    return f"event: {event}\ndata: {json.dumps(data, separators=(',', ':'))}\n\n".encode()


def error_event(error_type: str, message: str) -> bytes:
    """Return the mid-stream ``error`` event (e.g. ``overloaded_error``)."""
    return sse("error", {"type": "error", "error": {"type": error_type, "message": message}})


@dataclass
class Unit:
    """One event of a stream: its bytes and how many content characters it carries."""

    data: bytes
    chars: int = 0


def _chunks(text: str, size: int) -> list[str]:
    size = max(1, size)
    return [text[i : i + size] for i in range(0, len(text), size)] or [""]


def tool_id(call: ToolCall) -> str:
    """Return the call's id, or a new ``toolu_…`` one."""
    return call.id or "toolu_" + uuid.uuid4().hex[:24]


def signature_of(reply: Reply) -> str:
    """Return the thinking block's signature (scripted or a fixed-looking fake)."""
    return (
        reply.signature
        or "EqQBCkYIARgCIkD" + uuid.uuid5(uuid.NAMESPACE_OID, reply.thinking or "").hex
    )


def usage_json(
    split: CacheUsage, output_tokens: int, override: dict[str, int] | None
) -> dict[str, int]:
    """Return the ``usage`` object (Anthropic names), scripted overrides applied."""
    usage = {
        "input_tokens": split.input_tokens,
        "cache_creation_input_tokens": split.cache_write,
        "cache_read_input_tokens": split.cache_read,
        "output_tokens": output_tokens,
    }
    usage.update(override or {})
    return usage


def content_blocks(reply: Reply, text: str) -> list[dict[str, Any]]:
    """Return the reply's content blocks as in a non-streaming Message."""
    blocks: list[dict[str, Any]] = []
    if reply.thinking is not None:
        blocks.append(
            {"type": "thinking", "thinking": reply.thinking, "signature": signature_of(reply)}
        )
    if text:
        blocks.append({"type": "text", "text": text})
    for call in reply.tool_calls:
        blocks.append(
            {"type": "tool_use", "id": tool_id(call), "name": call.name, "input": call.input}
        )
    return blocks


def stop_reason_of(reply: Reply) -> str:
    """Return the reply's stop reason (``tool_use`` when it calls tools)."""
    return reply.stop_reason or ("tool_use" if reply.tool_calls else "end_turn")


def message_json(reply: Reply, text: str, model: str, usage: dict[str, int]) -> dict[str, Any]:
    """Return a non-streaming Message object."""
    return {
        "id": "msg_" + uuid.uuid4().hex[:24],
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content_blocks(reply, text),
        "stop_reason": stop_reason_of(reply),
        "stop_sequence": None,
        "usage": usage,
    }


def stream_units(reply: Reply, text: str, model: str, usage: dict[str, int]) -> list[Unit]:
    """Return the whole SSE stream of a reply, event by event."""
    start_usage = {**usage, "output_tokens": 1}
    message = {**message_json(reply, text, model, start_usage), "content": [], "stop_reason": None}
    units = [Unit(sse("message_start", {"type": "message_start", "message": message}))]
    units.append(Unit(sse("ping", {"type": "ping"})))
    index = 0

    def block(start: dict[str, Any], deltas: list[dict[str, Any]], sizes: list[int]) -> None:
        nonlocal index
        units.append(
            Unit(
                sse(
                    "content_block_start",
                    {"type": "content_block_start", "index": index, "content_block": start},
                )
            )
        )
        for delta, size in zip(deltas, sizes, strict=True):
            units.append(
                Unit(
                    sse(
                        "content_block_delta",
                        {"type": "content_block_delta", "index": index, "delta": delta},
                    ),
                    size,
                )
            )
        units.append(
            Unit(sse("content_block_stop", {"type": "content_block_stop", "index": index}))
        )
        index += 1

    if reply.thinking is not None:
        parts = _chunks(reply.thinking, reply.chunk_size)
        deltas = [{"type": "thinking_delta", "thinking": p} for p in parts]
        deltas.append({"type": "signature_delta", "signature": signature_of(reply)})
        block(
            {"type": "thinking", "thinking": "", "signature": ""},
            deltas,
            [len(p) for p in parts] + [0],
        )
    if text:
        parts = _chunks(text, reply.chunk_size)
        block(
            {"type": "text", "text": ""},
            [{"type": "text_delta", "text": p} for p in parts],
            [len(p) for p in parts],
        )
    for call in reply.tool_calls:
        parts = [""] + _chunks(json.dumps(call.input), reply.chunk_size)
        block(
            {"type": "tool_use", "id": tool_id(call), "name": call.name, "input": {}},
            [{"type": "input_json_delta", "partial_json": p} for p in parts],
            [len(p) for p in parts],
        )
    units.append(
        Unit(
            sse(
                "message_delta",
                {
                    "type": "message_delta",
                    "delta": {"stop_reason": stop_reason_of(reply), "stop_sequence": None},
                    "usage": usage,
                },
            )
        )
    )
    units.append(Unit(sse("message_stop", {"type": "message_stop"})))
    return units


def models_page(models: list[dict[str, Any]]) -> dict[str, Any]:
    """Return the ``GET /v1/models`` page (Anthropic shape)."""
    data = [
        {
            "type": "model",
            "id": m["id"],
            "display_name": m.get("display_name", m["id"]),
            "created_at": m.get("created_at", "2025-09-29T00:00:00Z"),
            "lifecycle": "active",
            "max_input_tokens": m.get("max_input_tokens"),
            "max_tokens": m.get("max_tokens"),
        }
        for m in models
    ]
    return {
        "data": data,
        "has_more": False,
        "first_id": data[0]["id"] if data else None,
        "last_id": data[-1]["id"] if data else None,
    }

"""OpenAI Chat Completions as the fake server speaks it, plus compatible servers' quirks.

Shapes follow the public API reference: an error is ``{"error": {"message",
"type", "param", "code"}}``; a stream is ``chat.completion.chunk`` objects as
``data:`` lines (role first, ``content`` / ``tool_calls`` deltas, a chunk with
``finish_reason``, then, with ``stream_options.include_usage``, a chunk with
empty ``choices`` and the ``usage``), closed by ``data: [DONE]``. Compatible
servers word errors their own way: vLLM sends a flat
``{"object": "error", "message": ...}``, Ollama and LM Studio ``{"error": "..."}``,
llama.cpp ``{"error": {"code": 400, "type": "exceed_context_size_error", ...}}``.
"""

from __future__ import annotations

import json
import time
import uuid
from typing import Any

from tests.fakes.anthropic_api import Unit, _chunks, stop_reason_of
from tests.fakes.cache import CacheUsage
from tests.fakes.script import Failure, Reply

FINISH = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "max_tokens": "length",
    "tool_use": "tool_calls",
}

STATUS_ERRORS: dict[str, tuple[int, str, str | None, str]] = {
    # kind: (status, type, code, message)
    "auth": (
        401,
        "invalid_request_error",
        "invalid_api_key",
        "Incorrect API key provided: {masked}. You can find your API key at "
        "https://platform.openai.com/account/api-keys.",
    ),
    "permission": (
        403,
        "request_forbidden",
        "unsupported_country_region_territory",
        "Country, region, or territory not supported",
    ),
    "not_found": (
        404,
        "invalid_request_error",
        "model_not_found",
        "The model `{model}` does not exist or you do not have access to it.",
    ),
    "rate_limit": (
        429,
        "tokens",
        "rate_limit_exceeded",
        "Rate limit reached for {model} in organization org-fake on tokens per min (TPM): "
        "Limit 30000, Used 29500, Requested 1200. Please try again in 1.4s. Visit "
        "https://platform.openai.com/account/rate-limits to learn more.",
    ),
    "overloaded": (
        503,
        "server_error",
        None,
        "The engine is currently overloaded, please try again later.",
    ),
    "server_error": (
        500,
        "server_error",
        None,
        "The server had an error while processing your request. Sorry about that!",
    ),
    "bad_request": (400, "invalid_request_error", None, "Invalid request"),
}


def mask_key(key: str | None) -> str:
    """Mask a key the way the API echoes it in a 401 (``sk-ab***wxyz``)."""
    if not key:
        return "''"
    return key[:3] + "*" * max(0, len(key) - 7) + key[-4:] if len(key) > 8 else "***"


def error_body(
    message: str, type_: str, code: str | None, param: str | None = None
) -> dict[str, Any]:
    """Return OpenAI's error body."""
    return {"error": {"message": message, "type": type_, "param": param, "code": code}}


def context_overflow(failure: Failure, prompt_tokens: int) -> dict[str, Any]:
    """Return the context-overflow body in the failure's flavor."""
    maximum = failure.maximum
    tokens = failure.tokens if failure.tokens is not None else maximum + prompt_tokens
    if failure.flavor == "openai_new":
        return error_body(
            f"Input tokens exceed the configured limit of {maximum} tokens. Your messages "
            f"resulted in {tokens} tokens. Please reduce the length of the messages.",
            "invalid_request_error",
            "context_length_exceeded",
            "messages",
        )
    if failure.flavor == "vllm":
        return {
            "object": "error",
            "message": f"This model's maximum context length is {maximum} tokens. However, you "
            f"requested {tokens} tokens ({tokens - 256} in the messages, 256 in the completion). "
            "Please reduce the length of the messages or completion.",
            "type": "BadRequestError",
            "param": None,
            "code": 400,
        }
    if failure.flavor == "llamacpp":
        return {
            "error": {
                "code": 400,
                "message": "the request exceeds the available context size, try increasing it",
                "type": "exceed_context_size_error",
                "n_prompt_tokens": tokens,
                "n_ctx": maximum,
            }
        }
    if failure.flavor == "ollama":
        return {
            "error": f"input length ({tokens} tokens) exceeds the model's context length "
            f"({maximum} tokens)"
        }
    if failure.flavor == "lmstudio":
        return {
            "error": f"Trying to keep the first {tokens} tokens when context the overflows. "
            f"However, the model is loaded with context length of only {maximum} "
            "tokens, which is not enough. Try to load the model with a larger "
            "context length, or provide a shorter input"
        }
    return error_body(
        f"This model's maximum context length is {maximum} tokens. However, your messages "
        f"resulted in {tokens} tokens. Please reduce the length of the messages.",
        "invalid_request_error",
        "context_length_exceeded",
        "messages",
    )


def failure_body(
    failure: Failure, model: str, prompt_tokens: int, key: str | None
) -> tuple[int, dict[str, Any]]:
    """Return (HTTP status, body) of a scripted status failure."""
    if failure.kind == "prompt_too_long":
        return 400, context_overflow(failure, prompt_tokens)
    status, type_, code, message = STATUS_ERRORS[failure.kind]
    text = failure.message or message.format(model=model, masked=mask_key(key))
    return status, error_body(text, type_, code)


def error_chunk(message: str, type_: str = "server_error") -> bytes:
    """Return a mid-stream error as the API sends it (a ``data:`` line with ``error``)."""
    return data_line(error_body(message, type_, None))


def data_line(obj: dict[str, Any] | str) -> bytes:
    """Return one SSE ``data:`` event."""
    text = obj if isinstance(obj, str) else json.dumps(obj, separators=(",", ":"))
    return f"data: {text}\n\n".encode()


def usage_json(
    split: CacheUsage, output_tokens: int, override: dict[str, int] | None
) -> dict[str, Any]:
    """Return OpenAI's ``usage``; overrides use Anthropic names and are translated."""
    o = override or {}
    cached = o.get("cache_read_input_tokens", split.cache_read)
    uncached = o.get("input_tokens", split.input_tokens)
    prompt = uncached + cached + o.get("cache_creation_input_tokens", 0)
    completion = o.get("output_tokens", output_tokens)
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
        "prompt_tokens_details": {"cached_tokens": cached, "audio_tokens": 0},
        "completion_tokens_details": {
            "reasoning_tokens": 0,
            "audio_tokens": 0,
            "accepted_prediction_tokens": 0,
            "rejected_prediction_tokens": 0,
        },
    }


def _tool_calls(reply: Reply) -> list[dict[str, Any]]:
    return [
        {
            "id": call.id or "call_" + uuid.uuid4().hex[:24],
            "type": "function",
            "function": {"name": call.name, "arguments": json.dumps(call.input)},
        }
        for call in reply.tool_calls
    ]


def completion_json(reply: Reply, text: str, model: str, usage: dict[str, Any]) -> dict[str, Any]:
    """Return a non-streaming ``chat.completion``."""
    message: dict[str, Any] = {"role": "assistant", "content": text or None, "refusal": None}
    if reply.tool_calls:
        message["tool_calls"] = _tool_calls(reply)
    if reply.thinking is not None:
        message["reasoning_content"] = reply.thinking
    return {
        "id": "chatcmpl-" + uuid.uuid4().hex[:24],
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "system_fingerprint": "fp_fake",
        "choices": [
            {
                "index": 0,
                "message": message,
                "logprobs": None,
                "finish_reason": FINISH.get(stop_reason_of(reply), "stop"),
            }
        ],
        "usage": usage,
    }


def stream_units(
    reply: Reply, text: str, model: str, usage: dict[str, Any], include_usage: bool
) -> list[Unit]:
    """Return the whole chunk stream of a reply, ``[DONE]`` included."""
    cid = "chatcmpl-" + uuid.uuid4().hex[:24]
    created = int(time.time())

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        out: dict[str, Any] = {
            "id": cid,
            "object": "chat.completion.chunk",
            "created": created,
            "model": model,
            "system_fingerprint": "fp_fake",
            "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}],
        }
        if include_usage:
            out["usage"] = None
        return out

    units = [Unit(data_line(chunk({"role": "assistant", "content": "", "refusal": None})))]
    if reply.thinking is not None:
        for part in _chunks(reply.thinking, reply.chunk_size):
            units.append(Unit(data_line(chunk({"reasoning_content": part})), len(part)))
    if text:
        for part in _chunks(text, reply.chunk_size):
            units.append(Unit(data_line(chunk({"content": part})), len(part)))
    for index, call in enumerate(_tool_calls(reply)):
        fn = call["function"]
        head = {
            "index": index,
            "id": call["id"],
            "type": "function",
            "function": {"name": fn["name"], "arguments": ""},
        }
        units.append(Unit(data_line(chunk({"tool_calls": [head]}))))
        for part in _chunks(fn["arguments"], reply.chunk_size):
            delta = {"tool_calls": [{"index": index, "function": {"arguments": part}}]}
            units.append(Unit(data_line(chunk(delta)), len(part)))
    units.append(Unit(data_line(chunk({}, FINISH.get(stop_reason_of(reply), "stop")))))
    if include_usage:
        final = chunk({})
        final["choices"] = []
        final["usage"] = usage
        units.append(Unit(data_line(final)))
    units.append(Unit(data_line("[DONE]")))
    return units


def models_page(models: list[dict[str, Any]]) -> dict[str, Any]:
    """Return the ``GET /v1/models`` list (OpenAI shape)."""
    return {
        "object": "list",
        "data": [
            {
                **m,  # what a server adds (vLLM max_model_len, LM Studio context lengths …)
                "id": m["id"],
                "object": "model",
                "created": m.get("created", 1_700_000_000),
                "owned_by": m.get("owned_by", "fake"),
            }
            for m in models
        ],
    }

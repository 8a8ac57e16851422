"""Classifying provider failures into :mod:`parley.core.providers.errors` types.

Both SDKs raise an ``APIStatusError`` carrying the HTTP status and the parsed
body; the Anthropic SDK raises one with status 200 for an ``error`` event in
the middle of a stream, so the body's ``error.type`` decides, not the status.
Error bodies come in several shapes: Anthropic's ``{"type": "error", "error":
{"type", "message"}}``, OpenAI's ``{"error": {"message", "type", "code"}}``,
and the flat ones compatible servers send (vLLM ``{"object": "error",
"message"}``, Ollama / LM Studio ``{"error": "text"}``, llama.cpp
``{"error": {"type": "exceed_context_size_error", "n_prompt_tokens", "n_ctx"}}``).
"""

from __future__ import annotations

import email.utils
import re
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from parley.core.providers.errors import (
    AuthenticationFailed,
    BadRequest,
    ContextOverflow,
    ModelNotFound,
    Overloaded,
    PermissionDenied,
    ProviderError,
    RateLimited,
    ServerError,
    StreamInterrupted,
    scrub,
)

#: (pattern, group of the prompt tokens, group of the maximum)
_OVERFLOW_PATTERNS: list[tuple[re.Pattern[str], int | None, int | None]] = [
    # Anthropic: "prompt is too long: 208310 tokens > 200000 maximum"
    (re.compile(r"prompt is too long:\s*([\d,]+)\s*tokens\s*>\s*([\d,]+)\s*maximum", re.I), 1, 2),
    # Anthropic: "input length and `max_tokens` exceed context limit: 188240 + 21333 > 200000"
    (re.compile(r"exceed context limit:\s*([\d,]+)\s*\+\s*[\d,]+\s*>\s*([\d,]+)", re.I), 1, 2),
    # OpenAI / vLLM: "maximum context length is 128000 tokens. However, your messages
    # resulted in 130000 tokens" (vLLM: "However, you requested 5000 tokens")
    (
        re.compile(
            r"maximum context length is ([\d,]+) tokens.*?(?:resulted in|requested) ([\d,]+)",
            re.I | re.S,
        ),
        2,
        1,
    ),
    # OpenAI (newer): "Input tokens exceed the configured limit of 272000 tokens. Your
    # messages resulted in 300000 tokens"
    (re.compile(r"configured limit of ([\d,]+) tokens.*?resulted in ([\d,]+)", re.I | re.S), 2, 1),
    # LM Studio: "Trying to keep the first 5000 tokens ... context length of only 4096 tokens"
    (
        re.compile(
            r"keep the first ([\d,]+) tokens.*?context length of only ([\d,]+)", re.I | re.S
        ),
        1,
        2,
    ),
    # Ollama-style: "input length (9000 tokens) exceeds the model's context length (8192 tokens)"
    (re.compile(r"\(([\d,]+) tokens\) exceeds the model's context length \(([\d,]+)", re.I), 1, 2),
    # Wordings with no numbers.
    (
        re.compile(
            r"exceeds? the (?:available )?context (?:size|length|window)|context[_ ]length"
            r"[_ ]exceeded|too many tokens|context window",
            re.I,
        ),
        None,
        None,
    ),
]

_OVERFLOW_CODES = {
    "context_length_exceeded",
    "exceed_context_size_error",
    "string_above_max_length",
}


@dataclass(frozen=True)
class ErrorInfo:
    """The parts of an error body that decide its class.

    Attributes:
        message: the human message ('' when none).
        type: ``error.type`` (Anthropic ``overloaded_error``; OpenAI ``server_error``).
        code: ``error.code`` as a string (``context_length_exceeded``).
        raw: the error object itself.
    """

    message: str
    type: str
    code: str
    raw: Mapping[str, Any]


def error_info(body: object) -> ErrorInfo:
    """Extract message, type and code from any of the known error body shapes."""
    if isinstance(body, str):
        return ErrorInfo(body, "", "", {})
    if not isinstance(body, Mapping):
        return ErrorInfo("", "", "", {})
    err: Any = body.get("error", body)
    if isinstance(err, str):  # Ollama / LM Studio: {"error": "text"}
        return ErrorInfo(err, str(body.get("type") or ""), "", body)
    if not isinstance(err, Mapping):
        err = body
    message = err.get("message") or body.get("message") or body.get("detail") or ""
    code = err.get("code")
    return ErrorInfo(
        str(message) if not isinstance(message, str) else message,
        str(err.get("type") or ""),
        "" if code is None else str(code),
        err,
    )


def _int(text: str | None) -> int | None:
    return int(text.replace(",", "")) if text else None


def parse_overflow(info: ErrorInfo) -> tuple[int | None, int | None] | None:
    """Return (prompt tokens, maximum) when the error is a context overflow, else None.

    Either number is None when the provider did not say it.
    """
    if info.type == "exceed_context_size_error":  # llama.cpp
        return _as_int(info.raw.get("n_prompt_tokens")), _as_int(info.raw.get("n_ctx"))
    for pattern, tokens_group, max_group in _OVERFLOW_PATTERNS:
        m = pattern.search(info.message)
        if m:
            tokens = _int(m.group(tokens_group)) if tokens_group else None
            maximum = _int(m.group(max_group)) if max_group else None
            return tokens, maximum
    if info.code in _OVERFLOW_CODES:
        return None, None
    return None


def _as_int(value: Any) -> int | None:
    return value if isinstance(value, int) else None


def retry_after_s(headers: Mapping[str, str] | None) -> float | None:
    """Return the wait a 429/529 asked for: ``retry-after-ms``, then ``retry-after`` (s or date)."""
    if not headers:
        return None
    ms = headers.get("retry-after-ms")
    if ms:
        try:
            return float(ms) / 1000
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        parsed = email.utils.parsedate_tz(value)
        return max(0.0, email.utils.mktime_tz(parsed) - time.time()) if parsed else None


def classify(
    provider: str,
    status: int | None,
    body: object,
    *,
    headers: Mapping[str, str] | None = None,
    model: str | None = None,
    secrets: Sequence[str | None] = (),
) -> ProviderError:
    """Map an HTTP error (or an in-stream error event) to a Parley provider error.

    Args:
        provider: the provider's display name.
        status: the HTTP status; 200 (or None) for an error event inside a stream.
        body: the parsed error body (any known shape) or its text.
        headers: the response headers (for ``retry-after``).
        model: the requested model id (named in a model-not-found message).
        secrets: values to scrub from any text quoted from the API (the key).

    Returns:
        The matching error; its message holds no key.
    """
    info = error_info(body)
    detail = scrub(info.message, secrets)[:300]
    overflow = parse_overflow(info)
    if overflow is not None:
        return ContextOverflow(provider, overflow[0], overflow[1])
    by_type = _by_type(provider, info, detail, headers, model)
    if status is None or status < 400:
        return by_type or StreamInterrupted(provider, detail, cause="error")
    if status == 401:
        return AuthenticationFailed(provider, status=401)
    if status == 403:
        return PermissionDenied(provider, detail)
    if status == 404:
        if "model" in info.message.lower() or info.code == "model_not_found" or not info.message:
            return ModelNotFound(provider, model)
        return BadRequest(provider, f"{detail}; check the server address", status=404)
    if status == 429:
        return RateLimited(provider, retry_after_s(headers), "")
    if status in (503, 529) or info.type == "overloaded_error":
        return Overloaded(provider, status)
    if status >= 500:
        return ServerError(provider, status, detail if status != 500 else "")
    return by_type or BadRequest(provider, detail, status=status)


def _by_type(
    provider: str,
    info: ErrorInfo,
    detail: str,
    headers: Mapping[str, str] | None,
    model: str | None,
) -> ProviderError | None:
    kind = info.type
    if kind == "overloaded_error" or "overloaded" in info.message.lower():
        return Overloaded(provider, None)
    if kind in ("api_error", "server_error"):
        return ServerError(provider, None)
    if kind == "rate_limit_error" or info.code == "rate_limit_exceeded":
        return RateLimited(provider, retry_after_s(headers))
    if kind == "authentication_error":
        return AuthenticationFailed(provider, status=None)
    if kind == "permission_error":
        return PermissionDenied(provider, detail)
    if kind == "not_found_error":
        return ModelNotFound(provider, model)
    return None

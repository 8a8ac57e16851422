"""The ``openai`` SDK client Parley's OpenAI adapter uses, and llama.cpp's stream errors.

llama.cpp's server reports a failure inside a stream (a prompt over its context
window) as a line ``error: {...}`` — not a field the SSE format knows, so the
SDK's decoder drops it and the stream just ends, which looked like a broken
connection. For compatible servers the client's decoder reads such a line as
the ``data: {"error": {...}}`` event other servers send, so the SDK raises the
error and :func:`parley.core.providers.failures.classify` names it (a context
overflow, ``exceed_context_size_error``).
"""

from __future__ import annotations

import json
from typing import Any

import httpx2
import openai

try:  # the SDK's decoder is not public API: without it, error lines stay unread
    from openai._streaming import SSEDecoder as _SSEDecoder
except ImportError:  # pragma: no cover - an SDK that moved it
    _SSEDecoder = None  # type: ignore[assignment,misc]


def error_line_data(value: str) -> str:
    """Return the ``data:`` payload standing for an ``error:`` line's value.

    Args:
        value: the text after ``error:`` (JSON from llama.cpp, else any text).

    Returns:
        JSON text ``{"error": {...}}`` (an object given as ``{"error": …}`` stays as it is).
    """
    try:
        parsed: Any = json.loads(value)
    except ValueError:
        parsed = {"message": value.strip()}
    if isinstance(parsed, dict) and "error" in parsed:
        return json.dumps(parsed)
    if not isinstance(parsed, dict):
        parsed = {"message": str(parsed)}
    return json.dumps({"error": parsed})


if _SSEDecoder is not None:

    class ErrorLineDecoder(_SSEDecoder):
        """The SDK's SSE decoder, also reading llama.cpp's ``error:`` lines as error events."""

        def decode(self, line: str) -> Any:
            if line.startswith("error:"):
                return super().decode("data: " + error_line_data(line[len("error:"):]))
            return super().decode(line)


class _CompatibleClient(openai.AsyncOpenAI):
    def _make_sse_decoder(self) -> Any:
        if _SSEDecoder is None:  # pragma: no cover
            return super()._make_sse_decoder()
        return ErrorLineDecoder()


def make_client(
    key: str | None, base_url: str, timeout_s: float, connect_s: float, *,
    error_lines: bool = False,
) -> openai.AsyncOpenAI:
    """Return the SDK client for one provider.

    Args:
        key: the API key; None for a local server without one (no Authorization
            header is sent, and never the environment's ``OPENAI_API_KEY``).
        base_url: the API root including ``/v1``.
        timeout_s: read timeout, seconds.
        connect_s: connect timeout, seconds.
        error_lines: read llama.cpp's ``error:`` stream lines (compatible servers).
    """
    cls = _CompatibleClient if error_lines else openai.AsyncOpenAI
    timeout = httpx2.Timeout(timeout_s, connect=connect_s)
    if key:
        return cls(api_key=key, base_url=base_url, max_retries=0, timeout=timeout)
    try:
        return cls(
            api_key="",
            base_url=base_url,
            max_retries=0,
            timeout=timeout,
            _enforce_credentials=False,
        )
    except TypeError:  # an SDK without that switch: a placeholder most servers ignore
        return cls(api_key="no-key", base_url=base_url, max_retries=0, timeout=timeout)

"""Context windows in the fake provider: scaled token counts, refusals, local servers' endpoints.

Real providers count more tokens than Parley's character estimate for some
text (code, numbers, other scripts); ``token_scale`` multiplies every input
count the fake reports (usage, ``count_tokens``, the size in a refusal) to
play such a tokenizer. With ``enforce_windows`` the fake refuses a prompt
over the model's window the way the real servers do:

* Anthropic: the window is the model's ``max_input_tokens`` in
  ``anthropic_models``; the refusal is HTTP 400 ``invalid_request_error``
  "prompt is too long: N tokens > M maximum".
* OpenAI-style: the window is ``openai_window`` (one number, as a llama.cpp
  server started with ``-c``); ``openai_overflow`` picks the refusal —
  ``openai`` (HTTP 400 ``context_length_exceeded``), ``llamacpp_line`` (HTTP
  200, then a stream whose only event is llama.cpp's non-standard
  ``error: {...}`` line, then the end), ``llamacpp_data`` (the same error as a
  ``data:`` event), ``llamacpp_400`` (HTTP 400 ``exceed_context_size_error``) or
  ``llamacpp_python`` (llama-cpp-python 0.3's server: a streamed request gets
  HTTP 200 and an empty stream — no data line, no ``[DONE]`` — the same request
  unstreamed gets HTTP 400 ``context_length_exceeded`` in OpenAI's words).

Local servers' own endpoints: ``GET /props`` (llama.cpp; ``props``, None:
404), ``GET /api/v0/models`` (LM Studio; ``lmstudio_models``, None: 404) and
``POST /api/show`` (Ollama; ``ollama_show`` by model id, else 404).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias

from tests.fakes.cache import CacheUsage

OpenAIOverflow: TypeAlias = Literal[
    "openai", "llamacpp_line", "llamacpp_data", "llamacpp_400", "llamacpp_python"
]

LLAMACPP_MESSAGE = (
    "the request exceeds the available context size, try increasing it"
)


@dataclass
class WindowSettings:
    """The fake's knobs for token counts and context windows (reset per test).

    Attributes:
        token_scale: factor on every input token count reported.
        enforce_windows: refuse prompts over the model's window.
        openai_window: the window of every OpenAI-style model (None: unlimited).
        openai_overflow: how an OpenAI-style refusal looks.
        props: llama.cpp's ``/props`` body (None: the route answers 404).
        ollama_show: Ollama's ``/api/show`` bodies by model id.
        lmstudio_models: LM Studio's ``/api/v0/models`` entries (None: 404).
        refused: how many model requests were refused as over the window.
        empty_streams: the next this many streamed OpenAI-style requests get HTTP
            200 and an empty stream whatever they ask (llama-cpp-python's answer to
            an error it only logs); unstreamed ones are answered as usual.
        interrupt_streams: a new OpenAI-style chat request cuts the streams in
            flight (llama-cpp-python's default ``interrupt_requests``: the one
            running stops, its connection drops, the server logs "Disconnected
            from client").
        interrupted: how many streams a new request cut so far.
        stream_epoch: bumped by every OpenAI-style chat request while
            ``interrupt_streams`` is on (a stream started in an earlier epoch is cut).
        usage_chunk: an OpenAI-style stream asking ``include_usage`` ends with a usage
            chunk (False: none, as llama-cpp-python's server and older local servers).
    """

    token_scale: float = 1.0
    enforce_windows: bool = False
    openai_window: int | None = None
    openai_overflow: OpenAIOverflow = "openai"
    props: dict[str, Any] | None = None
    ollama_show: dict[str, dict[str, Any]] = field(default_factory=dict)
    lmstudio_models: list[dict[str, Any]] | None = None
    refused: int = 0
    empty_streams: int = 0
    interrupt_streams: bool = False
    interrupted: int = 0
    stream_epoch: int = 0
    usage_chunk: bool = True

    def scaled(self, tokens: int) -> int:
        """``tokens`` as the fake's tokenizer counts them."""
        return math.ceil(tokens * self.token_scale)

    def scaled_usage(self, split: CacheUsage) -> CacheUsage:
        """The cache split with each part scaled."""
        return CacheUsage(
            self.scaled(split.input_tokens), self.scaled(split.cache_read),
            self.scaled(split.cache_write),
        )

    def anthropic_window(self, models: list[dict[str, Any]], model: str) -> int | None:
        """The listed ``max_input_tokens`` of ``model`` when windows are enforced."""
        if not self.enforce_windows:
            return None
        for m in models:
            if m.get("id") == model and isinstance(m.get("max_input_tokens"), int):
                return int(m["max_input_tokens"])
        return None

    def over_openai_window(self, prompt_tokens: int) -> bool:
        """True when an OpenAI-style prompt of this many (scaled) tokens is refused."""
        return (
            self.enforce_windows
            and self.openai_window is not None
            and prompt_tokens > self.openai_window
        )

    def llamacpp(self, n_ctx: int, overflow: OpenAIOverflow = "llamacpp_line") -> None:
        """Behave like a llama.cpp server started with ``-c n_ctx`` (``llamacpp_python``:
        like ``python -m llama_cpp.server --n_ctx n_ctx``, which has no ``/props``)."""
        self.enforce_windows = True
        self.openai_window = n_ctx
        self.openai_overflow = overflow
        if overflow == "llamacpp_python":  # llama-cpp-python has no /props
            self.props = None
            return
        self.props = {
            "default_generation_settings": {"n_ctx": n_ctx, "params": {"n_predict": -1}},
            "total_slots": 1,
            "model_path": "/models/tiny-270m-q8_0.gguf",
            "chat_template": "",
        }


def llamacpp_error(prompt_tokens: int, n_ctx: int) -> dict[str, Any]:
    """llama.cpp's error object for a prompt over its context window."""
    return {
        "code": 400,
        "message": LLAMACPP_MESSAGE,
        "type": "exceed_context_size_error",
        "n_prompt_tokens": prompt_tokens,
        "n_ctx": n_ctx,
    }


def llamacpp_stream_error(prompt_tokens: int, n_ctx: int, *, as_data: bool) -> bytes:
    """The whole stream llama.cpp sends for an over-window streaming request."""
    error = llamacpp_error(prompt_tokens, n_ctx)
    if as_data:
        return f"data: {json.dumps({'error': error})}\n\n".encode()
    return f"error: {json.dumps(error)}\n\n".encode()


def llamacpp_python_error(prompt_tokens: int, n_ctx: int, max_tokens: int) -> dict[str, Any]:
    """llama-cpp-python's (unstreamed) HTTP 400 body for a prompt over ``n_ctx``."""
    return {
        "error": {
            "message": f"This model's maximum context length is {n_ctx} tokens. However, you "
            f"requested {prompt_tokens + max_tokens} tokens ({prompt_tokens} in the messages, "
            f"{max_tokens} in the completion). Please reduce the length of the messages or "
            "completion.",
            "type": "invalid_request_error",
            "param": "messages",
            "code": "context_length_exceeded",
        }
    }

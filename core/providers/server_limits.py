"""What an OpenAI-compatible server says about its models' limits.

OpenAI's own model list gives no limits, but the servers people run locally do,
each in its own place (read from their public API documentation):

* vLLM, LM Studio, OpenRouter-style proxies: fields of the ``GET /v1/models``
  entries — ``max_model_len`` (vLLM), ``loaded_context_length`` /
  ``max_context_length`` (LM Studio), ``context_length`` / ``context_window``,
  and an output limit as ``max_completion_tokens`` / ``max_output_tokens``
  (also under ``top_provider``);
* llama.cpp: ``GET /props`` (at the server root, beside ``/v1``) has ``n_ctx``
  under ``default_generation_settings`` (and at the top in some versions): the
  window the server was started with, shared by its slots;
* LM Studio: ``GET /api/v0/models`` (its own REST API) lists every model with
  ``max_context_length`` and, once loaded, ``loaded_context_length``;
* Ollama: ``POST /api/show`` ``{"model": id}`` has ``num_ctx`` in its
  ``parameters`` text when the model sets one, else the model's trained
  ``<architecture>.context_length`` in ``model_info``.

The same answers say whether a model takes tools (``chat_template_caps`` or
the chat template in ``/props``, ``capabilities`` in Ollama's ``/api/show``
and LM Studio's list): tools go to a compatible server only when it said so
(:func:`props_tools`, :func:`capabilities_tools`).

Every request to such a server carries ``max_tokens`` (:func:`output_budget`):
without it a small local model may write until its whole window is full.

The other functions here only read those bodies; the OpenAI adapter
(``parley.core.providers.openai_provider``) asks the server, and a failed or unknown
endpoint just means "not said".
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

from parley.core.content import Turn
from parley.core.context.tokens import estimate_tokens
from parley.core.providers.base import ChatRequest, ModelInfo

#: Entry fields naming the context window, best first (a loaded window before a maximum).
WINDOW_FIELDS = (
    "loaded_context_length",
    "n_ctx",
    "max_model_len",
    "context_window",
    "context_length",
    "max_context_length",
)
#: Entry fields naming the output limit.
OUTPUT_FIELDS = ("max_completion_tokens", "max_output_tokens")

#: A compatible server is asked for at least this many output tokens (when its
#: window leaves fewer, the request is over the window and compaction's business).
MIN_OUTPUT_TOKENS = 256
#: The input estimate is taken this much larger when bounding the output, so that
#: input + output stay within the window when the estimate is somewhat low.
INPUT_MARGIN = 1.15


def output_budget(info: ModelInfo, wire_turns: Sequence[Turn], request: ChatRequest) -> int:
    """The ``max_tokens`` for a compatible server: the model's output limit, bounded
    by what the input leaves of the context window.

    Args:
        info: the model's limits (window, output limit; tokens).
        wire_turns: the turns as sent (``parley.core.wire.to_messages`` output).
        request: the request (its system prompt and tools count too).

    Returns:
        Tokens, at least :data:`MIN_OUTPUT_TOKENS` (or the output limit when smaller).
    """
    tools = [
        {"name": t.name, "description": t.description, "input_schema": t.input_schema}
        for t in request.tools
    ]
    used = estimate_tokens(wire_turns, system=request.system, tools=tools)
    left = info.context_window - math.ceil(used * INPUT_MARGIN)
    limit = info.max_output_tokens
    return max(min(limit, MIN_OUTPUT_TOKENS), min(limit, left))

_NUM_CTX = re.compile(r"^\s*num_ctx\s+(\d+)\s*$", re.M)


def _int(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int) and value > 0:
        return value
    if isinstance(value, str) and value.strip().isdigit() and int(value) > 0:
        return int(value)
    return None


def _first(entry: Mapping[str, Any], names: tuple[str, ...]) -> int | None:
    for name in names:
        found = _int(entry.get(name))
        if found:
            return found
    return None


def entry_limits(entry: Mapping[str, Any]) -> tuple[int | None, int | None]:
    """Return (context window, output limit) from one ``/v1/models`` entry's fields.

    Args:
        entry: the entry's fields beyond ``id``/``object`` (the SDK's ``model_extra``).

    Returns:
        Tokens; None for a limit the entry does not give.
    """
    nested = entry.get("top_provider")
    nested = nested if isinstance(nested, Mapping) else {}
    window = _first(entry, WINDOW_FIELDS) or _first(nested, WINDOW_FIELDS)
    output = _first(entry, OUTPUT_FIELDS) or _first(nested, OUTPUT_FIELDS)
    return window, output


def props_window(body: Any) -> int | None:
    """Return the context window from llama.cpp's ``GET /props`` body (None: not there)."""
    if not isinstance(body, Mapping):
        return None
    settings = body.get("default_generation_settings")
    if isinstance(settings, Mapping):
        found = _int(settings.get("n_ctx"))
        if found:
            return found
    return _int(body.get("n_ctx"))


def ollama_window(body: Any) -> int | None:
    """Return the context window from Ollama's ``POST /api/show`` body (None: not there).

    ``num_ctx`` in ``parameters`` (what the server runs the model with) comes
    before the model's trained ``*.context_length``.
    """
    if not isinstance(body, Mapping):
        return None
    params = body.get("parameters")
    if isinstance(params, str):
        match = _NUM_CTX.search(params)
        if match:
            return _int(match.group(1))
    info = body.get("model_info")
    if isinstance(info, Mapping):
        for key, value in info.items():
            if isinstance(key, str) and key.endswith(".context_length"):
                found = _int(value)
                if found:
                    return found
    return None


def lmstudio_limits(body: Any) -> dict[str, tuple[int | None, int | None]]:
    """Return ``{model id: (window, output limit)}`` from LM Studio's ``GET /api/v0/models``."""
    data = body.get("data") if isinstance(body, Mapping) else None
    out: dict[str, tuple[int | None, int | None]] = {}
    for entry in data if isinstance(data, list) else []:
        if isinstance(entry, Mapping) and isinstance(entry.get("id"), str):
            window, output = entry_limits(entry)
            if window or output:
                out[entry["id"]] = (window, output)
    return out


#: Capability names that mean "takes tools" (Ollama ``tools``, LM Studio ``tool_use``).
TOOL_CAPABILITIES = frozenset({"tools", "tool_use"})


def props_tools(body: Any) -> bool | None:
    """Whether llama.cpp's ``GET /props`` says its model takes tools (None: not said).

    ``chat_template_caps.supports_tools`` (llama.cpp since 2025) is the answer
    when present; else a ``chat_template`` that never mentions ``tools`` cannot
    show the model any (False) and one that does may (True).
    """
    if not isinstance(body, Mapping):
        return None
    caps = body.get("chat_template_caps")
    if isinstance(caps, Mapping):
        said = caps.get("supports_tools", caps.get("supports_tool_calls"))
        if isinstance(said, bool):
            return said
    template = body.get("chat_template")
    if isinstance(template, str) and template.strip():
        return "tools" in template
    return None


def capabilities_tools(entry: Any) -> bool | None:
    """Whether a ``capabilities`` list says the model takes tools (None: no list).

    Args:
        entry: Ollama's ``POST /api/show`` body or an LM Studio ``/api/v0/models`` entry.
    """
    caps = entry.get("capabilities") if isinstance(entry, Mapping) else None
    if not isinstance(caps, list):
        return None
    return any(isinstance(c, str) and c.lower() in TOOL_CAPABILITIES for c in caps)


def lmstudio_tools(body: Any) -> dict[str, bool]:
    """Return ``{model id: takes tools}`` from LM Studio's ``GET /api/v0/models``."""
    data = body.get("data") if isinstance(body, Mapping) else None
    out: dict[str, bool] = {}
    for entry in data if isinstance(data, list) else []:
        said = capabilities_tools(entry)
        if said is not None and isinstance(entry.get("id"), str):
            out[entry["id"]] = said
    return out


def server_root(base_url: str) -> str:
    """The server's root for its own endpoints: the API root without ``/v1``."""
    url = base_url.rstrip("/")
    return url[: -len("/v1")] if url.endswith("/v1") else url

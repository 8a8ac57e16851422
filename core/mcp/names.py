"""The names MCP tools have on the wire, and the schemas sent with them.

A tool ``read_file`` of the server ``files`` is offered to the model as
``mcp__files__read_file``: the prefix keeps it apart from Parley's own tools
and from another server's ``read_file``. The providers take tool names of
``^[a-zA-Z0-9_-]{1,64}$``: other characters become ``_`` and a name that would
be longer is cut and given a short hash of the full name, so two long names
stay different. :func:`wire_name` is deterministic (the same server and tool
always give the same name), which keeps the tool definitions byte-stable for
the prompt cache.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from typing import Any

PREFIX = "mcp__"
MAX_NAME = 64
NAME_RE = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
_BAD = re.compile(r"[^a-zA-Z0-9_-]")
#: Top-level schema keys some providers refuse and the model does not need.
_DROP = ("$schema", "$id")


def wire_name(server: str, tool: str) -> str:
    """Return the name the model sees for ``tool`` of ``server`` (matches :data:`NAME_RE`)."""
    name = f"{PREFIX}{_BAD.sub('_', server)}__{_BAD.sub('_', tool)}"
    if len(name) <= MAX_NAME:
        return name
    digest = hashlib.sha256(f"{server}\0{tool}".encode()).hexdigest()[:8]
    return f"{name[:MAX_NAME - 9]}_{digest}"


def is_mcp_name(name: str) -> bool:
    """True when a tool name is one :func:`wire_name` made."""
    return name.startswith(PREFIX)


def display_name(name: str) -> str:
    """How a tool call is labelled for people: ``files › read_file`` for an MCP tool
    (as :func:`wire_name` wrote it), the name itself for any other tool."""
    if not is_mcp_name(name):
        return name
    server, sep, tool = name[len(PREFIX):].partition("__")
    return f"{server} › {tool}" if sep else name


def wire_schema(schema: Mapping[str, Any] | None) -> dict[str, Any]:
    """Return an MCP tool's input schema as the providers take it.

    The root is made an object with ``properties`` (Anthropic and OpenAI require
    ``type: object``; MCP allows a bare ``{}``), and ``$schema`` / ``$id`` are
    dropped; everything else is sent as the server wrote it.
    """
    out = {k: v for k, v in (schema or {}).items() if k not in _DROP}
    out["type"] = "object"
    out.setdefault("properties", {})
    return out

"""``/tool NAME {json}``: a message that makes the fake model call a tool.

So that a person trying Parley against the fake provider can see a tool call (and MCP
approval), an unscripted request whose last user message starts with::

    /tool NAME {"arg": "value"}

is answered with a call of the tool ``NAME`` with those arguments (no arguments: ``{}``).
``NAME`` is matched against the tools the request offers (Anthropic ``tools[].name``,
OpenAI ``tools[].function.name``): exactly, or as the last part of one name, so
``/tool echo`` finds ``mcp__fake__echo``. The request that carries the tool's result
(Anthropic: a user message of ``tool_result`` blocks; OpenAI: ``role: tool``
messages) is answered with a short text quoting the result. A name no tool has, or
arguments that are not a JSON object, get a text saying so and nothing is called.
"""

from __future__ import annotations

import json
import re
from typing import Any

from tests.fakes.script import Reply, ToolCall

#: The phrase at the start of the last user message.
PREFIX = "/tool"
_PHRASE = re.compile(r"\A\s*/tool\s+(\S+)\s*(.*)\Z", re.S)
#: How much of a tool's result the final answer quotes (characters).
QUOTE_CHARS = 300


def offered_tools(body: dict[str, Any]) -> list[str]:
    """The tool names a request offers (Anthropic or OpenAI shape), in order."""
    names = []
    for tool in body.get("tools") or []:
        if not isinstance(tool, dict):
            continue
        fn = tool.get("function")
        name = fn.get("name") if isinstance(fn, dict) else tool.get("name")
        if isinstance(name, str):
            names.append(name)
    return names


def _resolve(name: str, offered: list[str]) -> str | None:
    if name in offered:
        return name
    ends = [o for o in offered if o.endswith(f"__{name}") or o.endswith(f"_{name}")]
    return ends[0] if len(ends) == 1 else None


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(_text_of(p.get("content", p.get("text", "")))
                         for p in content if isinstance(p, dict))
    return ""


def tool_results(messages: Any) -> list[str] | None:
    """The results the last message carries (text), or None when it carries none.

    Anthropic sends them as a user message of ``tool_result`` blocks, OpenAI as
    ``role: tool`` messages at the end of the list.
    """
    messages = messages if isinstance(messages, list) else []
    if not messages or not isinstance(messages[-1], dict):
        return None
    last = messages[-1]
    if last.get("role") == "tool":
        results = []
        for msg in reversed(messages):
            if not isinstance(msg, dict) or msg.get("role") != "tool":
                break
            results.insert(0, _text_of(msg.get("content")))
        return results
    content = last.get("content")
    if last.get("role") == "user" and isinstance(content, list):
        blocks = [b for b in content if isinstance(b, dict) and b.get("type") == "tool_result"]
        if blocks:
            return [_text_of(b.get("content")) for b in blocks]
    return None


def reply_to(said: str, body: dict[str, Any], delay_ms: float) -> Reply | None:
    """The fake model's answer to a ``/tool`` message or to a tool's result; None when
    the request is neither (see the module docstring).

    Args:
        said: the text of the last user message.
        body: the request body (its ``messages`` and ``tools``).
        delay_ms: pause between streamed chunks.
    """
    results = tool_results(body.get("messages"))
    if results is not None:
        quoted = "; ".join(" ".join(r.split())[:QUOTE_CHARS] for r in results)
        return Reply(text=f"The tool answered: {quoted}", token_delay_ms=delay_ms)
    match = _PHRASE.match(said)
    if match is None:
        return None
    name, raw = match.group(1), match.group(2).strip()
    offered = offered_tools(body)
    tool = _resolve(name, offered)
    if tool is None:
        listed = ", ".join(offered) or "none"
        return Reply(text=f"No tool is called {name!r} here. Tools offered: {listed}.",
                     token_delay_ms=delay_ms)
    try:
        args = json.loads(raw) if raw else {}
    except json.JSONDecodeError as exc:
        args = exc
    if not isinstance(args, dict):
        return Reply(text=f"The arguments for {tool} must be a JSON object, like "
                          f'{{"text": "hello"}}; got {raw!r}.', token_delay_ms=delay_ms)
    return Reply(text=f"Calling {tool}.", tool_calls=[ToolCall(tool, args)],
                 token_delay_ms=delay_ms)

"""Recognise a chat history export (many conversations in one file) and read it.

:func:`read_history` takes parsed JSON and returns an
:class:`~parley.core.convert.history.ImportedHistory` for a ChatGPT, Claude.ai or
Open WebUI export (a list of conversations, or one conversation of such a
list), None for anything else (a single conversation is left to
``parley.core.convert.detect``). :func:`describe` says in a few words what some JSON
is, for refusal messages ("a JSON object with the keys 'theme', 'fontSize'").
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from parley.core.convert.chatgpt import FileFinder, from_chatgpt, looks_like_chatgpt
from parley.core.convert.claude_ai import from_claude_ai, looks_like_claude_ai
from parley.core.convert.errors import NotAConversation
from parley.core.convert.history import ImportedHistory
from parley.core.convert.open_webui import from_open_webui, looks_like_open_webui

__all__ = ["describe", "read_history"]

_READERS: tuple[tuple[Callable[[Any], bool], str], ...] = (
    (looks_like_chatgpt, "chatgpt"),
    (looks_like_claude_ai, "claude.ai"),
    (looks_like_open_webui, "open-webui"),
)
_NAMES = {"chatgpt": "ChatGPT", "claude.ai": "Claude.ai", "open-webui": "Open WebUI"}


def _kind(item: Any) -> str | None:
    return next((kind for looks, kind in _READERS if looks(item)), None)


def read_history(data: Any, find_file: FileFinder | None = None) -> ImportedHistory | None:
    """Read a history export, or return None when ``data`` is not one.

    Args:
        data: parsed JSON.
        find_file: finds an image of a ChatGPT export in its folder (see
            ``parley.core.convert.chatgpt``).

    Returns:
        The history (possibly with no chats when every conversation is empty),
        or None when the first conversation-like item is of no known export.

    Raises:
        NotAConversation: the list mixes the formats, or holds items that are
            no conversation of the format its first item has (they are named).
    """
    items = [data] if isinstance(data, Mapping) else data
    if not isinstance(items, list) or not items:
        return None
    kind = _kind(items[0])
    if kind is None:
        return None
    for i, item in enumerate(items, start=1):  # counted from 1, for people
        other = _kind(item)
        if other != kind:
            found = f"a {_NAMES[other]} conversation" if other else describe(item)
            raise NotAConversation(
                f"it looks like a {_NAMES[kind]} export, but item {i} of its list is {found}, "
                f"not a {_NAMES[kind]} conversation")
    if kind == "chatgpt":
        return from_chatgpt(items, find_file)
    if kind == "claude.ai":
        return from_claude_ai(items)
    return from_open_webui(items)


def describe(data: Any, *, depth: int = 0) -> str:
    """A few words on what ``data`` is, e.g. ``a JSON object with the keys 'a', 'b'``.

    Args:
        data: parsed JSON.
        depth: used for a list's first item (not for callers).

    Returns:
        Up to six key names of an object; a list described by its length and
        first item.
    """
    if isinstance(data, Mapping):
        keys = [str(k) for k in list(data)[:6]]
        more = ", …" if len(data) > 6 else ""
        if not keys:
            return "an empty JSON object"
        return "a JSON object with the keys " + ", ".join(f"'{k}'" for k in keys) + more
    if isinstance(data, list):
        if not data:
            return "an empty JSON list"
        first = describe(data[0], depth=depth + 1) if depth == 0 else "items"
        return f"a JSON list of {len(data):,} item(s), the first being {first}"
    if isinstance(data, str):
        return "a JSON string"
    if isinstance(data, bool) or data is None:
        return f"the JSON value {str(data).lower() if data is not None else 'null'}"
    return "a JSON number"

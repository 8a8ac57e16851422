"""One v3 turn's ``content`` -> v4 blocks (points 2, 5, 6 of ``parley.core.store.upgrade.v3``).

v3 block -> v4 block (``parley.core.content`` JSON):

==================== ==========================================================
``text``             ``text``; ``origin.messageId`` -> ``message_id``; a missing
                     or null ``kind`` becomes ``"user"``
``image``            ``image`` (``mediaType`` -> ``media_type``; ``data`` and/or ``url``)
``document``         ``document`` (``media_type``, ``data``, ``name`` if any)
``tool-call``        ``tool_use`` (``id``, ``name``, ``args`` -> ``input``;
                     missing/null args -> ``{}``)
``tool-result``      ``tool_result`` (``callId`` -> ``tool_use_id``; ``output`` string ->
                     one text part, parts list -> text/image parts, missing/null ->
                     no part; ``isError: true`` -> ``is_error``)
``thinking``         ``thinking`` (``text`` -> ``thinking``; ``signature`` if any)
``compact-summary``  ``compact_summary`` (``summary``, ``replaced_count`` =
                     ``replacedTurns``, ``legacy: true``, no turn range: the turns
                     it replaced were deleted by v3)
any other type       kept as is (``UnknownBlock``)
==================== ==========================================================

A turn is *damaged* — and kept verbatim as one text block with
``recovered: true`` — when its content is not valid JSON, is not a JSON array,
holds an element that is not an object, holds a known v3 block lacking a
required field or with one of the wrong JSON type, holds an unknown block whose
``type`` is a v4 block name v4 would misread (``tool_use``, ``tool_result``,
``compact_summary``), or when the turn's role is not ``user``/``assistant``
(it then becomes a ``user`` turn). Extra fields on known v3 block kinds (the
spec lists none) are not carried over; unknown blocks keep every field.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from parley.core.store import textindex
from parley.core.store.textindex import block_text

JSON = dict[str, Any]
ROLES = ("user", "assistant")
#: v4 block names v3 never wrote (an unknown v3 block named so would be misread).
V4_ONLY_TYPES = frozenset({"tool_use", "tool_result", "compact_summary"})

_dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode
#: The json module's own string scanner (C): ``scanstring(s, end, strict)`` decodes the JSON
#: string whose opening quote is at ``end - 1`` and returns ``(text, index after it)``.
scanstring: Callable[[str, int, bool], tuple[str, int]] = (
    json.decoder.scanstring  # type: ignore[attr-defined]
)
_encode_string = json.JSONEncoder(ensure_ascii=False).encode  # a str: json's C string encoder
_SURROGATE = re.compile("[\ud800-\udfff]")


class _Damaged(ValueError):
    """A block that cannot be converted: the whole turn is kept verbatim."""


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")  # NaN / Infinity: Python accepts them, JSON does not


_loads = json.JSONDecoder(parse_constant=_reject_constant).decode


def _str(block: JSON, key: str) -> str:
    value = block.get(key)
    if not isinstance(value, str):
        raise _Damaged(key)
    return value


def _opt_str(block: JSON, key: str) -> str | None:
    value = block.get(key)
    if value is not None and not isinstance(value, str):
        raise _Damaged(key)
    return value


def _text(b: JSON) -> JSON:
    out: JSON = {"type": "text", "text": _str(b, "text")}
    origin = b.get("origin")
    if origin is None:
        return out
    if not isinstance(origin, dict):
        raise _Damaged("origin")
    kind = origin.get("kind")
    converted: JSON = {"kind": "user" if kind is None else kind}
    for v3_key, v4_key in (("source", "source"), ("sender", "sender"), ("messageId", "message_id")):
        if origin.get(v3_key) is not None:
            converted[v4_key] = origin[v3_key]
    out["origin"] = converted
    return out


def _image(b: JSON) -> JSON:
    out: JSON = {"type": "image", "media_type": _str(b, "mediaType")}
    data, url = _opt_str(b, "data"), _opt_str(b, "url")
    if data is None and url is None:
        raise _Damaged("data/url")
    if data is not None:
        out["data"] = data
    if url is not None:
        out["url"] = url
    return out


def _document(b: JSON) -> JSON:
    out: JSON = {"type": "document", "media_type": _str(b, "mediaType"), "data": _str(b, "data")}
    name = _opt_str(b, "name")
    if name is not None:
        out["name"] = name
    return out


def _tool_call(b: JSON) -> JSON:
    args = b.get("args")
    if args is not None and not isinstance(args, dict):
        raise _Damaged("args")
    return {"type": "tool_use", "id": _str(b, "id"), "name": _str(b, "name"), "input": args or {}}


def _part(p: Any) -> JSON:
    if not isinstance(p, dict):
        raise _Damaged("part")
    kind = p.get("type")
    if kind == "text":
        return {"type": "text", "text": _str(p, "text")}
    if kind == "image":
        return _image(p)
    raise _Damaged("part type")


def _tool_result(b: JSON) -> JSON:
    output = b.get("output")
    if output is None:
        parts: list[JSON] = []
    elif isinstance(output, str):
        parts = [{"type": "text", "text": output}]
    elif isinstance(output, list):
        parts = [_part(p) for p in output]
    else:
        raise _Damaged("output")
    return {"type": "tool_result", "tool_use_id": _str(b, "callId"), "content": parts,
            "is_error": b.get("isError") is True}


def _thinking(b: JSON) -> JSON:
    out: JSON = {"type": "thinking", "thinking": _str(b, "text")}
    signature = _opt_str(b, "signature")
    if signature is not None:
        out["signature"] = signature
    return out


def _compact_summary(b: JSON) -> JSON:
    replaced = b.get("replacedTurns")
    if replaced is None:
        replaced = 0
    elif not isinstance(replaced, int) or isinstance(replaced, bool):
        raise _Damaged("replacedTurns")
    return {"type": "compact_summary", "summary": _str(b, "text"),
            "replaced_count": replaced, "legacy": True}


_CONVERTERS: dict[str, Callable[[JSON], JSON]] = {
    "text": _text,
    "image": _image,
    "document": _document,
    "tool-call": _tool_call,
    "tool-result": _tool_result,
    "thinking": _thinking,
    "compact-summary": _compact_summary,
}


def convert_block(block: Any) -> JSON:
    """Return one v3 block as a v4 block JSON object.

    Raises:
        ValueError: the block cannot be converted (the turn is damaged).
    """
    if not isinstance(block, dict):
        raise _Damaged("not an object")
    kind = block.get("type")
    convert = _CONVERTERS.get(kind) if isinstance(kind, str) else None
    if convert is not None:
        return convert(block)
    if isinstance(kind, str) and kind in V4_ONLY_TYPES:
        raise _Damaged("v4 type name")
    return block


def _plain_text(data: list[Any]) -> bool:
    """True if every block is exactly ``{"type": "text", "text": <str>}`` (same in v4)."""
    for b in data:
        if type(b) is not dict or len(b) != 2 or b.get("type") != "text":
            return False
        if type(b.get("text")) is not str:
            return False
    return True


def convert_turn_indexed(role: Any, content: Any) -> tuple[str, str, bool, str]:
    """Convert one v3 turn, and give its search text.

    Args:
        role: the v3 ``turns.role``.
        content: the v3 ``turns.content`` (JSON text; may be anything in a damaged file).

    Returns:
        ``(role, blocks, recovered, search_text)``: the v4 role, the v4 blocks as JSON
        text (what ``turns.blocks`` holds), True when the turn was damaged and its
        content kept verbatim as one recovered text block; ``search_text`` equals
        ``parley.core.store.textindex.index_turn_text(blocks)`` — what the v4 triggers
        index — computed from the blocks already in memory, without parsing
        ``blocks`` again.
    """
    role4, blocks, recovered, texts = _convert(role, content)
    if texts is not None:  # the same text index_turn_text would join (non-empty ones)
        return role4, blocks, recovered, textindex.normalize("\n".join(t for t in texts if t))
    return role4, blocks, recovered, textindex.index_turn_text(blocks)


def convert_turn_indexed_json(role: Any, content: Any) -> tuple[str, str, bool, str]:
    """:func:`convert_turn_indexed` with the search text as a JSON string literal.

    Returns:
        ``(role, blocks, recovered, search_text_json)``: ``search_text_json`` is
        the search text encoded as one JSON string, quotes included. For a turn
        of one plain ASCII text block (most turns) it is cut out of ``content``
        as it is — the text's own JSON string, already validated — instead of
        being decoded and encoded again.
    """
    content = _as_text(content)
    if role in ROLES:
        text = _one_text(content)
        if text is not None and text.isascii():  # prepared text = the text (textindex)
            return role, content, False, content[len(_ONE_TEXT_HEAD) - 1 : 1 - len(_ONE_TEXT_TAIL)]
    role4, blocks, recovered, search_text = convert_turn_indexed(role, content)
    return role4, blocks, recovered, _encode_string(search_text)


#: How a turn of one plain text block starts when written compactly, as v3 wrote it.
_ONE_TEXT_HEAD = '[{"type":"text","text":"'
_ONE_TEXT_TAIL = '"}]'


def _one_text(content: str) -> str | None:
    """The text of ``content`` if it is exactly ``[{"type":"text","text":"…"}]``, else None.

    The shape of most v3 turns, read without building the list and dict
    ``json.loads`` would (a third of the cost of a turn). The string is
    decoded by the ``json`` module's own scanner with its strict rules, so
    whatever this accepts, ``json.loads`` reads the same way.
    """
    if not (content.startswith(_ONE_TEXT_HEAD) and content.endswith(_ONE_TEXT_TAIL)):
        return None
    try:
        text, end = scanstring(content, len(_ONE_TEXT_HEAD), True)
    except ValueError:
        return None
    return text if end == len(content) - 2 else None


def _convert(role: Any, content: Any) -> tuple[str, str, bool, list[str] | None]:
    """Return ``(role, blocks, recovered, texts)``.

    ``texts`` are the turn's block texts as ``textindex`` reads them from
    ``blocks``, or None when they must be read from ``blocks`` (rare: a lone
    surrogate was replaced while encoding).
    """
    content = _as_text(content)
    if role in ROLES:
        # v3 plain text blocks are v4 text blocks with the same JSON: keep the text as
        # it is, unless an escape in it could hide a lone surrogate (an ASCII text has none).
        text = _one_text(content)
        if text is not None and (text.isascii() or "\\u" not in content):
            return role, content, False, [text]
        plain = "\\u" not in content
        try:
            data = _loads(content)
        except (ValueError, RecursionError):
            data = None
        if isinstance(data, list):
            if plain and _plain_text(data):
                return role, content, False, [b["text"] for b in data]
            try:
                converted = [convert_block(b) for b in data]
                encoded = _dumps(converted)
            except (ValueError, RecursionError):  # _Damaged is a ValueError too
                pass
            else:
                blocks = _utf8(encoded)
                if blocks is not encoded:  # the texts in memory still hold the surrogate
                    return role, blocks, False, None
                return role, blocks, False, [block_text(b) for b in converted]
    text = _utf8(content)
    recovered = [{"type": "text", "text": text, "recovered": True}]
    return (role if role in ROLES else "user"), _dumps(recovered), True, [text]


def _as_text(content: Any) -> str:
    """``turns.content`` as text: bytes (a damaged file may hold invalid UTF-8) decoded."""
    if isinstance(content, str):
        return content
    if isinstance(content, bytes):
        return content.decode("utf-8", "replace")
    return "" if content is None else str(content)


def _utf8(text: str) -> str:
    """Replace lone surrogates (a JSON escape such as "\\ud83d" cut from its pair) with U+FFFD.

    SQLite stores UTF-8, which cannot hold them; everything else is kept as is.
    """
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return _SURROGATE.sub("\ufffd", text)
    return text

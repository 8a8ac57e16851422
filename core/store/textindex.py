"""What the full-text index holds, and how text is prepared for it.

The index (``search_fts``, see :mod:`parley.core.store.schema`) is a *contentless*
FTS5 table: it keeps only the inverted index, not a copy of the text, so a 1 GB
sessions.db does not grow by the size of its text. Its rows are written by SQL
triggers that call two SQL functions registered on every connection:

* ``parley_turn_text(blocks_json)`` — the searchable text of a turn (text
  blocks, tool_use name and input, tool_result text via
  :func:`parley.core.content.tool_result_to_text`, thinking, compaction summaries,
  document names), prepared by :func:`normalize`;
* ``parley_title_text(title)`` — a session title, prepared the same way.

Why ``unicode61 remove_diacritics 2 categories 'L* N* Co M*'`` plus this
preparation, and not ``trigram``: trigram on this SQLite (3.40) cannot fold
diacritics (``cafe`` would not find ``café``), finds nothing for terms shorter
than three characters (most Chinese words have two: 东京, 苹果), and makes the
index about three times larger and slower to build. unicode61 alone treats a
run of Chinese/Japanese/Thai text (no spaces between words) as one token, so a
word inside it is never found. :func:`normalize` therefore puts each
character of those scripts in a token of its own (with its combining marks);
a query in those scripts becomes a phrase of adjacent characters, which finds
it anywhere, like a substring search. Marks (``M*``) count as letters so
Devanagari and other Indic words are not cut at their vowel signs; Arabic
harakat, Hebrew niqqud and the tatweel are dropped (people rarely type them),
and ё is folded to е. Latin diacritics are folded by the tokenizer.

The preparation is part of the file format: a contentless FTS5 row can only be
removed by giving the same text it was indexed with, so changing
:func:`normalize` or :func:`turn_text` needs a migration step that rebuilds the
index (``schema.rebuild_search_index``).
"""

from __future__ import annotations

import json
import re
import sqlite3
import unicodedata
from typing import Any

from parley.core.content import ContentError, ToolResultBlock, block_from_json, tool_result_to_text

TOKENIZER = "unicode61 remove_diacritics 2 categories 'L* N* Co M*'"

# Scripts written without spaces between words: every character is a token.
_SPLIT_RANGES = [
    (0x2E80, 0x2FDF),  # CJK radicals, Kangxi radicals
    (0x3005, 0x3007),  # 々 〆 〇
    (0x3040, 0x30FF),  # Hiragana, Katakana
    (0x3100, 0x312F),  # Bopomofo
    (0x31F0, 0x31FF),  # Katakana phonetic extensions
    (0x3400, 0x4DBF),  # CJK extension A
    (0x4E00, 0x9FFF),  # CJK unified ideographs
    (0xAC00, 0xD7AF),  # Hangul syllables (particles are glued to words)
    (0xF900, 0xFAFF),  # CJK compatibility ideographs
    (0x0E00, 0x0EFF),  # Thai, Lao
    (0x1000, 0x109F),  # Myanmar
    (0x1780, 0x17FF),  # Khmer
    (0x20000, 0x2FA1F),  # CJK extensions B–F, compatibility supplement
]
# Dropped before indexing and in queries: Arabic harakat and tatweel, Hebrew niqqud.
_STRIPPED = (
    "\u0610-\u061a\u064b-\u065f\u0670\u06d6-\u06dc\u06df-\u06e8\u06ea-\u06ed\u0640"
    "\u0591-\u05bd\u05bf\u05c1\u05c2\u05c4\u05c5\u05c7"
    "\U000f0000"  # schema.SCOPE_MARK: only the index's scope tokens may hold it
)
_FOLD = str.maketrans({"ё": "е", "Ё": "Е"})


def _char_class(ranges: list[tuple[int, int]]) -> str:
    return "".join(
        re.escape(chr(a)) if a == b else f"{re.escape(chr(a))}-{re.escape(chr(b))}"
        for a, b in ranges
    )


def _ranges(codepoints: list[int]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for cp in codepoints:
        if out and out[-1][1] == cp - 1:
            out[-1] = (out[-1][0], cp)
        else:
            out.append((cp, cp))
    return out


def _build_tables() -> tuple[str, str, str]:
    split_bases: list[int] = []
    split_marks: list[int] = []
    for a, b in _SPLIT_RANGES:
        if b - a > 0x400:  # big ideograph blocks: no marks inside
            continue
        for cp in range(a, b + 1):
            cat = unicodedata.category(chr(cp))
            (split_marks if cat.startswith("M") else split_bases).append(cp)
    big = [(a, b) for a, b in _SPLIT_RANGES if b - a > 0x400]
    marks = [
        cp
        for cp in [*range(0x0300, 0x2000), *range(0x20D0, 0x2100), *range(0xFE20, 0xFE30)]
        if unicodedata.category(chr(cp)).startswith("M")
    ]
    bases = _char_class(_ranges(split_bases) + big)
    return bases, _char_class(_ranges(split_marks + [0x3099, 0x309A])), _char_class(_ranges(marks))


_SPLIT_BASES, _SPLIT_MARKS, MARKS = _build_tables()
#: The character classes of :func:`normalize` (regex bracket contents, literal characters),
#: for the PostgreSQL index's copy of it (``parley.core.store.postgres.sql``).
SPLIT_BASES, SPLIT_MARKS, STRIPPED = _SPLIT_BASES, _SPLIT_MARKS, _STRIPPED
_SPLIT_RE = re.compile(f"[{_SPLIT_BASES}][{_SPLIT_MARKS}]*")
_SPLIT_CHAR_RE = re.compile(f"[{_SPLIT_BASES}]")
_STRIP_RE = re.compile(f"[{_STRIPPED}]")
#: One token in prepared text, as FTS5's tokenizer sees it (closely enough).
TOKEN_RE = re.compile(f"(?:[^\\W_]|[{MARKS}])+")


def normalize(text: str) -> str:
    """Prepare text for the index (and a query for matching it).

    Args:
        text: any text.

    Returns:
        NFKC-normalized text with Arabic/Hebrew vowel marks dropped, ё folded
        to е, and each character of space-less scripts (CJK, kana, Hangul,
        Thai, Lao, Khmer, Myanmar) set apart by spaces. ASCII text is returned
        unchanged. Deterministic: the index depends on it (module docstring).
    """
    if text.isascii():
        return text
    if not unicodedata.is_normalized("NFKC", text):
        text = unicodedata.normalize("NFKC", text)
    text = _STRIP_RE.sub("", text).translate(_FOLD)
    return _SPLIT_RE.sub(r" \g<0> ", text)


def is_split_char(ch: str) -> bool:
    """True if ``ch`` belongs to a script whose characters are indexed one by one."""
    return _SPLIT_CHAR_RE.match(ch) is not None


def block_text(raw: Any) -> str:
    """The searchable text of one stored block (a JSON object), as the index reads it
    ("" for a block without text, or not an object)."""
    if not isinstance(raw, dict):
        return ""
    kind = raw.get("type")
    if kind == "text":
        return str(raw.get("text", ""))
    if kind == "thinking":
        return str(raw.get("thinking", ""))
    if kind == "compact_summary":
        return str(raw.get("summary", ""))
    if kind == "tool_use":
        args = json.dumps(raw.get("input", {}), ensure_ascii=False)
        return f"{raw.get('name', '')} {args}"
    if kind == "tool_result":
        try:
            block = block_from_json(raw)
        except ContentError:  # a malformed block is not indexed, never an error
            return ""
        return tool_result_to_text(block) if isinstance(block, ToolResultBlock) else ""
    if kind == "document":
        return str(raw.get("name") or "")
    return ""


def turn_text(blocks_json: str | None) -> str:
    """Return the searchable text of a turn, as shown in search snippets.

    Args:
        blocks_json: the turn's blocks as stored (``parley.core.content.blocks_to_json_text``).

    Returns:
        The text of its blocks joined by newlines (see the module docstring for
        which blocks count). Text that is not a JSON array is returned as is;
        never raises.
    """
    if not blocks_json:
        return ""
    try:
        data = json.loads(blocks_json)
    except ValueError:
        return blocks_json
    if not isinstance(data, list):
        return ""
    return "\n".join(t for t in map(block_text, data) if t)


def index_turn_text(blocks_json: str | None) -> str:
    """SQL function ``parley_turn_text``: :func:`turn_text` prepared by :func:`normalize`."""
    return normalize(turn_text(blocks_json))


def index_title_text(title: str | None) -> str:
    """SQL function ``parley_title_text``: a session title prepared by :func:`normalize`."""
    return normalize(title or "")


def register_functions(dbapi_con: sqlite3.Connection) -> None:
    """Register the SQL functions the search-index triggers call.

    Every connection that writes turns or sessions needs them (the store's
    engine registers them on connect; call this for a raw ``sqlite3``
    connection). Without them such writes fail with "no such function" rather
    than leave the index out of step.
    """
    dbapi_con.create_function("parley_turn_text", 1, index_turn_text, deterministic=True)
    dbapi_con.create_function("parley_title_text", 1, index_title_text, deterministic=True)
